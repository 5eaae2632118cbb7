"""Rich display of results, errors, flows and traces (``_repr_mimebundle_`` objects).

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
  one-line note, and the rest of the result still renders.

Sizes are bounded by the flow's ``Limits`` (``%config MCPMagics.max_result_chars`` and
``max_inline_bytes``): text beyond the budget is cut with a note saying how much and how to get
the whole value, which always stays on the flow (``flow.result()``, ``-o VAR``).

Why this module is long: every part of one result's rendering draws on one character budget
(``_Budget``), which must pass through the blocks, the structured views and the media of that
result; splitting it would thread the budget across modules for no reader's gain.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
from typing import TYPE_CHECKING, Any

from ..core.kept import Kept
from ..core.limits import Limits
from ..core.text import clip as _clip
from ..core.text import content_text, esc, plain_text
from .listing import ShownOnce
from .table_rows import TableRows

if TYPE_CHECKING:
    from ..flows.flow import Flow

__all__ = [
    "FlowReport",
    "ResultView",
    "StructuredView",
    "Table",
    "TraceView",
    "content_text",
    "display_flow",
    "display_result",
    "esc",
    "render_content",
    "reported",
    "safe_mime",
    "shown_state",
    "tool_error",
]

WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"

OUTPUT_CSS = (
    ".mcpnb{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;color:var(--jp-content-font-color1,inherit)}"
    ".mcpnb .hdr{color:var(--jp-ui-font-color2,#616161);margin-bottom:4px}"
    ".mcpnb .err{border-left:4px solid var(--jp-error-color1,#d32f2f);"
    "background:color-mix(in srgb,var(--jp-error-color1,#d32f2f) 10%,transparent);padding:4px 8px;white-space:pre-wrap}"
    ".mcpnb .note{color:var(--jp-ui-font-color2,#616161);font-style:italic}"
    ".mcpnb pre{margin:2px 0;white-space:pre-wrap}.mcpnb table{border-collapse:collapse}"
    ".mcpnb td,.mcpnb th{padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid var(--jp-border-color2,#e0e0e0)}"
    ".mcpnb .badge{display:inline-block;border-radius:8px;padding:0 6px;font-size:11px;color:var(--jp-ui-font-color1,#000);"
    "border:1px solid var(--mcpnb-state,var(--jp-border-color1,#bdbdbd));"
    "background:color-mix(in srgb,var(--mcpnb-state,var(--jp-border-color1,#bdbdbd)) 25%,var(--jp-layout-color1,#fff))}"
    ".mcpnb .badge.running{--mcpnb-state:var(--jp-brand-color1,#1976d2)}"
    ".mcpnb .badge.waiting{--mcpnb-state:var(--jp-warn-color1,#f57c00)}"
    ".mcpnb .badge.done{--mcpnb-state:var(--jp-success-color1,#388e3c)}"
    ".mcpnb .badge.failed,.mcpnb .badge.error{--mcpnb-state:var(--jp-error-color1,#d32f2f)}"
    ".mcpnb .badge.cancelled{--mcpnb-state:var(--jp-border-color1,#bdbdbd)}"
    ".mcpnb .to-server{color:var(--jp-content-link-color,#0d47a1)}.mcpnb .to-client{color:var(--jp-mirror-editor-string-color,#ba2121)}"
    ".mcpnb .scroll{max-height:32em;overflow-y:auto}"
    ".mcpnb .scroll th{position:sticky;top:0;background:var(--jp-layout-color1,#fff)}"
    ".mcpnb details.fold>summary{cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;max-width:48em}"
    ".mcpnb details.fold[open]>summary{white-space:normal}"
    ".mcpnb details.fold>div{white-space:pre-wrap;overflow-wrap:anywhere;max-width:60em}"
    ".mcpnb pre.box{max-height:30em;overflow:auto;resize:vertical;border:1px solid var(--jp-border-color2,#e0e0e0);padding:4px}"
)
"""The look of every output of ours, from JupyterLab's CSS variables only (so Light, Dark and any theme read well).

