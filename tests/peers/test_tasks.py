"""Tasks through mcp_notebook's flow engine against the third-party task servers, real processes over stdio.

* npm ``@modelcontextprotocol/server-everything`` (2025-11-25 generation, tasks in core) on Node 22:
  ``simulate-research-query {topic}`` has ``taskSupport: "required"``; its task goes through four
  stages of a second each (``statusMessage`` per stage, pushed as ``notifications/tasks/status``),
  suggests ``pollInterval`` 1000 ms and a ttl of 300 s (whatever the client asks for). With
  ``ambiguous: true`` it asks for a clarification (an elicitation tagged with the related task)
  over the back-channel while the client waits in ``tasks/result``.
* PyPI ``fastmcp-tasks`` 4.1.4 (2026-07-28, the ``io.modelcontextprotocol/tasks`` extension) from
  its own venv, ``.peers/venv-tasks``: ``tests/peers/fastmcp_tasks_server.py``, tools ``crunch``
  (task optional, fastmcp-tasks' default ``pollIntervalMs`` 5000) and ``crunch_required``
  (``pollIntervalMs`` 200).

Headless: a ``Session`` of the module's own, its task handles and Jupyter data folder (the notary
secret that signs saved records) in a temporary folder, never the user's. Flows are started with
``Session.start`` and followed to their end (``Flow.result``); ``Watch`` records every task status
the flow shows, and its trace each time. Both servers are started once for the module.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from mcp_notebook.errors import FlowError
from mcp_notebook.flows.flow import Flow, FlowState
from mcp_notebook.flows.ui import HeadlessUI
from mcp_notebook.forms.model import Answers
from mcp_notebook.session.session import Session
from mcp_notebook.wire.connection import Connection
from mcp_notebook.wire.tasks import TaskHandles, TaskOptions, fingerprint

from . import servers

pytestmark = pytest.mark.timeout(120)

WAIT = 60  # seconds any one flow may take
RESEARCH = "simulate-research-query"
STAGES = ["Gathering sources...", "Analyzing content...", "Synthesizing findings...", "Generating report..."]
STDIO_NOTE = "runs inside this kernel's process tree (stdio): its tasks end with the kernel, so this one cannot be followed from a new kernel"


# ---------------------------------------------------------------------- helpers
class Watch(HeadlessUI):
    """The view of a headless flow that remembers what it was shown: task statuses, and the trace each time."""

    def __init__(self) -> None:
        self.statuses: list[tuple[str, str | None]] = []
        self.traces: list[str] = []

    def changed(self, flow: Flow) -> None:
        task = flow.task
        if task is not None and (not self.statuses or self.statuses[-1] != (task.status, task.message)):
            self.statuses.append((task.status, task.message))
        self.traces.append(json.dumps(flow.trace(), default=str))

    def messages(self) -> list[str]:
        """The status messages shown, each once, in order."""
        seen: list[str] = []
        for _, message in self.statuses:
            if message is not None and message not in seen:
                seen.append(message)
        return seen


@dataclass
class Ran:
    """A flow run to its end: its view, its result (or error), and how long it took."""

    flow: Flow
    watch: Watch
    result: Any
    error: FlowError | None
    elapsed: float

    @property
    def task_id(self) -> str:
        assert self.flow.task is not None, "the call did not become a task"
        return self.flow.task.task_id


def run(session: Session, conn: Connection, tool: str, arguments: dict[str, Any], **options: Any) -> Ran:
    watch = Watch()
    started = time.monotonic()
    flow = session.start("tools/call", conn, tool, arguments, view=watch, **options)
    try:
        result, error = flow.result(timeout=WAIT), None
    except FlowError as exc:
        result, error = None, exc
    return Ran(flow, watch, result, error, time.monotonic() - started)


def cancelled(session: Session, conn: Connection, tool: str, arguments: dict[str, Any]) -> Ran:
    """Start ``tool``, wait until it is a task, cancel it as the user would (``flow.cancel()``)."""
    watch = Watch()
    started = time.monotonic()
    flow = session.start("tools/call", conn, tool, arguments, view=watch)
    eventually(lambda: flow.task, f"{tool} becoming a task")
    assert flow.task is not None and flow.task.status == "working"
    flow.cancel()
    with pytest.raises(FlowError, match=rf"^flow {flow.id} was cancelled$") as raised:
        flow.result(timeout=WAIT)
    return Ran(flow, watch, None, raised.value, time.monotonic() - started)


def texts(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def eventually(check: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"not seen after {timeout}s: {what}"
        time.sleep(0.02)


def task_trace(ran: Ran, tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """The trace of a call that became a task and completed without questions: call, task, poll, end."""
    shown = fingerprint(ran.task_id)
    return [
        {
            "round": 1,
            "from": "client",
            "to": "server",
            "kind": "request",
            "message": {"method": "tools/call", "params": {"name": tool, "arguments": arguments}},
        },
        {
            "round": 1,
            "from": "server",
            "to": "client",
            "kind": "result",
            "message": {"resultType": "task", "task": shown, "status": "working"},
        },
        {
            "round": 1,
            "from": "client",
            "to": "server",
            "kind": "request",
            "message": {"method": "tasks/get", "params": {"taskId": shown}},
        },
        {"round": 1, "from": "server", "to": "client", "kind": "result", "message": {"status": "completed"}},
    ]


def assert_no_task_id(ran: Ran) -> None:
    """Neither the final trace nor any trace the view was shown on the way spells out the task id."""
    task_id = ran.task_id
    assert task_id not in json.dumps(ran.flow.trace(), default=str)
    leaked = [i for i, trace in enumerate(ran.watch.traces) if task_id in trace]
    assert not leaked, (
        f"the raw task id is in the trace shown at {len(leaked)} of {len(ran.watch.traces)} view updates, e.g. {ran.watch.traces[leaked[0]][:1500]}"
    )


def stdio_notes(ran: Ran) -> list[str]:
    return [n for n in ran.flow.notes if STDIO_NOTE in n]


def handles_text(session: Session) -> str:
    path = session.task_handles.path
    return path.read_text() if path.exists() else ""


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """The module's session: task handles and the Jupyter data folder in a temporary folder."""
    servers.ensure_installed([servers.NPM_STAMP, servers.VENV_TASKS_STAMP])
    version = servers.node_version()
    assert version.startswith("v22."), f"the npm peers run on Node 22, got {version}"
    folder = tmp_path_factory.mktemp("tasks_peers")
    env = pytest.MonkeyPatch()
    env.setenv("JUPYTER_DATA_DIR", str(folder / "jupyter"))  # the notary secret that signs saved records lives there
    session = Session()
    session.task_handles = TaskHandles(folder / "tasks.json")
    assert not session.store.signer.ready  # the first save reads the notary secret off the loop: no stall to hide here
    yield session
    session.close()
    env.undo()


