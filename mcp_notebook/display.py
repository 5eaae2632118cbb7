"""Rich display of results, errors, flows and traces (``_repr_mimebundle_`` objects).

Every content type of MCP gets a fitting rendering: text, images, audio, embedded resources
(text and blob), resource links, structured content (foldable JSON), and tool errors shown as
errors rather than tracebacks. ``text/plain`` stays free of timings and ids so notebooks compare
cleanly under nbval; answer values never appear (outputs are saved and shared).
"""

from __future__ import annotations

import base64
import html
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .flows import Flow

__all__ = ["FlowReport", "ResultView", "Table", "TraceView", "display_flow", "render_content"]

STYLE = (
    "<style>.mcpnb{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px}"
    ".mcpnb .hdr{color:var(--jp-ui-font-color2,#555);margin-bottom:4px}"
    ".mcpnb .err{border-left:4px solid #d32f2f;background:rgba(211,47,47,.08);padding:4px 8px;white-space:pre-wrap}"
    ".mcpnb pre{margin:2px 0;white-space:pre-wrap}.mcpnb table{border-collapse:collapse}"
    ".mcpnb td,.mcpnb th{padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #ddd}"
    ".mcpnb .badge{display:inline-block;border-radius:8px;padding:0 6px;font-size:11px;color:#fff}"
    "</style>"
)
_BADGE_COLOURS = {"running": "#1976d2", "waiting": "#ef6c00", "done": "#2e7d32", "failed": "#d32f2f", "cancelled": "#616161"}


def esc(value: Any) -> str:
    return html.escape(str(value))


def badge(state: str) -> str:
    return f'<span class="badge" style="background:{_BADGE_COLOURS.get(state, "#555")}">{esc(state)}</span>'


def _json_block(value: Any, summary: str = "structured content") -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return f"<details open><summary>{esc(summary)}</summary><pre>{esc(text)}</pre></details>"


def render_content(block: Any) -> tuple[str, str]:
    """One content block -> (plain text, HTML)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return block.text, f"<pre>{esc(block.text)}</pre>"
    if kind in ("image", "audio"):
        size = len(base64.b64decode(block.data or "", validate=False)) if block.data else 0
        plain = f"[{kind} {block.mime_type}, {size} bytes]"
        src = f"data:{esc(block.mime_type)};base64,{block.data}"
        tag = f'<img src="{src}" style="max-width:100%"/>' if kind == "image" else f'<audio controls src="{src}"></audio>'
        return plain, f"<div>{tag}<br/><small>{esc(plain)}</small></div>"
    if kind == "resource":
        res = block.resource
        uri, mime = str(res.uri), res.mime_type or ""
        if getattr(res, "text", None) is not None:
            return f"[resource {uri}]\n{res.text}", f"<div><small>resource <code>{esc(uri)}</code> {esc(mime)}</small><pre>{esc(res.text)}</pre></div>"
        size = len(base64.b64decode(res.blob or "", validate=False))
        plain = f"[resource {uri} {mime}, {size} bytes]"
        link = f'<a download="{esc(uri.rsplit("/", 1)[-1])}" href="data:{esc(mime or "application/octet-stream")};base64,{res.blob}">download</a>'
        return plain, f"<div><small>{esc(plain)}</small> {link}</div>"
    if kind == "resource_link":
        title = block.title or block.name
        plain = f"[link {title}: {block.uri}]"
        desc = f" — {esc(block.description)}" if block.description else ""
        return plain, f'<div>🔗 <b>{esc(title)}</b> <code>{esc(block.uri)}</code>{desc}</div>'
    dumped = block.model_dump(mode="json", exclude_none=True) if hasattr(block, "model_dump") else block
    return json.dumps(dumped, default=str), _json_block(dumped, f"{kind or 'content'}")


class ResultView:
    """The SDK result of a flow (tool, prompt or resource), rendered for people."""

    def __init__(self, result: Any) -> None:
        self.result = result

    def parts(self) -> tuple[list[str], list[str]]:
        r = self.result
        plain: list[str] = []
        rich: list[str] = []
        if hasattr(r, "content") and hasattr(r, "is_error"):  # CallToolResult
            blocks = [render_content(b) for b in r.content]
            if r.is_error:
                text = "\n".join(p for p, _ in blocks) or "the tool reported an error"
                plain.append(f"Tool error: {text}")
                rich.append(f'<div class="err"><b>Tool error</b>\n{esc(text)}</div>')
                return plain, rich
            for p, h in blocks:
                plain.append(p)
                rich.append(h)
            if r.structured_content is not None:
                if not blocks:
                    plain.append(json.dumps(r.structured_content, default=str))
                rich.append(_json_block(r.structured_content))
        elif hasattr(r, "messages"):  # GetPromptResult
            if r.description:
                plain.append(r.description)
                rich.append(f"<div><i>{esc(r.description)}</i></div>")
            for message in r.messages:
                p, h = render_content(message.content)
                plain.append(f"{message.role}: {p}")
                rich.append(f"<div><b>{esc(message.role)}</b>{h}</div>")
        elif hasattr(r, "contents"):  # ReadResourceResult
            for item in r.contents:
                uri = str(item.uri)
                if getattr(item, "text", None) is not None:
                    plain.append(item.text)
                    rich.append(f"<div><small><code>{esc(uri)}</code> {esc(item.mime_type or '')}</small><pre>{esc(item.text)}</pre></div>")
                else:
                    p, h = render_content(_Blob(item))
                    plain.append(p)
                    rich.append(h)
        else:
            plain.append(repr(r))
            rich.append(f"<pre>{esc(repr(r))}</pre>")
        return plain, rich

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        plain, rich = self.parts()
        return {"text/plain": "\n".join(plain), "text/html": STYLE + '<div class="mcpnb">' + "".join(rich) + "</div>"}


class _Blob:
    """Adapter so a blob resource read renders like an embedded blob resource."""

    type = "resource"

    def __init__(self, item: Any) -> None:
        self.resource = item


class TraceView:
    """A flow's messages as a timeline; on 2026-07-28 every arrow points client → server."""

    def __init__(self, flow: Flow) -> None:
        self.flow = flow

    def events(self) -> list[dict[str, Any]]:
        return self.flow.trace()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        flow = self.flow
        version = flow.conn.protocol_version or "?"
        plain = [f"trace of {flow.label} (protocol {version})"]
        rows = []
        for event in self.events():
            arrow = ("client → server" if event["from"] == "client" else "server → client") + f" {event.get('kind', '')}".rstrip()
            message = json.dumps(event["message"], ensure_ascii=False, default=str)
            plain.append(f"  round {event['round']}  {arrow}  {message}")
            request = event.get("kind") == "request"
            colour = "#1976d2" if event["from"] == "client" else ("#c62828" if request else "#ef6c00")
            line = "━━━━━━" if request else "╌╌╌╌╌╌"
            lane = f"client {line}▶ server" if event["from"] == "client" else f"client ◀{line} server"
            lane += " request" if request else " result"
            if request and event["from"] == "server":
                lane = f"<b>{lane}</b>"  # a 2025 back-channel request: the arrow 2026 removed
            rows.append(
                f"<tr><td>{event['round']}</td><td style='color:{colour};white-space:nowrap;font-family:monospace'>{lane}</td>"
                f"<td><code style='word-break:break-word;font-size:12px'>{esc(message)}</code></td></tr>"
            )
        legend = "<small>━ request · ╌ result</small>"
        table = f"<table><tr><th>round</th><th>direction {legend}</th><th>message</th></tr>" + "".join(rows) + "</table>"
        return {
            "text/plain": "\n".join(plain),
            "text/html": STYLE + f'<div class="mcpnb"><div class="hdr">trace of <b>{esc(flow.label)}</b> (protocol {esc(version)})</div>{table}</div>',
        }