The same rules are in the labextension (``labextension/style/output.css``, kept equal by a test): a notebook
reopened untrusted loses an output's ``<style>`` to JupyterLab's sanitizer but keeps its classes, so the
extension's copy still styles it; ``STYLE`` serves front ends without the extension (VS Code, nbviewer).
A state badge is the state's colour mixed into the page's background, with the page's text colour on it:
white text on a fixed orange failed WCAG AA in Light, and the page's text on a pale fixed tint failed in Dark."""
STYLE = f"<style>{OUTPUT_CSS}</style>"
VALUE_STYLE = (
    "<style>.mcpnb .tree{padding-left:1em}.mcpnb .tree code{white-space:pre-wrap;word-break:break-word}"
    ".mcpnb details.json>summary{color:var(--jp-ui-font-color2,#616161)}.mcpnb .md{max-width:60em}.mcpnb .md table{margin:4px 0}</style>"
)
"""The look of structured content and markdown, added only to outputs that show them (``STYLE`` stays as every saved output has it)."""
_STATES = frozenset({"running", "waiting", "done", "failed", "error", "cancelled"})
_SCROLL_ROWS = 20
"""A table of more rows than this sits in a bounded scroll area, its row count said under it."""
_FOLD_CHARS = 80
"""A table cell longer than this (or of several lines) shows its first line; the rest on hover (title) or expand."""
_CELL_CHARS = 2_000
"""At most this much of one table cell reaches the page (a server's 10 MB description stays in ``rows``)."""
_BOX_LINES, _BOX_CHARS = 40, 4_000
"""A text result longer than this sits in a bounded, scrollable box headed by its size."""

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
_SAME_JSON_CHARS = 5_000_000  # longer texts are not parsed to compare with the structured content (shown both ways)
_BLOCK_COST = 64  # budget characters every rendered block costs (its markup), so countless tiny blocks stay bounded
MARKDOWN_TYPES = frozenset(
    {"text/markdown", "text/x-markdown"}
)  # rendered by ``safe_markdown``; anything else is escaped text
_WHOLE = "the whole value stays on the flow: flow.result() (or -o VAR on the magic) gives the full SDK result"


def badge(state: str) -> str:
    """A state's badge: its colour comes from a class (``OUTPUT_CSS``), so it follows the theme."""
    kind = f" {state}" if state in _STATES else ""
    return f'<span class="badge{kind}">{esc(state)}</span>'


def tool_error(value: Any) -> bool:
    """Whether ``value`` is a tool's result with ``isError``: the tool ran and reports that it failed."""
    return bool(getattr(value, "is_error", False)) and hasattr(value, "content")


def shown_state(flow: Flow) -> str:
    """The state a person is shown: ``error`` for a call that ended with the tool's own error (its flow is ``done``)."""
    state = flow.state.value
    return "error" if state == "done" and flow.error is None and tool_error(flow.value) else state


def task_line(flow: Flow) -> str:
    """A call running as a task, in one line: status, the server's status message, time, poll interval.

    Never the task id (a bearer-like handle). The message is the server's text, cut to 300
    characters; callers escape the line.
    """
    task = flow.task
    if task is None:
        return ""
    parts = [f"task {task.status}"]
    if task.message:
        message = " ".join(task.message.split())
        parts.append(message if len(message) <= 300 else message[:299] + "…")
    if task.terminal:
        took = task.took()
        if took is None:  # the server gave no times: what this kernel saw
            since = flow.task_started if flow.task_started is not None else flow.started
            took = (flow.ended or time.perf_counter()) - since
        parts.append(f"ran {took:.1f} s")
    else:
        age = task.age()
        if age is not None:
            parts.append(f"started {age:.1f} s ago")
        parts.append(f"polled every {task.poll_seconds:g} s")
    return " · ".join(parts)


def note_html(text: str) -> str:
    return f'<div class="note">{esc(text)}</div>'


def _dropped(items: Any, what: str) -> str | None:
    """What a bounded list of a flow let go (``core.kept.Kept.marker``): "N earlier WHAT dropped (...)", or ``None``."""
    return items.marker(what) if isinstance(items, Kept) else None


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


class _Budget:
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
                f"[output cut at {self.limits.max_result_chars:,} characters: {' and '.join(what)} not shown; {_WHOLE}; "
                "%config MCPMagics.max_result_chars = N shows more]"
            )
        if self.media_cut:
            out.append(
                f"[{self.media_cut:,} bytes of images, audio or files not embedded (over {self.limits.max_inline_bytes:,} bytes); "
                f"{_WHOLE}; %config MCPMagics.max_inline_bytes = N embeds more]"
            )
        return out


def _cut_note(cut: int) -> str:
    return f"[… {cut:,} more characters not shown]"


def _text(value: str, budget: _Budget) -> tuple[str, str]:
    """Bounded text as (plain, the escaped HTML inside a ``<pre>``)."""
    shown, cut = budget.text(value)
    if not cut:
        return shown, esc(shown)
    return f"{shown}\n{_cut_note(cut)}", f"{esc(shown)}\n<i>{esc(_cut_note(cut))}</i>"


