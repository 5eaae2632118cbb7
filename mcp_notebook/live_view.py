"""The live area of an interactive flow: state, progress bar, log, form, Cancel.

Created on the kernel's main thread when the magic runs, displayed with a ``display_id`` in the
calling cell. The flow reports from the runtime loop thread; every update is handed back to the
kernel's own loop with the calling cell's context (``call_soon_threadsafe(..., context=...)``),
so output lands in the right cell even after the cell has finished. When the flow ends the
area is replaced by its settled report: plain HTML and text that save with the notebook and need
no widget state to read later.
"""

from __future__ import annotations

import asyncio
import contextvars
import html
import sys
import traceback
from typing import TYPE_CHECKING, Any, Callable

import ipywidgets as w

from .display import FlowReport, badge, esc

if TYPE_CHECKING:
    from .answering import Question
    from .flows import Flow
    from .form_model import Answers

__all__ = ["LiveView", "MainThread"]


class MainThread:
    """Runs callables on the kernel's loop in the context of the cell that created it."""

    def __init__(self) -> None:
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None
        self.context = contextvars.copy_context()

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        if self.loop is None or self.loop.is_closed():
            self._run(fn, *args)
            return
        self.loop.call_soon_threadsafe(self._run, fn, *args, context=self.context.copy())

    @staticmethod
    def _run(fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - a broken view must not kill the kernel's loop
            traceback.print_exc(file=sys.__stderr__)


class LiveView:
    """Widgets for one flow; implements the flow observer and the interactive ``FormUI``."""

    def __init__(self, label: str, trace: bool = False) -> None:
        from IPython.display import display

        self.main = MainThread()
        self.trace = trace
        self.flow: Flow | None = None
        self.header = w.HTML(self._header_html(label, "running", ""))
        self.progress_bar = w.FloatProgress(value=0, min=0, max=1, layout=w.Layout(display="none", width="320px"))
        self.progress_text = w.HTML("")
        self.form_area = w.VBox([])
        self.log_html = w.HTML("")
        self.log_box = w.Accordion(children=[self.log_html], layout=w.Layout(display="none"))
        self.log_box.set_title(0, "server log")
        self.cancel_button = w.Button(description="Cancel", icon="stop", tooltip="Cancel this call")
        self.cancel_button.on_click(self._on_cancel)
        self.box = w.VBox(
            [w.HBox([self.header, self.cancel_button]), w.HBox([self.progress_bar, self.progress_text]), self.form_area, self.log_box]
        )
        self.box.add_class("mcp-flow")
        self.handle = display(self.box, display_id=True)
        self.shown = True
        self._log_lines: list[str] = []
        self._closed = False

    def attach(self, flow: Flow) -> None:
        self.flow = flow

    @staticmethod
    def _header_html(label: str, state: str, extra: str) -> str:
        return f'<div class="mcpnb">{badge(state)} <b>{esc(label)}</b> {esc(extra)}</div>'

    # ------------------------------------------------------------------ observer (loop thread)
    def changed(self, flow: Flow) -> None:
        self.main.call(self._render, flow.state.value, flow.round, flow.finished)

    def progress(self, flow: Flow) -> None:
        info = flow.progress_info
        if info is not None:
            self.main.call(self._render_progress, info.progress, info.total, info.message)

    def log(self, flow: Flow, entry: dict[str, Any]) -> None:
        self.main.call(self._add_log, f"[{entry['level']}] {entry['data']}")

    async def ask(self, flow: Flow, questions: list[Question], answers: Answers) -> dict[str, Any]:
        """Show one panel with every question of the round; resolve when the user sends it."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()

        def deliver(results: dict[str, Any]) -> None:  # widget callback thread -> runtime loop
            loop.call_soon_threadsafe(lambda: future.done() or future.set_result(results))

        self.main.call(self._show_form, flow.conn.name, questions, answers, deliver)
        return await future

    # ------------------------------------------------------------------ rendering (main thread)
    def _render(self, state: str, round_no: int, finished: bool) -> None:
        if self._closed:
            return
        flow = self.flow
        if finished and flow is not None:
            self._closed = True
            self.handle.update(FlowReport(flow, trace=self.trace))
            self.box.close()
            for child in (self.header, self.progress_bar, self.progress_text, self.form_area, self.log_html, self.log_box, self.cancel_button):
                child.close()
            return
        extra = f"round {round_no + 1}" + (" — waiting for your answer" if state == "waiting" else "")
        self.header.value = self._header_html(flow.label if flow else "", state, extra)

    def _render_progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self._closed:
            return
        self.progress_bar.layout.display = None
        if total:
            self.progress_bar.max = float(total)
            self.progress_bar.value = float(min(progress, total))
            self.progress_bar.bar_style = ""
        else:
            self.progress_bar.max = 1.0
            self.progress_bar.value = 1.0
            self.progress_bar.bar_style = "info"
        shown = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        self.progress_text.value = f"<small>{esc(shown)} {esc(message or '')}</small>"

    def _add_log(self, line: str) -> None:
        if self._closed:
            return
        self._log_lines.append(line)
        self.log_box.layout.display = None
        self.log_box.set_title(0, f"server log ({len(self._log_lines)})")
        self.log_html.value = "<pre>" + html.escape("\n".join(self._log_lines[-200:])) + "</pre>"

    def _show_form(self, server: str, questions: list[Question], answers: Answers, deliver: Callable[[dict[str, Any]], None]) -> None:
        from .forms import ElicitationPanel

        panel = ElicitationPanel(server, questions, answers, deliver)
        self.form_area.children = [panel.widget]
        self.panel = panel

    def _on_cancel(self, _button: Any) -> None:
        if self.flow is not None:
            self.flow.cancel()
