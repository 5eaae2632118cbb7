"""Headless flows through the magics, the same scenarios over every real transport.

In-process (``module:attr``), a real stdio subprocess, and streamable HTTP served by uvicorn on
127.0.0.1; each in the 2026-07-28 generation (questions returned in ``InputRequiredResult``)
and the 2025 generation (questions over the back-channel), answered by the same presets.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.lowlevel import Server
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    ListRootsRequest,
    ListToolsResult,
    TextContent,
    Tool,
)

from mcp_notebook.errors import FlowError, SessionError
from mcp_notebook.flows.flow import ANSWERS_KEPT, LOGS_KEPT, NOTES_KEPT, ROUNDS_KEPT
from mcp_notebook.forms.model import Answers
from mcp_notebook.notebook.display import FlowReport, TraceView
from mcp_notebook.session.session import Session

from ..conftest import REPO_ROOT

TRANSPORTS = ["inproc", "stdio", "http"]
DEMO = "mcp_notebook.demo:demo"
GENERATIONS = ["auto", "legacy"]


@pytest.fixture(scope="module")
def servers(ip: InteractiveShell, start_http_server: Any) -> Iterator[dict[str, str]]:
    """Connect demo and provisioner over every transport and generation; name -> connection."""
    demo_url = start_http_server("demo")
    prov_url = start_http_server("provisioner")
    targets = {
        "inproc": ("mcp_notebook.demo:demo", "mcp_notebook.demo:provisioner"),
        "stdio": (
            f"-- {sys.executable} -m mcp_notebook.demo demo",
            f"-- {sys.executable} -m mcp_notebook.demo provisioner",
        ),
        "http": (demo_url, prov_url),
    }
    for transport, (demo_target, prov_target) in targets.items():
        for generation in GENERATIONS:
            cwd = f" --cwd {REPO_ROOT}" if transport == "stdio" else ""
            ip.run_line_magic(
                "mcp", f"connect demo_{transport}_{generation} --protocol {generation}{cwd} {demo_target}"
            )
            ip.run_line_magic(
                "mcp", f"connect prov_{transport}_{generation} --protocol {generation}{cwd} {prov_target}"
            )
    yield {"demo_url": demo_url, "prov_url": prov_url}
    from ..conftest import session_of

    session_of(ip).registry.disconnect_all()  # before the HTTP servers stop


def call(ip: InteractiveShell, line: str) -> Any:
    return ip.run_line_magic("mcp", line)


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_same_answers_same_result_everywhere(
    ip: InteractiveShell, servers: Any, transport: str, generation: str
) -> None:
    suffix = f"{transport}_{generation}"
    flow = call(ip, f"call prov_{suffix}.provision name=orders --answer region=eu-west-1")
    assert flow.result().content[0].text == "Provisioned 'orders' in eu-west-1."
    expected_version = "2026-07-28" if generation == "auto" else "2025-11-25"
    assert flow.conn.protocol_version == expected_version

    two = call(
        ip,
        f'call demo_{suffix}.provision_db name=orders size=large --answers \'{{"region": "us-east-1"}}\' --accept-defaults',
    )
    assert two.result().content[0].text == "Provisioned 'orders' in us-east-1 (size large)."
    if generation == "auto":
        assert two.round == 2  # two questions, two rounds, both returned to the client
        assert [e["from"] for e in two.trace()] == ["client", "server"] * 3
        assert all("requestState" in e["message"].get("params", e["message"]) for e in two.trace()[1:-1])
    else:
        # one request; the questions come back over the back-channel in the middle of it
        events = two.trace()
        assert [e["from"] for e in events] == ["client", "server"] * 3
        assert events[0]["message"]["method"] == "tools/call" and events[-1]["message"]["resultType"] == "complete"
        assert all("elicitation/create" in str(e["message"]) for e in events[1:5:2])
        assert {e["round"] for e in events} == {1}

    prompt = call(ip, f"prompt demo_{suffix}.briefing topic=MCP --answer audience=teachers")
    assert prompt.result().messages[0].content.text == "Write a briefing for teachers about MCP."

    read = call(ip, f"read demo_{suffix} notes://ada/latest --accept-defaults")
    assert read.result().contents[0].text == "note for ada"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_progress_logs_and_content(ip: InteractiveShell, servers: Any, transport: str) -> None:
    flow = call(ip, f"call demo_{transport}_auto.slow_count n=3 delay=0.01")
    assert flow.result().content[0].text == "Counted to 3."
    assert flow.progress_info is not None and flow.progress_info.progress == 3 and flow.progress_info.total == 3
    assert any("step" in str(entry["data"]) or "count" in str(entry["data"]).lower() for entry in flow.logs)

    showcase = call(ip, f"call demo_{transport}_auto.showcase")
    bundle = FlowReport(showcase)._repr_mimebundle_()
    html = bundle["text/html"]
    assert '<img src="data:image/png;base64,' in html
    assert "<audio controls" in html
    assert "download</a>" in html  # blob resource
    assert "🔗" in html  # resource link
    assert "[image image/png" in bundle["text/plain"]

    structured = call(ip, f"call demo_{transport}_auto.add a=2 b=3")
    assert structured.result().structured_content == {"result": 5}
    html = FlowReport(structured)._repr_mimebundle_()["text/html"]
    assert (
        "<pre>5</pre>" in html and "structured content" not in html
    )  # {"result": 5} only wraps the text "5": shown once


def test_tool_error_is_shown_as_error_and_fails_the_cell(ip: InteractiveShell, servers: Any, capsys: Any) -> None:
    """An isError result: the report shows the tool's text once (red "error" badge), then the cell fails, and -o VAR still binds it."""
    ip.user_ns.pop("failed_result", None)
    with pytest.raises(FlowError) as raised:
        call(ip, "call demo_inproc_auto.fail message=kaputt -o failed_result")
    assert raised.value.kind == "tool_error" and raised.value.server == "demo_inproc_auto"
    assert "kaputt" not in str(raised.value) and "-o VAR" in str(
        raised.value
    )  # the server's text is in the report, not repeated
    out = capsys.readouterr().out
    assert (
        out.count("kaputt") == 1 and "Tool error: Error executing tool fail: kaputt" in out and "Traceback" not in out
    )
    result = ip.user_ns["failed_result"]
    assert result.is_error and result.content[0].text == "Error executing tool fail: kaputt"
    from mcp_notebook.session.api import default_session

    flow = default_session().last_flow
    assert flow.state.value == "done" and flow.error is None  # nothing to resume: the exchange finished
    html = FlowReport(flow)._repr_mimebundle_()["text/html"]
    assert '<span class="badge error">error</span>' in html and ">done<" not in html


