"""Servers defined in cells: hot reload with a diff, serving over HTTP to another process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook.errors import FlowError

V1 = """
from typing import Annotated
from pydantic import BaseModel
from mcp.server.mcpserver import MCPServer, Elicit, Resolve

srv = MCPServer("proto")

@srv.tool()
def hello(name: str) -> str:
    return f"hello {name}"

@srv.tool()
def bye() -> str:
    return "bye"
"""

V2 = """
from typing import Annotated
from pydantic import BaseModel
from mcp.server.mcpserver import MCPServer, Elicit, Resolve

srv = MCPServer("proto")

class Colour(BaseModel):
    colour: str

async def ask_colour() -> Elicit[Colour]:
    return Elicit("Favourite colour?", Colour)

@srv.tool()
def hello(name: str, shout: bool = False) -> str:
    text = f"hello {name}"
    return text.upper() if shout else text

@srv.tool()
async def paint(thing: str, choice: Annotated[Colour, Resolve(ask_colour)]) -> str:
    return f"painted {thing} {choice.colour}"
"""


pytestmark = pytest.mark.usefixtures("undo_each_test")  # each test's servers stopped and disconnected after it


def text_of(flow: Any) -> str:
    return flow.result().content[0].text


def test_hot_reload_lists_changes_and_broken_cell_keeps_old(ip: InteractiveShell, capsys: Any) -> None:
    first = ip.run_cell_magic("mcp", "server proto", V1)
    assert first.title == "Server 'proto' is connected in-process."
    assert first.rows == [["added", "tool", "bye"], ["added", "tool", "hello"]]
    capsys.readouterr()
    assert text_of(ip.run_line_magic("mcp", "call proto.hello name=ada")) == "hello ada"

    changed = ip.run_cell_magic("mcp", "server proto", V2)  # a short table of what changed, not a run-on line
    assert changed.columns == ["change", "kind", "name"] and changed.title == "Reloaded 'proto'."
    assert changed.rows == [["added", "tool", "paint"], ["removed", "tool", "bye"], ["changed", "tool", "hello"]]
    html = changed._repr_mimebundle_()["text/html"]
    assert "<td style='text-align:left'>paint</td>" in html and "<th style='text-align:left'>change</th>" in html
    capsys.readouterr()
    assert text_of(ip.run_line_magic("mcp", "call proto.hello name=ada shout=true")) == "HELLO ADA"
    with pytest.raises(FlowError, match="no tool 'bye'"):
        ip.run_line_magic("mcp", "call proto.bye")

    ip.run_cell_magic("mcp", "server proto", V2 + "\nraise RuntimeError('half-written')\n")
    assert "still runs the previous version" in capsys.readouterr().out
    assert text_of(ip.run_line_magic("mcp", "call proto.paint thing=door --answer colour=red")) == "painted door red"

    ip.run_cell_magic("mcp", "server proto", V2)
    assert "Nothing changed." in capsys.readouterr().out


def test_cell_without_server_is_a_clear_error(ip: InteractiveShell) -> None:
    with pytest.raises(FlowError, match="defined no MCPServer"):
        ip.run_cell_magic("mcp", "server empty", "x = 1\n")


CLIENT = textwrap.dedent(
    """
    import asyncio, json, sys
    from mcp import Client
    from mcp.types import ElicitResult

    async def answer(ctx, params):
        return ElicitResult(action="accept", content={"colour": "teal"})

    async def main():
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        async with create_mcp_http_client(headers={"Authorization": "Bearer " + sys.argv[2]}) as http:
            async with Client(streamable_http_client(sys.argv[1], http_client=http), elicitation_callback=answer) as client:
                tools = sorted(t.name for t in (await client.list_tools()).tools)
                result = await client.call_tool("paint", {"thing": "fence"})
                print(json.dumps({"tools": tools, "text": result.content[0].text, "version": client.protocol_version}))

    asyncio.run(main())
    """
)


def served_token(ip: InteractiveShell, name: str) -> str:
    return ip.magics_manager.registry["MCPMagics"].session.prototypes.served[name].token


def run_client(url: str, token: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", CLIENT, url, token], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_served_server_used_by_another_process_and_reload_keeps_serving(ip: InteractiveShell, capsys: Any) -> None:
    ip.run_cell_magic("mcp", "server proto", V2)
    url = ip.run_line_magic("mcp", "serve proto").url
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    token = served_token(ip, "proto")
    seen = run_client(url, token)
    assert seen == {"tools": ["hello", "paint"], "text": "painted fence teal", "version": "2026-07-28"}

    ip.run_cell_magic("mcp", "server proto", V2.replace("painted", "coated"))
    assert "Still serving 'proto'" in capsys.readouterr().out
    assert run_client(url, token)["text"] == "coated fence teal"  # a reload keeps the token
    assert url in ip.run_line_magic("mcp", "servers")._repr_mimebundle_()["text/plain"]

    ip.run_line_magic("mcp", "stop proto")
    out = subprocess.run([sys.executable, "-c", CLIENT, url, token], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    # the in-process connection is untouched by stopping the HTTP side
    assert text_of(ip.run_line_magic("mcp", "call proto.hello name=x")) == "hello x"


def test_shared_keys_let_state_survive_a_reload(ip: InteractiveShell, monkeypatch: Any) -> None:
    """A reload builds a new server object; only shared keys let it accept the old state."""
    import asyncio

    from mcp import Client
    from mcp.types import ElicitResult, InputRequiredResult

    monkeypatch.setenv("PROTO_KEYS", "k" * 40)
    ip.run_cell_magic("mcp", "server proto", V2)

    async def never(ctx: Any, params: Any) -> Any:  # declares the capability; the test answers by hand
        raise AssertionError("not called on the manual path")

    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def first_round(url: str) -> Any:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {served_token(ip, 'proto')}"}) as http:
            async with Client(streamable_http_client(url, http_client=http), elicitation_callback=never) as client:
                return await client.session.call_tool("paint", {"thing": "gate"}, allow_input_required=True)

    async def retry(url: str, pending: Any) -> Any:
        (key,) = pending.input_requests
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {served_token(ip, 'proto')}"}) as http:
            async with Client(streamable_http_client(url, http_client=http), elicitation_callback=never) as client:
                return await client.session.call_tool(
                    "paint",
                    {"thing": "gate"},
                    allow_input_required=True,
                    input_responses={key: ElicitResult(action="accept", content={"colour": "gold"})},
                    request_state=pending.request_state,
                )

    for keys, expect_ok in (("", False), (" --keys-env PROTO_KEYS", True)):
        url = ip.run_line_magic("mcp", f"serve proto{keys}").url
        pending = asyncio.run(first_round(url))
        assert isinstance(pending, InputRequiredResult)
        ip.run_cell_magic("mcp", "server proto", V2)  # new object, new ephemeral key unless shared
        if expect_ok:
            assert asyncio.run(retry(url, pending)).content[0].text == "painted gate gold"
        else:
            with pytest.raises(Exception) as info:
                asyncio.run(retry(url, pending))
            assert "Invalid or expired requestState" in repr(info.value)
        ip.run_line_magic("mcp", "stop proto")


def test_non_loopback_host_warns(ip: InteractiveShell, capsys: Any) -> None:
    ip.run_cell_magic("mcp", "server proto", V1)
    url = ip.run_line_magic("mcp", "serve proto --host 0.0.0.0").url
    assert "Warning: serving on 0.0.0.0" in capsys.readouterr().out
    assert url.startswith("http://0.0.0.0:")
    ip.run_line_magic("mcp", "stop proto")
