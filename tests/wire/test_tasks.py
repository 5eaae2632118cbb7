"""Calls that run as tasks, through the engine (``Session``, ``Flow``, ``tasks.py``), against real task servers.

Both generations: the 2025-11-25 tasks in core and the 2026-07-28 ``io.modelcontextprotocol/tasks``
extension, served by ``tests/support/task_servers.py`` over streamable HTTP (subprocesses: their tasks
outlive any client), over stdio and in process. What a user relies on: the call returns a result
as a plain call would; questions are answered by the same presets; cancel reaches the server; a
task is saved without its id and followed again by a new session ("kernel"); and every fault
(expired, forgotten, server restarted or down, failed task, missing handle) says what happened
and keeps what can still be resumed.
"""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp_notebook.errors import FlowError
from mcp_notebook.flows.flow import Flow, FlowState
from mcp_notebook.flows.record import SavedFlow
from mcp_notebook.forms.model import Answers
from mcp_notebook.magics.hints import for_magics
from mcp_notebook.notebook.display import FlowReport, shown_state
from mcp_notebook.notebook.task_board import _state
from mcp_notebook.session.session import CallOptions, Session
from mcp_notebook.wire.tasks import TaskHandles, TaskOptions
from tests.support import task_servers as ts

pytestmark = pytest.mark.timeout(180)

POLL_MS = 100
GENERATIONS = ("2025", "2026")


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, str]]:
    with (
        ts.running_task_server("2025", poll_interval_ms=POLL_MS) as old,
        ts.running_task_server("2026", poll_interval_ms=POLL_MS) as new,
    ):
        yield {"2025": old, "2026": new}


@pytest.fixture
def handles(tmp_path: Path) -> TaskHandles:
    return TaskHandles(tmp_path / "jupyter-data" / "mcp_notebook" / "tasks.json")


def new_session(handles: TaskHandles) -> Session:
    session = Session()
    session.task_handles = handles
    return session


@pytest.fixture
def session(make_session: Callable[..., Session], handles: TaskHandles) -> Session:
    """The shared ``session`` (closed after the test), its task handles in the test's folder."""
    s = make_session()
    s.task_handles = handles
    return s


def stats(url: str) -> dict[str, Any]:
    response = httpx2.get(ts.stats_url(url), timeout=10)
    response.raise_for_status()
    data: dict[str, Any] = response.json()
    return data


def text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


def task_call(
    session: Session, conn: Any, tool: str = "slow_job", *, answers: Answers | None = None, **arguments: Any
) -> Any:
    options = CallOptions(answers=answers or Answers(), task=TaskOptions(requested=True))
    flow = session.call("tools/call", conn, tool, arguments, options, interactive=False, cell_id="cell-1")
    assert flow is not None
    return flow


def wait_for(condition: Any, timeout: float = 60.0) -> None:  # CI runs on two busy cores
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def task_id_of(flow: Any) -> str:
    wait_for(lambda: flow.task is not None)
    task_id: str = flow.task.task_id
    return task_id


# ------------------------------------------------------------------------------------------ the happy path
@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_task_runs_to_its_result_and_leaves_nothing_behind(
    servers: dict[str, str], session: Session, handles: TaskHandles, generation: str
) -> None:
    url = servers[generation]
    conn = session.connect("jobs", url)
    assert conn.task_client is not None and conn.task_client.generation == generation
    flow = task_call(session, conn, duration=1)
    task_id = task_id_of(flow)
    wait_for(lambda: session.store.get(flow.id) is not None)
    record = session.store.get(flow.id)
    assert record is not None and record["task"]["generation"] == generation and record["round"] == 0
    assert task_id not in json.dumps(record)  # the notebook's record never holds the id
    assert handles.task_id(record["task"]["ref"]) == task_id  # the user's private table does
    assert stat.S_IMODE(handles.path.stat().st_mode) == 0o600
    assert record["task"]["poll_ms"] == POLL_MS and record["task"]["status"] == "working"

    result = flow.result(timeout=30)
    assert text(result) == "Done after 1s" and not result.is_error
    assert flow.state is FlowState.DONE and flow.task is not None and flow.task.status == "completed"
    assert session.store.get(flow.id) is None and handles.task_id(record["task"]["ref"]) is None  # both gone at the end
    trace = json.dumps(flow.trace())
    assert task_id not in trace and "task#" in trace  # a fingerprint stands in for the id
    report = FlowReport(flow)._repr_mimebundle_()
    assert "task completed" in report["text/plain"] and task_id not in report["text/html"]

    seen = stats(url)
    polls = seen["task_requests"][task_id].get("tasks/get", 0)
    assert polls >= 3  # polled while it ran (1 s at 100 ms, a notification may stand in for some on 2025)
    assert polls <= 1 / (POLL_MS / 1000) + 3  # never faster than the server's pollInterval
    if generation == "2025":
        assert seen["task_requests"][task_id]["tasks/result"] == 1