def _pre(full: str, inner: str, cut: int = 0) -> str:
    """Escaped text ``inner`` (what was shown of ``full``) in a ``<pre>``; a long one in a bounded, scrollable box.

    The box is headed by the text's size, so a reader knows how much there is before scrolling. Its
    bound is inline as well as in ``OUTPUT_CSS`` (JupyterLab's sanitizer keeps ``max-height`` and
    ``overflow``), so a reopened, untrusted notebook keeps it. The whole text never goes into the
    output: the file stays within ``max_result_chars``; the kernel keeps the rest (``_WHOLE``).
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


def _json_text(value: Any, indent: int | None = 2) -> str | None:
    try:
        return json.dumps(value, indent=indent, ensure_ascii=False, default=str)
    except (RecursionError, ValueError, TypeError):
        return None


def _json_block(
    value: Any, budget: _Budget, summary: str = "structured content", room: int | None = None
) -> tuple[str, str]:
    """A JSON value: its indented JSON as plain text; in HTML a table or a tree folded by depth (``StructuredView``).

    ``room``: the characters the HTML view may use, when not what is left of ``budget`` (a text
    block that only repeated this value spent the budget for the plain text, not for the page).
    """
    text = _json_text(value)
    if text is None:
        note = f"[{summary}: too deeply nested to show; {_WHOLE}]"
        return note, note_html(note)
    room = max(budget.chars if room is None else room, 0)
    plain, _ = _text(
        text, budget
    )  # the plain twin spends the budget (and says what was cut); the HTML gets the same room
    inner = StructuredView(room).html(value)
    return plain, f'{VALUE_STYLE}<details open class="json"><summary>{esc(summary)}</summary>{inner}</details>'


TABLE_ROWS = 200
"""Most rows of an array of objects shown as a table (the rest are counted)."""
TABLE_COLUMNS = 24
"""Most columns of such a table (keys in order of first appearance)."""
CELL_CHARS = 200
"""Most characters of one table cell, key, or nested value shown on one line."""
OPEN_DEPTH = 2
"""Objects and arrays nested less deep than this are shown unfolded; deeper ones start folded."""
MAX_DEPTH = 16
"""Below this depth a value is shown as one line of JSON, cut to ``CELL_CHARS``."""
_NODE_COST = 24  # room every shown key, item or cell costs (its markup), so a million tiny items stay bounded
_INLINE_LIST = 120  # an array of plain values this short in JSON is shown on one line


class StructuredView:
    """A JSON value as HTML a person reads: arrays of objects as tables, objects as trees folded by depth.

    Every key and value is escaped; the whole costs at most ``chars`` characters of text (plus
    ``_NODE_COST`` per item), tables at most ``TABLE_ROWS`` x ``TABLE_COLUMNS``, and nesting is shown
    to ``MAX_DEPTH`` levels: what is left out is counted where it would have been. Never raises on
    any JSON value (it recurses at most ``MAX_DEPTH`` levels).
    """

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self.hidden = 0  # items, rows or columns not shown

    def html(self, value: Any) -> str:
        body = self._value(value, 0)
        if self.hidden:
            body += note_html(f"[{self.hidden:,} more items not shown; {_WHOLE}]")
        return body

    @property
    def _out(self) -> bool:
        return self.chars <= 0

    def _clip(self, text: str, most: int | None = None) -> str:
        """``text`` cut to what is left (and to ``most``), the room spent."""
        room = max(self.chars, 0) if most is None else min(max(self.chars, 0), most)
        shown = text if len(text) <= room else text[: max(room - 1, 0)] + "…"
        self.chars -= len(shown) + _NODE_COST
        return shown

    def _value(self, value: Any, depth: int) -> str:
        if isinstance(value, dict) and value:
            return self._compact(value) if depth >= MAX_DEPTH else self._object(value, depth)
        if isinstance(value, list) and value:
            if depth >= MAX_DEPTH:
                return self._compact(value)
            if all(isinstance(item, dict) for item in value):
                return self._table(value)
            return self._list(value, depth)
        return self._leaf(value)

    def _leaf(self, value: Any) -> str:
        text = _json_text(value, indent=None)
        return f"<code>{esc(self._clip(text if text is not None else repr(value)))}</code>"

    def _compact(self, value: Any) -> str:
        text = _json_text(value, indent=None)
        if text is None:
            return note_html("[too deeply nested to show]")
        return f"<code>{esc(self._clip(text, CELL_CHARS))}</code>"

    def _entries(self, items: list[tuple[str, Any]], total: int, depth: int) -> str:
        rows = []
        for i, (key, value) in enumerate(items):
            if self._out:
                self.hidden += total - i
                break
            name = esc(self._clip(key, CELL_CHARS))
            if isinstance(value, (dict, list)) and value and not self._short(value):
                count = f"{len(value):,} {'key' if isinstance(value, dict) else 'item'}{'s' if len(value) != 1 else ''}"
                shape = f"{{{count}}}" if isinstance(value, dict) else f"[{count}]"
                fold = " open" if depth + 1 < OPEN_DEPTH else ""
                rows.append(
                    f'<details{fold}><summary><b>{name}</b> <span class="note">{shape}</span></summary>{self._value(value, depth + 1)}</details>'
                )
            else:
                rows.append(f"<div><b>{name}</b>: {self._value(value, depth + 1)}</div>")
        return '<div class="tree">' + "".join(rows) + "</div>"

    def _object(self, value: dict[Any, Any], depth: int) -> str:
        return self._entries([(str(k), v) for k, v in value.items()], len(value), depth)

    def _list(self, value: list[Any], depth: int) -> str:
        if self._short(value):
            return self._compact(value)
        shown = min(len(value), TABLE_ROWS)
        self.hidden += len(value) - shown
        return self._entries([(str(i), value[i]) for i in range(shown)], shown, depth)

    @staticmethod
    def _short(value: dict[Any, Any] | list[Any]) -> bool:
        """A list of a few plain values, shown on one line."""
        if (
            not isinstance(value, list)
            or len(value) > _INLINE_LIST // 2
            or any(isinstance(v, (dict, list)) for v in value)
        ):
            return False
        text = _json_text(value, indent=None)
        return text is not None and len(text) <= _INLINE_LIST

    def _table(self, rows: list[dict[Any, Any]]) -> str:
        columns: list[str] = []
        seen: set[str] = set()
        more_columns = False
        for row in rows[:TABLE_ROWS]:
            for key in row:
                name = str(key)
                if name in seen:
                    continue
                if len(columns) == TABLE_COLUMNS:
                    more_columns = True
                    break
                seen.add(name)
                columns.append(name)
        head = "".join(f"<th>{esc(self._clip(c, CELL_CHARS))}</th>" for c in columns)
        body = []
        for row in rows[:TABLE_ROWS]:
            if self._out:
                break
            keyed = {str(k): v for k, v in row.items()} if any(not isinstance(k, str) for k in row) else row
            body.append(
                "<tr>" + "".join(f"<td>{self._cell(keyed[c]) if c in keyed else ''}</td>" for c in columns) + "</tr>"
            )
        notes = []
        if len(rows) > len(body):
            notes.append(f"{len(body):,} of {len(rows):,} rows shown")
        if more_columns:
            notes.append(f"the first {TABLE_COLUMNS} columns shown")
        note = note_html("[" + "; ".join(notes) + f"; {_WHOLE}]") if notes else ""
        return f'<table class="records"><tr>{head}</tr>{"".join(body)}</table>{note}'

    def _cell(self, value: Any) -> str:
        """A table cell: a string as text, a number, boolean or null as its JSON, a nested value as one line of JSON."""
        if isinstance(value, (dict, list)):
            return self._compact(value)
        text = value if isinstance(value, str) else _json_text(value, indent=None)
        return esc(self._clip(text if text is not None else repr(value), CELL_CHARS))


def render_content(block: Any, limits: Limits | None = None, budget: _Budget | None = None) -> tuple[str, str]:
    """One content block -> (plain text, HTML); never raises: a block that cannot be shown is a note."""
    budget = budget if budget is not None else _Budget(limits)
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


def _render(block: Any, kind: Any, budget: _Budget) -> tuple[str, str]:
    if kind == "text":
        full = str(block.text)
        before = budget.cut
        plain, inner = _text(full, budget)
        return plain, _pre(full, inner, budget.cut - before)
    if kind in ("image", "audio"):
        return _media(kind, block.mime_type, block.data, budget)
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
        return _media("resource", res.mime_type or "application/octet-stream", res.blob, budget, uri=uri)
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
    plain, rich = _json_block(dumped, budget, _word(kind))
    return plain, rich


def _resource_text(text: str, mime: str, budget: _Budget) -> tuple[str, str]:
    """A resource's text as (plain, HTML): ``text/markdown`` rendered by ``safe_markdown`` (no raw HTML, safe links only), else escaped in a ``<pre>``."""
    shown, cut = budget.text(text)
    plain = f"{shown}\n{_cut_note(cut)}" if cut else shown
    if mime in MARKDOWN_TYPES:
        from .safe_markdown import (
            render_markdown,
        )  # markdown-it costs about 15 ms to import: only when a markdown resource shows

        rich = f'{VALUE_STYLE}<div class="md">{render_markdown(shown)}</div>'
    else:
        rich = _pre(text, esc(shown), cut)
    return plain, rich + (f"<div><i>{esc(_cut_note(cut))}</i></div>" if cut else "")