def test_string_parameter_keeps_leading_zero(ip: InteractiveShell, servers: Any) -> None:
    flow = call(ip, "call demo_inproc_auto.echo text=012")
    assert flow.result().content[0].text == "012"
    cell = call(ip, 'call demo_inproc_auto.add --json \'{"a": 40, "b": 2}\'')
    assert cell.result().structured_content == {"result": 42}


def test_cell_body_arguments(ip: InteractiveShell, servers: Any) -> None:
    flow = ip.run_cell_magic("mcp", "call demo_inproc_auto.add", '{"a": 1, "b": 2}')
    assert flow.result().structured_content == {"result": 3}
    yaml_flow = ip.run_cell_magic("mcp", "call demo_inproc_auto.add", "a: 5\nb: 6\n")
    assert yaml_flow.result().structured_content == {"result": 11}


def test_output_variable(ip: InteractiveShell, servers: Any) -> None:
    call(ip, "call demo_inproc_auto.add a=1 b=1 -o total")
    assert ip.user_ns["total"].structured_content == {"result": 2}


# ---------------------------------------------------------------------- bad input, nothing sent
@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("call nosuch.provision name=x", "No connection named"),  # several open: prefix not a server
        ("call demo_inproc_auto.nope", "has no tool 'nope'"),
        ("call prov_inproc_auto.provision", "needs name"),
        ("call prov_inproc_auto.provision name=x colour=red", "has no parameter 'colour'"),
        ("call demo_inproc_auto.add a=one b=2", "expected integer"),
        ("call demo_inproc_auto.add --json '{bad'", "not valid JSON"),
        ("call demo_inproc_auto.add a=1 b=2 --bogus", "unrecognized option --bogus"),
        ("call demo_inproc_auto.add a=1 b=2 --answer nofield", "FIELD=VALUE"),
        ("frobnicate", "unknown subcommand"),
        ("connect broken -- no-such-command-xyz --flag", "command not found"),
        ("connect broken not_a_thing_here", "don't know how to connect"),
    ],
)
def test_bad_input_is_a_clear_error(ip: InteractiveShell, servers: Any, line: str, message: str) -> None:
    with pytest.raises((UsageError, FlowError)) as info:
        call(ip, line)
    assert message in str(info.value)
    assert "broken" not in [c.name for c in ip.magics_manager.registry["MCPMagics"].session.registry]