@pytest.fixture(scope="module")
def everything(session: Session) -> Connection:
    conn = session.connect("ev", servers.everything())
    assert conn.protocol_version == "2025-11-25"
    return conn


@pytest.fixture(scope="module")
def fastmcp_tasks(session: Session) -> Connection:
    conn = session.connect("fm", servers.fastmcp_tasks())
    assert conn.protocol_version == "2026-07-28"
    return conn


@pytest.fixture(scope="module")
def research(session: Session, everything: Connection) -> Ran:
    """``simulate-research-query`` without any task options: the tool requires a task, so it is one."""
    return run(session, everything, RESEARCH, {"topic": "tides"})


@pytest.fixture(scope="module")
def clarified(session: Session, everything: Connection) -> Ran:
    """An ambiguous research query: the task asks over the back-channel, answered by a preset."""
    return run(
        session,
        everything,
        RESEARCH,
        {"topic": "python", "ambiguous": True},
        answers=Answers(fields={"interpretation": "snake"}),
    )


@pytest.fixture(scope="module")
def research_cancelled(session: Session, everything: Connection) -> Ran:
    return cancelled(session, everything, RESEARCH, {"topic": "cancel me"})


@pytest.fixture(scope="module")
def crunch_cancelled(session: Session, fastmcp_tasks: Connection) -> Ran:
    return cancelled(session, fastmcp_tasks, "crunch_required", {"duration": 30, "items": 1})


# ---------------------------------------------------------------------- server-everything (2025-11-25)
def test_everything_offers_2025_tasks(everything: Connection) -> None:
    client = everything.task_client
    assert client is not None
    assert (client.generation, client.can_list, client.can_cancel) == ("2025", True, True)


def test_everything_required_tool_runs_as_a_task(research: Ran) -> None:
    assert research.error is None, research.error
    result = research.result
    assert not result.is_error
    report = texts(result)
    assert report.startswith("# Research Report: tides\n\n## Research Parameters\n- **Topic**: tides\n")
    assert "This research query was processed through 4 stages:\n- Stage 1: Gathering sources ✓\n" in report
    assert "- Stage 4: Generating report ✓" in report
    assert "Clarification" not in report
    task = research.flow.task
    assert task is not None
    assert (task.status, task.poll_ms, task.ttl_ms) == (
        "completed",
        1000,
        300_000,
    )  # the server's own ttl and poll interval
    assert research.flow.state is FlowState.DONE
    assert 3.5 <= research.elapsed < 15, research.elapsed  # four stages of a second each
    assert not any(n.startswith("ran as a plain call") for n in research.flow.notes)