def _is_note(rich: str) -> bool:
    return rich.startswith('<div class="note">')


def _repeats(content: list[Any], structured: Any) -> tuple[set[int], bool]:
    """Which content blocks only repeat the structured content, and whether the text alone says all of it.

    The spec advises a tool with structured content to send its JSON as a text block too, and the
    SDK does, in three shapes: one block with the JSON of the whole; for a tool returning a list,
    ``{"result": [...]}`` with one block per item; for a plain value, ``{"result": X}`` with ``X``
    as text. The first two are shown once, as structured content (the blocks' indices come back);
    in the third the text is the value, and the structured view would only wrap it (``True``).
    """
    if structured is None:
        return set(), False
    texts = {
        i: b.text
        for i, b in enumerate(content)
        if getattr(b, "type", None) == "text" and isinstance(getattr(b, "text", None), str)
    }
    wrapped = structured.get("result", _NOTHING) if isinstance(structured, dict) and len(structured) == 1 else _NOTHING
    if wrapped is not _NOTHING and not isinstance(wrapped, (dict, list)):
        only = texts.get(0) if len(content) == 1 else None
        return set(), only is not None and (
            only == wrapped if isinstance(wrapped, str) else _parsed(only) == _canonical(wrapped)
        )
    if (
        isinstance(wrapped, list)
        and wrapped
        and len(texts) == len(content) == len(wrapped)
        and all(_parsed(texts[i]) == _canonical(item) for i, item in enumerate(wrapped))
    ):
        return set(texts), False
    same = {_canonical(structured), _canonical(wrapped)} - {None}
    return {i for i, text in texts.items() if _parsed(text) in same}, False


