"""A server's images, audio and blobs, shown without trusting a byte of them (``safe_mime``, ``render_media``).

* base64 payloads are decoded strictly and the *decoded* bytes re-encoded into the ``data:``
  URL, so nothing the server wrote is copied into an attribute as is;
* a MIME type must be a plain ``type/subtype`` token; only raster images (no SVG, which can
  carry script) and common audio formats are shown inline, anything else becomes a download
  link typed ``application/octet-stream`` with a sanitized file name;
* bad base64, a bad MIME type or a payload over ``max_inline_bytes`` becomes a one-line note.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from ..core.text import esc
from .style import note_html
from .text_budget import Budget

__all__ = ["INLINE_AUDIO", "INLINE_IMAGES", "render_media", "safe_mime"]

_MIME = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")
INLINE_IMAGES = frozenset(
    {"image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp", "image/bmp", "image/avif"}
)
"""Raster formats shown with ``<img>``; ``image/svg+xml`` is not one of them (SVG can carry script)."""
INLINE_AUDIO = frozenset(
    {
        "audio/wav",
        "audio/wave",
        "audio/x-wav",
        "audio/mpeg",
        "audio/mp3",
        "audio/ogg",
        "audio/webm",
        "audio/flac",
        "audio/x-flac",
        "audio/mp4",
        "audio/aac",
    }
)


def safe_mime(value: Any) -> str | None:
    """``value`` as a plain lower-case ``type/subtype`` (parameters dropped), or ``None`` when it is not one."""
    if not isinstance(value, str):
        return None
    mime = value.split(";", 1)[0].strip().lower()
    return mime if len(mime) <= 255 and _MIME.match(mime) else None


def _decode(data: Any) -> bytes | None:
    """Strict base64 (whitespace between the characters allowed); ``None`` when it is not base64."""
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _safe_filename(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:100].strip("._")
    return cleaned or "download"


def render_media(kind: str, mime_value: Any, data: Any, budget: Budget, uri: str | None = None) -> tuple[str, str]:
    """An image, audio clip or blob: inline when it is a safe type, else a download link, else a note."""
    what = f"resource {uri}" if uri is not None else kind
    mime = safe_mime(mime_value)
    if mime is None:
        note = f"[{kind}: invalid MIME type from the server; not shown]"
        return note, note_html(note)
    text = "".join(data.split()) if isinstance(data, str) else ""
    estimate = len(text) * 3 // 4 - len(text[-2:]) + len(text[-2:].rstrip("="))  # decoded size, padding aside
    if estimate > budget.inline + 3:  # refuse before decoding megabytes that will not be shown
        budget.media(estimate)
        note = f"[{what} {mime}, about {estimate:,} bytes: over max_inline_bytes, not embedded]"
        return note, note_html(note)
    raw = _decode(data)
    if raw is None:
        note = f"[{kind}: invalid base64 data from the server; not shown]"
        return note, note_html(note)
    size = len(raw)
    plain = f"[{what} {mime}, {size} bytes]"
    if not budget.media(size):
        note = f"[{what} {mime}, {size:,} bytes: over max_inline_bytes, not embedded]"
        return note, note_html(note)
    encoded = base64.b64encode(raw).decode("ascii")
    caption = f"<br/><small>{esc(plain)}</small>"
    if kind == "image" and mime in INLINE_IMAGES:
        return (
            plain,
            f'<div><img src="{esc(f"data:{mime};base64,{encoded}")}" alt="{esc(plain)}" style="max-width:100%"/>{caption}</div>',
        )
    if kind == "audio" and mime in INLINE_AUDIO:
        return plain, f'<div><audio controls src="{esc(f"data:{mime};base64,{encoded}")}"></audio>{caption}</div>'
    name = _safe_filename((uri or "").rstrip("/").rsplit("/", 1)[-1] or kind)
    link = f'<a download="{esc(name)}" href="{esc(f"data:application/octet-stream;base64,{encoded}")}">download</a>'
    return plain, f"<div><small>{esc(plain)}</small> {link}</div>"
