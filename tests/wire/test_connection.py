"""Connection options reach the server for real, and nothing secret is kept where it could leak."""

from __future__ import annotations

import contextlib
import http.server
import json
import shlex
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook.errors import FlowError
from mcp_notebook.magics.hints import for_magics

from ..conftest import REPO_ROOT
from ..support.waiting import wait_until


def registry(shell: Any = None) -> Any:
    from ..conftest import get_shell, session_of

    return session_of(shell or get_shell()).registry


def structured(flow: Any) -> Any:
    return flow.result().structured_content


def test_headers_and_bearer_reach_the_http_server(
    ip: InteractiveShell, start_http_server: Any, monkeypatch: Any
) -> None:
    url = start_http_server("demo")
    monkeypatch.setenv("NB_TEST_TOKEN", "s3cret-token")
    ip.run_line_magic("mcp", f"connect hdr {url} --header X-Notebook:tutorial-1 --bearer-env NB_TEST_TOKEN")
    flow = ip.run_line_magic("mcp", 'call hdr.request_headers --json \'{"names": ["x-notebook", "authorization"]}\'')
    assert structured(flow) == {"x-notebook": "tutorial-1", "authorization": "Bearer s3cret-token"}
    # what could be saved names the header and the variable, never their values
    saved = json.dumps(flow.conn.target.saved())
    assert "tutorial-1" not in saved and "s3cret-token" not in saved
    assert "x-notebook".lower() in saved.lower() and "NB_TEST_TOKEN" in saved
    record = json.dumps(flow.record("state"))
    assert "tutorial-1" not in record and "s3cret-token" not in record


def test_missing_bearer_variable_is_explained(ip: InteractiveShell, start_http_server: Any) -> None:
    url = start_http_server("echo")
    with pytest.raises(FlowError) as info:
        ip.run_line_magic("mcp", f"connect nobearer {url} --bearer-env NB_TEST_UNSET_VARIABLE")
    assert "NB_TEST_UNSET_VARIABLE is not set" in str(info.value)


def test_stdio_cwd_and_env(ip: InteractiveShell, tmp_path: Path) -> None:
    ip.run_line_magic(
        "mcp",
        f"connect envd --cwd {tmp_path} --env NB_FLAVOUR=mint --env PYTHONPATH={REPO_ROOT} -- {sys.executable} -m mcp_notebook.demo demo",
    )
    info = structured(ip.run_line_magic("mcp", "call envd.process_info var=NB_FLAVOUR"))
    assert info["value"] == "mint"
    assert Path(info["cwd"]).resolve() == tmp_path.resolve()
    saved = json.dumps(registry().get("envd").target.saved())
    assert "mint" not in saved and "NB_FLAVOUR" in saved


def test_protocol_pinned_and_legacy(ip: InteractiveShell) -> None:
    ip.run_line_magic("mcp", "connect pinned --protocol 2026-07-28 mcp_notebook.demo:demo")
    assert registry().get("pinned").protocol_version == "2026-07-28"
    flow = ip.run_line_magic("mcp", "call pinned.provision_db name=p --accept-defaults")
    assert flow.result().content[0].text == "Provisioned 'p' in eu-west-1 (size small)."
    ip.run_line_magic("mcp", "connect old --protocol legacy mcp_notebook.demo:demo")
    assert registry().get("old").is_legacy


def test_reconnect_replaces_and_disconnect_closes(ip: InteractiveShell) -> None:
    ip.run_line_magic("mcp", "connect again mcp_notebook.demo:echo_server")
    first = registry().get("again")
    ip.run_line_magic("mcp", "connect again mcp_notebook.demo:demo")
    assert registry().get("again") is not first and not first.is_open
    ip.run_line_magic("mcp", "disconnect again")
    assert "again" not in registry()
    with pytest.raises(FlowError, match="No connection named 'again'"):
        ip.run_line_magic("mcp", "call again.echo text=x")