_NOTHING = object()


def _canonical(value: Any) -> str | None:
    """``value`` as one JSON text (keys sorted), so that ``true``, ``1`` and ``1.0`` stay three values; ``None`` if it is no JSON."""
    if value is _NOTHING:
        return None
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key repeats")  # JSON that says one thing to a reader and another to a parser
    return dict(pairs)


def _parsed(text: str) -> str | None:
    """The canonical JSON (``_canonical``) of a text holding JSON with no repeated key, else ``None``.

    Only a text that says exactly what the structured content says is hidden as a repeat: a text
    whose object repeats a key (``{"action": "delete", "action": "list"}``) or whose values only
    compare equal in Python (``true`` and ``1``) is shown.
    """
    if len(text) > _SAME_JSON_CHARS:
        return None
    try:
        return _canonical(json.loads(text, object_pairs_hook=_no_repeated_keys))
    except (ValueError, RecursionError):
        return None


def _media(kind: str, mime_value: Any, data: Any, budget: _Budget, uri: str | None = None) -> tuple[str, str]:
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


def _blocks_html(blocks: list[Any], budget: _Budget) -> list[tuple[str, str]]:
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

    def parts(self, budget: _Budget | None = None) -> tuple[list[str], list[str]]:
        budget = budget if budget is not None else _Budget(self.limits)
        plain, rich = self._parts(budget)
        for note in budget.notes():
            plain.append(note)
            rich.append(note_html(note))
        return plain, rich

    def _parts(self, budget: _Budget) -> tuple[list[str], list[str]]:
        r = self.result
        plain: list[str] = []
        rich: list[str] = []
        if hasattr(r, "content") and hasattr(r, "is_error"):  # CallToolResult
            room = budget.chars
            blocks = _blocks_html(list(r.content), budget)
            if r.is_error:  # the badge of its report says "error", and a %mcp cell fails (see ``tool_error``)
                text = "\n".join(p for p, _ in blocks) or "the tool reported an error"
                plain.append(f"Tool error: {text}")
                rich.append(f'<div class="err"><b>Tool error</b>\n{esc(text)}</div>')
                return plain, rich
            structured = r.structured_content
            repeats, text_says_it = _repeats(list(r.content), structured)
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
                p, h = _json_block(structured, budget, room=room)
                if not blocks:
                    plain.append(p)
                if not text_says_it:
                    rich.append(h)
        elif hasattr(r, "messages"):  # GetPromptResult
            if r.description:
                p, inner = _text(str(r.description), budget)
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
        elif hasattr(r, "contents"):  # ReadResourceResult
            items = [_ReadText(item) if getattr(item, "text", None) is not None else _Blob(item) for item in r.contents]
            for p, h in _blocks_html(items, budget):
                plain.append(p)
                rich.append(h)
        else:
            p, inner = _text(repr(r), budget)
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


def _not_ready(event: dict[str, Any]) -> bool:
    """A 2026 round the server answered "not ready yet": a request state and no input requests (the client retries after a back-off)."""
    message = event.get("message")
    return (
        event.get("from") == "server"
        and isinstance(message, dict)
        and message.get("resultType") == "input_required"
        and not message.get("inputRequests")
        and "requestState" in message
    )


