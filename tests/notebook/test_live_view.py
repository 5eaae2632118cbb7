"""``LiveView`` and ``HeadlessUI`` as the two ``FlowUI`` implementations; ``flow.result()`` next to a form.

Outside a kernel there is no kernel loop, so ``LiveView.main`` runs each update at once on the
calling thread and the widgets can be read right after the call (ipywidgets' dummy comms).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult

from mcp_notebook.core.limits import Limits
from mcp_notebook.core.threads import KernelLoop, Reply
from mcp_notebook.errors import FlowError
from mcp_notebook.flows.answering import Answerer
from mcp_notebook.flows.flow import FlowState, Progress
from mcp_notebook.flows.ui import FlowUI, HeadlessUI
from mcp_notebook.forms.model import Answers, FormModel, Question
from mcp_notebook.notebook.live_view import LiveView
from mcp_notebook.notebook.review import HumanReply, PanelHost, ask_on_main
from mcp_notebook.sampling.providers.base import SamplingError
from mcp_notebook.sampling.router import Choice, ModelConfig, Reviewed
from mcp_notebook.session.session import Session


def fake_flow(**changes: Any) -> Any:
    base = dict(
        state=FlowState.RUNNING,
        round=0,
        finished=False,
        label="srv.tool",
        limits=Limits(),
        progress_info=None,
        task=None,  # a plain call (``Flow.task``): the view reads it typed
        conn=SimpleNamespace(name="srv"),
    )
    return SimpleNamespace(**{**base, **changes})


@pytest.fixture
def view() -> LiveView:
    v = LiveView("srv.tool")
    v.attach(fake_flow())
    return v


def question(schema: dict[str, Any], key: str = "q", message: str = "Please fill in") -> Question:
    params = ElicitRequestFormParams(message=message, requested_schema=schema)
    return Question(key, params, FormModel.from_schema(schema, message))


# ---------------------------------------------------------------------- the protocol
def test_live_view_and_headless_ui_implement_flow_ui(view: LiveView) -> None:
    assert isinstance(view, FlowUI)
    assert isinstance(HeadlessUI(), FlowUI)
    assert view.interactive is True and HeadlessUI.interactive is False
    assert view.needs_main_thread is False  # no kernel loop here: nothing to freeze
    assert HeadlessUI().needs_main_thread is False
    assert isinstance(view, PanelHost)  # review panels go through documented methods only
    assert isinstance(view.main, KernelLoop)


def test_objects_missing_part_of_the_protocol_are_not_flow_uis() -> None:
    class FormOnly:
        async def ask(self, flow: Any, questions: list[Question], answers: Answers) -> dict[str, Any]:
            return {}

    assert not isinstance(FormOnly(), FlowUI)
    assert not isinstance(object(), FlowUI)


def test_the_headless_ui_is_the_default_of_flows_and_answerers() -> None:
    assert isinstance(Answerer().ui, HeadlessUI)
    assert isinstance(Answerer(ui=None).ui, HeadlessUI)  # what Session.start passes for a headless run


def test_needs_main_thread_when_made_on_a_running_loop() -> None:
    async def make() -> LiveView:
        return LiveView("srv.tool")

    view = asyncio.run(make())
    assert view.needs_main_thread is True and view.main.loop is not None


# ---------------------------------------------------------------------- changed / progress / log
def test_changed_shows_the_state_and_round(view: LiveView) -> None:
    view.changed(fake_flow(state=FlowState.RUNNING, round=0))
    assert "running" in view.header.value and "round 1" in view.header.value and "srv.tool" in view.header.value
    view.changed(fake_flow(state=FlowState.WAITING, round=2))
    assert "waiting" in view.header.value and "round 2 — waiting for your answer" in view.header.value


def test_progress_with_and_without_total(view: LiveView) -> None:
    assert view.progress_bar.layout.display == "none"
    view.progress(fake_flow(progress_info=Progress(2, 4, "half <way>")))
    assert view.progress_bar.layout.display is None
    assert (view.progress_bar.max, view.progress_bar.value, view.progress_bar.bar_style) == (4.0, 2.0, "")
    assert view.progress_text.value == "<small>2/4 half &lt;way&gt;</small>"
    view.progress(fake_flow(progress_info=Progress(7, None, "x" * 600)))
    assert (view.progress_bar.max, view.progress_bar.value, view.progress_bar.bar_style) == (1.0, 1.0, "info")
    assert view.progress_text.value == "<small>7 " + "x" * 500 + "…</small>"
    before = view.progress_text.value
    view.progress(fake_flow(progress_info=None))  # nothing to show: nothing changes
    assert view.progress_text.value == before


def test_log_lines_are_escaped_and_counted(view: LiveView) -> None:
    assert view.log_box.layout.display == "none"
    view.log(fake_flow(), {"level": "info", "data": "step <1>"})
    view.log(fake_flow(), {"level": "error", "data": "broken & gone"})
    assert view.log_box.layout.display is None
    assert view.log_box.get_title(0) == "server log (2)"
    assert view.log_html.value == "<pre>[info] step &lt;1&gt;\n[error] broken &amp; gone</pre>"


def test_log_lines_are_cut_at_max_result_chars() -> None:
    view = LiveView("srv.tool")
    view.attach(fake_flow(limits=Limits(max_result_chars=20)))
    view.log(fake_flow(), {"level": "info", "data": "y" * 50})
    assert view.log_box.get_title(0) == "server log (1)"
    # the line is cut at 20 characters, then the shown text keeps its newest 20
    assert view.log_html.value == "<pre>[… earlier lines not shown]\nharacters not shown]</pre>"


def test_a_live_area_keeps_its_newest_log_lines_and_counts_them_all() -> None:
    """A real flow of the demo's ``slow_count`` logging past ``LOG_LINES_KEPT`` lines into its live area."""
    from mcp_notebook.notebook.live_view import LOG_LINES_KEPT

    session = Session()
    try:
        conn = session.connect("demo", "mcp_notebook.demo:demo")
        view = LiveView("demo.slow_count")
        flow = session.make_flow(
            "tools/call", conn, "slow_count", {"n": LOG_LINES_KEPT + 7, "delay": 0}, view=view, save=False
        )
        view.attach(flow)
        flow.start().result(timeout=120)
    finally:
        session.close()
    assert len(view._log_lines) == LOG_LINES_KEPT and view._log_lines.dropped == 7
    assert view.log_box.get_title(0) == f"server log ({LOG_LINES_KEPT + 7})"
    assert view.log_html.value.startswith(
        f"<pre>[… 7 earlier lines dropped (the last {LOG_LINES_KEPT} kept)]\n[info] step 8 of {LOG_LINES_KEPT + 7}\n"
    )
    assert view.log_html.value.endswith(f"[info] step {LOG_LINES_KEPT + 7} of {LOG_LINES_KEPT + 7}</pre>")