def test_failed_reconnect_keeps_the_old_connection(ip: InteractiveShell) -> None:
    ip.run_line_magic("mcp", "connect keep mcp_notebook.demo:echo_server")
    with pytest.raises(FlowError):
        ip.run_line_magic("mcp", "connect keep -- no-such-binary-anywhere")
    assert registry().get("keep").is_open
    assert ip.run_line_magic("mcp", "call keep.echo text=still").result().content[0].text == "still"


def test_flow_timeout_setting(ip: InteractiveShell) -> None:
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
    wait_until(lambda: conn.state == state, f"{conn.name} to become {state!r}", timeout)


def test_stdio_server_that_exits_is_dead(ip: InteractiveShell, tmp_path: Path) -> None:

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


def test_unload_and_load_close_connections(ip: InteractiveShell) -> None:
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
        assert (info.value.kind, info.value.server, info.value.details["connection"]) == (
            "connection_closed",
            "ul_stdio",
            conns[1],
        )
        assert (
            for_magics(info.value)
            .args[0]
            .endswith(
                f"Reconnect with %mcp connect ul_stdio --cwd {shlex.quote(str(REPO_ROOT))} -- {shlex.join([sys.executable, '-m', 'mcp_notebook.demo', 'echo'])}."
            )
        )
    finally:
        ip.run_line_magic("load_ext", "mcp_notebook")
        ip.run_line_magic("config", "MCPMagics.interactive = False")
    ip.run_line_magic("mcp", "connect ul_inproc mcp_notebook.demo:echo_server")
    assert registry().get("ul_inproc").state == "open"
    assert ip.run_line_magic("mcp", "call ul_inproc.echo text=again --no-save").result().content[0].text == "again"


