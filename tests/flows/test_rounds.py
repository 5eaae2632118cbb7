"""Issue 25, items 1 and 2: a flow's header counts the requests it sent, and "not ready" rounds are named.

A real in-process 2026-07-28 server (the SDK's low-level ``Server``) whose tools count every request:
``never_ready`` answers a request state and no question, forever; ``ask_twice`` asks one question and
then, answered, asks another that nobody presets. The header, the trace and the cap's error are
read from what the notebook shows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp.server.lowlevel import Server
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    ListToolsResult,
    TextContent,
    Tool,
)

from mcp_notebook.errors import FlowError
from mcp_notebook.forms.model import Answers
from mcp_notebook.notebook.display import FlowReport, TraceView
from mcp_notebook.session.session import Session

SENT: dict[str, int] = {}


async def _list_tools(_ctx: Any, _params: Any) -> ListToolsResult:
    schema = {"type": "object", "properties": {}}
    return ListToolsResult(tools=[Tool(name=n, input_schema=schema) for n in ("never_ready", "ask_twice")])


def _question(key: str) -> ElicitRequest:
    schema = {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}
    return ElicitRequest(params=ElicitRequestFormParams(message=f"What is {key}?", requested_schema=schema))


async def _call_tool(_ctx: Any, params: Any) -> Any:
    SENT[params.name] = SENT.get(params.name, 0) + 1
    if params.name == "never_ready":
        return InputRequiredResult(request_state=f"wait-{SENT[params.name]}")
    answers = params.input_responses or {}
    if "first" not in answers and "second" not in answers:
        return InputRequiredResult(input_requests={"first": _question("first")}, request_state="s1")
    if "first" in answers:
        return InputRequiredResult(input_requests={"second": _question("second")}, request_state="s2")
    return CallToolResult(content=[TextContent(type="text", text="done")])


@pytest.fixture(scope="module")
def hub() -> Iterator[Session]:
    session = Session()
    session.connect("rounds", Server("rounds", on_list_tools=_list_tools, on_call_tool=_call_tool))
    yield session
    session.close()


def run(hub: Session, tool: str, answers: Answers) -> Any:
    SENT.clear()
    flow = hub.start("tools/call", hub.registry.get("rounds"), tool, {}, answers=answers, save=False)
    with pytest.raises(FlowError) as caught:
        flow.result(timeout=60)
    return flow, caught.value


def test_a_server_never_ready_stops_at_the_cap_said_as_not_ready_with_the_requests_counted(hub: Session) -> None:
    hub.settings.max_rounds = 4
    try:
        flow, error = run(hub, "never_ready", Answers())
    finally:
        hub.settings.max_rounds = 10
    assert SENT["never_ready"] == 5  # the first request and four retries; the fifth "not ready" hits the cap
    assert error.kind == "rounds_exceeded"
    assert "answered 'not ready' (a request state, no question) 5 of 5 times" in str(error)
    assert "stopped at the max_rounds setting (4)" in str(error)
    header = FlowReport(flow)._repr_mimebundle_()["text/html"]
    assert "</b> · 5 rounds · " in header  # requests sent, not one more
    trace = TraceView(flow)._repr_mimebundle_()
    assert trace["text/plain"].count("(not ready: state, no question)") == 5
    assert trace["text/html"].count("result · not ready") == 5


def test_a_flow_stopped_for_a_missing_answer_counts_the_requests_it_sent(hub: Session) -> None:
    flow, error = run(hub, "ask_twice", Answers(fields={"first": "ada"}))
    assert SENT["ask_twice"] == 2 and error.kind == "unanswered"
    assert "</b> · 2 rounds · " in FlowReport(flow)._repr_mimebundle_()["text/html"]
    plain = FlowReport(flow, show_error=False)._repr_mimebundle_()["text/plain"]
    assert plain == "failed: rounds.ask_twice · 2 rounds (the error follows)"


def test_a_flow_that_finishes_counts_each_request() -> None:
    session = Session()
    try:
        session.connect("rounds", Server("rounds", on_list_tools=_list_tools, on_call_tool=_call_tool))
        SENT.clear()
        flow = session.start(
            "tools/call", session.registry.get("rounds"), "ask_twice", {},
            answers=Answers(fields={"first": "ada", "second": "lovelace"}), save=False,
        )  # fmt: skip
        assert flow.result(timeout=60).content[0].text == "done"
        assert SENT["ask_twice"] == 3 and "</b> · 3 rounds · " in FlowReport(flow)._repr_mimebundle_()["text/html"]
    finally:
        session.close()
