"""The live area of an interactive flow: state, progress bar, log, form, Cancel.

Created on the kernel's main thread when the magic runs, displayed with a ``display_id`` in the
calling cell. ``LiveView`` is the interactive ``flows.ui.FlowUI``. The flow reports from the runtime
loop thread; every update is handed back to the kernel's own loop with the calling cell's
context (``core.threads.KernelLoop.to_kernel``), so output lands in the right cell even after the cell
has finished; answers come back through a ``core.threads.Reply``. When the flow ends the
area is replaced by its settled report: plain HTML and text that save with the notebook and need
no widget state to read later.

A page that reloaded (or another page on the same notebook) does not know the live area's display
id (it is not saved), so it would drop that update. The area's output therefore carries its id in
its metadata (``mcp_notebook.display_id``), the settled report carries it with ``"final": true``,
and the report also goes to the page through the extension's comm (``on_report``), which writes it
over the output carrying that id when the page's copy of the cell still shows the live area. The live
area itself goes the same way when it is made (``on_live``): a page that reloaded before it was
shown (or before a save), or a Continue clicked on a reloaded page, would otherwise never see it.

Why this module is long: a flow's live area is the interactive ``FlowUI`` (state, progress,
log, forms, sampling review, the human reply, the sign-in), and the one-click panels that ask
before a flow starts (``ChoicePanel``, ``ResumeOffer``) share its thread rules.
"""

from __future__ import annotations

import asyncio
import html
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ..core.kept import Kept
from ..core.limits import Limits
from ..core.text import esc, plain_text
from ..core.threads import KernelLoop, Reply
from ..errors import FlowError
from ..flows.ui import HeadlessUI
from .app_widget import WIDGET_VIEW_MIME
from .flow_report import FlowReport, log_text, task_line
from .style import STYLE, badge

if TYPE_CHECKING:
    from ..auth.sign_in import SignIn, SignInRequest
    from ..flows.flow import Flow
    from ..flows.record import SavedFlow
    from ..forms.model import Answers, Question

__all__ = ["LOG_LINES_KEPT", "OUTPUT_KEY", "Choice", "ChoicePanel", "LiveView", "ResumeOffer", "state_refused"]

LOG_LINES_KEPT = 200
"""Server log lines a live area keeps and shows (the newest; the title counts them all). The whole text is
redrawn at each line, so the lines kept are what one redraw costs; a server that logs all day must not grow
the kernel either. The connection keeps its own 500 (``%mcp log``)."""

OUTPUT_KEY = "mcp_notebook"
"""Output metadata key: ``{"display_id": ID}`` on a live area, ``{"display_id": ID, "final": true}`` on its report."""

ReportSink = Callable[[str | None, str, dict[str, Any]], None]
"""``(cell_id, display_id, output)``: hands a settled report to the pages (``Frontend.send_report``)."""