# ---------------------------------------------------------------------- forms and review panels (Reply across threads)
def test_ask_shows_the_form_and_returns_what_was_sent_from_another_thread(view: LiveView) -> None:
    questions = [question({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})]

    async def scenario() -> dict[str, Any]:
        task = asyncio.ensure_future(view.ask(fake_flow(), questions, Answers()))
        for _ in range(100):
            if view.form_area.children:
                break
            await asyncio.sleep(0.01)
        panel_widget = view.form_area.children[0]
        assert "mcp-elicitation" in panel_widget._dom_classes
        name = next(w for w in _walk(panel_widget) if type(w).__name__ == "Text")
        name.value = "Ada"
        accept = next(w for w in _walk(panel_widget) if getattr(w, "description", None) == "Accept")
        clicker = threading.Thread(target=accept.click, name="subshell-like")  # clicks may come on another thread
        clicker.start()
        result = await asyncio.wait_for(task, 5)
        clicker.join(5)
        return result

    results = asyncio.run(scenario())
    assert list(results) == ["q"]
    assert isinstance(results["q"], ElicitResult)
    assert (results["q"].action, results["q"].content) == ("accept", {"name": "Ada"})


def _walk(widget: Any) -> Iterator[Any]:
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from _walk(child)


def test_panel_area_is_made_once_below_the_form_and_gone_once_settled(view: LiveView) -> None:
    area = view.panel_area()
    assert area is not None and "mcp-review" in area._dom_classes
    children = list(view.box.children)
    assert children.index(area) == children.index(view.form_area) + 1
    assert view.panel_area() is area and list(view.box.children) == children