def test_everything_status_messages_seen(research: Ran) -> None:
    assert research.watch.messages() == STAGES
    statuses = research.watch.statuses
    assert statuses[0] == ("working", "Gathering sources...")
    assert statuses[-1][0] == "completed"
    assert {status for status, _ in statuses} == {"working", "completed"}


def test_everything_trace_shows_a_fingerprint_never_the_task_id(research: Ran) -> None:
    assert research.flow.trace() == task_trace(research, RESEARCH, {"topic": "tides"})
    assert fingerprint(research.task_id).startswith("task#") and len(fingerprint(research.task_id)) == 15
    assert_no_task_id(research)


def test_everything_stdio_note(research: Ran) -> None:
    assert stdio_notes(research) == [f"ev {STDIO_NOTE}; serve it over HTTP for that"]


def test_everything_completed_task_leaves_no_handle(session: Session, research: Ran) -> None:
    assert session.store.get(research.flow.id) is None
    assert research.task_id not in handles_text(session)


def test_everything_task_rows_show_the_servers_tasks(session: Session, research: Ran, clarified: Ran) -> None:
    rows = session.saved.task_rows("ev")
    by_key = {row[0]: row for row in rows}
    for ran in (research, clarified):
        row = by_key[fingerprint(ran.task_id)]
        assert ran.flow.task is not None
        assert row[1:4] == ["ev", "", "completed"] and row[5:] == [ran.flow.task.created_at, "300 s", "on the server"]
    assert by_key[fingerprint(research.task_id)][4] == "Generating report..."
    everything = json.dumps(rows)
    for ran in (research, clarified):
        assert ran.task_id not in everything


def test_everything_question_during_the_task_is_answered(clarified: Ran) -> None:
    """2025: the task asks over the back-channel while ``tasks/result`` waits; the preset answers."""
    assert clarified.error is None, clarified.error
    report = texts(clarified.result)
    assert report.startswith(
        "# Research Report: python (snake)\n\n## Research Parameters\n- **Topic**: python\n- **Clarification**: snake\n"
    )
    assert 'After receiving clarification ("snake"), the task resumed processing and completed.' in report
    assert clarified.flow.task is not None and clarified.flow.task.status == "completed"
    statuses = clarified.watch.statuses
    assert ("input_required", 'Found multiple interpretations for "python". Requesting clarification...') in statuses
    assert statuses[0] == ("working", "Gathering sources...") and statuses[-1][0] == "completed"
    assert len(clarified.flow.answer_summary) == 1 and clarified.flow.answer_summary[0].endswith(
        ": accept (interpretation)"
    )
    assert stdio_notes(clarified) == [f"ev {STDIO_NOTE}; serve it over HTTP for that"]


def test_everything_question_is_in_the_trace(clarified: Ran) -> None:
    """The trace keeps the server's question and the poll's result (both events, in wire order).

    Fails at the time of writing: ``Flow._follow_task``'s ``finally`` writes the poll's result into
    ``self.rounds[-1]``, which by then is the back-channel question's round, so the question is
    replaced by ``{"status": "completed"}`` and the ``tasks/get`` round gets no result.
    """
    trace = clarified.flow.trace()
    kinds = [(event["from"], event["kind"]) for event in trace]
    assert kinds == [
        ("client", "request"),
        ("server", "result"),
        ("client", "request"),
        ("server", "request"),
        ("client", "result"),
        ("server", "result"),
    ], json.dumps(trace, indent=1)
    question = trace[3]["message"]
    assert isinstance(question, dict) and [entry.get("method") for entry in question.values()] == [
        "elicitation/create"
    ], json.dumps(trace, indent=1)
    (asked,) = question  # the server's request id (0 now that no roots are offered: no roots/list came first)
    assert trace[4]["message"] == {"result": {asked: {"action": "accept", "fields": ["interpretation"]}}}
    assert trace[5]["message"] == {"status": "completed"}


def test_everything_question_never_shows_the_task_id(clarified: Ran) -> None:
    """The question comes tagged with its related task (``_meta``); no trace shown on the way spells out that id.

    Fails at the time of writing: ``Flow.answer_elicitations(single=True)`` keeps the question's
    params as dumped (``_meta["io.modelcontextprotocol/related-task"]["taskId"]``, the raw id) in
    ``flow.pending`` and in the trace's question round while the form waits.
    """
    assert_no_task_id(clarified)


