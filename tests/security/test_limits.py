"""Security finding 8: a server cannot make the notebook's output, or its kernel's work, unbounded.

Measured before the fix: a 50 MB text result became a 105 MB HTML output; a form of 1,000 fields
took seconds to build on the kernel thread; a schema 900 levels deep raised RecursionError.
These tests drive real flows against a real in-process server and check the bounds with real
numbers: the output's length, the note saying what was cut and how to get it all, the full
value still on the flow, the time a huge form takes to refuse, and ``%config`` reaching the
flows.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from mcp.server import Server
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ImageContent,
    InputRequiredResult,
    ListToolsResult,
    TextContent,
    Tool,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from mcp_notebook.core.limits import Limits
from mcp_notebook.errors import FlowError
from mcp_notebook.flows.answering import Answerer
from mcp_notebook.flows.ui import HeadlessUI
from mcp_notebook.forms.model import Answers, FormModel, Question
from mcp_notebook.forms.widgets import ElicitationPanel
from mcp_notebook.notebook.display import FlowReport, TraceView
from mcp_notebook.session.session import Session, SessionSettings

MB = 1_000_000


def deep_schema(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"a": node}}
    return {"type": "object", "properties": {"x": node}}


def wide_schema(fields: int) -> dict[str, Any]:
    return {"type": "object", "properties": {f"f{i}": {"type": "string", "title": f"Field {i}"} for i in range(fields)}}


# ---------------------------------------------------------------------- a server of big things
def _args(**props: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": kind} for name, kind in props.items()}}


TOOLS = {
    "text": _args(n="integer", char="string"),
    "blocks": _args(n="integer"),
    "structured": _args(n="integer"),
    "image": _args(n="integer"),
    "ask": _args(depth="integer", fields="integer"),
}


async def _list_tools(ctx: Any, params: Any) -> ListToolsResult:
    return ListToolsResult(tools=[Tool(name=name, input_schema=schema) for name, schema in TOOLS.items()])


async def _call_tool(ctx: Any, params: Any) -> CallToolResult | InputRequiredResult:
    args = params.arguments or {}
    if params.name == "text":
        return CallToolResult(content=[TextContent(type="text", text=args.get("char", "x") * args["n"])])
    if params.name == "blocks":
        return CallToolResult(content=[TextContent(type="text", text=f"block {i}") for i in range(args["n"])])
    if params.name == "structured":
        return CallToolResult(
            content=[], structured_content={"rows": [{"i": i, "name": "row"} for i in range(args["n"])]}
        )
    if params.name == "image":
        return CallToolResult(
            content=[
                ImageContent(type="image", data=base64.b64encode(b"\0" * args["n"]).decode(), mime_type="image/png")
            ]
        )
    # ask: one form built here (a deep schema cannot travel as an argument: pydantic caps its depth)
    schema = deep_schema(args["depth"]) if "depth" in args else wide_schema(args["fields"])
    question = ElicitRequestFormParams(message="Fill this in", requested_schema=schema)
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answers = params.input_responses or {}
        if not answers:
            return InputRequiredResult(input_requests={"q": ElicitRequest(params=question)})
        answer = answers["q"]
    else:
        answer = await ctx.session.elicit_form(
            question.message, question.requested_schema, related_request_id=ctx.request_id
        )
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps({"action": answer.action, "content": answer.content}))]
    )


BIG = Server("big", on_list_tools=_list_tools, on_call_tool=_call_tool)


@pytest.fixture(scope="module")
def hub() -> Iterator[Session]:
    h = Session()
    h.connect("big", BIG)
    yield h
    h.close()


def run(hub: Session, tool: str, ui: Any = None, **arguments: Any) -> Any:
    flow = hub.start("tools/call", hub.registry.get("big"), tool, arguments, answers=Answers(), ui=ui, save=False)
    try:
        flow.result(timeout=60)
    except FlowError:
        pass  # the report shows it
    return flow


# ---------------------------------------------------------------------- results
def test_5_mb_text_result_is_cut_in_both_bundles_and_kept_whole(hub: Session) -> None:
    flow = run(hub, "text", n=5 * MB)
    bundle = FlowReport(flow)._repr_mimebundle_()
    limit = Limits().max_result_chars
    assert limit == 100_000
    assert len(bundle["text/html"]) < limit + 5_000  # was 5 MB and more (10.5 MB for 5 MB before escaping grew it)
    assert len(bundle["text/plain"]) < limit + 1_000
    for text in (bundle["text/plain"], bundle["text/html"]):
        assert "4,900,000 more characters not shown" in text
        assert "flow.result()" in text and "-o VAR" in text and "MCPMagics.max_result_chars" in text
    assert bundle["text/plain"].startswith("x" * limit)
    assert len(flow.result().content[0].text) == 5 * MB  # the whole value stays on the flow


def test_escaping_cannot_blow_the_bound_up(hub: Session) -> None:
    flow = run(hub, "text", n=5 * MB, char="<")
    html = FlowReport(flow)._repr_mimebundle_()["text/html"]
    assert len(html) < 4 * Limits().max_result_chars + 5_000  # "&lt;" per character shown, and no more characters


def test_countless_blocks_are_bounded_too(hub: Session) -> None:
    flow = run(hub, "blocks", n=50_000)
    bundle = FlowReport(flow)._repr_mimebundle_()
    assert len(bundle["text/html"]) < 3 * Limits().max_result_chars
    assert "more content blocks not shown" in bundle["text/plain"] and "more parts not shown" in bundle["text/plain"]
    assert len(flow.result().content) == 50_000


def test_structured_content_and_trace_are_cut(hub: Session) -> None:
    flow = run(hub, "structured", n=100_000)
    bundle = FlowReport(flow, trace=True)._repr_mimebundle_()
    assert len(bundle["text/html"]) < 2 * Limits().max_result_chars + 10_000  # the report and its trace, each bounded
    assert "more characters not shown" in bundle["text/html"]
    assert len(flow.result().structured_content["rows"]) == 100_000
    small = Session(SessionSettings(max_result_chars=200))
    small.connect("big", BIG)
    try:
        flow = small.start("tools/call", small.registry.get("big"), "text", {"n": 10, "char": "y" * 1000}, save=False)
        flow.result(timeout=30)
    finally:
        small.close()
    trace = TraceView(flow)._repr_mimebundle_()
    assert "more characters not shown" in trace["text/plain"] and len(trace["text/plain"]) < 1_000


def test_large_image_is_a_note_not_a_data_url(hub: Session) -> None:
    small = Session(SessionSettings(max_inline_bytes=1_000))
    small.connect("big", BIG)
    try:
        flow = small.start("tools/call", small.registry.get("big"), "image", {"n": 50_000}, save=False)
        flow.result(timeout=30)
    finally:
        small.close()
    bundle = FlowReport(flow)._repr_mimebundle_()
    assert "data:image" not in bundle["text/html"] and "<img" not in bundle["text/html"]
    assert "about 50,000 bytes: over max_inline_bytes, not embedded" in bundle["text/plain"]
    assert "MCPMagics.max_inline_bytes" in bundle["text/plain"]
    assert len(base64.b64decode(flow.result().content[0].data)) == 50_000
    flow = run(hub, "image", n=500)  # under the default: embedded
    assert '<img src="data:image/png;base64,' in FlowReport(flow)._repr_mimebundle_()["text/html"]


# ---------------------------------------------------------------------- forms
def _question(schema: dict[str, Any], limits: Limits | None = None) -> Question:
    params = ElicitRequestFormParams(message="Fill this in", requested_schema=schema)
    return Question("q", params, FormModel.from_schema(schema, params.message, limits))


def test_depth_900_schema_is_refused_at_once_without_recursion() -> None:
    schema = deep_schema(900)
    started = time.perf_counter()
    question = _question(schema)
    panel = ElicitationPanel("big", [question], Answers(), lambda r: None)
    took = time.perf_counter() - started
    form = question.form
    assert form is not None and not form.supported and form.limited == "depth" and not form.checkable
    assert form.reason == (
        "the schema is nested more than 32 levels deep (%config MCPMagics.max_schema_depth), "
        "so it is not shown as a form and no answer to it can be checked"
    )
    assert took < 1.5  # a form built to the depth takes seconds; under load the refusal may take a moment
    box = panel.boxes[0]
    assert box.fields == [] and box.json_editor is None
    assert "Not shown as a form: the schema is nested more than 32 levels deep" in box.box.children[1].value
    assert form.validate({"x": {"a": {}}}) == {"": form.reason + "; decline it instead"}  # jsonschema never sees it
    panel.submit("accept")
    assert not panel.sent and "decline it instead" in box.form_error.value
    assert panel.submit("decline") and panel.results is not None and panel.results["q"].action == "decline"


def test_deep_schema_end_to_end_headless_and_interactive(hub: Session) -> None:
    # 100 levels is as deep as the SDK's own serialization lets a server send; far over the limit of 32
    flow = run(hub, "ask", depth=100)
    assert flow.error is not None
    assert "Fill this in" in str(flow.error) and "nested more than 32 levels deep" in str(flow.error)
    assert "RecursionError" not in str(flow.error)

    class Decliner(HeadlessUI):
        def __init__(self) -> None:
            self.panels: list[ElicitationPanel] = []

        async def ask(self, flow: Any, questions: list[Question], answers: Answers) -> dict[str, Any]:
            import asyncio

            done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            panel = ElicitationPanel(flow.conn.name, questions, answers, done.set_result)
            self.panels.append(panel)
            panel.submit("accept")  # refused: cannot be checked
            panel.submit("decline")
            return await done

    ui = Decliner()
    flow = run(hub, "ask", ui=ui, depth=100)
    assert json.loads(flow.result().content[0].text) == {"action": "decline", "content": None}
    assert "decline it instead" in ui.panels[0].boxes[0].form_error.value


def test_1000_field_form_is_refused_by_count_and_answered_as_json(hub: Session) -> None:
    schema = wide_schema(1000)
    started = time.perf_counter()
    question = _question(schema)
    panel = ElicitationPanel("big", [question], Answers(), lambda r: None)
    took = time.perf_counter() - started
    assert took < 1.5  # building 1,000 field widgets took about 2 s here (4 s and more under load)
    form = question.form
    assert form is not None and form.limited == "fields" and form.checkable
    assert (
        form.reason
        == "the form has 1,000 fields, more than the 200 this notebook shows as widgets (%config MCPMagics.max_form_fields)"
    )
    box = panel.boxes[0]
    assert box.fields == [] and box.json_editor is not None
    assert "Not shown as a form: the form has 1,000 fields" in box.box.children[1].value

    class JsonWriter(HeadlessUI):
        async def ask(self, flow: Any, questions: list[Question], answers: Answers) -> dict[str, Any]:
            import asyncio

            done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            panel = ElicitationPanel(flow.conn.name, questions, answers, done.set_result)
            panel.boxes[0].json_editor.value = json.dumps({"f7": "seven", "f999": "last"})  # type: ignore[union-attr]
            panel.submit("accept")
            return await done

    flow = run(hub, "ask", ui=JsonWriter(), fields=1000)
    assert json.loads(flow.result().content[0].text) == {"action": "accept", "content": {"f7": "seven", "f999": "last"}}


def test_tick_boxes_and_values_count_toward_the_form_size() -> None:
    multi = {"type": "array", "items": {"type": "string", "enum": [f"o{j}" for j in range(12)]}}
    form = FormModel.from_schema({"type": "object", "properties": {f"m{i}": multi for i in range(20)}})
    assert form.limited == "fields" and "20 fields (240 with their tick boxes)" in form.reason
    big_enum = {"type": "string", "enum": [f"o{j}" for j in range(30_000)]}
    form = FormModel.from_schema({"type": "object", "properties": {"pick": big_enum}})
    assert form.limited == "size" and "holds 30,006 values, more than the 20,000" in form.reason
    hidden = {
        "type": "object",
        "properties": {"pick": big_enum, "z": deep_schema(900)},
    }  # a deep branch after many values
    assert FormModel.from_schema(hidden).limited == "depth"
    assert FormModel.from_schema(wide_schema(200)).supported  # at the limit: widgets


def test_answerer_uses_the_flows_limits() -> None:
    import asyncio

    class FakeFlow:
        limits = Limits(max_form_fields=3)

        class conn:
            name = "big"

    class Recorder(HeadlessUI):
        questions: list[Question] = []

        async def ask(self, flow: Any, questions: list[Question], answers: Answers) -> dict[str, Any]:
            self.questions.extend(questions)
            return {}

    params = ElicitRequestFormParams(message="m", requested_schema=wide_schema(4))
    ui = Recorder()
    asyncio.run(Answerer(ui=ui).elicit(FakeFlow(), {"q": params}))  # type: ignore[arg-type]
    form = ui.questions[0].form
    assert (
        form is not None
        and form.limits == FakeFlow.limits
        and form.limited == "fields"
        and "more than the 3" in form.reason
    )
    result = asyncio.run(Answerer(answers=Answers(fields={"f0": "a"})).elicit(FakeFlow(), {"q": params}))  # type: ignore[arg-type]
    assert result["q"].content == {"f0": "a"}  # headless: the JSON fallback still takes presets


# ---------------------------------------------------------------------- %config
def test_config_settings_reach_new_flows() -> None:
    from ..conftest import get_shell

    ip: InteractiveShell = get_shell()
    hub = ip.magics_manager.registry["MCPMagics"].session
    before = hub.settings.limits
    ip.run_line_magic("mcp", "connect limits_big tests.security.test_limits:BIG")
    try:
        ip.run_line_magic("config", "MCPMagics.max_result_chars = 1000")
        ip.run_line_magic("config", "MCPMagics.max_form_fields = 5")
        ip.run_line_magic("config", "MCPMagics.max_schema_depth = 8")
        ip.run_line_magic("config", "MCPMagics.max_inline_bytes = 10")
        assert hub.settings.limits == Limits(
            max_result_chars=1000, max_inline_bytes=10, max_schema_depth=8, max_form_fields=5
        )
        flow = ip.run_line_magic("mcp", "call limits_big.text n=50000")
        assert flow.limits.max_result_chars == 1000
        bundle = FlowReport(flow)._repr_mimebundle_()
        shown = re.sub(r"<style>.*?</style>", "", bundle["text/html"], flags=re.S)  # the look: fixed, not the result
        assert len(shown) < 3_000 and "49,000 more characters not shown" in bundle["text/plain"]
        assert len(flow.result().content[0].text) == 50_000
        with pytest.raises(FlowError) as info:
            ip.run_line_magic("mcp", "call limits_big.ask depth=4")  # 10 levels with its properties: over 8
        assert "nested more than 8 levels deep" in str(info.value)
        flow = ip.run_line_magic("mcp", "call limits_big.ask fields=6 --answer f0=a")
        assert json.loads(flow.result().content[0].text) == {"action": "accept", "content": {"f0": "a"}}
        from mcp_notebook.magics.magics import MCPMagics

        assert "RecursionError" in MCPMagics.class_traits()["max_schema_depth"].help
        assert "100 MB" in MCPMagics.class_traits()["max_result_chars"].help
    finally:
        for name, value in vars(before).items():
            ip.run_line_magic("config", f"MCPMagics.{name} = {value}")
        ip.run_line_magic("mcp", "disconnect limits_big")
    assert hub.settings.limits == before