def test_ask_on_main_mounts_the_panel_and_awaits_the_click(view: LiveView) -> None:
    params = SimpleNamespace(
        messages=[],
        system_prompt=None,
        model_preferences=None,
        max_tokens=10,
        temperature=None,
        stop_sequences=None,
        include_context=None,
        tools=None,
        tool_choice=None,
        metadata=None,
    )

    async def scenario() -> Any:
        task = asyncio.ensure_future(
            ask_on_main(
                view, lambda deliver: HumanReply("srv", "k", params, ModelConfig("me", provider="human"), deliver)
            )
        )
        area = view.panel_area()
        assert area is not None
        for _ in range(100):
            if area.children:
                break
            await asyncio.sleep(0.01)
        panel_widget = area.children[0]
        assert "mcp-human-reply" in panel_widget._dom_classes
        box = next(w for w in _walk(panel_widget) if type(w).__name__ == "Textarea")
        box.value = "my answer"
        send = next(w for w in _walk(panel_widget) if getattr(w, "description", None) == "Send reply")
        threading.Thread(target=send.click).start()
        return await asyncio.wait_for(task, 5)

    assert asyncio.run(scenario()) == "my answer"


def test_ask_on_main_dismisses_the_panel_when_the_wait_is_cancelled(view: LiveView) -> None:
    params = SimpleNamespace(
        messages=[],
        system_prompt=None,
        model_preferences=None,
        max_tokens=10,
        temperature=None,
        stop_sequences=None,
        include_context=None,
        tools=None,
        tool_choice=None,
        metadata=None,
    )
    panels: list[HumanReply] = []

    def make(deliver: Any) -> HumanReply:
        panels.append(HumanReply("srv", "k", params, ModelConfig("me", provider="human"), deliver))
        return panels[-1]

    async def scenario() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await ask_on_main(view, make)

    asyncio.run(scenario())
    assert panels[0].done is True
    assert "no longer needed" in panels[0].widget.children[0].value


# ---------------------------------------------------------------------- the headless implementation
def test_headless_ui_answers_from_presets_and_names_a_missing_answer() -> None:
    ui = HeadlessUI()
    flow = fake_flow()
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    got = asyncio.run(ui.ask(flow, [question(schema)], Answers(fields={"name": "Ada"})))
    assert isinstance(got["q"], ElicitResult) and (got["q"].action, got["q"].content) == ("accept", {"name": "Ada"})
    with pytest.raises(FlowError, match="name"):
        asyncio.run(ui.ask(flow, [question(schema)], Answers()))
    url = Question(
        "u", ElicitRequestURLParams(message="sign in", url="https://example.com/x", elicitation_id="e1"), None
    )
    with pytest.raises(FlowError, match="a headless run cannot open links"):
        asyncio.run(ui.ask(flow, [url], Answers()))


def test_headless_ui_does_not_review_and_has_nobody_to_reply() -> None:
    ui = HeadlessUI()
    flow = fake_flow()
    choice = Choice(ModelConfig("echo"), "default model")
    request = asyncio.run(ui.review_request(flow, "k", "the params", choice, ["echo"]))
    assert request == Reviewed(True, "the params")
    assert asyncio.run(ui.review_reply(flow, "k", "the params", "the result", choice)) == Reviewed(True, "the result")
    assert ui.show_sampling(flow, "k", "p", choice, None) is None
    with pytest.raises(SamplingError, match="model 'me' is the human provider .* but this run is headless"):
        asyncio.run(ui.human_reply(flow, "k", "p", ModelConfig("me", provider="human")))
    for report in (ui.changed(flow), ui.progress(flow), ui.log(flow, {"level": "info", "data": "x"})):
        assert report is None


