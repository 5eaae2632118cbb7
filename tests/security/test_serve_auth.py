"""``%mcp serve`` needs a bearer token, keeps Host/Origin checks on for every bind address, and
lets the notebook's own client in without the user handling the token (issue 9, finding 6)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook.errors import FlowError

SERVER = '''
from mcp.server.mcpserver import MCPServer

guarded = MCPServer("guarded")

@guarded.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(autouse=True)
def guarded(undo_each_test: InteractiveShell) -> None:
    """The cell-defined server ``guarded``, defined anew for each test (its serving and connections undone after it)."""
    undo_each_test.run_cell_magic("mcp", "server guarded", SERVER)


def hub(shell: Any) -> Any:
    return shell.magics_manager.registry["MCPMagics"].session


def token_of(shell: Any, name: str = "guarded") -> str | None:
    return hub(shell).prototypes.served[name].token


def raw_post(url: str, *, token: str | None = None, host: str | None = None) -> httpx2.Response:
    headers = dict(ACCEPT)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if host is not None:
        headers["Host"] = host
    return httpx2.post(url, json=INIT, headers=headers, timeout=10)


async def sdk_call(url: str, token: str | None) -> tuple[Any, list[int]]:
    """A tool call with the plain SDK client; returns (result or exception, HTTP statuses seen)."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    statuses: list[int] = []

    async def seen(response: Any) -> None:
        statuses.append(response.status_code)

    headers = {"Authorization": f"Bearer {token}"} if token is not None else None
    http = create_mcp_http_client(headers=headers)
    http.event_hooks["response"].append(seen)
    try:
        async with http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return await client.call_tool("add", {"a": 2, "b": 40}), statuses
    except BaseException as exc:  # noqa: BLE001 - the SDK wraps the refusal in exception groups
        return exc, statuses


def test_token_is_required_and_checked(ip: InteractiveShell, capsys: Any) -> None:
    served = ip.run_line_magic("mcp", "serve guarded")
    url, token = served.url, served.token
    assert token and len(token) >= 43 and token == token_of(ip)
    out = capsys.readouterr().out
    assert f"Serving 'guarded' at {url} (bearer token required)" in out and "%mcp stop guarded" in out
    assert token not in out and "served.token" in out  # outputs are saved with the notebook: never printed
    bundle = ip.display_formatter.format(served)[0]  # what the cell shows as its result
    assert url in bundle["text/plain"] and token not in json.dumps(bundle)

    # the plain SDK client without the token is refused with 401
    result, statuses = asyncio.run(sdk_call(url, None))
    assert isinstance(result, BaseException) and statuses and set(statuses) == {401}

    # a raw request: exactly 401, a Bearer challenge and a short JSON body
    response = raw_post(url)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert response.json()["error"] == "invalid_token"
    assert token not in response.text

    # a wrong token, or the right one under another scheme, is refused the same way
    assert raw_post(url, token=token[:-1] + ("A" if token[-1] != "A" else "B")).status_code == 401
    assert httpx2.post(url, json=INIT, headers={**ACCEPT, "Authorization": f"Basic {token}"}).status_code == 401
    result, statuses = asyncio.run(sdk_call(url, "not-the-token"))
    assert isinstance(result, BaseException) and statuses and set(statuses) == {401}

    # with the token the call goes through and returns the right value
    result, statuses = asyncio.run(sdk_call(url, token))
    assert not isinstance(result, BaseException), result
    assert result.content[0].text == "42" and 401 not in statuses
    assert raw_post(url, token=token).status_code == 200


def test_reload_keeps_the_token_and_reprs_hide_it(ip: InteractiveShell, capsys: Any) -> None:
    url = ip.run_line_magic("mcp", "serve guarded").url
    served = hub(ip).prototypes.served["guarded"]
    token = served.token
    ip.run_cell_magic("mcp", "server guarded", SERVER.replace("a + b", "a + b + 1"))
    assert "Still serving 'guarded'" in capsys.readouterr().out
    assert served.token == token
    result, _ = asyncio.run(sdk_call(url, token))
    assert result.content[0].text == "43"
    assert raw_post(url).status_code == 401
    assert token not in repr(served) and ".token" in repr(served) and url in repr(served)
    assert token not in served._repr_mimebundle_()["text/plain"]


def test_no_auth_on_loopback_warns_and_needs_no_token(ip: InteractiveShell, capsys: Any) -> None:
    url = ip.run_line_magic("mcp", "serve guarded --no-auth").url
    out = capsys.readouterr().out
    assert "Warning: --no-auth: any process on this machine can call 'guarded'" in out
    assert "(no authentication)" in out and "token:" not in out
    assert token_of(ip) is None
    result, statuses = asyncio.run(sdk_call(url, None))
    assert not isinstance(result, BaseException), result
    assert result.content[0].text == "42" and 401 not in statuses
    assert raw_post(url).status_code == 200


