"""The administrator's policy (core/policy.py) at each door, with real servers (issue 40, item 2).

Each door is shown refusing what the policy forbids, before anything starts or connects (a stdio
server that would leave a marker file leaves none, a listening socket is never reached, a model
endpoint gets no request), with a message that says what is forbidden and names the file; and
letting through what it allows, so the refusal is the policy's and not a broken server's.
What a notebook does in a real kernel (%config, received records, %mcp serve, project configs,
the Python API inside a kernel) is tests/kernel/test_policy_kernel.py's.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

import mcp_notebook
from mcp_notebook.errors import FlowError
from mcp_notebook.flows.ui import HeadlessUI
from mcp_notebook.sampling.router import ModelConfig, Reviewed
from mcp_notebook.session.session import Session
from mcp_notebook.wire.connection import ConnectionFailed

from ..support.model_server import ModelServer
from .conftest import Write

MARKED_SERVER = """\
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

Path(sys.argv[1]).write_text("started")  # the proof that this process ran
server = MCPServer("marked")


@server.tool()
def ping() -> str:
    return "pong"


server.run()
"""


@pytest.fixture
def listener() -> Iterator[tuple[str, list[int]]]:
    """A bare TCP listener on 127.0.0.1: its URL and how many connections reached it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    sock.settimeout(0.2)
    reached: list[int] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            reached.append(1)
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", reached
    finally:
        stop.set()
        thread.join(5)
        sock.close()


@pytest.fixture
def marked(tmp_path: Path) -> tuple[list[str], Path]:
    """A real stdio server's command line and the marker file it writes when it starts."""
    script = tmp_path / "marked_server.py"
    script.write_text(MARKED_SERVER)
    marker = tmp_path / "started"
    return [sys.executable, str(script), str(marker)], marker


def refusal(error: pytest.ExceptionInfo[BaseException], path: Path) -> str:
    text = str(error.value)
    assert str(path) in text, text
    assert getattr(error.value, "kind", None) == "policy_refused", text
    return text


# ---------------------------------------------------------------------------------------------- stdio
def test_stdio_start(set_policy: Write, session: Session, marked: tuple[list[str], Path]) -> None:
    command, marker = marked
    path = set_policy({"allowed_stdio_commands": ["sh", "/nonexistent/*"]})
    with pytest.raises(ConnectionFailed) as error:
        session.connect("marked", command)
    text = refusal(error, path)
    assert f"allows only these stdio commands: sh, /nonexistent/*; {sys.executable!r} is not one of them" in text
    assert not marker.exists() and "marked" not in session.registry
    set_policy({"allowed_stdio_commands": [os.path.dirname(os.path.realpath(sys.executable)) + "/*"]})
    conn = session.connect("marked", command)
    assert conn.is_open and marker.read_text() == "started"


def test_env_passed_to_a_stdio_server(set_policy: Write, session: Session, marked: tuple[list[str], Path]) -> None:
    command, marker = marked
    path = set_policy({"denied_env": ["HUB_*"]})
    with pytest.raises(ConnectionFailed) as error:
        session.connect("marked", command, env={"PLAIN": "1", "HUB_API_TOKEN": "hub-secret"})
    assert "denies environment variable HUB_API_TOKEN (rule 'HUB_*')" in refusal(error, path)
    assert "hub-secret" not in str(error.value) and not marker.exists()
    assert session.connect("marked", command, env={"PLAIN": "1"}).is_open


# ---------------------------------------------------------------------------------------------- URLs and headers
def test_url_connect(
    set_policy: Write, session: Session, listener: tuple[str, list[int]], http_demo_server: str
) -> None:
    url, reached = listener
    path = set_policy({"allowed_urls": ["http://localhost:*/mcp"]})
    with pytest.raises(ConnectionFailed) as error:
        session.connect("far", url, sign_in=False)
    assert f"allows only these URLs: http://localhost:*/mcp; {url} (host 127.0.0.1) is not among them" in refusal(
        error, path
    )
    with pytest.raises(ConnectionFailed):
        session.connect("far", url.replace("127.0.0.1", "127.0.0.1.nip.io"), sign_in=False)
    assert reached == [] and "far" not in session.registry  # not one connection reached the socket
    set_policy({"allowed_urls": ["http://127.0.0.1:*/mcp"]})
    assert session.connect("demo", http_demo_server, sign_in=False).is_open


@pytest.fixture
def redirecting() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 whose /a/mcp answers 307 to /b/mcp (same origin): its /a URL and the paths asked."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            asked.append(self.path)
            if self.path == "/a/mcp":
                self.send_response(307)
                self.send_header("Location", "/b/mcp")
            else:
                self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/a/mcp", asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_a_redirect_to_a_path_outside_allowed_urls_is_never_followed(
    set_policy: Write, session: Session, redirecting: tuple[str, list[str]]
) -> None:
    """The endpoint is allowed; the same-origin path it redirects to (which the SDK follows) is not."""
    url, asked = redirecting
    path = set_policy({"allowed_urls": ["http://127.0.0.1:*/a/mcp"]})
    with pytest.raises(ConnectionFailed) as error:
        session.connect("gateway", url, sign_in=False)
    assert asked and set(asked) == {"/a/mcp"}, asked  # /b/mcp never asked
    assert "/b/mcp" in str(error.value) and str(path) in str(error.value), str(error.value)
    asked.clear()
    set_policy({"allowed_urls": ["http://127.0.0.1:*/*"]})  # allowed: the redirect is followed (the SDK's own rule)
    with pytest.raises(ConnectionFailed):
        session.connect("gateway", url, sign_in=False)
    assert "/b/mcp" in asked, asked


