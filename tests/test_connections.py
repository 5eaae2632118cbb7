"""Connection options reach the server for real, and nothing secret is kept where it could leak."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.errors import FlowError
from mcp_notebook.magic_hints import for_magics

from .conftest import REPO_ROOT


@pytest.fixture(scope="module")
def ip() -> Iterator[Any]:
    from .conftest import get_shell

    shell: Any = get_shell()
    yield shell
    registry(shell).disconnect_all()


def registry(shell: Any = None) -> Any:
    from .conftest import get_shell, session_of

    return session_of(shell or get_shell()).registry


def structured(flow: Any) -> Any:
    return flow.result().structured_content


def test_headers_and_bearer_reach_the_http_server(ip: Any, start_http_server: Any, monkeypatch: Any) -> None:
    url = start_http_server("demo")
    monkeypatch.setenv("NB_TEST_TOKEN", "s3cret-token")
    ip.run_line_magic("mcp", f"connect hdr {url} --header X-Notebook:tutorial-1 --bearer-env NB_TEST_TOKEN")
    flow = ip.run_line_magic("mcp", "call hdr.request_headers --json '{\"names\": [\"x-notebook\", \"authorization\"]}'")
    assert structured(flow) == {"x-notebook": "tutorial-1", "authorization": "Bearer s3cret-token"}
    # what could be saved names the header and the variable, never their values
    saved = json.dumps(flow.conn.target.saved())
    assert "tutorial-1" not in saved and "s3cret-token" not in saved
    assert "x-notebook".lower() in saved.lower() and "NB_TEST_TOKEN" in saved
    record = json.dumps(flow.record("state"))
    assert "tutorial-1" not in record and "s3cret-token" not in record


def test_missing_bearer_variable_is_explained(ip: Any, start_http_server: Any) -> None:
    url = start_http_server("echo")
    with pytest.raises(FlowError) as info:
        ip.run_line_magic("mcp", f"connect nobearer {url} --bearer-env NB_TEST_UNSET_VARIABLE")
    assert "NB_TEST_UNSET_VARIABLE is not set" in str(info.value)


def test_stdio_cwd_and_env(ip: Any, tmp_path: Path) -> None:
    ip.run_line_magic(
        "mcp",
        f"connect envd --cwd {tmp_path} --env NB_FLAVOUR=mint --env PYTHONPATH={REPO_ROOT} -- {sys.executable} -m mcp_notebook.demo demo",
    )
    info = structured(ip.run_line_magic("mcp", "call envd.process_info var=NB_FLAVOUR"))
    assert info["value"] == "mint"
    assert Path(info["cwd"]).resolve() == tmp_path.resolve()
    saved = json.dumps(registry().get("envd").target.saved())
    assert "mint" not in saved and "NB_FLAVOUR" in saved


def test_protocol_pinned_and_legacy(ip: Any) -> None:
    ip.run_line_magic("mcp", "connect pinned --protocol 2026-07-28 mcp_notebook.demo:demo")
    assert registry().get("pinned").protocol_version == "2026-07-28"
    flow = ip.run_line_magic("mcp", "call pinned.provision_db name=p --accept-defaults")
    assert flow.result().content[0].text == "Provisioned 'p' in eu-west-1 (size small)."
    ip.run_line_magic("mcp", "connect old --protocol legacy mcp_notebook.demo:demo")
    assert registry().get("old").is_legacy


def test_reconnect_replaces_and_disconnect_closes(ip: Any) -> None:
    ip.run_line_magic("mcp", "connect again mcp_notebook.demo:echo_server")
    first = registry().get("again")
    ip.run_line_magic("mcp", "connect again mcp_notebook.demo:demo")
    assert registry().get("again") is not first and not first.is_open
    ip.run_line_magic("mcp", "disconnect again")
    assert "again" not in registry()
    with pytest.raises(FlowError, match="No connection named 'again'"):
        ip.run_line_magic("mcp", "call again.echo text=x")


def test_failed_reconnect_keeps_the_old_connection(ip: Any) -> None:
    ip.run_line_magic("mcp", "connect keep mcp_notebook.demo:echo_server")
    with pytest.raises(FlowError):
        ip.run_line_magic("mcp", "connect keep -- no-such-binary-anywhere")
    assert registry().get("keep").is_open
    assert ip.run_line_magic("mcp", "call keep.echo text=still").result().content[0].text == "still"


def test_flow_timeout_setting(ip: Any) -> None:
    ip.run_line_magic("mcp", "connect slow mcp_notebook.demo:demo")
    ip.run_line_magic("config", "MCPMagics.flow_timeout = 0.2")
    try:
        with pytest.raises(FlowError, match="longer than 0.2 s"):
            ip.run_line_magic("mcp", "call slow.slow_count n=50 delay=0.05")
    finally:
        ip.run_line_magic("config", "MCPMagics.flow_timeout = None")
    assert ip.run_line_magic("mcp", "call slow.slow_count n=2 delay=0.01").result().content[0].text == "Counted to 2."


DYING_SERVER = '''
import os
from mcp.server.mcpserver import MCPServer

srv = MCPServer("dying")

@srv.tool()
def pid() -> int:
    """This server process's id."""
    return os.getpid()

