"""``magics/hints.py``: the exact line that starts a refused call again (issue 25, item 5).

Real flows of a real in-process server (the demo): the line is built from the flow's server, name and
arguments, every word encoded for the ``%mcp`` grammar, and parsed back by the grammar to the same call.
A secret argument is never printed: it stays ``NAME=…`` for the user to give.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_notebook.demo import make_demo
from mcp_notebook.magics.args import parse_json_object
from mcp_notebook.magics.grammar import build_parsers
from mcp_notebook.magics.hints import again_line
from mcp_notebook.magics.line_expand import expand_braces
from mcp_notebook.session.session import Session


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    s = Session()
    s.connect("demo", make_demo())
    yield s
    s.close()


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
    assert again_line(prompt) == '%mcp prompt demo.briefing --json \'{{"topic":"MCP"}}\''
    read = session.start("resources/read", session.registry.get("demo"), "notes://ada/latest", {}, save=False)
    assert again_line(read) == "%mcp read demo notes://ada/latest"