def test_bearer_env_is_never_read_into_a_header(
    set_policy: Write, session: Session, listener: tuple[str, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, reached = listener
    monkeypatch.setenv("HUB_API_TOKEN", "hub-secret")
    path = set_policy({"denied_env": ["HUB_*"]})
    with pytest.raises(ConnectionFailed) as error:
        session.connect("far", url, bearer_env="HUB_API_TOKEN")
    assert "never used read into an Authorization header" in refusal(error, path)
    assert reached == []


def test_the_python_api(set_policy: Write, marked: tuple[list[str], Path], listener: tuple[str, list[int]]) -> None:
    command, marker = marked
    url, reached = listener
    path = set_policy({"allowed_stdio_commands": [], "allowed_urls": []})
    for target in (command, "-- " + " ".join(command), url):
        with pytest.raises(FlowError) as error:
            mcp_notebook.connect("api", target)
        refusal(error, path)
    assert not marker.exists() and reached == []


def test_a_bad_policy_file_fails_closed(set_policy: Write, session: Session, marked: tuple[list[str], Path]) -> None:
    command, marker = marked
    path = set_policy({"allowed_stdio_commands": "everything"})  # a string, not a list
    with pytest.raises(ConnectionFailed) as error:
        session.connect("marked", command)
    assert "is not valid (at allowed_stdio_commands: 'everything' is not of type 'array')" in refusal(error, path)
    assert not marker.exists()


# ---------------------------------------------------------------------------------------------- sampling
@pytest.fixture(scope="module")
def fake() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


class Reviewer(HeadlessUI):
    """A person at the review panels who approves as shown, and counts what was asked."""

    interactive = True

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def review_request(self, flow: Any, key: str, params: Any, choice: Any, models: list[str]) -> Reviewed:
        self.asked.append("request")
        return Reviewed(True, params)

    async def review_reply(self, flow: Any, key: str, params: Any, result: Any, choice: Any) -> Reviewed:
        self.asked.append("reply")
        return Reviewed(True, result)


def summarize(session: Session, ui: Any = None) -> Any:
    from mcp_notebook.demo import demo

    conn = session.registry.get("d") if "d" in session.registry else session.connect("d", demo)
    return session.start("tools/call", conn, "summarize", {"text": "the cat"}, ui=ui, save=False)


def use_model(session: Session, fake: ModelServer, provider: str = "openai") -> None:
    url = fake.openai_url if provider == "openai" else fake.anthropic_url
    session.router.add(ModelConfig("m", provider, "fake-model", base_url=url))
    session.router.use("m")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_sampling_provider_and_host(set_policy: Write, session: Session, fake: ModelServer, provider: str) -> None:
    fake.reset()
    use_model(session, fake, provider)
    session.router.set_review("never")
    path = set_policy({"allowed_sampling_providers": ["echo"]})
    with pytest.raises(FlowError) as error:
        summarize(session).result(timeout=30)
    assert f"allows only these sampling providers: echo; not {provider!r}" in str(error.value)
    assert str(path) in str(error.value) and fake.requests == []
    set_policy({"allowed_sampling_hosts": ["llm.campus.example"]})
    with pytest.raises(FlowError) as error:
        summarize(session).result(timeout=30)
    assert "allows sampling only at these hosts: llm.campus.example; not '127.0.0.1'" in str(error.value)
    assert fake.requests == []
    set_policy({"allowed_sampling_providers": [provider], "allowed_sampling_hosts": ["127.0.0.1"]})
    assert summarize(session).result(timeout=30).content[0].text.startswith("Summary")
    assert len(fake.requests) == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_denied_variable_is_never_read_into_a_model_key(
    set_policy: Write, session: Session, fake: ModelServer, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model's --api-key-env naming a denied variable: refused naming the file, the endpoint gets nothing."""
    fake.reset()
    monkeypatch.setenv("HUB_API_TOKEN", "hub-secret")
    url = fake.openai_url if provider == "openai" else fake.anthropic_url
    session.router.add(ModelConfig("k", provider, "fake-model", base_url=url, api_key_env="HUB_API_TOKEN"))
    session.router.use("k")
    session.router.set_review("never")
    path = set_policy({"denied_env": ["HUB_*"]})
    with pytest.raises(FlowError) as error:
        summarize(session).result(timeout=30)
    assert "denies environment variable HUB_API_TOKEN (rule 'HUB_*')" in str(error.value)
    assert str(path) in str(error.value) and "hub-secret" not in str(error.value)
    assert fake.requests == []
    set_policy({"denied_env": ["OTHER_*"]})  # allowed: the key goes out, so the refusal above was the policy's
    assert summarize(session).result(timeout=30).content[0].text.startswith("Summary")
    assert len(fake.requests) == 1
    sent = fake.requests[0].headers
    assert "hub-secret" in (sent.get("authorization", "") + sent.get("x-api-key", ""))


def test_least_review(set_policy: Write, session: Session, fake: ModelServer) -> None:
    fake.reset()
    use_model(session, fake)  # on loopback: "remote" would not review it, "never" even less
    session.router.set_review("never")
    path = set_policy({"least_review": "ask"})
    person = Reviewer()
    assert summarize(session, person).result(timeout=30).content[0].text.startswith("Summary")
    assert person.asked == ["request", "reply"]  # reviewed although the notebook said never
    with pytest.raises(FlowError) as error:  # headless: nobody can review, so nothing is sent
        summarize(session).result(timeout=30)
    assert f"the administrator's policy ({path}) wants a person to review every sampling request" in str(error.value)
    assert len(fake.requests) == 1
    set_policy({"least_review": "remote"})  # a loopback model does not leave the machine: as the notebook says
    quiet = Reviewer()
    assert summarize(session, quiet).result(timeout=30).content[0].text.startswith("Summary")
    assert quiet.asked == []


# ---------------------------------------------------------------------------------------------- serve
def test_serve(set_policy: Write, session: Session) -> None:
    from mcp.server.mcpserver import MCPServer

    session.prototypes.objects["proto"] = MCPServer("proto")  # what %%mcp server proto leaves
    path = set_policy({"serve": False})
    with pytest.raises(FlowError) as error:
        session.prototypes.serve("proto")
    assert "forbids %mcp serve (serving a notebook's server over HTTP)" in refusal(error, path)
    assert session.prototypes.served == {}
    set_policy({"serve": True})
    served = session.prototypes.serve("proto")
    try:
        socket.create_connection(("127.0.0.1", urlsplit(served.url).port or 0), timeout=5).close()  # it listens
    finally:
        session.prototypes.stop("proto")


# ---------------------------------------------------------------------------------------------- config files
def project(tmp_path: Path, servers: dict[str, Any], vscode: dict[str, Any] | None = None) -> Path:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    if vscode is not None:
        (folder / ".vscode").mkdir()
        (folder / ".vscode" / "mcp.json").write_text(json.dumps({"servers": vscode}))
    return folder


def test_project_configs(
    set_policy: Write,
    session: Session,
    tmp_path: Path,
    marked: tuple[list[str], Path],
    listener: tuple[str, list[int]],
) -> None:
    from mcp_notebook.session.from_config import config_rows
    from mcp_notebook.wire.configs import ConfigError, find_configs

    command, marker = marked
    url, reached = listener
    folder = project(
        tmp_path, {"local": {"command": command[0], "args": command[1:]}}, vscode={"far": {"type": "http", "url": url}}
    )
    path = set_policy({"project_configs": False})
    files = [f for f in find_configs(start=folder) if f.path.is_relative_to(folder)]
    entries = {e.name: e for f in files for e in f.servers}
    assert set(entries) == {"local", "far"}
    said = (
        f"the administrator's policy ({path}) forbids servers from project config files (.mcp.json, .vscode/mcp.json)"
    )
    for entry in entries.values():
        assert entry.problem == said  # listed as forbidden
        with pytest.raises(ConfigError, match="forbids servers from project config files"):
            entry.connect(session)
    assert [row[-1] for row in config_rows(files)] == [f"cannot connect: {said}"] * 2
    assert not marker.exists() and reached == [] and len(session.registry) == 0
    set_policy({"project_configs": True})
    files = [f for f in find_configs(start=folder) if f.path.is_relative_to(folder)]
    assert all(e.problem is None for f in files for e in f.servers)


def test_a_config_never_expands_a_denied_variable_into_a_header(
    set_policy: Write,
    session: Session,
    tmp_path: Path,
    listener: tuple[str, list[int]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcp_notebook.wire.configs import ConfigError, read_config

    url, reached = listener
    monkeypatch.setenv("HUB_API_TOKEN", "hub-secret")
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "key": {"type": "http", "url": url, "headers": {"X-Key": "${HUB_API_TOKEN}"}},
                    "bearer": {"type": "http", "url": url, "headers": {"Authorization": "Bearer ${env:HUB_API_TOKEN}"}},
                    "child": {"command": sys.executable, "env": {"TOKEN": "$HUB_API_TOKEN"}},
                }
            }
        )
    )
    path = set_policy({"denied_env": ["HUB_*"]})
    entries = {e.name: e for e in read_config(config, scope="user").servers}
    for name, where in [("key", "header X-Key"), ("bearer", "header Authorization"), ("child", "env TOKEN")]:
        with pytest.raises(ConfigError) as error:
            entries[name].connect(session)
        text = str(error.value)
        assert f"the administrator's policy ({path}) denies environment variable HUB_API_TOKEN" in text
        assert f"it is never used in {where}" in text and "hub-secret" not in text
    assert reached == [] and len(session.registry) == 0
