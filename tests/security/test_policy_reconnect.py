"""The administrator's policy at every open of a connection, a reconnect's included (issue 40).

A connection opened while the policy allowed it is opened again later: after its server dropped,
by ``%mcp connect`` again, by a resume, by a Dask worker. Every open goes through
``wire.connection.Connection`` and asks the policy there, as the first open did (URL, stdio command,
environment names), so a policy the administrator tightened in between applies, and a variable
denied after the first open is never read into a header again. The HTTP server here is real (an
MCP server on 127.0.0.1) and notes the Authorization header of every request it receives.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.core import policy as policy_module
from mcp_notebook.session.session import Session
from mcp_notebook.wire.configs import read_config
from mcp_notebook.wire.connection import Connection, ConnectionFailed

from ..conftest import free_port
from .conftest import Write
from .test_policy_doors import MARKED_SERVER

SECRET = "hub-reconnect-secret"


class HeaderServer:
    """A real MCP server over streamable HTTP on 127.0.0.1 that notes each request's Authorization header.

    ``drop()`` stops it (every connection to it is gone) and ``start()`` brings it back on the same port.
    """

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.authorizations: list[str] = []
        self.keys: list[str] = []  # each request's X-Key header ("" when it has none)
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def app(self) -> Any:
        from mcp.server.mcpserver import MCPServer

        srv = MCPServer("headers")

        @srv.tool()
        def echo(text: str) -> str:
            return text

        inner = srv.streamable_http_app()
        noted, keys = self.authorizations, self.keys

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                headers = dict(scope["headers"])
                noted.append(headers.get(b"authorization", b"").decode())
                keys.append(headers.get(b"x-key", b"").decode())
            await inner(scope, receive, send)

        return app

    def start(self) -> None:
        import uvicorn

        config = uvicorn.Config(self.app(), host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            assert time.monotonic() < deadline, "the header server did not start"
            time.sleep(0.05)

    def drop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)
        self._server = self._thread = None


@pytest.fixture
def header_server() -> Iterator[HeaderServer]:
    server = HeaderServer()
    server.start()
    try:
        yield server
    finally:
        server.drop()


def echo(session: Session, name: str, text: str) -> str:
    flow = session.start("tools/call", session.registry.get(name), "echo", {"text": text})
    return str(flow.result(timeout=30).content[0].text)


def refused_open(session: Session, conn: Connection) -> ConnectionFailed:
    """Open ``conn``'s target once more, as every reconnect does underneath (``Connection.open``)."""
    again = Connection(conn.name, conn.target, runtime=session.runtime, connect_timeout=20)
    with pytest.raises(ConnectionFailed) as caught:
        session.runtime.run(again.open())
    assert again.client is None and again.state != "open"
    return caught.value