class TraceView(ShownOnce):
    """A flow's messages as a timeline; on 2026-07-28 every arrow points client → server."""

    def __init__(self, flow: Flow, limits: Limits | None = None) -> None:
        self.flow = flow
        self.limits = limits or getattr(flow, "limits", None) or Limits()

    def events(self) -> list[dict[str, Any]]:
        return self.flow.trace(times=True)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        flow = self.flow
        budget = _Budget(self.limits)
        version = flow.conn.protocol_version or "?"
        plain = [f"trace of {flow.label} (protocol {version})"]
        rows = []
        earlier = _dropped(flow.rounds, "rounds")
        if earlier:
            plain.append(f"  … {earlier}")
            rows.append(f"<tr><td colspan='4' style='text-align:left'>{note_html('… ' + earlier)}</td></tr>")
        for event in self.events():
            arrow = (
                "client → server" if event["from"] == "client" else "server → client"
            ) + f" {event.get('kind', '')}".rstrip()
            if _not_ready(event):
                arrow += " (not ready: state, no question)"
            message = _json_text(event["message"], indent=None)
            if message is None:
                message = "[message too deeply nested to show]"
            shown, cut = budget.text(message)
            if cut:
                shown += f" {_cut_note(cut)}"
            budget.block()
            at = f"+{event['ms']} ms" if "ms" in event else ""
            plain.append(f"  round {event['round']}  {at}  {arrow}  {shown}")
            request = event.get("kind") == "request"
            lane_class = "to-server" if event["from"] == "client" else "to-client"
            line = "━━━━━━" if request else "╌╌╌╌╌╌"
            lane = f"client {line}▶ server" if event["from"] == "client" else f"client ◀{line} server"
            lane += " request" if request else " result"
            if _not_ready(event):
                lane += " · not ready"
            if request and event["from"] == "server":
                lane = f"<b>{lane}</b>"  # a 2025 back-channel request: the arrow 2026 removed
            rows.append(
                f"<tr><td>{esc(event['round'])}</td><td style='white-space:nowrap'>{esc(at)}</td>"
                f"<td class='{lane_class}' style='white-space:nowrap;font-family:monospace'>{lane}</td>"
                f"<td style='text-align:left'><code style='display:block;text-align:left;white-space:pre-wrap;word-break:break-word;"
                f"font-family:var(--jp-code-font-family,monospace);font-size:12px'>{esc(shown)}</code></td></tr>"
            )
        notes = budget.notes()
        plain.extend(notes)
        legend = "<small>━ request · ╌ result</small>"
        table = (
            f"<table><tr><th>round</th><th>time</th><th>direction {legend}</th><th>message</th></tr>"
            + "".join(rows)
            + "</table>"
        )
        return {
            "text/plain": plain_text("\n".join(plain)),
            "text/html": STYLE
            + f'<div class="mcpnb"><div class="hdr">trace of <b>{esc(flow.label)}</b> (protocol {esc(version)})</div>{table}'
            + "".join(note_html(n) for n in notes)
            + "</div>",
        }


