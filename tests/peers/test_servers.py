"""Third-party MCP servers as real peers: what users run, through the package's public surface.

Each server is the released package, pinned in ``tests/peers/`` and installed by
``make peers-deps`` into ``.peers/`` (installed here on first use when missing), started over
stdio the way a user would connect it: PyPI's ``mcp-server-time``, ``mcp-server-fetch`` and
``mcp-server-git`` and a FastMCP 4 server (``tests/peers/fastmcp4_server.py``), from their own venv
``.peers/venv``; npm's ``server-everything``, ``server-filesystem``, ``server-memory`` and
``server-sequential-thinking`` on Node 22. Calls go through ``mcp_notebook.connect/call/prompt/read``
(the plain API, headless, answered by presets) or, where a test changes the session's roots or model,
through a ``Session`` of its own. Every server is started once for the module.

The Python servers speak 2026-07-28 (questions come back in results); the npm ones and FastMCP 4
with ``protocol="legacy"`` speak 2025-11-25 (questions over the back-channel).
"""

from __future__ import annotations

import functools
import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import mcp_notebook
from mcp_notebook.forms.model import Answers
from mcp_notebook.magics.listings import listing_rows
from mcp_notebook.session.api import default_session
from mcp_notebook.session.session import Session

from ..support.model_server import ModelServer
from . import servers

MODERN, LEGACY = "2026-07-28", "2025-11-25"
KEY_ENV = "MCPNB_PEERS_MODEL_KEY"
WAIT = 60  # seconds any one flow may take
PAGE = "<html><head><title>Peers</title></head><body><h1>Hello peers</h1><p>The notebook fetched this page from a local server.</p></body></html>"


# ---------------------------------------------------------------------- helpers
def done(flow: Any) -> Any:
    """The flow's result, which must not be a tool error."""
    result = flow.result(timeout=WAIT)
    assert not getattr(result, "is_error", False), texts(result)
    return result


