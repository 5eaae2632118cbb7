"""Server content rendered for people: content blocks (``render_content``) and SDK results (``ResultView``).

Every content type of MCP gets a fitting rendering: text, images, audio, embedded resources
(text and blob; ``text/markdown`` rendered by ``safe_markdown``), resource links, structured content
(``StructuredView``: arrays of objects as tables, objects as trees folded by depth; shown once when a
text block only repeats it), and tool errors shown as errors (an ``error`` badge) rather than
tracebacks. ``text/plain`` stays free of timings and ids so notebooks compare
cleanly under nbval; answer values never appear (outputs are saved and shared).

Everything a server sends is untrusted and ends up in the page's HTML, so:

* every value goes through ``esc`` (``html.escape`` with quotes) before it reaches text or an
  attribute;
* base64 payloads are decoded strictly and the *decoded* bytes re-encoded into the ``data:``
  URL, so nothing the server wrote is copied into an attribute as is;
* a MIME type must be a plain ``type/subtype`` token; only raster images (no SVG, which can
  carry script) and common audio formats are shown inline, anything else becomes a download
  link typed ``application/octet-stream`` with a sanitized file name;
* a block that cannot be shown (bad base64, bad MIME type, anything unexpected) becomes a
  one-line note, and the rest of the result still renders (``media`` holds the media rules).

Sizes are bounded by one ``text_budget.Budget`` per view; the structured view, the media and the
repeat check live in ``structured_view``, ``media`` and ``repeats``.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.limits import Limits
from ..core.text import esc, plain_text
from .media import render_media, safe_mime
from .repeats import repeated_blocks
from .structured_view import json_block
from .style import STYLE, VALUE_STYLE, note_html
from .text_budget import Budget, bounded_text, cut_note, pre_html

__all__ = ["MARKDOWN_TYPES", "ResultView", "render_content"]

MARKDOWN_TYPES = frozenset(
    {"text/markdown", "text/x-markdown"}
)  # rendered by ``safe_markdown``; anything else is escaped text


def render_content(block: Any, limits: Limits | None = None, budget: Budget | None = None) -> tuple[str, str]:
    """One content block -> (plain text, HTML); never raises: a block that cannot be shown is a note."""
    budget = budget if budget is not None else Budget(limits)
    kind = getattr(block, "type", None)
    try:
        return _render(block, kind, budget)
    except Exception:  # noqa: BLE001 - one odd block must not hide the rest of the result
        note = f"[{_word(kind)}: a content block this client cannot show; not shown]"
        return note, note_html(note)
    finally:
        budget.block()


def _word(kind: Any) -> str:
    return kind if isinstance(kind, str) and re.fullmatch(r"[a-z_]{1,40}", kind) else "content"


def _render(block: Any, kind: Any, budget: Budget) -> tuple[str, str]:
    if kind == "text":
        full = str(block.text)
        before = budget.cut
        plain, inner = bounded_text(full, budget)
        return plain, pre_html(full, inner, budget.cut - before, budget)
    if kind in ("image", "audio"):
        return render_media(kind, block.mime_type, block.data, budget)
    if kind == "resource":
        res = block.resource
        uri = budget.text(str(res.uri))[0]
        if getattr(res, "text", None) is not None:
            mime = safe_mime(res.mime_type) or ""
            plain, shown = _resource_text(str(res.text), mime, budget)
            return (
                f"[resource {uri}]\n{plain}",
                f"<div><small>resource <code>{esc(uri)}</code> {esc(mime)}</small>{shown}</div>",
            )
        return render_media("resource", res.mime_type or "application/octet-stream", res.blob, budget, uri=uri)
    if kind == "read_text":
        res = block.resource
        mime = safe_mime(res.mime_type) or ""
        plain, shown = _resource_text(str(res.text), mime, budget)
        return plain, f"<div><small><code>{esc(budget.text(str(res.uri))[0])}</code> {esc(mime)}</small>{shown}</div>"
    if kind == "resource_link":
        title, uri = budget.text(str(block.title or block.name))[0], budget.text(str(block.uri))[0]
        plain = f"[link {title}: {uri}]"
        desc = f" — {esc(budget.text(str(block.description))[0])}" if block.description else ""
        return plain, f"<div>🔗 <b>{esc(title)}</b> <code>{esc(uri)}</code>{desc}</div>"
    dumped = block.model_dump(mode="json", exclude_none=True) if hasattr(block, "model_dump") else block
    plain, rich = json_block(dumped, budget, _word(kind))
    return plain, rich


def _resource_text(text: str, mime: str, budget: Budget) -> tuple[str, str]:
    """A resource's text as (plain, HTML): ``text/markdown`` rendered by ``safe_markdown`` (no raw HTML, safe links only), else escaped in a ``<pre>``."""
    shown, cut = budget.text(text)
    plain = f"{shown}\n{cut_note(cut)}" if cut else shown
    if mime in MARKDOWN_TYPES:
        from .safe_markdown import (
            render_markdown,
        )  # markdown-it costs about 15 ms to import: only when a markdown resource shows

        rich = f'{VALUE_STYLE}<div class="md">{render_markdown(shown)}</div>'
    else:
        rich = pre_html(text, esc(shown), cut, budget)
    return plain, rich + (f"<div><i>{esc(cut_note(cut))}</i></div>" if cut else "")