def test_a_variable_denied_after_the_first_open_is_never_read_at_the_reconnect(
    set_policy: Write, session: Session, header_server: HeaderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUB_TOKEN", SECRET)
    set_policy({"denied_env": ["OTHER_*"]})
    conn = session.connect("rec", header_server.url, bearer_env="HUB_TOKEN", sign_in=False)
    assert echo(session, "rec", "first") == "first"
    assert f"Bearer {SECRET}" in header_server.authorizations  # the first open read it: allowed then
    header_server.drop()  # the server went away; it comes back, and the connection is opened again
    header_server.start()
    path = set_policy({"denied_env": ["HUB_*"]})  # the administrator tightened the policy in between
    header_server.authorizations.clear()
    error = refused_open(session, conn)
    text = str(error)
    assert error.kind == "policy_refused", text
    assert f"Not connecting 'rec': the administrator's policy ({path}) denies environment variable HUB_TOKEN" in text
    assert "never used read into an Authorization header" in text and SECRET not in text
    # %mcp connect again (and a resume, which connects the same way) is refused the same way
    with pytest.raises(ConnectionFailed) as again:
        session.connect("rec", header_server.url, bearer_env="HUB_TOKEN", sign_in=False)
    assert again.value.kind == "policy_refused" and str(path) in str(again.value)
    assert header_server.authorizations == []  # not one request, so no Authorization with the value
    set_policy({"denied_env": ["OTHER_*"]})  # lifted: the same target opens again, with its token
    assert session.connect("rec", header_server.url, bearer_env="HUB_TOKEN", sign_in=False).is_open
    assert echo(session, "rec", "back") == "back" and f"Bearer {SECRET}" in header_server.authorizations


def test_a_url_forbidden_after_the_first_open_is_never_opened_again(
    set_policy: Write, session: Session, header_server: HeaderServer
) -> None:
    set_policy({"allowed_urls": ["http://127.0.0.1:*/mcp"]})
    conn = session.connect("rec", header_server.url, sign_in=False)
    assert echo(session, "rec", "first") == "first"
    path = set_policy({"allowed_urls": ["https://mcp.example.com/*"]})
    header_server.authorizations.clear()
    error = refused_open(session, conn)
    assert error.kind == "policy_refused" and f"the administrator's policy ({path}) allows only these URLs" in str(
        error
    )
    assert header_server.authorizations == []  # nothing reached the server


def test_a_stdio_server_forbidden_after_the_first_open_is_never_started_again(
    set_policy: Write, session: Session, tmp_path: Path
) -> None:
    script = tmp_path / "marked_server.py"
    script.write_text(MARKED_SERVER)
    marker = tmp_path / "started"
    set_policy({"allowed_stdio_commands": [str(Path(sys.executable).resolve().parent) + "/*"]})
    conn = session.connect("marked", [sys.executable, str(script), str(marker)], env={"HUB_FLAG": "1"})
    assert conn.is_open and marker.read_text() == "started"
    session.registry.disconnect("marked")
    marker.unlink()
    path = set_policy({"denied_env": ["HUB_*"]})
    error = refused_open(session, conn)
    assert error.kind == "policy_refused", str(error)
    assert (
        f"({path}) denies environment variable HUB_FLAG (rule 'HUB_*'): it is never used passed to a stdio server"
        in (str(error))
    )
    path = set_policy({"allowed_stdio_commands": ["/nonexistent/*"]})
    error = refused_open(session, conn)
    assert error.kind == "policy_refused" and "allows only these stdio commands: /nonexistent/*" in str(error)
    assert not marker.exists()  # the process never started again


def config_entry(tmp_path: Path, server: dict[str, Any]) -> Any:
    """The one server of a user's own config file (no project approval needed) holding ``server``."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"cfg": server}}))
    config.chmod(0o600)
    (entry,) = read_config(config, scope="user").servers
    return entry


def test_a_config_header_variable_denied_after_the_first_open_is_never_sent_again(
    set_policy: Write, session: Session, header_server: HeaderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config's ``${VAR}`` in a header is expanded once, at connect; the target remembers the name, not the value."""
    monkeypatch.setenv("SOME_VAR", SECRET)
    set_policy({"denied_env": ["OTHER_*"]})
    entry = config_entry(tmp_path, {"type": "http", "url": header_server.url, "headers": {"X-Key": "${SOME_VAR}"}})
    conn = entry.connect(session)
    assert echo(session, "cfg", "first") == "first" and SECRET in header_server.keys  # allowed then
    assert "SOME_VAR" not in json.dumps(conn.target.saved()) and SECRET not in json.dumps(conn.target.saved())
    header_server.drop()
    header_server.start()
    path = set_policy({"denied_env": ["SOME_*"]})
    header_server.keys.clear()
    error = refused_open(session, conn)  # what a resume or a reconnect of the same connection opens
    text = str(error)
    assert error.kind == "policy_refused", text
    assert f"Not connecting 'cfg': the administrator's policy ({path}) denies environment variable SOME_VAR" in text
    assert "(rule 'SOME_*'): it is never used expanded into a header" in text and SECRET not in text
    assert header_server.keys == []  # not one request, so the value was never sent again
    set_policy({"denied_env": ["OTHER_*"]})  # lifted: the same target is allowed again
    assert policy_module.current_policy().target_refusal(conn.target) is None


def test_a_config_env_variable_denied_after_the_first_start_never_starts_the_server_again(
    set_policy: Write, session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stdio server's ``env`` value from ``${VAR}``: denying VAR (not the child's variable name) refuses the start."""
    monkeypatch.setenv("SOME_VAR", SECRET)
    script = tmp_path / "marked_server.py"
    script.write_text(MARKED_SERVER)
    marker = tmp_path / "started"
    set_policy({"denied_env": ["OTHER_*"]})
    entry = config_entry(
        tmp_path, {"command": sys.executable, "args": [str(script), str(marker)], "env": {"CHILD_KEY": "${SOME_VAR}"}}
    )
    conn = entry.connect(session)
    assert conn.is_open and marker.read_text() == "started"
    session.registry.disconnect("cfg")
    marker.unlink()
    path = set_policy({"denied_env": ["SOME_VAR"]})
    error = refused_open(session, conn)
    text = str(error)
    assert error.kind == "policy_refused", text
    assert f"({path}) denies environment variable SOME_VAR (rule 'SOME_VAR'): it is never used expanded into" in text
    assert SECRET not in text and not marker.exists()  # the process never started again with the old value