def texts(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def refused(flow: Any) -> str:
    """The text of a result that must be a tool error (the server said no)."""
    result = flow.result(timeout=WAIT)
    assert result.is_error, texts(result)
    return texts(result)


def call(session: Session, tool: str, arguments: dict[str, Any] | None = None, **answers: Any) -> Any:
    """Start ``tools/call`` on a session of our own, headless, with preset ``Answers``."""
    conn, name = session.resolve(tool)
    return session.start("tools/call", conn, name, arguments or {}, answers=Answers(**answers), save=False)


def eventually(check: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
    """Poll ``check`` until it returns something truthy (a server applies a notification on its own time)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"not seen after {timeout}s: {what}"
        time.sleep(0.1)


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def peers() -> None:
    """The pinned peers, installed by ``make peers-deps`` on first use (never skipped)."""
    servers.ensure_installed()
    version = servers.node_version()
    assert version.startswith("v22."), f"the npm peers run on Node 22, got {version}"


@pytest.fixture(scope="module")
def connect(peers: None) -> Iterator[Callable[..., str]]:
    """``mcp_notebook.connect(name, command, ...)`` on the plain API's session; closed after the module."""
    session = default_session()
    opened: list[str] = []

    def open_(name: str, command: list[str], **options: Any) -> str:
        mcp_notebook.connect(name, command, **options)
        opened.append(name)
        return name

    yield open_
    for name in opened:
        if name in session.registry:
            session.registry.disconnect(name)


@pytest.fixture(scope="module")
def fake() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture(scope="module")
def own(peers: None, fake: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """A session of its own: a model over HTTP (the loopback fake of OpenAI) and one root, ``data``."""
    env = pytest.MonkeyPatch()
    env.setenv(KEY_ENV, "sk-peers-test")  # read when the model is called
    session = Session()
    session.add_model("fake", "openai", "gpt-test", base_url=fake.openai_url, api_key_env=KEY_ENV)
    session.use_model("fake")
    data = tmp_path_factory.mktemp("own") / "data"
    data.mkdir()
    session.change_roots("add", str(data), "data")
    session.connect("everything", servers.everything())
    session.connect("fastmcp4", servers.fastmcp4())
    yield session
    session.close()
    env.undo()


# ---------------------------------------------------------------------- mcp-server-time (PyPI)
@pytest.fixture(scope="module")
def time_peer(connect: Callable[..., str]) -> str:
    return connect("peer_time", servers.time_server("UTC"))


def test_time_current_time_in_a_fixed_zone(time_peer: str) -> None:
    flow = mcp_notebook.call(f"{time_peer}.get_current_time", {"timezone": "Asia/Kathmandu"})
    now = done(flow).structured_content
    assert flow.conn.protocol_version == MODERN
    assert now["timezone"] == "Asia/Kathmandu" and now["is_dst"] is False
    stamp = datetime.fromisoformat(now["datetime"])
    assert stamp.utcoffset() == timedelta(hours=5, minutes=45)
    assert abs((stamp - datetime.now(stamp.tzinfo)).total_seconds()) < 120
    assert now["day_of_week"] == stamp.strftime("%A")


def test_time_convert_time_numbers(time_peer: str) -> None:
    nepal = done(
        mcp_notebook.call(
            f"{time_peer}.convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kathmandu"},
        )
    )
    conversion = nepal.structured_content
    assert conversion["source"]["datetime"].endswith("T12:00:00+00:00")
    assert conversion["target"]["datetime"].endswith("T17:45:00+05:45")
    assert conversion["time_difference"] == "+5.75h"
    assert json.loads(texts(nepal)) == conversion  # the text block says the same
    india = done(
        mcp_notebook.call(
            f"{time_peer}.convert_time",
            {"source_timezone": "Asia/Tokyo", "time": "09:30", "target_timezone": "Asia/Kolkata"},
        )
    )
    assert india.structured_content["target"]["datetime"].endswith("T06:00:00+05:30")
    assert india.structured_content["time_difference"] == "-3.5h"
    assert "Invalid timezone" in refused(
        mcp_notebook.call(f"{time_peer}.get_current_time", {"timezone": "Mars/Olympus_Mons"})
    )


# ---------------------------------------------------------------------- mcp-server-fetch (PyPI)
@pytest.fixture(scope="module")
def website(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """A page on 127.0.0.1 with a robots.txt that keeps robots out of /private/; (base URL, paths asked)."""
    root = tmp_path_factory.mktemp("site")
    (root / "page.html").write_text(PAGE)
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    (root / "private").mkdir()
    (root / "private" / "report.html").write_text("<html><body><p>Only for people who ask.</p></body></html>")
    asked: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            asked.append(self.path)
            super().do_GET()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, name="peers-website", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", asked
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def fetch_peer(connect: Callable[..., str]) -> str:
    return connect(
        "peer_fetch", servers.fetch("--allow-private-ips"), env=servers.fetch_env()
    )  # it refuses loopback hosts otherwise


def test_fetch_a_local_page_as_markdown(fetch_peer: str, website: tuple[str, list[str]]) -> None:
    base, asked = website
    asked.clear()
    text = texts(done(mcp_notebook.call(f"{fetch_peer}.fetch", {"url": f"{base}/page.html"})))
    assert (
        text
        == f"Contents of {base}/page.html:\nPeers\n\n# Hello peers\n\nThe notebook fetched this page from a local server."
    )  # title, then the page
    assert asked == ["/robots.txt", "/page.html"]  # it asked robots.txt first
    raw = texts(
        done(mcp_notebook.call(f"{fetch_peer}.fetch", {"url": f"{base}/page.html", "raw": True, "max_length": 60}))
    )
    assert (
        f"Contents of {base}/page.html:\n{PAGE[:60]}\n\n<error>Content truncated. Call the fetch tool with a start_index of 60"
        in raw
    )


def test_fetch_obeys_robots_txt_and_the_prompt_does_not(fetch_peer: str, website: tuple[str, list[str]]) -> None:
    base, asked = website
    asked.clear()
    said = refused(mcp_notebook.call(f"{fetch_peer}.fetch", {"url": f"{base}/private/report.html"}))
    assert "specifies that autonomous fetching of this page is not allowed" in said and "Disallow: /private/" in said
    assert asked == ["/robots.txt"]
    # the fetch prompt is a person asking, so robots.txt is not consulted
    prompt = mcp_notebook.prompt(f"{fetch_peer}.fetch", {"url": f"{base}/private/report.html"}).result(timeout=WAIT)
    assert "Only for people who ask." in prompt.messages[0].content.text


# ---------------------------------------------------------------------- mcp-server-git (PyPI)
@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with one commit, a modified file and an untracked one."""
    path = tmp_path_factory.mktemp("git") / "project"
    path.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(path), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    git("init", "-q", "-b", "main")
    git("config", "user.name", "Ada Lovelace")
    git("config", "user.email", "ada@example.org")
    (path / "README.md").write_text("# Project\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "Add the readme")
    (path / "README.md").write_text("# Project\n\nNow with notes.\n")
    (path / "todo.txt").write_text("write tests\n")
    return path


@pytest.fixture(scope="module")
def git_peer(connect: Callable[..., str], repo: Path) -> str:
    return connect("peer_git", servers.git(str(repo)))


def test_git_status_log_and_diff(git_peer: str, repo: Path) -> None:
    status = texts(done(mcp_notebook.call(f"{git_peer}.git_status", {"repo_path": str(repo)})))
    assert status.startswith("Repository status:\nOn branch main")
    assert "modified:   README.md" in status
    assert "Untracked files:" in status and "\ttodo.txt" in status
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    log = texts(done(mcp_notebook.call(f"{git_peer}.git_log", {"repo_path": str(repo), "max_count": 5})))
    assert log.startswith(f"Commit history:\nCommit: {head}\nAuthor: Ada Lovelace\nDate: ")
    assert "Message: Add the readme" in log and log.count("Commit: ") == 1
    diff = texts(done(mcp_notebook.call(f"{git_peer}.git_diff_unstaged", {"repo_path": str(repo)})))
    assert "+Now with notes." in diff


def test_git_stays_in_its_repository(git_peer: str, repo: Path) -> None:
    said = refused(mcp_notebook.call(f"{git_peer}.git_status", {"repo_path": str(repo.parent)}))
    assert f"is outside the allowed repository '{repo}'" in said


# ---------------------------------------------------------------------- FastMCP 4 (PyPI, tests/peers/fastmcp4_server.py)
@pytest.fixture(scope="module")
def fastmcp4(connect: Callable[..., str]) -> str:
    return connect("peer_fastmcp4", servers.fastmcp4())


@pytest.fixture(scope="module")
def fastmcp4_legacy(connect: Callable[..., str]) -> str:
    return connect("peer_fastmcp4_legacy", servers.fastmcp4(), protocol="legacy")


def test_fastmcp4_plain_tool_on_the_default_protocol(fastmcp4: str) -> None:
    flow = mcp_notebook.call(f"{fastmcp4}.add", {"a": 19, "b": 23})
    result = done(flow)
    assert flow.conn.protocol_version == MODERN
    assert texts(result) == "42" and result.structured_content == {"result": 42}


def test_fastmcp4_elicit_on_legacy_answered_by_presets(fastmcp4_legacy: str) -> None:
    flow = mcp_notebook.call(
        f"{fastmcp4_legacy}.book_table", {"restaurant": "Chez Panisse"}, answers={"guests": 4, "name": "Ada"}
    )
    assert texts(done(flow)) == "Booked Chez Panisse for 4 under Ada."
    assert flow.conn.protocol_version == LEGACY
    events = flow.trace()
    assert [(e["from"], e["kind"]) for e in events] == [
        ("client", "request"),
        ("server", "request"),
        ("client", "result"),
        ("server", "result"),
    ]
    [asked] = events[1]["message"].values()  # over the back-channel, in the middle of the call
    assert (
        asked["method"] == "elicitation/create"
        and asked["params"]["message"] == "Who is the table at Chez Panisse for?"
    )
    schema = asked["params"]["requestedSchema"]
    assert set(schema["properties"]) == {"guests", "name"} and schema["properties"]["guests"]["type"] == "integer"


def test_fastmcp4_elicit_on_2026_says_to_connect_legacy(fastmcp4: str) -> None:
    """Issue 11 item 4: FastMCP 4 refuses ctx.elicit on 2026-07-28 with a tool error; the flow says what to do."""
    from mcp_notebook.errors import FlowError
    from mcp_notebook.magics.hints import for_magics

    flow = mcp_notebook.call(
        f"{fastmcp4}.book_table", {"restaurant": "Chez Panisse"}, answers={"guests": 4, "name": "Ada"}
    )
    with pytest.raises(FlowError) as info:
        flow.result(timeout=30)
    assert flow.conn.protocol_version == MODERN and flow.state.value == "failed"
    assert (info.value.kind, info.value.server) == ("needs_legacy", fastmcp4)
    text = str(info.value)
    assert (
        "elicitation via server-initiated requests is unavailable on 2026-07-28" in text and "protocol 'legacy'" in text
    )
    hinted = str(for_magics(info.value))
    assert f"Reconnect with %mcp connect {fastmcp4} --protocol legacy -- " in hinted and hinted.endswith(
        "then run the call again."
    )
    # the hint's advice works: the same call on a legacy connection is answered by the same presets
    legacy = mcp_notebook.connect(f"{fastmcp4}_hinted", flow.conn.target.command, protocol="legacy")
    try:
        again = mcp_notebook.call(
            f"{legacy.name}.book_table", {"restaurant": "Chez Panisse"}, answers={"guests": 4, "name": "Ada"}
        )
        assert texts(done(again)) == "Booked Chez Panisse for 4 under Ada."
    finally:
        default_session().registry.disconnect(legacy.name)


@pytest.mark.parametrize("generation", ["default", "legacy"])
def test_fastmcp4_log_message_with_structured_data(fastmcp4: str, fastmcp4_legacy: str, generation: str) -> None:
    name = fastmcp4 if generation == "default" else fastmcp4_legacy
    flow = mcp_notebook.call(f"{name}.report", {"table": "orders"})
    assert texts(done(flow)) == "Reported on orders."
    expected = {
        "level": "warning",
        "logger": "fastmcp4-peer",
        "data": {"msg": "checked orders", "extra": {"table": "orders", "rows": 3, "columns": ["id", "name"]}},
    }
    logs = default_session().registry.get(name).logs
    eventually(lambda: expected in logs, f"the log message in {list(logs)}")


def test_fastmcp4_sampling_in_the_result_answered_by_the_model(own: Session, fake: ModelServer) -> None:
    fake.reset()
    flow = call(own, "fastmcp4.summarize", {"text": "the cat sat on the mat"})
    assert texts(done(flow)) == "Summary by fake-gpt: fake reply to: Summarize: the cat sat on the mat"
    assert flow.conn.protocol_version == MODERN and flow.round == 1
    [sent] = fake.requests
    assert sent.body["messages"] == [
        {"role": "system", "content": "You summarize text in one short sentence."},
        {"role": "user", "content": "Summarize: the cat sat on the mat"},
    ]
    assert sent.body["max_tokens"] == 60


# ---------------------------------------------------------------------- @modelcontextprotocol/server-everything (npm)
@pytest.fixture(scope="module")
def everything(connect: Callable[..., str]) -> str:
    return connect("peer_everything", servers.everything())


def test_everything_echo_and_sum(everything: str) -> None:
    flow = mcp_notebook.call(f"{everything}.echo", {"message": "hello from a notebook"})
    assert texts(done(flow)) == "Echo: hello from a notebook"
    assert flow.conn.protocol_version == LEGACY
    assert texts(done(mcp_notebook.call(f"{everything}.get-sum", {"a": 2, "b": 40}))) == "The sum of 2 and 40 is 42."
    weather = done(mcp_notebook.call(f"{everything}.get-structured-content", {"location": "New York"}))
    assert set(weather.structured_content) == {"temperature", "conditions", "humidity"}


def test_everything_elicitation_answered_by_presets(everything: str) -> None:
    flow = mcp_notebook.call(
        f"{everything}.trigger-elicitation-request",
        answers={"name": "Ada Lovelace", "integer": 7},
        accept_defaults=True,
    )
    result = done(flow)
    shown = texts(result)
    assert "✅ User provided the requested information!" in shown
    assert "- Name: Ada Lovelace" in shown and "- Favorite Integer: 7" in shown
    raw = json.loads(shown.split("Raw result: ", 1)[1])
    assert raw["action"] == "accept"
    sent = raw["content"]
    assert sent["name"] == "Ada Lovelace" and sent["integer"] == 7
    # the defaults of the server's schema, sent as a person accepting them would
    assert sent["firstLine"] == "It was a dark and stormy night." and sent["untitledMultipleSelectEnum"] == ["Guitar"]
    assert (
        sent["titledSingleSelectEnum"] == "hero-1"
        and sent["titledMultipleSelectEnum"] == ["fish-1"]
        and sent["legacyTitledEnum"] == "pet-1"
    )


def test_everything_elicitation_declined(everything: str) -> None:
    session = default_session()
    conn, name = session.resolve(f"{everything}.trigger-elicitation-request")
    flow = session.start("tools/call", conn, name, {}, answers=Answers(decline=["name"]), save=False)
    shown = texts(done(flow))
    assert "❌ User declined to provide the requested information." in shown
    assert json.loads(shown.split("Raw result: ", 1)[1]) == {"action": "decline"}


def test_everything_sampling_answered_by_the_model(own: Session, fake: ModelServer) -> None:
    fake.reset()
    flow = call(own, "everything.trigger-sampling-request", {"prompt": "What is MCP?", "maxTokens": 33})
    shown = texts(done(flow))
    reply = json.loads(shown.split("LLM sampling result: ", 1)[1])
    assert reply["model"] == "fake-gpt" and reply["role"] == "assistant"
    assert reply["content"] == {
        "type": "text",
        "text": "fake reply to: Resource trigger-sampling-request context: What is MCP?",
    }
    [sent] = fake.requests
    assert sent.body["messages"][0] == {"role": "system", "content": "You are a helpful test server."}
    assert sent.body["max_tokens"] == 33 and sent.body["temperature"] == 0.7


def test_everything_roots_list_follows_the_session(own: Session, tmp_path: Path) -> None:
    shown = texts(done(call(own, "everything.get-roots-list")))
    data = next(e for e in own.roots.effective() if e.name == "data")
    assert shown.startswith(f"Current MCP Roots (1 total):\n\n1. data\n   URI: {data.uri}\n")
    told = own.change_roots("add", str(tmp_path), "scratch")
    assert "everything" in told  # a 2025 server is sent roots/list_changed
    try:
        eventually(
            lambda: "(2 total)" in texts(done(call(own, "everything.get-roots-list"))), "the second root on the server"
        )
        shown = texts(done(call(own, "everything.get-roots-list")))
        assert f"2. scratch\n   URI: {tmp_path.resolve().as_uri()}" in shown
    finally:
        own.change_roots("remove", str(tmp_path))


def test_everything_resources_and_prompts(everything: str) -> None:
    session = default_session()
    resources = {row[1]: row for row in listing_rows(session, "resources", everything)}
    assert resources["demo://resource/static/document/features.md"][3] == "text/markdown"
    assert resources["demo://resource/dynamic/text/{resourceId}"][4].endswith("(template)")
    features = mcp_notebook.read("demo://resource/static/document/features.md", server=everything).result(timeout=WAIT)
    assert features.contents[0].text.startswith("# Everything Server - Features")
    dynamic = mcp_notebook.read("demo://resource/dynamic/text/3", server=everything).result(timeout=WAIT)
    assert dynamic.contents[0].mime_type == "text/plain" and dynamic.contents[0].text.startswith(
        "Resource 3: This is a plaintext resource"
    )
    prompts = {row[1]: row for row in listing_rows(session, "prompts", everything)}
    assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= set(prompts)
    assert prompts["args-prompt"][4] == "city (required), state"
    asked = mcp_notebook.prompt(f"{everything}.args-prompt", {"city": "Paris", "state": "TX"}).result(timeout=WAIT)
    assert [(m.role, m.content.text) for m in asked.messages] == [("user", "What's weather in Paris, TX?")]


def test_everything_long_running_operation_reports_progress(everything: str) -> None:
    flow = mcp_notebook.call(f"{everything}.trigger-long-running-operation", {"duration": 1, "steps": 4})
    assert texts(done(flow)) == "Long running operation completed. Duration: 1 seconds, Steps: 4."
    progress = flow.progress_info
    assert progress is not None and (progress.progress, progress.total) == (4, 4)


# ---------------------------------------------------------------------- @modelcontextprotocol/server-filesystem (npm), roots only
@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("fs")
    data, more = base / "data", base / "more"
    data.mkdir()
    more.mkdir()
    (data / "notes.txt").write_text("inside the first root\n")
    (more / "secret.txt").write_text("inside the second root\n")
    return data.resolve(), more.resolve()


@pytest.fixture(scope="module")
def fs(peers: None, folders: tuple[Path, Path]) -> Iterator[Session]:
    """A session whose only root is ``data``, connected to the filesystem server started without directories."""
    session = Session()
    data, _ = folders
    session.change_roots("add", str(data), "data")
    assert [e.path for e in session.roots.effective()] == [data]
    command = servers.filesystem()
    assert command[2:] == []  # no directories: the server's allowed directories are our roots
    session.connect("filesystem", command)
    yield session
    session.close()


def allowed(session: Session) -> list[str]:
    shown = texts(done(call(session, "filesystem.list_allowed_directories")))
    return shown.splitlines()[1:]  # "Allowed directories:" then one a line


def test_filesystem_takes_its_directories_from_our_roots(fs: Session, folders: tuple[Path, Path]) -> None:
    data, more = folders
    eventually(lambda: allowed(fs) == [str(data)], "the root as the server's only allowed directory")
    read = done(call(fs, "filesystem.read_text_file", {"path": str(data / "notes.txt")}))
    assert texts(read) == "inside the first root\n" and read.structured_content == {
        "content": "inside the first root\n"
    }
    said = refused(call(fs, "filesystem.read_text_file", {"path": str(more / "secret.txt")}))
    assert said == f"Access denied - path outside allowed directories: {more / 'secret.txt'} not in {data}"
    assert (
        "Started without allowed directories - waiting for client to provide roots via MCP protocol"
        in fs.registry.get("filesystem").stderr
    )

    told = fs.change_roots("add", str(more), "more")
    assert told == ["filesystem"]  # roots/list_changed sent; the server asks roots/list again
    eventually(lambda: allowed(fs) == [str(data), str(more)], "the second root as an allowed directory")
    assert (
        texts(done(call(fs, "filesystem.read_text_file", {"path": str(more / "secret.txt")})))
        == "inside the second root\n"
    )


def test_filesystem_started_with_a_folder_keeps_it_by_default(peers: None, folders: tuple[Path, Path]) -> None:
    """A session that added no roots declares none, so the folder on the server's command line stays allowed after connecting."""
    data, more = folders
    session = Session()
    try:
        assert not session.roots.offered
        session.connect("fs_args", servers.filesystem(str(more)))
        assert not session.registry.get("fs_args").offers_roots
        read = done(call(session, "fs_args.read_text_file", {"path": str(more / "secret.txt")}))
        assert texts(read) == "inside the second root\n"
        listed = texts(done(call(session, "fs_args.list_allowed_directories")))
        assert listed.splitlines()[1:] == [str(more)]
        stderr = session.registry.get("fs_args").stderr
        assert any(
            "Client does not support MCP Roots, using allowed directories set from server args" in line
            for line in stderr
        ), stderr
        said = refused(call(session, "fs_args.read_text_file", {"path": str(data / "notes.txt")}))
        assert said == f"Access denied - path outside allowed directories: {data / 'notes.txt'} not in {more}"
    finally:
        session.close()


# ---------------------------------------------------------------------- @modelcontextprotocol/server-memory (npm)
@pytest.fixture(scope="module")
def memory(connect: Callable[..., str], tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    store = tmp_path_factory.mktemp("memory") / "memory.jsonl"
    return connect("peer_memory", servers.memory(), env={"MEMORY_FILE_PATH": str(store)}), store


def test_memory_entities_relations_graph_and_search(memory: tuple[str, Path]) -> None:
    name, store = memory
    ada = {"name": "Ada Lovelace", "entityType": "person", "observations": ["wrote the first program"]}
    engine = {"name": "Analytical Engine", "entityType": "machine", "observations": ["designed by Babbage"]}
    relation = {"from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "programmed"}
    created = done(mcp_notebook.call(f"{name}.create_entities", {"entities": [ada, engine]}))
    assert created.structured_content == {"entities": [ada, engine]}
    done(mcp_notebook.call(f"{name}.create_relations", {"relations": [relation]}))
    graph = done(mcp_notebook.call(f"{name}.read_graph"))
    assert graph.structured_content == {"entities": [ada, engine], "relations": [relation]}
    assert json.loads(texts(graph)) == graph.structured_content
    found = done(mcp_notebook.call(f"{name}.search_nodes", {"query": "program"}))
    assert found.structured_content == {"entities": [ada], "relations": [relation]}
    lines = [json.loads(line) for line in store.read_text().splitlines()]  # where MEMORY_FILE_PATH pointed it
    assert lines == [{"type": "entity", **ada}, {"type": "entity", **engine}, {"type": "relation", **relation}]


# ---------------------------------------------------------------------- @modelcontextprotocol/server-sequential-thinking (npm)
@pytest.fixture(scope="module")
def thinking(connect: Callable[..., str]) -> str:
    return connect("peer_thinking", servers.sequential_thinking())


def test_sequential_thinking_steps(thinking: str) -> None:
    first = done(
        mcp_notebook.call(
            f"{thinking}.sequentialthinking",
            {"thought": "Split the problem in two.", "nextThoughtNeeded": True, "thoughtNumber": 1, "totalThoughts": 2},
        )
    )
    expected = {
        "thoughtNumber": 1,
        "totalThoughts": 2,
        "nextThoughtNeeded": True,
        "branches": [],
        "thoughtHistoryLength": 1,
    }
    assert json.loads(texts(first)) == expected and first.structured_content == expected
    # a thought past the estimate raises the total; a branch is named
    later = done(mcp_notebook.call(
        f"{thinking}.sequentialthinking",
        {"thought": "Try the other half.", "nextThoughtNeeded": False, "thoughtNumber": 3, "totalThoughts": 2, "branchFromThought": 1, "branchId": "other-half"},
    ))  # fmt: skip
    assert json.loads(texts(later)) == {
        "thoughtNumber": 3,
        "totalThoughts": 3,
        "nextThoughtNeeded": False,
        "branches": ["other-half"],
        "thoughtHistoryLength": 2,
    }