def _is_note(rich: str) -> bool:
    return rich.startswith('<div class="note">')


def _blocks_html(blocks: list[Any], budget: Budget) -> list[tuple[str, str]]:
    """Render ``blocks`` while the budget lasts; the rest are counted in one line."""
    out: list[tuple[str, str]] = []
    for i, block in enumerate(blocks):
        if budget.exhausted:
            rest = len(blocks) - i
            note = f"[{rest:,} more content block{'s' if rest != 1 else ''} not shown]"
            budget.skipped += rest
            out.append((note, note_html(note)))
            break
        out.append(render_content(block, budget=budget))
    return out


class ResultView:
    """The SDK result of a flow (tool, prompt or resource), rendered for people, within ``limits``."""

    def __init__(self, result: Any, limits: Limits | None = None) -> None:
        self.result = result
        self.limits = limits or Limits()

    def parts(self, budget: Budget | None = None) -> tuple[list[str], list[str]]:
        budget = budget if budget is not None else Budget(self.limits)
        plain, rich = self._parts(budget)
        for note in budget.notes():
            plain.append(note)
            rich.append(note_html(note))
        return plain, rich

    def _parts(self, budget: Budget) -> tuple[list[str], list[str]]:
        from mcp.types import CallToolResult, GetPromptResult, ReadResourceResult, TextResourceContents

        r = self.result
        plain: list[str] = []
        rich: list[str] = []
        if isinstance(r, CallToolResult):
            room = budget.chars
            blocks = _blocks_html(list(r.content), budget)
            if r.is_error:  # the badge of its report says "error", and a %mcp cell fails (see ``tool_error``)
                text = "\n".join(p for p, _ in blocks) or "the tool reported an error"
                plain.append(f"Tool error: {text}")
                rich.append(f'<div class="err"><b>Tool error</b>\n{esc(text)}</div>')
                return plain, rich
            structured = r.structured_content
            repeats, text_says_it = repeated_blocks(list(r.content), structured, shown=len(blocks))
            room = (
                room if repeats else budget.chars
            )  # the repeated text is not on the page: its room goes to the structured view
            for i, (p, h) in enumerate(blocks):
                plain.append(p)
                if i not in repeats or _is_note(
                    h
                ):  # a text block that only repeats the structured content as JSON: shown once, as structured content
                    rich.append(h)
            if structured is not None:
                p, h = json_block(structured, budget, room=room)
                if not blocks:
                    plain.append(p)
                if not text_says_it:
                    rich.append(h)
        elif isinstance(r, GetPromptResult):
            if r.description:
                p, inner = bounded_text(str(r.description), budget)
                plain.append(p)
                rich.append(f"<div><i>{inner}</i></div>")
            for i, message in enumerate(r.messages):
                if budget.exhausted:
                    rest = len(r.messages) - i
                    note = f"[{rest:,} more message{'s' if rest != 1 else ''} not shown]"
                    budget.skipped += rest
                    plain.append(note)
                    rich.append(note_html(note))
                    break
                p, h = render_content(message.content, budget=budget)
                plain.append(f"{message.role}: {p}")
                rich.append(f"<div><b>{esc(message.role)}</b>{h}</div>")
        elif isinstance(r, ReadResourceResult):
            items = [_ReadText(item) if isinstance(item, TextResourceContents) else _Blob(item) for item in r.contents]
            for p, h in _blocks_html(items, budget):
                plain.append(p)
                rich.append(h)
        else:
            p, inner = bounded_text(repr(r), budget)
            plain.append(p)
            rich.append(f"<pre>{inner}</pre>")
        return plain, rich

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        plain, rich = self.parts()
        return {
            "text/plain": plain_text("\n".join(plain)),
            "text/html": STYLE + '<div class="mcpnb">' + "".join(rich) + "</div>",
        }


class _Blob:
    """Adapter so a blob resource read renders like an embedded blob resource."""

    type = "resource"

    def __init__(self, item: Any) -> None:
        self.resource = item


class _ReadText(_Blob):
    """Adapter for a text resource read (shown without the "[resource URI]" prefix)."""

    type = "read_text"