def test_everything_cancel_cancels_the_task_on_the_server(
    session: Session, everything: Connection, research_cancelled: Ran
) -> None:
    ran = research_cancelled
    assert ran.flow.state is FlowState.CANCELLED
    assert ran.elapsed < 3.5  # well before the task's four seconds
    client = everything.task_client
    assert client is not None
    listed = [task for task in session.runtime.run(client.list()) if task.task_id == ran.task_id]
    assert [(task.status, task.message) for task in listed] == [("cancelled", "Client cancelled task execution.")]
    assert session.runtime.run(client.get(ran.task_id)).status == "cancelled"
    assert stdio_notes(ran) == [f"ev {STDIO_NOTE}; serve it over HTTP for that"]
    assert_no_task_id(ran)


# ---------------------------------------------------------------------- fastmcp-tasks (2026-07-28)
def test_fastmcp_tasks_offers_2026_tasks(fastmcp_tasks: Connection) -> None:
    client = fastmcp_tasks.task_client
    assert client is not None and client.generation == "2026"


def test_fastmcp_crunch_honours_the_poll_interval(fastmcp_tasks: Connection, session: Session) -> None:
    """``crunch`` ends after 0.5 s, but its task suggests a poll every 5 s: the one poll comes then, not sooner."""
    arguments = {"duration": 0.5, "items": 7}
    ran = run(session, fastmcp_tasks, "crunch", arguments, task=TaskOptions(requested=True))
    assert ran.error is None, ran.error
    assert texts(ran.result) == "Crunched 7 for 0.5s"
    assert ran.result.structured_content == {"result": "Crunched 7 for 0.5s"}
    task = ran.flow.task
    assert task is not None
    assert (task.status, task.poll_ms, task.ttl_ms) == ("completed", 5000, 900_000)
    assert 4.5 <= ran.elapsed < 9, ran.elapsed
    assert ran.watch.statuses[0][0] == "working" and ran.watch.statuses[-1][0] == "completed"
    assert ran.flow.trace() == task_trace(ran, "crunch", arguments)
    assert_no_task_id(ran)
    assert not any(n.startswith("ran as a plain call") for n in ran.flow.notes)
    assert stdio_notes(ran) == [f"fm {STDIO_NOTE}; serve it over HTTP for that"]
    assert session.store.get(ran.flow.id) is None and ran.task_id not in handles_text(session)


def test_fastmcp_crunch_required_polls_at_its_short_interval(fastmcp_tasks: Connection, session: Session) -> None:
    ran = run(session, fastmcp_tasks, "crunch_required", {"duration": 0.3, "items": 2})
    assert ran.error is None, ran.error
    assert texts(ran.result) == "Crunched 2 for 0.3s"
    assert ran.flow.task is not None and (ran.flow.task.status, ran.flow.task.poll_ms) == ("completed", 200)
    assert 0.3 <= ran.elapsed < 2.5, ran.elapsed
    assert stdio_notes(ran) == [f"fm {STDIO_NOTE}; serve it over HTTP for that"]
    assert_no_task_id(ran)


def test_fastmcp_cancel_cancels_the_task_on_the_server(
    session: Session, fastmcp_tasks: Connection, crunch_cancelled: Ran
) -> None:
    ran = crunch_cancelled
    assert ran.flow.state is FlowState.CANCELLED
    assert ran.elapsed < 10  # the tool would sleep 30 s
    client = fastmcp_tasks.task_client
    assert client is not None
    fresh = session.runtime.run(client.get(ran.task_id))
    assert (fresh.status, fresh.poll_ms) == ("cancelled", 200)
    assert stdio_notes(ran) == [f"fm {STDIO_NOTE}; serve it over HTTP for that"]
    assert_no_task_id(ran)


# ---------------------------------------------------------------------- both
@pytest.mark.parametrize("which", ["research_cancelled", "crunch_cancelled"])
def test_user_cancel_forgets_the_task(session: Session, which: str, request: pytest.FixtureRequest) -> None:
    """``flow.cancel()`` (forget) ends the task: no saved record, no handle kept, no "resume" row left."""
    ran: Ran = request.getfixturevalue(which)
    server = ran.flow.conn.name
    rows = session.saved.task_rows(server)
    assert [row for row in rows if row[0] == ran.flow.id] == [], rows
    assert session.store.get(ran.flow.id) is None
    assert ran.task_id not in handles_text(session)
    assert ran.task_id not in json.dumps(rows)
    if server == "ev":  # a 2025 server lists its tasks: this one, as cancelled
        assert ran.flow.task is not None
        listed = [row[3:] for row in rows if row[0] == fingerprint(ran.task_id)]
        assert listed == [
            ["cancelled", "Client cancelled task execution.", ran.flow.task.created_at, "300 s", "on the server"]
        ], rows