@srv.tool()
def die() -> str:
    """Exit the server process at once, without answering."""
    os._exit(3)

if __name__ == "__main__":
    srv.run(transport="stdio")
'''


def wait_for_state(conn: Any, state: str, timeout: float = 15.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while conn.state != state:
        assert time.monotonic() < deadline, f"{conn.name} stayed {conn.state!r}, expected {state!r}"
        time.sleep(0.02)


def test_stdio_server_that_exits_is_dead(ip: Any, tmp_path: Path) -> None:

    script = tmp_path / "dying_server.py"
    script.write_text(DYING_SERVER)
    command = shlex.join([sys.executable, str(script)])
    ip.run_line_magic("mcp", f"connect dying --cwd {REPO_ROOT} -- {command}")
    conn = registry().get("dying")
    assert conn.state == "open" and conn.is_open
    assert structured(ip.run_line_magic("mcp", "call dying.pid --no-save"))["result"] > 0

    with pytest.raises(FlowError):
        ip.run_line_magic("mcp", "call dying.die --no-save")  # the process exits before it answers
    wait_for_state(conn, "dead")
    assert not conn.is_open and conn.dead == "the server process exited"

    hint = f"%mcp connect dying --cwd {shlex.quote(str(REPO_ROOT))} -- {command}"
    table = ip.run_line_magic("mcp", "servers")._repr_mimebundle_()
    row = next(line for line in table["text/plain"].splitlines() if line.startswith("dying "))
    assert " dead " in row
    assert f"dying is dead (the server process exited): reconnect with {hint} again." in table["text/plain"]
    assert "dead" in table["text/html"] and "the server process exited" in table["text/html"]

    with pytest.raises(FlowError) as info:
        ip.run_line_magic("mcp", "call dying.pid --no-save")
    assert "connection 'dying' is dead (the server process exited)" in str(info.value)
    assert f"Reconnect with {hint} again" in str(info.value)

    ip.run_line_magic("mcp", f"connect dying -- {command}")  # the hint's advice works
    again = registry().get("dying")
    assert again.state == "open" and structured(ip.run_line_magic("mcp", "call dying.pid --no-save"))["result"] > 0
    ip.run_line_magic("mcp", "disconnect dying")
    assert again.state == "closed"


def test_unload_and_load_close_connections(ip: Any) -> None:
    ip.run_line_magic("mcp", "connect ul_inproc mcp_notebook.demo:echo_server")
    ip.run_line_magic("mcp", f"connect ul_stdio --cwd {REPO_ROOT} -- {sys.executable} -m mcp_notebook.demo echo")
    conns = [registry().get("ul_inproc"), registry().get("ul_stdio")]
    assert [c.state for c in conns] == ["open", "open"]
    ip.run_line_magic("unload_ext", "mcp_notebook")
    try:
        assert [c.state for c in conns] == ["closed", "closed"] and not any(c.is_open for c in conns)
        assert "ul_inproc" not in registry() and "ul_stdio" not in registry()
        with pytest.raises(FlowError, match=r"^connection 'ul_stdio' is closed\.$") as info:
            conns[1].live  # noqa: B018 - the property raises
        assert (info.value.kind, info.value.server, info.value.details["connection"]) == ("connection_closed", "ul_stdio", conns[1])
        assert for_magics(info.value).args[0].endswith(f"Reconnect with %mcp connect ul_stdio --cwd {shlex.quote(str(REPO_ROOT))} -- {shlex.join([sys.executable, '-m', 'mcp_notebook.demo', 'echo'])}.")
    finally:
        ip.run_line_magic("load_ext", "mcp_notebook")
        ip.run_line_magic("config", "MCPMagics.interactive = False")
    ip.run_line_magic("mcp", "connect ul_inproc mcp_notebook.demo:echo_server")
    assert registry().get("ul_inproc").state == "open"
    assert ip.run_line_magic("mcp", "call ul_inproc.echo text=again --no-save").result().content[0].text == "again"
