"""What one view may still show (``Budget``), and text cut to it: plain, escaped, boxed, as JSON.

Every part of one result's rendering (its blocks, structured views and media) draws on one
character budget and one byte budget from the flow's ``Limits`` (``%config
MCPMagics.max_result_chars`` and ``max_inline_bytes``). The budget is passed from part to part;
what it cut is said in the view's closing notes, with how to get the whole value, which always
stays on the flow (``flow.result()``, ``-o VAR``).
"""

from __future__ import annotations

import json
from typing import Any

from ..core.limits import Limits
from ..core.text import esc

__all__ = ["WHOLE", "Budget", "bounded_text", "cut_note", "json_text", "pre_html"]

_BOX_LINES, _BOX_CHARS = 40, 4_000
"""A text result longer than this sits in a bounded, scrollable box headed by its size."""
_BLOCK_COST = 64  # budget characters every rendered block costs (its markup), so countless tiny blocks stay bounded
WHOLE = "the whole value stays on the flow: flow.result() (or -o VAR on the magic) gives the full SDK result"


class Budget:
    """What is left to show of one view: characters of text, bytes of embedded media."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.chars = self.limits.max_result_chars
        self.inline = self.limits.max_inline_bytes
        self.cut = 0  # characters not shown
        self.skipped = 0  # blocks, messages or items not shown at all
        self.media_cut = 0  # embedded bytes not shown

    @property
    def exhausted(self) -> bool:
        return self.chars <= 0

    def block(self) -> None:
        self.chars -= _BLOCK_COST

    def text(self, value: str) -> tuple[str, int]:
        """The part of ``value`` that fits, and how many characters were cut."""
        room = max(self.chars, 0)
        if len(value) <= room:
            self.chars -= len(value)
            return value, 0
        cut = len(value) - room
        self.chars = 0
        self.cut += cut
        return value[:room], cut

    def media(self, size: int) -> bool:
        if size > self.inline:
            self.media_cut += size
            return False
        self.inline -= size
        return True

    def notes(self) -> list[str]:
        """The closing remarks of a view that was cut (empty when nothing was)."""
        out = []
        if self.cut or self.skipped:
            what = [f"{self.cut:,} more characters"] if self.cut else []
            what += [f"{self.skipped:,} more part{'s' if self.skipped != 1 else ''}"] if self.skipped else []
            out.append(
                f"[output cut at {self.limits.max_result_chars:,} characters: {' and '.join(what)} not shown; {WHOLE}; "
                "%config MCPMagics.max_result_chars = N shows more]"
            )
        if self.media_cut:
            out.append(
                f"[{self.media_cut:,} bytes of images, audio or files not embedded (over {self.limits.max_inline_bytes:,} bytes); "
                f"{WHOLE}; %config MCPMagics.max_inline_bytes = N embeds more]"
            )
        return out


def cut_note(cut: int) -> str:
    return f"[… {cut:,} more characters not shown]"


def bounded_text(value: str, budget: Budget) -> tuple[str, str]:
    """Bounded text as (plain, the escaped HTML inside a ``<pre>``)."""
    shown, cut = budget.text(value)
    if not cut:
        return shown, esc(shown)
    return f"{shown}\n{cut_note(cut)}", f"{esc(shown)}\n<i>{esc(cut_note(cut))}</i>"


def pre_html(full: str, inner: str, cut: int = 0) -> str:
    """Escaped text ``inner`` (what was shown of ``full``) in a ``<pre>``; a long one in a bounded, scrollable box.

    The box is headed by the text's size, so a reader knows how much there is before scrolling. Its
    bound is inline as well as in ``OUTPUT_CSS`` (JupyterLab's sanitizer keeps ``max-height`` and
    ``overflow``), so a reopened, untrusted notebook keeps it. The whole text never goes into the
    output: the file stays within ``max_result_chars``; the kernel keeps the rest (``WHOLE``).
    """
    lines = full.count("\n") + 1
    if lines <= _BOX_LINES and len(full) <= _BOX_CHARS:
        return f"<pre>{inner}</pre>"
    size = f"{lines:,} lines · {len(full):,} characters"
    if cut:
        size += f", the first {len(full) - cut:,} shown"
    return (
        f'<div class="hdr">{esc(size)} (scroll inside the box)</div>'
        f'<pre class="box" style="max-height:30em;overflow:auto">{inner}</pre>'
    )


def json_text(value: Any, indent: int | None = 2) -> str | None:
    try:
        return json.dumps(value, indent=indent, ensure_ascii=False, default=str)
    except (RecursionError, ValueError, TypeError):
        return None