class FlowReport:
    """The settled picture of a flow: status, what was answered (no values), result or error."""

    def __init__(self, flow: Flow, trace: bool = False) -> None:
        self.flow = flow
        self.trace = trace

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        flow = self.flow
        plain: list[str] = []
        rich: list[str] = []
        state = flow.state.value
        elapsed = (flow.ended or flow.started) - flow.started
        rounds = f"{flow.round + 1} round{'s' if flow.round else ''}"
        rich.append(f'<div class="hdr">{badge(state)} <b>{esc(flow.label)}</b> · {rounds} · {elapsed:.2f} s</div>')
        if flow.answer_summary:
            rich.append(f"<div class='hdr'>answered: {esc('; '.join(flow.answer_summary))}</div>")
        for note in flow.notes:
            rich.append(f"<div class='hdr'>{esc(note)}</div>")
        if flow.error is not None:
            plain.append(f"Error: {flow.error}")
            rich.append(f'<div class="err">{esc(flow.error)}</div>')
        elif flow.value is not None:
            p, h = ResultView(flow.value).parts()
            plain.extend(p)
            rich.extend(h)
        if flow.logs:
            lines = "\n".join(f"[{e['level']}] {e.get('logger') or ''} {e['data']}".replace("  ", " ") for e in flow.logs)
            rich.append(f"<details><summary>server log ({len(flow.logs)})</summary><pre>{esc(lines)}</pre></details>")
        bundle = {"text/plain": "\n".join(plain), "text/html": STYLE + '<div class="mcpnb">' + "".join(rich) + "</div>"}
        if self.trace:
            tb = TraceView(flow)._repr_mimebundle_()
            bundle = {"text/plain": bundle["text/plain"] + "\n" + tb["text/plain"], "text/html": bundle["text/html"] + tb["text/html"]}
        return bundle


class Table:
    """A small table with a plain-text twin (servers, tools, prompts, flows)."""

    def __init__(self, columns: list[str], rows: list[list[Any]], title: str = "", empty: str = "nothing to show") -> None:
        self.columns, self.rows, self.title, self.empty = columns, rows, title, empty

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        if not self.rows:
            return {"text/plain": self.empty, "text/html": f'<div class="mcpnb"><i>{esc(self.empty)}</i></div>'}
        widths = [max(len(str(c)), *(len(str(r[i])) for r in self.rows)) for i, c in enumerate(self.columns)]
        widths = [min(w, 60) for w in widths]
        lines = ([self.title] if self.title else []) + ["  ".join(str(c).ljust(w) for c, w in zip(self.columns, widths)).rstrip()]
        for row in self.rows:
            lines.append("  ".join(_clip(str(v), w).ljust(w) for v, w in zip(row, widths)).rstrip())
        head = "".join(f"<th>{esc(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>" for row in self.rows)
        title = f'<div class="hdr">{esc(self.title)}</div>' if self.title else ""
        return {"text/plain": "\n".join(lines), "text/html": STYLE + f'<div class="mcpnb">{title}<table><tr>{head}</tr>{body}</table></div>'}


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def display_flow(flow: Flow) -> None:
    """Show a flow: its live view if it has one on screen, else its settled report."""
    from IPython.display import display

    if getattr(flow, "shown", False):
        return  # already in its cell (live view or settled report); don't show it twice
    display(FlowReport(flow, trace=getattr(flow, "show_trace", False)))