class FlowReport:
    """The settled picture of a flow: status, what was answered (no values), result or error."""

    def __init__(self, flow: Flow, trace: bool = False, limits: Limits | None = None, show_error: bool = True) -> None:
        self.flow = flow
        self.trace = trace
        self.limits = limits or getattr(flow, "limits", None) or Limits()
        self.show_error = show_error  # False when the error is raised right after (IPython shows it; once is enough)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        flow = self.flow
        budget = _Budget(self.limits)
        plain: list[str] = []
        rich: list[str] = []
        state = shown_state(flow)
        elapsed = (flow.ended or flow.started) - flow.started
        sent = getattr(flow, "sent", flow.round + 1)  # requests sent, as the trace counts them
        rounds = f"{sent} round{'' if sent == 1 else 's'}"
        rich.append(f'<div class="hdr">{badge(state)} <b>{esc(flow.label)}</b> · {esc(rounds)} · {elapsed:.2f} s</div>')
        if getattr(flow, "task", None) is not None:
            line = task_line(flow)
            plain.append(line)
            rich.append(f"<div class='hdr'>{esc(line)}</div>")
        if flow.answer_summary:
            earlier = _dropped(flow.answer_summary, "answers")
            answered = "; ".join(([f"… {earlier}"] if earlier else []) + list(flow.answer_summary))
            rich.append(f"<div class='hdr'>answered: {esc(answered)}</div>")
        earlier = _dropped(flow.notes, "notes")
        for note in ([f"… {earlier}"] if earlier else []) + list(flow.notes):
            rich.append(f"<div class='hdr'>{esc(note)}</div>")
        if flow.error is not None and self.show_error:
            text, inner = _text(str(flow.error), budget)
            plain.append(f"Error: {text}")
            rich.append(f'<div class="err">{inner}</div>')
        elif flow.error is not None:
            plain.append(f"{state}: {flow.label} · {rounds} (the error follows)")
        elif flow.value is not None:
            p, h = ResultView(flow.value, self.limits)._parts(budget)
            plain.extend(p)
            rich.extend(h)
        if flow.logs:
            earlier = _dropped(flow.logs, "lines")
            lines = "\n".join(
                ([f"… {earlier}"] if earlier else [])
                + [
                    f"[{e['level']}] {e.get('logger') or ''} {log_text(e['data'])}".replace("  ", " ")
                    for e in flow.logs
                ]
            )
            _, inner = _text(lines, budget)
            count = getattr(flow.logs, "seen", len(flow.logs))  # every line the server sent, dropped ones too
            rich.append(f"<details><summary>server log ({count})</summary><pre>{inner}</pre></details>")
        logged = getattr(flow, "server_logged", 0)
        if logged:  # an in-process server's records went to its connection's log (wire/server_logs.py)
            from ..core.text import mcp_line

            line = f"{flow.conn.name} logged {logged} line{'s' if logged != 1 else ''} while serving this call: {mcp_line('%mcp', 'log', flow.conn.name)}"  # fmt: skip
            plain.append(line)
            rich.append(note_html(line))
        for note in budget.notes():
            plain.append(note)
            rich.append(note_html(note))
        bundle: dict[str, Any] = {
            "text/plain": plain_text("\n".join(plain)),
            "text/html": STYLE + '<div class="mcpnb">' + "".join(rich) + "</div>",
        }
        app = getattr(flow, "app", None)
        if app is not None and flow.error is None:
            from .apps import OUTPUT_MIME

            bundle[OUTPUT_MIME] = app.payload()
            host = getattr(flow, "app_host", None)
            if app.by_widget and host is not None:  # no extension on the page: the App as a widget, if installed
                from .app_widget import widget_for

                widget = widget_for(host, app, bundle["text/plain"])
                if widget is not None:
                    bundle[WIDGET_VIEW_MIME] = {"version_major": 2, "version_minor": 0, "model_id": widget.model_id}
        if self.trace:
            tb = TraceView(flow, self.limits)._repr_mimebundle_()
            bundle = {
                "text/plain": plain_text(bundle["text/plain"] + "\n" + tb["text/plain"]),
                "text/html": bundle["text/html"] + tb["text/html"],
            }
        return bundle