def test_refused_http_connection(ip: InteractiveShell) -> None:
    from ..conftest import free_port

    with pytest.raises(FlowError) as info:
        call(ip, f"connect gone http://127.0.0.1:{free_port()}/mcp")
    assert "could not reach the server" in str(info.value)


def test_missing_answer_names_the_field(ip: InteractiveShell, servers: Any) -> None:
    with pytest.raises(FlowError) as info:
        call(ip, "call prov_stdio_auto.provision name=orders")
    text = str(info.value)
    assert "'region'" in text and "--answer region=VALUE" in text
    # the connection is still usable after the failure
    assert (
        call(ip, "call prov_stdio_auto.provision name=orders --accept-defaults")
        .result()
        .content[0]
        .text.startswith("Provisioned")
    )


def test_invalid_preset_is_refused_before_sending(ip: InteractiveShell, servers: Any) -> None:
    with pytest.raises(FlowError) as info:
        call(ip, "call demo_inproc_auto.provision_db name=x --answer region=mars-1 --accept-defaults")
    assert "region: not one of the choices" in str(info.value)


def test_timeout_stops_the_flow(ip: InteractiveShell, servers: Any) -> None:
    with pytest.raises(FlowError) as info:
        call(ip, "call demo_stdio_auto.slow_count n=100 delay=0.05 --timeout 0.3")
    assert "longer than 0.3 s" in str(info.value)
    assert call(ip, "call demo_stdio_auto.echo text=still-alive").result().content[0].text == "still-alive"


def test_round_limit(ip: InteractiveShell, servers: Any) -> None:
    ip.run_line_magic("config", "MCPMagics.max_rounds = 1")
    try:
        with pytest.raises(FlowError) as info:
            call(ip, "call demo_inproc_auto.provision_db name=x --accept-defaults")
        assert "after 1 rounds" in str(info.value) and "max_rounds" in str(info.value)
    finally:
        ip.run_line_magic("config", "MCPMagics.max_rounds = 10")


def test_server_dying_mid_flow(ip: InteractiveShell, tmp_path: Any) -> None:
    script = tmp_path / "dying.py"
    script.write_text(
        "import os, sys\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "srv = MCPServer('dying')\n"
        "@srv.tool()\n"
        "def die() -> str:\n"
        "    print('about to exit', file=sys.stderr, flush=True)\n"
        "    os._exit(3)\n"
        "@srv.tool()\n"
        "def ok() -> str:\n"
        "    return 'ok'\n"
        "srv.run()\n"
    )
    call(ip, f"connect dying -- {sys.executable} {script}")
    assert call(ip, "call dying.ok").result().content[0].text == "ok"
    with pytest.raises(FlowError) as info:
        call(ip, "call dying.die")
    text = str(info.value)
    assert "connection" in text.lower() and "about to exit" in text
    # other connections keep working
    assert call(ip, "call demo_inproc_auto.echo text=fine").result().content[0].text == "fine"
    call(ip, "disconnect dying")