@contextlib.contextmanager
def refusing_http_server(status: int) -> Iterator[str]:
    """A loopback HTTP server that answers every request with ``status`` (401 with a Bearer challenge)."""

    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(status)
            if status == 401:
                self.send_header("WWW-Authenticate", 'Bearer realm="mcp"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_DELETE = do_POST

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/mcp"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("status", [401, 403])
def test_http_auth_refusal_says_what_the_server_wants(ip: InteractiveShell, status: int) -> None:
    with refusing_http_server(status) as url, pytest.raises(FlowError) as info:
        ip.run_line_magic("mcp", f"connect locked {url}")
    error = info.value
    assert (error.kind, error.server, error.details["status"]) == ("auth_required", "locked", status)
    text = str(error)
    assert f"HTTP {status}" in text and "credentials" in text and "bearer_env" in text and "internal error" not in text
    assert f"%mcp connect locked {url} --bearer-env VAR" in text and "--header Authorization:VALUE" in text
    if status == 401:
        assert error.details["www_authenticate"] == 'Bearer realm="mcp"' and "WWW-Authenticate: Bearer" in text
    assert "locked" not in registry()


def test_listing_says_which_servers_offer_none(ip: InteractiveShell) -> None:
    ip.run_line_magic("mcp", "connect lp_demo mcp_notebook.demo:demo")
    ip.run_line_magic("mcp", "connect lp_echo mcp_notebook.demo:echo_server")  # lists none
    ip.run_line_magic("mcp", "connect lp_prov mcp_notebook.demo:provisioner")  # no capability: -32601 if asked
    try:
        prompts = ip.run_line_magic("mcp", "prompts")
        assert any(row[0] == "lp_demo" and row[1] for row in prompts.rows)
        assert [row for row in prompts.rows if row[0] == "lp_echo"] == [
            ["lp_echo", "", "", "(this server offers no prompts)", ""]
        ]
        assert [row for row in prompts.rows if row[0] == "lp_prov"] == [
            ["lp_prov", "", "", "(this server offers no prompts)", ""]
        ]
        resources = ip.run_line_magic("mcp", "resources lp_echo")
        assert resources.rows == [["lp_echo", "", "", "", "(this server offers no resources)"]]
        assert any(row[0] == "lp_demo" for row in ip.run_line_magic("mcp", "resources").rows)
    finally:
        ip.run_line_magic("mcp", "disconnect lp_demo")
        ip.run_line_magic("mcp", "disconnect lp_echo")
        ip.run_line_magic("mcp", "disconnect lp_prov")


@contextlib.contextmanager
def silent_tcp_server() -> Iterator[int]:
    """A loopback TCP server that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                held.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
        for sock in held:
            sock.close()


def test_connect_timeout_from_read_timeout(ip: InteractiveShell) -> None:
    with silent_tcp_server() as port:
        started = time.monotonic()
        with pytest.raises(FlowError) as info:
            ip.run_line_magic("mcp", f"connect mute http://127.0.0.1:{port}/mcp --timeout 1")
        elapsed = time.monotonic() - started
    assert elapsed < 5, elapsed
    error = info.value
    assert (type(error).__name__, error.kind, error.server, error.details["timeout"]) == (
        "ConnectionFailed",
        "connect_timeout",
        "mute",
        1.0,
    )
    assert "'mute'" in str(error) and "within 1 s" in str(error) and "MCPMagics.connect_timeout" in str(error)
    assert "mute" not in registry()


def test_connect_timeout_setting_ends_a_silent_stdio_server(ip: InteractiveShell) -> None:
    from mcp_notebook.session.session import SessionSettings

    assert SessionSettings().connect_timeout == 30.0
    ip.run_line_magic("config", "MCPMagics.connect_timeout = 1.5")
    children_before = set(_children())
    try:
        started = time.monotonic()
        with pytest.raises(FlowError) as info:
            ip.run_line_magic("mcp", f"connect sleeper -- {sys.executable} -c 'import time; time.sleep(60)'")
        assert time.monotonic() - started < 8
    finally:
        ip.run_line_magic("config", "MCPMagics.connect_timeout = 30.0")
    assert info.value.kind == "connect_timeout" and "within 1.5 s" in str(info.value)
    wait_until(lambda: not set(_children()) - children_before, "the child to be ended", timeout=5)


def _children() -> list[int]:
    """Live (not zombie) child processes of this test process."""
    import psutil

    return [p.pid for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]


@contextlib.contextmanager
def revocable_demo_server() -> Iterator[tuple[str, threading.Event]]:
    """The demo server over streamable HTTP behind a gate that answers 401 once ``revoked`` is set."""
    import uvicorn

    from mcp_notebook.demo import http_app

    inner = http_app("demo")
    revoked = threading.Event()

    async def gate(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and revoked.is_set():
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"www-authenticate", b'Bearer error="invalid_token"'), (b"content-length", b"0")],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        await inner(scope, receive, send)

    server = uvicorn.Server(uvicorn.Config(gate, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, "the gate server to start")
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp", revoked
    finally:
        server.should_exit = True
        thread.join(10)


def test_http_401_during_a_call_says_the_server_wants_credentials(ip: InteractiveShell) -> None:
    """Issue 11 item 5: a 401 on a call (a token revoked mid-session), not only on connect."""
    with revocable_demo_server() as (url, revoked):
        ip.run_line_magic("mcp", f"connect revoking {url}")
        try:
            assert (
                ip.run_line_magic("mcp", "call revoking.echo text=before --no-save").result().content[0].text
                == "before"
            )
            revoked.set()
            with pytest.raises(FlowError) as info:
                ip.run_line_magic("mcp", "call revoking.echo text=after --no-save")
            error = info.value
            assert (error.kind, error.server, error.details["status"]) == ("auth_required", "revoking", 401)
            assert error.details["www_authenticate"] == 'Bearer error="invalid_token"'
            text = str(error)
            assert "revoking.echo failed" in text and "HTTP 401 (Unauthorized)" in text and "internal error" not in text
            assert f"%mcp connect revoking {url} --bearer-env VAR" in text
            revoked.clear()  # credentials back: the same connection works again, nothing was lost
            assert (
                ip.run_line_magic("mcp", "call revoking.echo text=again --no-save").result().content[0].text == "again"
            )
        finally:
            ip.run_line_magic("mcp", "disconnect revoking")