@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_required_task_runs_as_one_without_asking(servers: dict[str, str], session: Session, generation: str) -> None:
    conn = session.connect("jobs", servers[generation])
    flow = session.call(
        "tools/call", conn, "slow_job_required", {"duration": 0.3}, CallOptions(), interactive=False, cell_id=None
    )
    assert flow is not None and text(flow.result(timeout=30)) == "Done after 0.3s"
    assert flow.task is not None and flow.task.status == "completed"


def test_without_task_the_optional_tool_runs_inline_on_2025(servers: dict[str, str], session: Session) -> None:
    conn = session.connect("jobs", servers["2025"])
    flow = session.call(
        "tools/call", conn, "slow_job", {"duration": 0.2}, CallOptions(), interactive=False, cell_id=None
    )
    assert flow is not None and text(flow.result(timeout=30)) == "Done after 0.2s" and flow.task is None
    inline = session.call(
        "tools/call",
        conn,
        "task_stats",
        {},
        CallOptions(task=TaskOptions(requested=True)),
        interactive=False,
        cell_id=None,
    )
    assert inline is not None and inline.result(timeout=30).structured_content["generation"] == "2025"
    assert inline.task is None and inline.notes == [
        "ran as a plain call: the tool 'task_stats' does not support running as a task"
    ]


@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_task_question_is_answered_by_presets(servers: dict[str, str], session: Session, generation: str) -> None:
    conn = session.connect("jobs", servers[generation])
    flow = task_call(session, conn, answers=Answers(fields={"region": "eu-north"}), duration=0.6, ask=True)
    assert text(flow.result(timeout=30)) == "Done in eu-north"
    assert flow.answer_summary == ["“Which region?”: accept (region)"]
    assert flow.task is not None and flow.task.status == "completed"


@pytest.mark.parametrize("generation", GENERATIONS)
def test_an_unanswered_task_question_fails_the_cell_but_the_task_stays_resumable(
    servers: dict[str, str], session: Session, handles: TaskHandles, generation: str
) -> None:
    conn = session.connect("jobs", servers[generation])
    flow = task_call(session, conn, duration=0.6, ask=True)
    with pytest.raises(FlowError) as info:
        flow.result(timeout=30)
    record = session.store.get(flow.id)
    assert (info.value.kind, info.value.reason, info.value.flow_id) == ("still_saved", "task", flow.id)
    assert "region" in str(info.value) and f"%mcp resume {flow.id}" in str(for_magics(info.value))
    assert record is not None and record["task"]["status"] == "input_required"  # the question stays open on the server
    again = session.saved.resume(
        SavedFlow.from_dict(record),
        CallOptions(answers=Answers(fields={"region": "ap-east"})),
        interactive=False,
        cell_id=None,
    )
    assert again is not None and text(again.result(timeout=30)) == "Done in ap-east"
    assert session.store.get(flow.id) is None