def test_help_on_every_subcommand(ip: InteractiveShell, capsys: Any) -> None:
    for sub in [
        "connect",
        "servers",
        "disconnect",
        "tools",
        "prompts",
        "resources",
        "call",
        "prompt",
        "read",
        "flows",
        "resume",
        "forget",
        "trace",
        "roots",
        "model",
        "review",
        "server",
        "serve",
        "stop",
        "log",
    ]:
        call(ip, f"{sub} --help")
        out = capsys.readouterr().out
        assert f"%mcp {sub}" in out, sub
    call(ip, "--help")
    assert "connect NAME TARGET" in capsys.readouterr().out


def test_listings(ip: InteractiveShell, servers: Any) -> None:
    tools = call(ip, "tools demo_inproc_auto")._repr_mimebundle_()["text/plain"]
    assert "provision_db" in tools and "name: string (required)" in tools
    prompts = call(ip, "prompts demo_inproc_auto")._repr_mimebundle_()["text/plain"]
    assert "briefing" in prompts and "topic (required)" in prompts
    resources = call(ip, "resources demo_inproc_auto")._repr_mimebundle_()["text/plain"]
    assert "demo://readme" in resources and "notes://{user}/latest" in resources
    servers_table = call(ip, "servers")._repr_mimebundle_()["text/plain"]
    assert "prov_http_legacy" in servers_table and "2025-11-25" in servers_table


def test_connection_log_shows_server_messages_and_stderr(ip: InteractiveShell, servers: Any, tmp_path: Any) -> None:
    call(ip, "call demo_stdio_auto.slow_count n=2 delay=0.01")
    log = call(ip, "log demo_stdio_auto")._repr_mimebundle_()["text/plain"]
    assert "step 1 of 2" in log
    script = tmp_path / "chatty.py"
    script.write_text(
        "import sys\nfrom mcp.server.mcpserver import MCPServer\n"
        "print('warming up the flux capacitor', file=sys.stderr, flush=True)\n"
        "srv = MCPServer('chatty')\n@srv.tool()\ndef hi() -> str:\n    return 'hi'\nsrv.run()\n"
    )
    call(ip, f"connect chatty -- {sys.executable} {script}")
    assert "warming up the flux capacitor" in call(ip, "log chatty")._repr_mimebundle_()["text/plain"]
    call(ip, "disconnect chatty")


def test_python_api_without_magics(servers: Any) -> None:
    import mcp_notebook

    mcp_notebook.connect("api_demo", "mcp_notebook.demo:demo")
    flow = mcp_notebook.call(
        "api_demo.provision_db", {"name": "api"}, answers={"region": "eu-central-1"}, accept_defaults=True
    )
    assert flow.result(timeout=30).content[0].text == "Provisioned 'api' in eu-central-1 (size small)."
    assert (
        mcp_notebook.read("notes://bo/latest", "api_demo", accept_defaults=True).result().contents[0].text
        == "note for bo"
    )