class LiveView:
    """Widgets for one flow: the interactive ``flows.ui.FlowUI`` (state, progress, log, forms, sampling review).

    ``main`` (a ``core.threads.KernelLoop``) carries every widget change to the kernel's loop.
    """

    interactive = True
    error_follows = False
    """Set when the cell awaits this flow (``cell_await``): its error fails the cell right after, so the report
    leaves it out (IPython shows it once, as after a headless run's report)."""

    def __init__(self, label: str, trace: bool = False, start_over: Callable[[], object] | None = None) -> None:
        from IPython.display import display

        self.main = KernelLoop()  # runs callables on the kernel's loop in the context of the cell that made it
        self.trace = trace
        self.start_over = start_over  # re-issues the original call fresh (offered when the server refuses the state)
        self.flow: Flow | None = None
        self.on_answered: Callable[[str, str], None] | None = None  # (flow id, display id): a page answered its form
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
            [
                w.HBox([self.header, self.cancel_button]),
                w.HBox([self.progress_bar, self.progress_text]),
                self.form_area,
                self.log_box,
            ]
        )
        self.box.add_class("mcp-flow")
        self.box.add_class("mcp-notebook-form")  # the labextension marks it stale when its kernel restarts
        self.display_id = uuid.uuid4().hex
        self.on_report: ReportSink | None = None  # set by the session when a page with the extension may listen
        self.on_live: ReportSink | None = None  # the same, for the live area itself
        self.handle = display(
            self.box, display_id=self.display_id, metadata={OUTPUT_KEY: {"display_id": self.display_id}}
        )
        self._log_lines: Kept[str] = Kept(LOG_LINES_KEPT)
        self._closed = False
        self._review_area: w.VBox | None = None

    @property
    def needs_main_thread(self) -> bool:
        """The form is served by the kernel's loop, so blocking that thread would freeze it."""
        return self.main.loop is not None

    def attach(self, flow: Flow) -> None:
        self.flow = flow
        if not self._closed:  # (a flow settled before this has handed over its report instead)
            view = {"version_major": 2, "version_minor": 0, "model_id": self.box.model_id}
            data = {
                WIDGET_VIEW_MIME: view,
                "text/plain": plain_text(
                    f"MCP flow {flow.label}: live in its kernel (its form shows where this notebook is trusted)"
                ),
            }
            self._hand_over(
                self.on_live,
                flow,
                {
                    "output_type": "display_data",
                    "data": data,
                    "metadata": {OUTPUT_KEY: {"display_id": self.display_id}},
                },
            )

    @staticmethod
    def _header_html(label: str, state: str, extra: str) -> str:
        return f'{STYLE}<div class="mcpnb">{badge(state)} <b>{esc(label)}</b> {esc(extra)}</div>'

    # ------------------------------------------------------------------ observer (loop thread)
    def changed(self, flow: Flow) -> None:
        self.main.call(
            self._render,
            flow.state.value,
            flow.round,
            flow.finished,
            task_line(flow) if flow.task is not None else None,
        )

    def progress(self, flow: Flow) -> None:
        info = flow.progress_info
        if info is not None:
            self.main.call(self._render_progress, info.progress, info.total, info.message)

    def log(self, flow: Flow, entry: dict[str, Any]) -> None:
        self.main.call(self._add_log, f"[{entry['level']}] {log_text(entry['data'])}")

    async def ask(self, flow: Flow, questions: list[Question], answers: Answers) -> dict[str, Any]:
        """Show one panel with every question of the round; resolve when the user sends it.

        Presets that answer every question validly are sent at once, with a summary in place of
        the form (Run All must not stop at forms the user already answered); ``--confirm`` keeps
        the form for a look first.
        """
        unfit = False
        if answers and not answers.confirm:
            try:
                results = {q.key: HeadlessUI.answer(flow, q, answers) for q in questions}
            except FlowError as exc:
                unfit = exc.kind != "unanswered"  # a missing preset: the form asks; an unfitting one is marked at once
            else:
                self.main.call(self._show_sent, flow.conn.name, questions, results)
                return results
        reply: Reply[dict[str, Any]] = Reply()  # given on a widget callback thread, awaited here on the runtime loop
        self.main.call(self._show_form, flow.conn.name, questions, answers, reply.offer, unfit)
        return await reply

    # ------------------------------------------------------------------ a host for review panels (review.PanelHost)
    def to_kernel(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the kernel's loop in this view's cell (any thread)."""
        self.main.call(fn, *args)

    def panel_area(self) -> w.VBox | None:
        """The box for review panels, just below the form, made on first use; ``None`` once settled (kernel thread)."""
        if self._closed:
            return None
        area = self._review_area
        if area is None:
            area = w.VBox([])
            area.add_class("mcp-review")
            area.add_class("mcp-notebook-form")
            children = list(self.box.children)
            at = children.index(self.form_area) + 1 if self.form_area in children else len(children)
            children.insert(at, area)
            self.box.children = tuple(children)
            self._review_area = area
        return area

    # ------------------------------------------------------------------ rendering (main thread)
    def _render(self, state: str, round_no: int, finished: bool, task: str | None = None) -> None:
        if self._closed:
            return
        flow = self.flow
        if finished and flow is not None:
            self._closed = True
            if self.start_over is not None and state_refused(flow.error):
                self._offer_start_over(flow)  # reuses self.box: its view stays where it is
            elif self._settle(flow):
                # The report is a widget too (an App without the extension: ``app_widget``). The page's
                # widget renderer is reused for it and hides itself when the live area's view goes:
                # the box stays, empty and out of sight, and its view with it.
                self.box.children = ()
                self.box.layout.display = "none"
            else:
                self.box.close()
            for child in (
                self.header,
                self.progress_bar,
                self.progress_text,
                self.form_area,
                self.log_html,
                self.log_box,
                self.cancel_button,
            ):
                child.close()
            return
        if state != "waiting":
            self.cancel_button.layout.display = None  # (hidden while a form waits: its own Cancel is the one)
        # while waiting, the round whose questions are shown; while running, the request in flight
        extra = f"round {round_no} — waiting for your answer" if state == "waiting" else f"round {round_no + 1}"
        if task is not None:
            extra = f"{task} — waiting for your answer" if state == "waiting" else task
            self.cancel_button.tooltip = "Cancel this task (the server is told to stop it)"
        self.header.value = self._header_html(flow.label if flow else "", state, extra)

    def _settle(self, flow: Flow) -> bool:
        """Put the flow's report in place of the live area, and hand it to pages that may not know this display.

        Returns whether the report holds a widget view (an App shown as a widget).
        """
        data = FlowReport(flow, trace=self.trace, show_error=not self.error_follows)._repr_mimebundle_()
        metadata = {OUTPUT_KEY: {"display_id": self.display_id, "final": True}}
        self.handle.update(data, metadata=metadata, raw=True)
        if self.error_follows and flow.error is not None:  # a page that reloaded never sees the cell's traceback
            data = FlowReport(flow, trace=self.trace)._repr_mimebundle_()
        self._hand_over(self.on_report, flow, {"output_type": "display_data", "data": data, "metadata": metadata})
        return WIDGET_VIEW_MIME in data

    def _hand_over(self, sink: ReportSink | None, flow: Flow, output: dict[str, Any]) -> None:
        """Give ``output`` (this display's, as nbformat) to the pages through ``sink``, if any; never fail the view."""
        if sink is None:
            return
        try:
            sink(flow.cell_id, self.display_id, output)
        except Exception as exc:  # noqa: BLE001 - the cell has it; only a page that reloaded may miss it
            import sys

            print(
                f"mcp-notebook: could not hand the flow's output to the page: {type(exc).__name__}: {exc}",
                file=sys.__stderr__,
            )

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
        message = message or ""
        if len(message) > 500:  # a progress line, not a result: the server's text is cut
            message = message[:500] + "…"
        self.progress_text.value = f"<small>{esc(shown)} {esc(message)}</small>"

    def _add_log(self, line: str) -> None:
        if self._closed:
            return
        most = (self.flow.limits if self.flow is not None else Limits()).max_result_chars
        self._log_lines.append(
            line if len(line) <= most else line[:most] + f" [… {len(line) - most:,} more characters not shown]"
        )
        self.log_box.layout.display = None
        self.log_box.set_title(0, f"server log ({self._log_lines.seen})")
        text = "\n".join(self._log_lines)
        if len(text) > most:  # the newest lines, within max_result_chars
            text = "[… earlier lines not shown]\n" + text[-most:]
        elif self._log_lines.dropped:
            text = f"[… {self._log_lines.marker('lines')}]\n" + text
        self.log_html.value = "<pre>" + html.escape(text) + "</pre>"

    def _show_form(
        self,
        server: str,
        questions: list[Question],
        answers: Answers,
        deliver: Callable[[dict[str, Any]], None],
        unfit: bool = False,
    ) -> None:
        from ..forms.widgets import ElicitationPanel

        def answered(results: dict[str, Any]) -> None:  # on the thread of the page's click (its comm message)
            flow, told = self.flow, self.on_answered
            if flow is not None and told is not None:
                told(flow.id, self.display_id)  # the page that answered writes the flow's record from now on
            deliver(results)

        panel = ElicitationPanel(server, questions, answers, answered)
        self.form_area.children = [panel.widget]
        # One Cancel while the form waits: the form's, which answers the question "cancel" (the server decides
        # what that means, as with Decline); the call's own Cancel comes back once the answer is sent.
        self.cancel_button.layout.display = "none"
        if unfit:
            panel.check()  # say at once what in the presets does not fit, next to its field

    def show_sign_in(self, request: SignInRequest, sign_in: SignIn | None) -> None:
        """The server wants a sign-in for this call: the panel in the form area; the call goes on after it (loop thread).

        One panel per sign-in: when another cell or view already shows this one (the connect above,
        an earlier call), this call says it waits for it instead of showing a second panel.
        """
        if sign_in is None:
            return
        if sign_in.claim_panel(request):
            self.main.call(self._show_sign_in, request, sign_in)
        else:
            self.main.call(self._show_waiting_for_sign_in, request.server)

    def _show_sign_in(self, request: SignInRequest, sign_in: SignIn) -> None:
        from .sign_in_view import SignInPanel

        self.form_area.children = [SignInPanel(request, sign_in, call=self.main.call).widget]

    def _show_waiting_for_sign_in(self, server: str) -> None:
        note = f"Waiting for the sign-in to <b>{html.escape(server)}</b> shown above; this call goes on once you have signed in there."
        self.form_area.children = [w.HTML(f'<div class="mcp-sign-in-wait"><small>{note}</small></div>')]

    def _show_sent(self, server: str, questions: list[Question], results: dict[str, Any]) -> None:
        from ..forms.widgets import summary_html

        summary = w.HTML(
            summary_html(server, results, questions)
            + '<div class="mcp-preset-note"><small>answered by the presets given (--confirm shows the form first)</small></div>'
        )
        self.form_area.children = [summary]

    def _on_cancel(self, _button: Any) -> None:
        if self.flow is not None:
            self.flow.cancel()

    # ------------------------------------------------------------------ refused saved state (main thread)
    def _offer_start_over(self, flow: Flow) -> None:
        """The server refused the saved state: say so in plain words, with a Start over button."""
        report = FlowReport(flow, trace=self.trace, show_error=not self.error_follows)._repr_mimebundle_()
        note = w.HTML(report["text/html"] + refused_html(flow.label))
        button = w.Button(
            description="Start over", icon="refresh", button_style="warning", tooltip="Call it again from the beginning"
        )
        # Re-use the displayed box: showing another widget under the same display id while this
        # one closes makes the widget renderer drop the new view along with the old.
        box = self.box
        box.children = (note, button)
        box.add_class("mcp-refused")
        # The page shows the box; the saved notebook also holds the settled report beside it, the
        # same text and HTML a headless run saves (what other front ends and nbval read).
        view = {"version_major": 2, "version_minor": 0, "model_id": box.model_id}
        self.handle.update(
            {
                WIDGET_VIEW_MIME: view,
                "text/html": report["text/html"],
                "text/plain": report["text/plain"],
            },
            metadata={OUTPUT_KEY: {"display_id": self.display_id}},
            raw=True,
        )

        def clicked(_button: Any) -> None:
            button.disabled = True
            self.main.call(self._start_over, flow, box)

        button.on_click(clicked)

    def _start_over(self, flow: Flow, box: Any) -> None:
        self._settle(flow)
        box.close()
        for child in box.children:
            child.close()
        start = self.start_over
        if start is not None:
            self.start_over = None
            start()

    # ------------------------------------------------------------------ sampling review (loop thread; widgets in review.py)
    async def review_request(self, flow: Flow, key: str, params: Any, choice: Any, models: list[str]) -> Any:
        """Checkpoint one: the user edits the request, then Send or Deny (a ``sampling.Reviewed``)."""
        from .review import RequestReview, ask_on_main

        return await ask_on_main(
            self, lambda deliver: RequestReview(flow.conn.name, key, params, choice, models, deliver)
        )

    async def review_reply(self, flow: Flow, key: str, params: Any, result: Any, choice: Any) -> Any:
        """Checkpoint two: the user edits the reply, then Return or Deny (a ``sampling.Reviewed``)."""
        from .review import ReplyReview, ask_on_main

        return await ask_on_main(self, lambda deliver: ReplyReview(flow.conn.name, key, result, choice, deliver))

    async def human_reply(self, flow: Flow, key: str, params: Any, config: Any) -> str | None:
        """The ``human`` provider: the user types the reply (``None`` when they decline)."""
        from .review import HumanReply, ask_on_main

        return await ask_on_main(self, lambda deliver: HumanReply(flow.conn.name, key, params, config, deliver))

    def show_sampling(self, flow: Flow, key: str, params: Any, choice: Any, result: Any | None) -> None:
        """The ``always`` review policy: show the request (``result`` None) or the reply, without waiting."""
        from .review import sampling_bundle, show_on_main

        show_on_main(self, sampling_bundle(flow.conn.name, key, params, choice, result))


# ---------------------------------------------------------------------- saved flows
def state_refused(error: FlowError | None) -> bool:
    """Whether a flow failed because the server refused its saved ``request_state`` (-32602)."""
    from ..errors import STATE_REFUSED_HINT

    return error is not None and error.code == -32602 and STATE_REFUSED_HINT in str(error)


def refused_html(label: str) -> str:
    """What the Start over panel adds to the flow's report: the button's meaning, not the refusal's causes.

    The error (in the report above, or raised by the cell right after) already says why a server
    refuses a saved state and gives the line that starts the call again (``errors.STATE_REFUSED_HINT``,
    ``magics.hints.state_refused``): the panel does not say it a second time.
    """
    return (
        '<div class="mcpnb"><div class="err"><b>This flow cannot continue:</b> '
        f"{esc(label)} no longer accepts the state saved for it (the error says why). Other saved flows "
        "are not affected. <b>Start over</b> calls it again from the beginning.</div></div>"
    )


@dataclass(frozen=True)
class Choice:
    """One button of a ``ChoicePanel``: what the panel says once it is chosen, and what then runs."""

    button: w.Button
    summary: str
    action: Callable[[], Any] | None = None  # None: nothing runs


class ChoicePanel:
    """A question in a cell, answered by one click that may come after the cell ended.

    The first click disables every button; the panel turns into that choice's one-line summary,
    and its action runs once, on the kernel's loop in the context of the cell that showed the
    panel (what it displays lands below). An exception the action raises is shown in the panel.
    """

    def __init__(self, text_html: str, css_class: str, choices: list[Choice]) -> None:
        from IPython.display import display

        self.main = KernelLoop()  # runs callables on the kernel's loop in the context of the cell that made it
        self.text = w.HTML(text_html)
        self.choices = choices
        for choice in choices:
            choice.button.on_click(lambda _b, c=choice: self._choose(c))
        self.box = w.VBox([self.text, w.HBox([c.button for c in choices])])
        self.box.add_class(css_class)
        self.box.add_class("mcp-notebook-form")  # the labextension marks it stale when its kernel restarts
        self.handle = display(self.box, display_id=True)
        self.chosen: Choice | None = None
        self._outcome: asyncio.Future[Any] | None = None  # made by the first ``outcome()``, on the kernel's loop
        self._ran: tuple[Any, BaseException | None] | None = None  # what the chosen action gave, once it ran

    async def outcome(self) -> Any:
        """What the chosen button's action returned (a started flow, or ``None``), once it is clicked.

        A cell that showed the panel awaits this (``cell_await``), so Run All's next cell starts only
        after the click and whatever it started.
        """
        if self._ran is not None:
            value, error = self._ran
            if error is not None:
                raise error
            return value
        if self._outcome is None:
            self._outcome = asyncio.get_running_loop().create_future()
        return await self._outcome

    def _settled(self, value: Any, error: BaseException | None) -> None:
        self._ran = (value, error)
        waiting = self._outcome
        if waiting is not None and not waiting.done():
            if error is not None:
                waiting.set_exception(error)
            else:
                waiting.set_result(value)

    def _choose(self, choice: Choice) -> None:
        if self.chosen is not None:
            return
        self.chosen = choice
        for c in self.choices:
            c.button.disabled = True
        self.main.to_kernel(self._run, choice)

    def _run(self, choice: Choice) -> None:
        summary = {
            "text/plain": plain_text(choice.summary),
            "text/html": f'<div class="mcpnb">{esc(choice.summary)}</div>',
        }
        self.handle.update(summary, raw=True)
        for child in (self.box, self.text, *(c.button for c in self.choices)):
            child.close()
        if choice.action is None:
            self._settled(None, None)
            return
        try:
            started = choice.action()
        except Exception as exc:  # noqa: BLE001 - shown in the cell, not lost in the kernel log
            text = str(exc) or type(exc).__name__
            self.handle.update(
                {
                    "text/plain": plain_text(f"{choice.summary}\nError: {text}"),
                    "text/html": summary["text/html"] + f'<div class="mcpnb"><div class="err">{esc(text)}</div></div>',
                },
                raw=True,
            )
            self._settled(None, exc)
        else:
            self._settled(started, None)


class ResumeOffer(ChoicePanel):
    """Re-running a cell whose flow waits for input: Continue it, or Start over."""

    def __init__(
        self,
        record: SavedFlow,
        questions: list[str],
        age: str,
        on_continue: Callable[[], Any],
        on_start_over: Callable[[], Any],
    ) -> None:
        self.record = record
        self.label = record.label
        asked = "".join(f"<li>{esc(q)}</li>" for q in questions)
        task = record.task if isinstance(record.task, dict) else None
        what = (
            f"started a task that was last seen {esc(task.get('status'))}"
            if task is not None
            else "is waiting for input"
        )
        text = (
            f'<div class="mcpnb">{badge("running" if task is not None else "waiting")} <b>{esc(self.label)}</b> from this cell {what} '
            f"(flow {esc(record.id)}, round {esc(record.round)}, saved {esc(age)} ago)."
            + (f"<ul>{asked}</ul>" if asked else "")
            + (
                "Follow it again, or start the call over (the saved task is forgotten here; it ends on the server with its time to live)?"
                if task is not None
                else "Continue it, or start the call over?"
            )
            + "</div>"
        )
        self.continue_button = w.Button(
            description="Continue",
            icon="play",
            button_style="primary",
            tooltip="Follow the task again" if task is not None else "Answer the saved questions and continue",
        )
        self.over_button = w.Button(
            description="Start over", icon="refresh", tooltip="Forget the saved flow and call again"
        )
        super().__init__(text, "mcp-resume-offer", [
            Choice(self.continue_button, f"Continuing flow {record.id} ({self.label}).", on_continue),
            Choice(self.over_button, f"Starting over; forgot flow {record.id} ({self.label}).", on_start_over),
        ])  # fmt: skip