class Table(ShownOnce, TableRows):
    """A small table with a plain-text twin (servers, tools, prompts, flows)."""

    def __init__(
        self,
        columns: list[str],
        rows: list[list[Any]],
        title: str = "",
        empty: str = "nothing to show",
        notes: list[str] | None = None,
        wrap: bool = False,
    ) -> None:
        self.columns, self.rows, self.title, self.empty = columns, rows, title, empty
        self.notes = list(notes or [])  # whole lines under the table (never clipped)
        self.wrap = wrap  # the last column is shown whole: folded in plain text, pre-wrapped in HTML (log messages)

    def shown_columns(self) -> list[int]:
        """The columns worth a reader's eye: a column empty in every row is left out (``rows`` keeps it)."""
        keep = [i for i in range(len(self.columns)) if any(i < len(r) and str(r[i]).strip() for r in self.rows)]
        return keep or list(range(len(self.columns)))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        if not self.rows:
            return {
                "text/plain": plain_text(self.empty),
                "text/html": f'<div class="mcpnb"><i>{esc(self.empty)}</i></div>',
            }
        keep = self.shown_columns()
        columns = [self.columns[i] for i in keep]
        rows = [[row[i] if i < len(row) else "" for i in keep] for row in self.rows]
        last = len(columns) - 1
        wrap = self.wrap and keep[-1] == len(self.columns) - 1  # the wrapped column is shown
        cells = [  # one line a row (spelled out before they are measured); the wrapped column is folded below
            [plain_text(str(v) if wrap and i == last else _first_line(str(v))) for i, v in enumerate(row)]
            for row in rows
        ]
        widths = [max(len(str(c)), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
        widths = [min(w, 60) for w in widths]
        lines = ([self.title] if self.title else []) + [
            "  ".join(str(c).ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()
        ]
        for row in cells:
            if not wrap or len(row) <= last:
                lines.append("  ".join(_clip(v, w).ljust(w) for v, w in zip(row, widths, strict=False)).rstrip())
                continue
            lead = "  ".join(_clip(v, w).ljust(w) for v, w in zip(row[:last], widths, strict=False))
            indent = " " * (len(lead) + 2)
            folded = _fold(row[last], widths[last])
            lines.append(f"{lead}  {folded[0]}".rstrip())
            lines.extend(f"{indent}{part}".rstrip() for part in folded[1:])
        count = f"{len(self.rows):,} rows" if len(self.rows) > _SCROLL_ROWS else ""
        if count:
            lines.append(f"({count})")
        head = "".join(f"<th style='text-align:left'>{esc(c)}</th>" for c in columns)
        whole = "<td style='text-align:left;white-space:pre-wrap;word-break:break-word'>"
        body = "".join(
            "<tr>"
            + "".join(
                f"{whole}{esc(v)}</td>" if wrap and i == last else f"<td style='text-align:left'>{_cell_html(v)}</td>"
                for i, v in enumerate(row)
            )
            + "</tr>"
            for row in rows
        )
        table = f"<table><tr>{head}</tr>{body}</table>"
        if count:  # a bounded area; its bound inline too, as JupyterLab's sanitizer keeps it (see ``_pre``)
            table = f'<div class="scroll" style="max-height:32em;overflow-y:auto">{table}</div>'
        title = f'<div class="hdr">{esc(self.title)}</div>' if self.title else ""
        notes = "".join(note_html(n) for n in ([count] if count else []) + self.notes)
        return {
            "text/plain": plain_text("\n".join(lines + self.notes)),
            "text/html": STYLE + f'<div class="mcpnb">{title}{table}{notes}</div>',
        }


def _first_line(text: str) -> str:
    """A plain-text cell: its first line, ``…`` saying there is more (the HTML folds it; ``rows`` keep it whole)."""
    first, more, _ = text.strip().partition("\n")
    return f"{first} …" if more else first


def _cell_html(value: Any) -> str:
    """One table cell: short text as it is; long or several lines folded to its first line, the rest on hover or expand.

    JupyterLab right-aligns table cells: ``text-align:left`` is inline as well as in ``OUTPUT_CSS``.
    A cell is bounded (``_CELL_CHARS``): the page gets no megabytes of one server's description.
    """
    text = str(value)
    if len(text) <= _FOLD_CHARS and "\n" not in text:
        return esc(text)
    first = text.strip().split("\n", 1)[0]
    first = first if len(first) <= _FOLD_CHARS else first[: _FOLD_CHARS - 1] + "…"
    shown = (
        text if len(text) <= _CELL_CHARS else text[:_CELL_CHARS] + f" [… {len(text) - _CELL_CHARS:,} more characters]"
    )
    hover = text if len(text) <= 500 else text[:500] + "…"
    return (
        f'<details class="fold"><summary title="{esc(hover)}">{esc(first)}</summary><div>{esc(shown)}</div></details>'
    )


def _fold(text: str, width: int) -> list[str]:
    """Text as lines of at most ``width`` characters (at spaces where it can), nothing dropped."""
    lines: list[str] = []
    for line in text.splitlines() or [""]:
        while len(line) > width:
            cut = line.rfind(" ", 1, width + 1)
            cut = cut if cut > 0 else width
            lines.append(line[:cut].rstrip())
            line = line[cut:].lstrip(" ")
        lines.append(line)
    return lines


def log_text(data: Any) -> str:
    """A log entry's ``data`` as one text: a string as it is, anything else as JSON."""
    if isinstance(data, str):
        return data
    text = _json_text(data, indent=None)
    return text if text is not None else repr(data)


def display_flow(flow: Flow) -> None:
    """Show a flow: its live view if it has one on screen, else its settled report."""
    from IPython.display import display

    if flow.shown:
        return  # already in its cell (live view or settled report); don't show it twice
    display(FlowReport(flow))


_reported: list[tuple[Any, int | None]] = []  # the result the running cell's report shows, with that cell's count


def reported(result: Any) -> Any:
    """Mark ``result`` as shown by its flow's report in the running cell, and return it.

    A ``%mcp call`` cell's value is its result (``_``, ``Out[n]``), as any expression's is; the
    cell already shows the flow's report, so the displayhook showing that value shows nothing more.
    """
    from .listing import _execution_count

    _reported[:] = [(result, _execution_count())]
    return result


def display_result(result: Any) -> None:
    """Show an SDK result (tool, prompt, resource) as its rendered ``ResultView``, not the model's repr.

    Registered on the shell (``mcp_notebook._show_flows``); skipped once for the value its own cell's
    report has just shown (``reported``): displayed again later (``r`` in another cell), it shows.
    """
    from IPython.display import display

    from .listing import _execution_count

    shown = _reported[:]
    _reported.clear()  # skipped at most once, as a listing is
    if shown and shown[0][0] is result and shown[0][1] == _execution_count():
        return
    display(ResultView(result))