@pytest.mark.parametrize("generation", GENERATIONS)
def test_unanswered_question_fails_the_cell_in_both_generations(
    ip: InteractiveShell, servers: Any, generation: str
) -> None:
    conn = f"prov_inproc_{generation}"
    with pytest.raises(FlowError) as info:
        call(ip, f"call {conn}.provision name=orders --no-save")  # no preset answer and no --accept-defaults
    assert (info.value.kind, info.value.missing_field) == ("unanswered", "region")
    assert "--answer region=VALUE" in str(info.value) and "MCP error" not in str(info.value)
    # saved, a 2026-07-28 flow keeps its record to resume; a 2025 one has no state to keep, so it fails as above
    with pytest.raises(FlowError) as info:
        call(ip, f"call {conn}.provision name=orders")
    assert info.value.missing_field == "region"
    assert info.value.kind == ("still_saved" if generation == "auto" else "unanswered")


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize(("flags", "text"), [
    ("--decline region", "Provisioning cancelled: the user declined."),
    ("--cancel", "Provisioning cancelled: the user cancelled."),
    ("--decline other --cancel", "Provisioning cancelled: the user cancelled."),
])  # fmt: skip
def test_decline_and_cancel_headless(
    ip: InteractiveShell, servers: Any, generation: str, flags: str, text: str
) -> None:
    from mcp_notebook.session.api import default_session

    with pytest.raises(
        FlowError
    ) as raised:  # the provisioner answers a refusal with isError: the cell fails, -o still binds
        call(ip, f"call prov_inproc_{generation}.provision name=orders {flags} --no-save -o refused")
    assert raised.value.kind == "tool_error"
    assert ip.user_ns["refused"].content[0].text == text
    flow = default_session().last_flow
    assert flow.result().content[0].text == text
    assert flow.answer_summary[-1].endswith(
        text.rsplit(" ", 1)[-1].rstrip(".").replace("cancelled", "cancel").replace("declined", "decline")
    )


def test_decline_names_a_question_that_is_not_asked(ip: InteractiveShell, servers: Any) -> None:
    with pytest.raises(FlowError) as info:
        call(ip, "call prov_inproc_legacy.provision name=orders --decline other --no-save")
    assert info.value.missing_field == "region"


def test_unknown_server_prefix_with_one_server_open() -> None:
    """``nosuch.tool`` with one server open: no server ``nosuch`` (naming the open one), not "no tool"."""
    from mcp_notebook.session.session import Session

    session = Session()
    try:
        session.connect("prov", "mcp_notebook.demo:provisioner")
        with pytest.raises(FlowError) as info:
            session.tool_schema_sync(*session.resolve("nosuch.tool"))
        assert str(info.value) == "No connection named 'nosuch' (connected: prov)."
        assert info.value.kind == "unknown_connection"
        with pytest.raises(FlowError) as no_tool:
            session.tool_schema_sync(*session.resolve("nope"))
        assert str(no_tool.value).startswith("prov has no tool 'nope'. Tools: ")
    finally:
        session.close()


@pytest.mark.parametrize("var", ["not a var", "class", "1x", "a-b"])
def test_output_variable_must_be_an_identifier(ip: InteractiveShell, servers: Any, var: str) -> None:
    with pytest.raises(UsageError) as info:
        call(ip, f"call demo_inproc_auto.add a=1 b=1 -o '{var}'")
    assert str(info.value) == f"-o wants a Python variable name, got {var!r}"
    assert var not in ip.user_ns


@pytest.mark.parametrize("generation", GENERATIONS)
def test_answer_summary_names_the_question(ip: InteractiveShell, servers: Any, generation: str) -> None:
    flow = call(
        ip, f"call demo_inproc_{generation}.provision_db name=orders --answer region=us-east-1 --answer ok=true"
    )
    assert flow.answer_summary == [
        "“Which region should 'orders' live in?”: accept (region)",
        "“Create 'orders' (small) in us-east-1?”: accept (ok)",
    ]


LONG_LOG = "migrating table orders: " + " ".join(f"step-{i}" for i in range(30)) + " <b>done</b>"


