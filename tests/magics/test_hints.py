"""``magics/hints.py``: the exact line that starts a refused call again (issue 25, item 5).

Real flows of a real in-process server (the demo): the line is built from the flow's server, name and
arguments, every word encoded for the ``%mcp`` grammar, and parsed back by the grammar to the same call.
A secret argument is never printed: it stays ``NAME=…`` for the user to give.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook.demo import make_demo
from mcp_notebook.magics.args import parse_json_object
from mcp_notebook.magics.grammar import build_parsers
from mcp_notebook.magics.hints import again_line
from mcp_notebook.magics.line_expand import expand_braces
from mcp_notebook.session.session import Session


@pytest.fixture
def session_servers() -> dict[str, Any]:
    return {"demo": make_demo()}


def test_the_line_calls_the_same_tool_with_the_same_arguments(session: Session) -> None:
    arguments = {"text": 'it\'s {braced} & "quoted"\nover lines', "n": 3}
    flow = session.start("tools/call", session.registry.get("demo"), "echo", arguments, save=False)
    line = again_line(flow)
    assert line.startswith("%mcp call demo.echo --json ")
    import shlex

    words = shlex.split(expand_braces(line.removeprefix("%mcp "), {}))
    ns, extra = build_parsers()["call"].parse(words[1:], intermixed_pairs=True)
    assert ns.tool == "demo.echo" and extra == [] and parse_json_object(ns.json) == arguments


def test_a_secret_argument_is_left_for_the_user_to_give(session: Session) -> None:
    flow = session.start(
        "tools/call", session.registry.get("demo"), "echo", {"text": "x", "api_key": "sk-live-123"}, save=False
    )
    line = again_line(flow)
    assert "sk-live-123" not in line and line.endswith(" api_key=…")


def test_prompts_and_resources(session: Session) -> None:
    prompt = session.start("prompts/get", session.registry.get("demo"), "briefing", {"topic": "MCP"}, save=False)
    assert again_line(prompt) == '%mcp prompt demo.briefing --json \'{"topic":"MCP"}\''  # as a person writes it
    read = session.start("resources/read", session.registry.get("demo"), "notes://ada/latest", {}, save=False)
    assert again_line(read) == "%mcp read demo notes://ada/latest"


# ---------------------------------------------------------------------- a 2025 session's -32603 (issue 25, item 4)
def _asking_server() -> Any:
    """A 2026-style tool that answers with an input-required result whatever the session's protocol."""
    from mcp.server.lowlevel import Server
    from mcp.types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult, ListToolsResult, Tool

    async def tools(_ctx: Any, _params: Any) -> ListToolsResult:
        return ListToolsResult(tools=[Tool(name="ask", input_schema={"type": "object", "properties": {}})])

    async def call(_ctx: Any, _params: Any) -> InputRequiredResult:
        schema = {"type": "object", "properties": {"go": {"type": "boolean"}}}
        question = ElicitRequest(params=ElicitRequestFormParams(message="Go?", requested_schema=schema))
        return InputRequiredResult(input_requests={"go": question}, request_state="s")

    return Server("asking", on_list_tools=tools, on_call_tool=call)


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_a_2025_session_s_internal_error_names_the_generation_and_the_line_that_fixes_it() -> None:
    from mcp_notebook.errors import FlowError
    from tests.conftest import get_shell

    ip = get_shell()
    ip.user_ns["asking_srv"] = _asking_server()
    ip.run_line_magic("mcp", "connect asking_legacy asking_srv --protocol legacy")
    try:
        with pytest.raises(FlowError) as caught:
            ip.run_line_magic("mcp", "call asking_legacy.ask")
        text = str(caught.value)
        assert caught.value.code == -32603 and "(MCP error -32603" in text
        assert "a 2026-07-28 input-required result" in text
        assert text.endswith("Connect on the newer protocol: %mcp connect asking_legacy asking_srv")
        # on the newer protocol the same tool asks its question (headless: the missing answer is named)
        ip.run_line_magic("mcp", "connect asking_new asking_srv")
        with pytest.raises(FlowError, match="Go\\?"):
            ip.run_line_magic("mcp", "call asking_new.ask")
    finally:
        for name in ("asking_legacy", "asking_new"):
            ip.run_line_magic("mcp", f"disconnect {name}")


def test_the_saved_trace_line_encodes_server_field_names_for_the_mcp_grammar() -> None:
    """A form's field names are the server's: in the printed --answer flags they are encoded (in '...', which expands nothing)."""
    from types import SimpleNamespace

    from mcp_notebook.magics.hints import saved_trace_line

    recording = {
        "withheld": ["api_key"],
        "answers_kept": False,
        "asked": [{"answer": {"action": "accept", "fields": ["{__import__('os').system('x')}", "size"]}}],
    }
    line = saved_trace_line(SimpleNamespace(label="shop.order"), "a {b}.json", recording)
    assert line == (
        "Wrote the trace of shop.order to a {b}.json; %mcp replay 'a {b}.json' calls it again. A replay needs "
        "--answer api_key=VALUE --answer '{__import__('\"'\"'os'\"'\"').system('\"'\"'x'\"'\"')}=VALUE' "
        "--answer size=VALUE (or save with --keep-answers)."
    )