# ---------------------------------------------------------------------- flow.result() on the kernel thread (event-driven)
class FormOnTheKernelLoop(HeadlessUI):
    """A form served by the kernel's loop (``needs_main_thread``) that nobody answers until told to."""

    interactive = True
    needs_main_thread = True

    def __init__(self) -> None:
        self.reply: Reply[dict[str, Any]] = Reply()
        self.asked = threading.Event()

    async def ask(self, flow: Any, questions: list[Question], answers: Answers) -> dict[str, Any]:
        self.asked.set()
        return await self.reply


@pytest.fixture
def session_servers() -> dict[str, Any]:
    from mcp_notebook.demo import demo, provisioner

    return {"prov": provisioner, "demo": demo}


def test_result_on_the_kernel_thread_raises_while_the_form_waits(session: Session) -> None:
    assert threading.current_thread() is threading.main_thread()
    ui = FormOnTheKernelLoop()
    flow = session.start("tools/call", session.registry.get("prov"), "provision", {"name": "orders"}, ui=ui, save=False)
    started = time.monotonic()
    with pytest.raises(
        FlowError,
        match=r"prov.provision is waiting for your answer in its form; blocking this cell with \.result\(\) would freeze that form",
    ):
        flow.result(timeout=30)
    assert time.monotonic() - started < 3  # woken by the state change, not by the timeout
    assert flow.state is FlowState.WAITING and ui.asked.is_set()
    flow.cancel()
    settled = threading.Event()
    flow._future.add_done_callback(lambda _f: settled.set())
    assert settled.wait(10)
    assert flow.state is FlowState.CANCELLED
    with pytest.raises(FlowError, match=f"flow {flow.id} was cancelled"):
        flow.result(timeout=10)


def test_result_on_the_kernel_thread_honours_the_timeout_and_returns_the_value(session: Session) -> None:
    ui = FormOnTheKernelLoop()
    slow = session.start(
        "tools/call", session.registry.get("demo"), "slow_count", {"n": 40, "delay": 0.1}, ui=ui, save=False
    )
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=rf"flow {slow.id} still running after 0.2 s"):
        slow.result(timeout=0.2)
    assert 0.19 <= time.monotonic() - started < 3
    slow.cancel()
    fast = session.start(
        "tools/call", session.registry.get("demo"), "echo", {"text": "hi"}, ui=FormOnTheKernelLoop(), save=False
    )
    assert fast.result(timeout=30).content[0].text == "hi"
    assert fast.state is FlowState.DONE


def test_result_off_the_kernel_thread_blocks_until_the_form_is_answered(session: Session) -> None:
    """Another thread may block: it does not freeze the form."""
    ui = FormOnTheKernelLoop()
    flow = session.start("tools/call", session.registry.get("prov"), "provision", {"name": "orders"}, ui=ui, save=False)
    box: list[Any] = []
    waiter = threading.Thread(target=lambda: box.append(flow.result(timeout=30)))
    waiter.start()
    assert ui.asked.wait(10)
    time.sleep(0.1)
    assert waiter.is_alive() and box == []
    ui.reply.set({"region": ElicitResult(action="decline")})
    waiter.join(30)
    assert len(box) == 1 and "declined" in box[0].content[0].text


def test_the_live_area_goes_to_the_pages_for_the_flows_own_cell(session: Session) -> None:
    """The live area a page that reloaded before a save puts back is addressed by the flow's cell id. It went out
    with no cell once the flow's options became one object (``getattr(flow, "cell_id", None)`` found nothing), and
    tests/browser/test_reload.py's reloaded page never got its form back."""
    view = LiveView("demo.echo")
    sent: list[tuple[Any, ...]] = []
    view.on_live = lambda *live: sent.append(live)
    flow = session.make_flow("tools/call", session.registry.get("demo"), "echo", {"text": "hi"}, cell_id="cell-7", view=view)  # fmt: skip
    view.attach(flow)
    assert [(cell, display) for cell, display, _output in sent] == [("cell-7", view.display_id)]