def test_connection_log_shows_long_messages_whole_and_data_as_json(ip: InteractiveShell) -> None:
    ip.run_cell(
        "from mcp.server.mcpserver import Context, MCPServer\n"
        "loud = MCPServer('loud')\n"
        "@loud.tool()\n"
        "async def work(ctx: Context) -> str:\n"
        f"    await ctx.log('info', {LONG_LOG!r}, logger_name='db')\n"
        "    await ctx.log('warning', {'table': 'orders', 'rows': 3, 'ok': True}, logger_name='db')\n"
        "    return 'ok'\n"
    )
    call(ip, "connect loud loud")
    try:
        call(ip, "call loud.work")
        bundle = call(ip, "log loud")._repr_mimebundle_()
        plain, rich = bundle["text/plain"], bundle["text/html"]
        assert '{"table": "orders", "rows": 3, "ok": true}' in plain and "{'table'" not in plain
        assert "…" not in plain
        assert " ".join(plain.split()).count(LONG_LOG) == 1  # folded over lines, not cut: every word is there
        assert max(len(line) for line in plain.splitlines()) <= 100
        assert "&lt;b&gt;done&lt;/b&gt;" in rich and "<b>done</b>" not in rich  # server text stays escaped
        assert "white-space:pre-wrap" in rich
        assert "{&quot;table&quot;: &quot;orders&quot;, &quot;rows&quot;: 3, &quot;ok&quot;: true}" in rich
    finally:
        call(ip, "disconnect loud")


# ---------------------------------------------------------------------- rounds counted and "not ready" named (issue 25, items 1, 2)
# A real in-process 2026-07-28 server whose tools count every request: ``never_ready`` answers a request
# state and no question, forever; ``ask_twice`` asks one question and, answered, another nobody presets.

ROUNDS_SENT: dict[str, int] = {}


async def _rounds_tools(_ctx: Any, _params: Any) -> ListToolsResult:
    schema = {"type": "object", "properties": {}}
    return ListToolsResult(tools=[Tool(name=n, input_schema=schema) for n in ("never_ready", "ask_twice", "reworded")])


def _rounds_question(key: str) -> ElicitRequest:
    schema = {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}
    return ElicitRequest(params=ElicitRequestFormParams(message=f"What is {key}?", requested_schema=schema))


async def _rounds_call(_ctx: Any, params: Any) -> Any:
    ROUNDS_SENT[params.name] = ROUNDS_SENT.get(params.name, 0) + 1
    if params.name == "never_ready":
        return InputRequiredResult(request_state=f"wait-{ROUNDS_SENT[params.name]}")
    if params.name == "reworded":  # a message with per-call data: the answer never fits the new question
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        message = f"Go ahead? (asked at request {ROUNDS_SENT[params.name]})"
        question = ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))
        return InputRequiredResult(input_requests={"ok": question}, request_state="r")
    answers = params.input_responses or {}
    if "first" not in answers and "second" not in answers:
        return InputRequiredResult(input_requests={"first": _rounds_question("first")}, request_state="s1")
    if "first" in answers:
        return InputRequiredResult(input_requests={"second": _rounds_question("second")}, request_state="s2")
    return CallToolResult(content=[TextContent(type="text", text="done")])


@pytest.fixture(scope="module")
def rounds_hub() -> Iterator[Session]:
    session = Session()
    session.connect("rounds", Server("rounds", on_list_tools=_rounds_tools, on_call_tool=_rounds_call))
    yield session
    session.close()


def run_rounds(rounds_hub: Session, tool: str, answers: Answers) -> Any:
    ROUNDS_SENT.clear()
    flow = rounds_hub.start("tools/call", rounds_hub.registry.get("rounds"), tool, {}, answers=answers, save=False)
    with pytest.raises(FlowError) as caught:
        flow.result(timeout=60)
    return flow, caught.value


