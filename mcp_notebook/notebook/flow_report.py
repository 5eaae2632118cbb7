"""Reports of a flow: its settled report (``FlowReport``), its trace (``TraceView``) and the lines they share.

A flow's report says its state (``shown_state``: ``error`` for a tool that answered ``isError``),
what was answered (never the values: outputs are saved and shared), its task line, notes and
server log, and its result (``result_view.ResultView``) or error; an App's report also carries the
App (``apps.OUTPUT_MIME``) and, where the labextension does not run, its widget (``app_widget``).
``text/plain`` stays free of timings and ids so notebooks compare cleanly under nbval.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..core.kept import Kept
from ..core.limits import Limits
from ..core.text import esc, mcp_line, plain_text
from .app_widget import WIDGET_VIEW_MIME, widget_for
from .listing import ShownOnce
from .result_view import ResultView
from .style import STYLE, badge, note_html
from .text_budget import Budget, bounded_text, cut_note, json_text

if TYPE_CHECKING:
    from ..flows.flow import Flow

__all__ = ["FlowReport", "TraceView", "log_text", "shown_state", "task_line", "tool_error"]


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


def _dropped(items: Any, what: str) -> str | None:
    """What a bounded list of a flow let go (``core.kept.Kept.marker``): "N earlier WHAT dropped (...)", or ``None``."""
    return items.marker(what) if isinstance(items, Kept) else None


def log_text(data: Any) -> str:
    """A log entry's ``data`` as one text: a string as it is, anything else as JSON."""
    if isinstance(data, str):
        return data
    text = json_text(data, indent=None)
    return text if text is not None else repr(data)


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
        self.limits = limits or flow.limits

    def events(self) -> list[dict[str, Any]]:
        return self.flow.trace(times=True)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        flow = self.flow
        budget = Budget(self.limits)
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
            message = json_text(event["message"], indent=None)
            if message is None:
                message = "[message too deeply nested to show]"
            shown, cut = budget.text(message)
            if cut:
                shown += f" {cut_note(cut)}"
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
        self.limits = limits or flow.limits
        self.show_error = show_error  # False when the error is raised right after (IPython shows it; once is enough)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        flow = self.flow
        budget = Budget(self.limits)
        plain: list[str] = []
        rich: list[str] = []
        state = shown_state(flow)
        elapsed = (flow.ended or flow.started) - flow.started
        sent = flow.sent  # requests sent, as the trace counts them
        rounds = f"{sent} round{'' if sent == 1 else 's'}"
        rich.append(f'<div class="hdr">{badge(state)} <b>{esc(flow.label)}</b> · {esc(rounds)} · {elapsed:.2f} s</div>')
        if flow.task is not None:
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
            text, inner = bounded_text(str(flow.error), budget)
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
            _, inner = bounded_text(lines, budget)
            count = getattr(flow.logs, "seen", len(flow.logs))  # every line the server sent, dropped ones too
            rich.append(f"<details><summary>server log ({count})</summary><pre>{inner}</pre></details>")
        logged = getattr(flow, "server_logged", 0)
        if logged:  # an in-process server's records went to its connection's log (wire/server_logs.py)
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
        app = flow.app
        if app is not None and flow.error is None:
            from .apps import OUTPUT_MIME, AppHost, LiveApp

            bundle[OUTPUT_MIME] = app.payload()
            # the notebook's host (``apps.AppHost``, which made ``app``): a flow knows only their shapes
            host = flow.app_host
            # no extension on the page: the App as a widget, if installed
            if isinstance(app, LiveApp) and app.by_widget and isinstance(host, AppHost):
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