# ------------------------------------------------------------------------------------------ cancel, fail, errors
@pytest.mark.parametrize("generation", GENERATIONS)
def test_cancel_while_the_first_record_is_written_reaches_the_server(
    servers: dict[str, str], session: Session, generation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's first task record is written off the loop (it reads the notary secret): a cancel in that
    moment still cancels the server's task. It was lost there once (a fresh clone's run, then by chance)."""
    from mcp_notebook.flows.task_follow import TaskFollowing

    written = TaskFollowing._save_task_record

    def slow_write(following: TaskFollowing, flow: Flow) -> None:
        written(following, flow)
        time.sleep(1.0)  # the record is there, the flow still waits for the write to return

    monkeypatch.setattr(TaskFollowing, "_save_task_record", slow_write)
    url = servers[generation]
    conn = session.connect("jobs", url)
    assert not session.store.signer.ready  # so the record is written off the loop
    flow = task_call(session, conn, duration=20)
    task_id = task_id_of(flow)
    wait_for(lambda: session.store.get(flow.id) is not None)
    flow.cancel()
    with pytest.raises(FlowError):
        flow.result(timeout=60)
    wait_for(lambda: stats(url)["tasks"][task_id]["status"] == "cancelled")
    assert stats(url)["task_requests"][task_id]["tasks/cancel"] == 1


@pytest.mark.parametrize("generation", GENERATIONS)
def test_cancel_reaches_the_server(
    servers: dict[str, str], session: Session, handles: TaskHandles, generation: str
) -> None:
    url = servers[generation]
    conn = session.connect("jobs", url)
    flow = task_call(session, conn, duration=20)
    task_id = task_id_of(flow)
    wait_for(lambda: session.store.get(flow.id) is not None)
    ref = session.store.get(flow.id)["task"]["ref"]  # type: ignore[index]
    flow.cancel()
    with pytest.raises(FlowError):
        flow.result(timeout=60)
    assert flow.state is FlowState.CANCELLED
    wait_for(lambda: stats(url)["tasks"][task_id]["status"] == "cancelled")
    assert stats(url)["task_requests"][task_id]["tasks/cancel"] == 1
    assert session.store.get(flow.id) is None and handles.task_id(ref) is None


@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_failed_task_and_a_tool_error(servers: dict[str, str], session: Session, generation: str) -> None:
    conn = session.connect("jobs", servers[generation])
    failing = task_call(session, conn, duration=0.2, fail=True)
    with pytest.raises(FlowError) as info:
        failing.result(timeout=30)
    assert info.value.code == -32603 and ts.SIMULATED_FAILURE in str(info.value)
    assert session.store.get(failing.id) is None  # over: nothing to resume
    erring = task_call(session, conn, duration=0.2, tool_error=True)
    result = erring.result(timeout=30)  # an isError result is the tool's answer, shown like any
    assert result.is_error and text(result) == ts.SIMULATED_TOOL_ERROR
    assert erring.task is not None and erring.task.status == ("failed" if generation == "2025" else "completed")
    assert (
        erring.state is FlowState.DONE and shown_state(erring) == "error"
    )  # shown as the tool's error, in the report and a task board
    assert '<span class="badge error">error</span>' in FlowReport(erring)._repr_mimebundle_()["text/html"]
    assert _state(erring) == "error"


def test_a_hundred_concurrent_tasks_get_their_own_results(servers: dict[str, str], session: Session) -> None:
    for generation in GENERATIONS:
        conn = session.connect(f"jobs{generation}", servers[generation])
        flows = [task_call(session, conn, duration=round(0.01 * i, 2)) for i in range(100)]
        results = [text(f.result(timeout=120)) for f in flows]
        assert results == [f"Done after {round(0.01 * i, 2):g}s" for i in range(100)]
        assert len({f.task.task_id for f in flows}) == 100
        assert session.store.all() == []


# ------------------------------------------------------------------------------------------ across kernels
def stop_following(session: Session, flow: Any) -> dict[str, Any]:
    """What a kernel shutdown does: the loop stops, the flow is cancelled without forgetting; the record stays."""
    wait_for(lambda: session.store.get(flow.id) is not None)
    session.close()
    record = session.store.get(flow.id)
    assert record is not None, "a task followed by a stopped kernel stays saved"
    return record


def resume_error(session: Session, record: dict[str, Any], options: CallOptions | None = None) -> FlowError:
    """Resume ``record`` headless; the error it ends with."""
    resumed = session.saved.resume(
        SavedFlow.from_dict(record), options or CallOptions(), interactive=False, cell_id=None
    )
    assert resumed is not None and resumed.id == record["id"]
    with pytest.raises(FlowError) as info:
        resumed.result(timeout=30)
    return info.value


def new_kernel(handles: TaskHandles, record: dict[str, Any]) -> Session:
    """A new session that reads the notebook's record (as the extension's restore would give it)."""
    session = new_session(handles)
    session.store.merge({record["id"]: record}, "notebook")
    assert session.store.is_trusted(record["id"])  # signed with this user's notary secret
    return session


@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_task_started_in_one_kernel_finishes_in_another(
    servers: dict[str, str], handles: TaskHandles, generation: str
) -> None:
    url = servers[generation]
    first = new_session(handles)
    flow = task_call(first, first.connect("jobs", url), duration=1.5)
    task_id = task_id_of(flow)
    record = stop_following(first, flow)
    # the server goes on without us: a kernel stopping is not a cancel (on a loaded machine the 1.5 s task may have
    # finished by now, so its status is working or completed, never cancelled; a run under load met "completed")
    assert stats(url)["tasks"][task_id]["status"] in ("working", "completed")
    assert "tasks/cancel" not in stats(url)["task_requests"].get(task_id, {})
    wait_for(lambda: stats(url)["tasks"][task_id]["status"] == "completed")

    second = new_kernel(handles, record)
    try:
        rows = second.saved.task_rows()
        assert (
            [r[0] for r in rows] == [record["id"]]
            and rows[0][3] == "working"
            and rows[0][7] == f"saved: %mcp resume {record['id']}"
        )
        resumed = second.saved.resume(SavedFlow.from_dict(record), CallOptions(), interactive=False, cell_id=None)
        assert resumed is not None and resumed.id == record["id"]
        assert text(resumed.result(timeout=30)) == "Done after 1.5s"
        assert second.store.get(record["id"]) is None and handles.task_id(record["task"]["ref"]) is None
        assert any("Reconnected 'jobs'" in str(n) for n in second.notes)
    finally:
        second.close()


def test_resume_explains_an_expired_task(servers: dict[str, str], handles: TaskHandles) -> None:
    url = servers["2026"]
    first = new_session(handles)
    flow = task_call(first, first.connect("jobs", url), duration=5, ttl_ms=1000)
    task_id_of(flow)
    record = stop_following(first, flow)
    time.sleep(1.3)
    second = new_kernel(handles, record)
    try:
        error = resume_error(second, record)
        assert error.kind == "task_gone" and error.code == -32602
        assert "time to live (1 s from its creation) ran out" in str(error)
        assert second.store.get(record["id"]) is None  # nothing left to follow
    finally:
        second.close()


def test_resume_without_the_handle_says_it_is_not_on_this_machine(
    servers: dict[str, str], handles: TaskHandles, tmp_path: Path
) -> None:
    first = new_session(handles)
    flow = task_call(first, first.connect("jobs", servers["2026"]), duration=5)
    task_id_of(flow)
    record = stop_following(first, flow)
    elsewhere = new_kernel(TaskHandles(tmp_path / "another-user" / "tasks.json"), record)
    try:
        error = resume_error(elsewhere, record)
        assert error.kind == "task_handle_missing" and "not on this machine" in str(error)
        assert elsewhere.store.get(record["id"]) is not None  # kept for whoever holds the handle
    finally:
        elsewhere.close()


def test_a_handle_is_never_sent_to_another_server(servers: dict[str, str], handles: TaskHandles) -> None:
    """A record whose connection name now points at another server: the handle stays home."""
    first = new_session(handles)
    flow = task_call(first, first.connect("jobs", servers["2026"]), duration=5)
    task_id = task_id_of(flow)
    record = stop_following(first, flow)
    with ts.running_task_server("2026", poll_interval_ms=POLL_MS) as other:
        second = new_kernel(handles, record)
        try:
            second.connect("jobs", other)
            error = resume_error(second, record, CallOptions(trust=True))  # past the consent it would need
            assert error.kind == "task_handle_missing" and "not sent to another server" in str(error)
            assert stats(other)["task_requests"] == {}  # the other server saw no task request at all
            assert task_id in {t for t in stats(servers["2026"])["tasks"]}
        finally:
            second.close()


@pytest.mark.parametrize(
    ("change", "sent"),
    [("folder", False), ("arguments", False), ("env names", False), ("nothing", True)],
)  # fmt: skip
def test_a_stdio_handle_goes_only_to_the_identical_target(
    handles: TaskHandles, tmp_path: Path, change: str, sent: bool
) -> None:
    """Issue 20, finding 7: the same command in another folder (or with other arguments, other env names) is another server.

    What the server started the second time actually received is read from its own ``task_stats``:
    the kept handle reaches it only when command, arguments, folder and environment names are the same.
    """
    folder_a, folder_b = tmp_path / "a", tmp_path / "b"
    folder_a.mkdir()
    folder_b.mkdir()
    command = ts.stdio_command("2026", "--poll-interval-ms", str(POLL_MS))
    first = new_session(handles)
    flow = task_call(first, first.connect("jobs", command, cwd=str(folder_a), env={"JOBS_REGION": "eu"}), duration=30)
    task_id = task_id_of(flow)
    record = stop_following(first, flow)
    again = {
        "folder": {"target": command, "cwd": str(folder_b), "env": {"JOBS_REGION": "eu"}},
        "arguments": {
            "target": [*command, "--default-ttl-ms", "600000"],
            "cwd": str(folder_a),
            "env": {"JOBS_REGION": "eu"},
        },
        "env names": {"target": command, "cwd": str(folder_a), "env": {"JOBS_REGION": "eu", "JOBS_DEBUG": "1"}},
        "nothing": {
            "target": command,
            "cwd": str(folder_a),
            "env": {"JOBS_REGION": "us"},
        },  # a value may change; names are the target
    }[change]
    second = new_kernel(handles, record)
    try:
        conn = second.connect("jobs", again.pop("target"), **again)
        error = resume_error(second, record, CallOptions(trust=True))  # past the consent a changed connection needs
        stats_flow = second.start("tools/call", conn, ts.STATS_TOOL, {})
        received = json.loads(stats_flow.result(timeout=30).content[0].text)["task_requests"]
        if sent:
            assert error.kind == "task_gone" and "restarted and lost its tasks" in str(error)
            assert received.get(task_id, {}).get("tasks/get", 0) >= 1  # the identical target was asked about its task
        else:
            assert error.kind == "task_handle_missing" and "its handle is not sent to another server" in str(error)
            assert f"in folder {folder_a.resolve()}" in str(error)
            assert task_id not in received and received == {}  # the server saw no task id at all
            assert handles.task_id(record["task"]["ref"]) == task_id  # kept for the target it belongs to
    finally:
        second.close()


def test_an_unknown_task_id_is_gone(servers: dict[str, str], handles: TaskHandles) -> None:
    first = new_session(handles)
    flow = task_call(first, first.connect("jobs", servers["2025"]), duration=5)
    task_id_of(flow)
    record = stop_following(first, flow)
    handles.update(record["task"]["ref"], task_id="no-such-task")
    second = new_kernel(handles, record)
    try:
        error = resume_error(second, record)
        assert error.kind == "task_gone" and "does not know it" in str(error)
    finally:
        second.close()


def test_a_restarted_stdio_server_has_lost_the_task(handles: TaskHandles) -> None:
    first = new_session(handles)
    conn = first.connect("jobs", ts.stdio_command("2026", "--poll-interval-ms", str(POLL_MS)))
    flow = task_call(first, conn, duration=5)
    task_id_of(flow)
    assert any("its tasks end with the kernel" in n for n in flow.notes)  # said when the task starts
    record = stop_following(first, flow)  # the child process dies with the session
    second = new_kernel(handles, record)
    try:
        error = resume_error(second, record)  # starts the command again
        assert error.kind == "task_gone" and "restarted and lost its tasks" in str(error)
    finally:
        second.close()


def test_polling_with_the_server_down_keeps_the_task_saved(handles: TaskHandles) -> None:
    session = new_session(handles)
    try:
        with ts.running_task_server("2026", poll_interval_ms=POLL_MS) as url:
            flow = task_call(session, session.connect("jobs", url), duration=30)
            task_id_of(flow)
            wait_for(lambda: session.store.get(flow.id) is not None)
        with pytest.raises(FlowError) as info:  # the server is gone under the polling flow
            flow.result(timeout=60)
        assert (info.value.kind, info.value.reason) == ("still_saved", "task")
        record = session.store.get(flow.id)
        assert record is not None and handles.task_id(record["task"]["ref"]) is not None
        assert flow.state is FlowState.FAILED
    finally:
        session.close()


def test_tasks_listing_shows_fingerprints_never_ids(servers: dict[str, str], session: Session) -> None:
    url = servers["2025"]
    conn = session.connect("jobs", url)
    running = task_call(session, conn, duration=10)
    task_id = task_id_of(running)
    with httpx2.Client(timeout=10) as http:  # another client's task on the same server: listed by the server only
        other = ts.stats_url(url)
        assert http.get(other).status_code == 200
    done = task_call(session, conn, duration=0)
    done.result(timeout=30)
    rows = session.saved.task_rows("jobs")
    ours = [r for r in rows if r[0] == running.id]
    assert len(ours) == 1 and ours[0][2] == "slow_job" and ours[0][7] == "followed here"
    server_only = [r for r in rows if r[7] == "on the server"]
    assert server_only and all(
        r[0].startswith("task#") for r in server_only
    )  # the finished one and others, by fingerprint
    assert (
        task_id not in json.dumps(rows, default=str)
        and done.task is not None
        and done.task.task_id not in json.dumps(rows, default=str)
    )
    running.cancel()