def test_a_server_never_ready_stops_at_the_cap_said_as_not_ready_with_the_requests_counted(rounds_hub: Session) -> None:
    rounds_hub.settings.max_rounds = 4
    try:
        flow, error = run_rounds(rounds_hub, "never_ready", Answers())
    finally:
        rounds_hub.settings.max_rounds = 10
    assert ROUNDS_SENT["never_ready"] == 5  # the first request and four retries; the fifth "not ready" hits the cap
    assert error.kind == "rounds_exceeded"
    assert "answered 'not ready' (a request state, no question) 5 of 5 times" in str(error)
    assert "stopped at the max_rounds setting (4)" in str(error)
    header = FlowReport(flow)._repr_mimebundle_()["text/html"]
    assert "</b> · 5 rounds · " in header  # requests sent, not one more
    trace = TraceView(flow)._repr_mimebundle_()
    assert trace["text/plain"].count("(not ready: state, no question)") == 5
    # the timed trace shows the back-off between the requests: 50 ms, doubling to 250 ms
    sent_at = [e["ms"] for e in flow.trace(times=True) if e["from"] == "client"]
    gaps = [b - a for a, b in zip(sent_at, sent_at[1:], strict=False)]
    assert len(gaps) == 4 and all(gap >= least for gap, least in zip(gaps, (45, 95, 195, 245), strict=True)), gaps
    assert f"+{sent_at[-1]} ms" in trace["text/plain"] and "<th>time</th>" in trace["text/html"]
    assert trace["text/html"].count("result · not ready") == 5


def test_a_flow_stopped_for_a_missing_answer_counts_the_requests_it_sent(rounds_hub: Session) -> None:
    flow, error = run_rounds(rounds_hub, "ask_twice", Answers(fields={"first": "ada"}))
    assert ROUNDS_SENT["ask_twice"] == 2 and error.kind == "unanswered"
    assert "</b> · 2 rounds · " in FlowReport(flow)._repr_mimebundle_()["text/html"]
    plain = FlowReport(flow, show_error=False)._repr_mimebundle_()["text/plain"]
    assert plain == "failed: rounds.ask_twice · 2 rounds (the error follows)"


def test_a_flow_that_finishes_counts_each_request() -> None:
    session = Session()
    try:
        session.connect("rounds", Server("rounds", on_list_tools=_rounds_tools, on_call_tool=_rounds_call))
        ROUNDS_SENT.clear()
        flow = session.start(
            "tools/call", session.registry.get("rounds"), "ask_twice", {},
            answers=Answers(fields={"first": "ada", "second": "lovelace"}), save=False,
        )  # fmt: skip
        assert flow.result(timeout=60).content[0].text == "done"
        assert (
            ROUNDS_SENT["ask_twice"] == 3 and "</b> · 3 rounds · " in FlowReport(flow)._repr_mimebundle_()["text/html"]
        )
    finally:
        session.close()


def test_a_question_reworded_every_round_is_said_once_with_the_rule(rounds_hub: Session) -> None:
    rounds_hub.settings.max_rounds = 3
    try:
        flow, error = run_rounds(rounds_hub, "reworded", Answers(fields={"ok": True}))
    finally:
        rounds_hub.settings.max_rounds = 10
    assert ROUNDS_SENT["reworded"] == 4 and error.kind == "rounds_exceeded"
    assert "still asked for input after 3 rounds, re-wording 'ok' each time" in str(error)
    [note] = [n for n in flow.notes if "new wording" in n]
    assert "'Go ahead? (asked at request 1)', now 'Go ahead? (asked at request 2)'" in note
    assert "Build the message from the tool's arguments, not from per-call data" in note


# ---------------------------------------------------------------------- every per-flow list bounded (issue 26)
# A real in-process 2026-07-28 server whose ``ask_many`` asks the same question and for the roots in each of
# MANY rounds before it answers: one flow goes past ROUNDS_KEPT rounds, ANSWERS_KEPT answers and NOTES_KEPT
# notes (each roots request answered leaves one); the demo's ``slow_count`` logs past LOGS_KEPT lines.

MANY = ROUNDS_KEPT + 10


async def _many_tools(_ctx: Any, _params: Any) -> ListToolsResult:
    return ListToolsResult(tools=[Tool(name="ask_many", input_schema={"type": "object", "properties": {}})])


async def _many_call(_ctx: Any, params: Any) -> Any:
    asked = int(params.request_state or 0)
    if asked == MANY:
        return CallToolResult(content=[TextContent(type="text", text=f"asked {asked} times")])
    return InputRequiredResult(
        input_requests={"again": _rounds_question("again"), "where": ListRootsRequest()}, request_state=str(asked + 1)
    )


