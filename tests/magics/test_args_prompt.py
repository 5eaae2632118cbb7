"""A prompt's line is checked against the arguments the prompt declares before anything is sent (issue 36, item 7).

``%mcp prompt demo.briefing`` without ``topic`` went out and came back as a -32603 that did not say
what was missing. A tool's arguments are checked against its ``inputSchema`` before the call; a
prompt's are checked against its listed ``arguments`` the same way. The server is the demo's
``briefing`` prompt in process, behind a middleware that writes down every method it receives: a
refused line sends no ``prompts/get``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.mcpserver import MCPServer
from mcp.types import PromptArgument

from mcp_notebook.demo import briefing
from mcp_notebook.magics.args import check_prompt_arguments
from mcp_notebook.magics.line_expand import expand_braces, strip_comment

SERVER = "briefs"
HOSTILE = "to{__import__('os').getpid()}=x"  # a server's argument name: `{expr}`, a quote's end and `=` in one


def counted_server(received: list[str]) -> MCPServer[Any]:
    """The demo's ``briefing`` behind a middleware that writes down each method's name."""

    async def count(ctx: Any, call_next: Any) -> Any:
        received.append(ctx.method)
        return await call_next(ctx)

    server: MCPServer[Any] = MCPServer("briefs", middleware=[count])
    server.prompt(name="briefing")(briefing)
    return server


@pytest.fixture(scope="module")
def received() -> list[str]:
    return []


@pytest.fixture(scope="module", autouse=True)
def briefs(ip: InteractiveShell, received: list[str]) -> Iterator[None]:
    """The counted demo prompt server, connected in the shared shell (``ip`` disconnects it after the module)."""
    ip.user_ns["_briefs_server"] = counted_server(received)
    ip.run_line_magic("mcp", f"connect {SERVER} _briefs_server")
    yield
    ip.user_ns.pop("_briefs_server", None)


@pytest.fixture(autouse=True)
def fresh(received: list[str]) -> None:
    received.clear()


def refused(ip: InteractiveShell, line: str) -> str:
    with pytest.raises(UsageError) as info:
        ip.run_line_magic("mcp", line)
    return str(info.value)


def test_a_missing_required_argument_is_refused_before_anything_is_sent(
    ip: InteractiveShell, received: list[str]
) -> None:
    text = refused(ip, f"prompt {SERVER}.briefing")
    assert text == (
        f"{SERVER}.briefing needs topic; nothing was sent. Arguments: topic (required). "
        f"Run %mcp prompt {SERVER}.briefing topic=VALUE"
    )
    assert "prompts/get" not in received and received == ["prompts/list"]


def test_an_argument_the_prompt_does_not_declare_is_refused(ip: InteractiveShell, received: list[str]) -> None:
    text = refused(ip, f"prompt {SERVER}.briefing topic=cats tone=dry")
    assert text == f"{SERVER}.briefing has no argument 'tone'. Arguments: topic (required)"
    assert "prompts/get" not in received


def test_the_suggested_line_with_its_value_gets_the_prompt(ip: InteractiveShell, received: list[str]) -> None:
    text = refused(ip, f"prompt {SERVER}.briefing --answer audience=analysts")
    line = text.split("Run ", 1)[1]
    assert line.endswith("topic=VALUE") and "with the arguments you gave" not in line
    words = shlex.split(line.removeprefix("%mcp "))
    words[-1] = "topic=rainfall"
    flow = ip.run_line_magic("mcp", " ".join([*words, "--answer", "audience=analysts"]))
    result = flow.result(timeout=30)
    assert [m.content.text for m in result.messages] == ["Write a briefing for analysts about rainfall."]
    assert received.count("prompts/get") >= 1  # a 2026-07-28 get takes two rounds (it asks for the audience)


def test_a_servers_argument_name_is_encoded_in_the_suggested_line() -> None:
    """A required argument's name is the server's text: in the suggested line it is data, never ``{expr}``;
    with an ``=`` (which ``NAME=VALUE`` would split at) it is given in ``--json``."""
    with pytest.raises(UsageError) as info:
        check_prompt_arguments("s.p", [PromptArgument(name=HOSTILE, required=True)], {})
    line = str(info.value).split("Run ", 1)[1]
    ns: dict[str, Any] = {}
    words = shlex.split(expand_braces(strip_comment(line), ns))
    assert words == ["%mcp", "prompt", "s.p", "--json", json.dumps({HOSTILE: "VALUE"}, ensure_ascii=False)]
    assert ns == {}  # nothing was evaluated