def test_no_auth_is_refused_off_loopback(ip: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="--no-auth is only allowed on a loopback host"):
        ip.run_line_magic("mcp", "serve guarded --no-auth --host 0.0.0.0")
    assert "guarded" not in hub(ip).prototypes.served
    with pytest.raises(FlowError, match="--no-auth is only allowed on a loopback address"):
        hub(ip).prototypes.serve("guarded", "0.0.0.0", no_auth=True)  # the Python API refuses too
    assert "guarded" not in hub(ip).prototypes.served


def test_wildcard_bind_keeps_host_checks(ip: InteractiveShell, capsys: Any) -> None:
    url = ip.run_line_magic("mcp", "serve guarded --host 0.0.0.0").url
    out = capsys.readouterr().out
    assert "Warning: serving on 0.0.0.0" in out and "with its token" in out and "no authentication" not in out
    token = token_of(ip)
    port = hub(ip).prototypes.served["guarded"].port
    loopback = f"http://127.0.0.1:{port}/mcp"
    # a DNS-rebinding style request: right token, foreign Host -> the SDK's 421
    response = raw_post(loopback, token=token, host="evil.example")
    assert response.status_code == 421
    # a foreign Origin -> the SDK's 403
    forged = httpx2.post(
        loopback, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {token}", "Origin": "http://evil.example"}
    )
    assert forged.status_code == 403
    # the token is still checked first, and the machine's own names pass
    assert raw_post(loopback, host="evil.example").status_code == 401
    assert raw_post(loopback, token=token).status_code == 200
    assert raw_post(url, token=token).status_code == 200  # Host: 0.0.0.0:PORT, the printed URL


def test_loopback_bind_rejects_foreign_host(ip: InteractiveShell) -> None:
    url = ip.run_line_magic("mcp", "serve guarded").url
    assert raw_post(url, token=token_of(ip), host="evil.example").status_code == 421
    assert raw_post(url, token=token_of(ip), host="evil.example:80").status_code == 421


def test_own_client_connects_without_the_user_giving_the_token(ip: InteractiveShell, capsys: Any) -> None:
    url = ip.run_line_magic("mcp", "serve guarded").url
    token = token_of(ip)
    assert token
    capsys.readouterr()
    ip.run_line_magic("mcp", f"connect remote {url}")
    assert "Connected 'remote'" in capsys.readouterr().out
    flow = ip.run_line_magic("mcp", "call remote.add a=1 b=2")
    assert flow.result().content[0].text == "3"

    conn = hub(ip).registry.get("remote")
    # never in the places that are shown or saved
    listing = ip.run_line_magic("mcp", "servers")._repr_mimebundle_()
    assert token not in json.dumps(listing)
    saved = conn.target.saved()
    assert saved == {"target": url}  # no header names to re-supply on resume
    assert token not in json.dumps(saved)
    assert token not in json.dumps(flow.record("state")) and token not in json.dumps(flow.trace(), default=str)
    assert token not in repr(conn.target) and token not in conn.target.describe()
    assert conn.target.headers == {}

    # the Python API does the same; a reload (same token) keeps it working on reconnect
    import mcp_notebook

    api_conn = mcp_notebook.connect("remote2", url)
    assert text(mcp_notebook.call("remote2.add", {"a": 5, "b": 5})) == "10"
    ip.run_cell_magic("mcp", "server guarded", SERVER)
    capsys.readouterr()
    reconnected = hub(ip).registry.connect("remote2", api_conn.target)
    assert text(mcp_notebook.call("remote2.add", {"a": 1, "b": 1})) == "2"
    assert reconnected.target.saved() == {"target": url}


def test_own_token_goes_only_to_the_served_address(ip: InteractiveShell) -> None:
    url = ip.run_line_magic("mcp", "serve guarded").url
    protos = hub(ip).prototypes
    port = protos.served["guarded"].port
    assert protos.token_for(url) == token_of(ip)
    assert protos.token_for(url + "/") == token_of(ip)
    for other in (
        f"http://localhost:{port}/mcp",
        f"http://127.0.0.1:{port + 1}/mcp",
        f"https://127.0.0.1:{port}/mcp",
        f"http://127.0.0.1:{port}/other",
        f"http://evil.example:{port}/mcp",
    ):
        assert protos.token_for(other) is None, other


def text(flow: Any) -> str:
    return flow.result().content[0].text