def test_a_long_flow_keeps_its_newest_rounds_answers_and_notes_and_says_how_many_went(tmp_path: Any) -> None:
    import json

    session = Session()
    try:
        session.settings.max_rounds = MANY + 5
        conn = session.connect("many", Server("many", on_list_tools=_many_tools, on_call_tool=_many_call))
        flow = session.start("tools/call", conn, "ask_many", {}, answers=Answers(fields={"again": "yes"}), save=False)
        assert flow.result(timeout=120).content[0].text == f"asked {MANY} times"
        session.save_trace(flow, str(tmp_path / "trace.json"))
        with pytest.raises(SessionError) as refused:  # its first rounds are gone: not replayed as if they were not
            session.replay(str(tmp_path / "trace.json"))
        assert str(refused.value) == (
            f"{tmp_path / 'trace.json'}: the recording lacks the first {MANY + 1 - ROUNDS_KEPT} rounds of its flow "
            f"(a flow keeps its newest {ROUNDS_KEPT} rounds), so it cannot be replayed as it was answered; "
            "the trace still shows the rest"
        )
    finally:
        session.close()
    saved = json.loads((tmp_path / "trace.json").read_text())
    assert saved["dropped"] == f"{MANY + 1 - ROUNDS_KEPT} earlier rounds dropped (the last {ROUNDS_KEPT} kept)"
    assert len(saved["events"]) == 2 * ROUNDS_KEPT and saved["replay"]["requests"] == MANY + 1
    assert flow.sent == MANY + 1  # every request counted
    assert len(flow.rounds) == ROUNDS_KEPT and flow.rounds.dropped == MANY + 1 - ROUNDS_KEPT
    assert flow.rounds[0].number == MANY + 2 - ROUNDS_KEPT and flow.rounds[-1].number == MANY + 1
    assert len(flow.trace()) == 2 * ROUNDS_KEPT
    earlier = f"… {MANY + 1 - ROUNDS_KEPT} earlier rounds dropped (the last {ROUNDS_KEPT} kept)"
    trace = TraceView(flow)._repr_mimebundle_()
    assert trace["text/plain"].splitlines()[1] == f"  {earlier}" and earlier in trace["text/html"]
    assert len(flow.answer_summary) == ANSWERS_KEPT and flow.answer_summary.dropped == MANY - ANSWERS_KEPT
    assert len(flow.notes) == NOTES_KEPT and flow.notes.dropped == MANY - NOTES_KEPT
    report = FlowReport(flow)._repr_mimebundle_()["text/html"]
    answered = f"answered: … {MANY - ANSWERS_KEPT} earlier answers dropped (the last {ANSWERS_KEPT} kept); "
    assert answered in report and report.count("accept (again)") == ANSWERS_KEPT
    assert f"… {MANY - NOTES_KEPT} earlier notes dropped (the last {NOTES_KEPT} kept)" in report
    assert report.count("roots: answered with 0 roots (none)") == NOTES_KEPT
    assert f"</b> · {MANY + 1} rounds · " in report


def test_a_flow_keeps_its_newest_log_lines_and_counts_them_all() -> None:
    session = Session()
    try:
        conn = session.connect("demo", DEMO)
        flow = session.start("tools/call", conn, "slow_count", {"n": LOGS_KEPT + 5, "delay": 0}, save=False)
        assert flow.result(timeout=120).content[0].text == f"Counted to {LOGS_KEPT + 5}."
    finally:
        session.close()
    steps = [entry["data"] for entry in flow.logs]
    assert len(steps) == LOGS_KEPT and flow.logs.dropped == 5 and steps[0] == f"step 6 of {LOGS_KEPT + 5}"
    report = FlowReport(flow)._repr_mimebundle_()["text/html"]
    assert f"server log ({LOGS_KEPT + 5})" in report
    assert f"… 5 earlier lines dropped (the last {LOGS_KEPT} kept)\n[info] step 6 of" in report
