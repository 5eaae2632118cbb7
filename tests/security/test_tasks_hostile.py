"""Tasks from a hostile server, and task records from a received notebook.

A server controls every field of its tasks: status messages (markup, megabytes), poll intervals (0,
or centuries), statuses and input requests the protocol does not have, ids that are not ids. None of
it may reach the page as live HTML, spin the client, or crash it. A notebook from someone else may
carry task records: they are resumed only after consent, never delete this user's task handles, and
never send a handle to a server other than the one it was started on (``test_tasks.py`` covers that).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_notebook.errors import FlowError, SessionError
from mcp_notebook.flows.record import SavedFlow, check_record
from mcp_notebook.notebook.display import FlowReport, task_line
from mcp_notebook.session.session import CallOptions, Session
from mcp_notebook.wire.tasks import (
    MAX_MESSAGE,
    MAX_POLL,
    MIN_POLL,
    TASKS_EXTENSION,
    TaskHandles,
    TaskOptions,
    TaskStatus,
)

pytestmark = pytest.mark.timeout(120)

MARKUP = '<script>alert("task")</script><img src=x onerror=alert(2)>'
MODERN = frozenset(MODERN_PROTOCOL_VERSIONS)


class HostileTasks(Extension):
    """``io.modelcontextprotocol/tasks`` answered with what a hostile server might send."""

    identifier = TASKS_EXTENSION

    def __init__(self) -> None:
        self.polls: dict[str, int] = {}
        self.tool_of: dict[str, str] = {}
        self.created: dict[str, float] = {}

    def methods(self) -> Sequence[MethodBinding]:
        return [
            MethodBinding(
                method="tasks/get", params_type=types.GetTaskRequestParams, handler=self._get, protocol_versions=MODERN
            ),
            MethodBinding(
                method="tasks/cancel",
                params_type=types.CancelTaskRequestParams,
                handler=self._ack,
                protocol_versions=MODERN,
            ),
        ]

    async def intercept_tool_call(
        self, params: types.CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        task_id = f"{params.name}-{len(self.tool_of)}"
        self.tool_of[task_id], self.polls[task_id], self.created[task_id] = params.name, 0, time.monotonic()
        if params.name == "bad_id":
            return {
                "resultType": "task",
                "taskId": 12345,
                "status": "working",
                "createdAt": "x",
                "lastUpdatedAt": "x",
                "ttlMs": None,
            }
        if params.name == "huge_id":
            return {
                "resultType": "task",
                "taskId": "i" * 5000,
                "status": "working",
                "createdAt": "x",
                "lastUpdatedAt": "x",
                "ttlMs": None,
            }
        return {"resultType": "task", **self._task(task_id, "working")}

    def _task(self, task_id: str, status: str, **extra: Any) -> dict[str, Any]:
        poll = {"spin": 0, "forever": 10**15}.get(self.tool_of[task_id], 100)
        message = MARKUP + "x" * 50_000 if self.tool_of[task_id] == "spin" else "working"
        return {"taskId": task_id, "status": status, "statusMessage": message, "createdAt": "2026-12-01T00:00:00Z", "lastUpdatedAt": "2026-12-01T00:00:00Z",
                "ttlMs": None, "pollIntervalMs": poll, **extra}  # fmt: skip

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: types.GetTaskRequestParams) -> dict[str, Any]:
        task_id = params.task_id
        self.polls[task_id] += 1
        tool = self.tool_of[task_id]
        done = time.monotonic() - self.created[task_id] > 1.0
        if tool == "bad_status":
            return {"resultType": "complete", **self._task(task_id, "exploded")}
        if tool == "bad_input":
            return {
                "resultType": "complete",
                **self._task(
                    task_id,
                    "input_required",
                    inputRequests={"k": {"method": "evil/run", "params": {"cmd": "rm -rf /"}}},
                ),
            }
        if tool == "spin" and done:
            result = {"content": [{"type": "text", "text": MARKUP}], "isError": False}
            return {"resultType": "complete", **self._task(task_id, "completed", result=result)}
        return {"resultType": "complete", **self._task(task_id, "working")}

    async def _ack(self, ctx: ServerRequestContext[Any, Any], params: types.CancelTaskRequestParams) -> dict[str, Any]:
        return {"resultType": "complete"}


def hostile_server(extension: HostileTasks) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("hostile-tasks", extensions=[extension], log_level="WARNING")

    for name in ("spin", "forever", "bad_status", "bad_input", "bad_id", "huge_id"):

        def tool() -> str:
            return "inline"

        server.add_tool(tool, name=name, description="a task")
    return server


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[tuple[Session, Any, HostileTasks]]:
    extension = HostileTasks()
    session = Session()
    session.task_handles = TaskHandles(tmp_path / "tasks.json")
    conn = session.connect("evil", hostile_server(extension))
    yield session, conn, extension
    session.close()


def call(session: Session, conn: Any, tool: str) -> Any:
    flow = session.call(
        "tools/call", conn, tool, {}, CallOptions(task=TaskOptions(requested=True)), interactive=False, cell_id=None
    )
    assert flow is not None
    return flow


def test_markup_and_a_huge_status_message_are_escaped_and_cut_and_a_zero_poll_interval_does_not_spin(
    hostile: tuple[Session, Any, HostileTasks],
) -> None:
    session, conn, extension = hostile
    flow = call(session, conn, "spin")
    started = time.monotonic()
    result = flow.result(timeout=30)
    elapsed = time.monotonic() - started
    assert result.content[0].text == MARKUP  # the value is the server's, untouched
    (task_id,) = [t for t, name in extension.tool_of.items() if name == "spin"]
    assert extension.polls[task_id] <= elapsed / MIN_POLL + 2  # pollInterval 0 is read as MIN_POLL, not as "spin"
    assert flow.task is not None and flow.task.message is not None and len(flow.task.message) == MAX_MESSAGE
    line = task_line(flow)
    assert len(line) < 400  # the live view's line: cut to 300 characters of message
    page = FlowReport(flow)._repr_mimebundle_()["text/html"]
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;" in page


def test_an_absurd_poll_interval_is_bounded() -> None:
    assert TaskStatus(task_id="t", status="working", poll_ms=10**15).poll_seconds == MAX_POLL
    assert TaskStatus(task_id="t", status="working", poll_ms=0).poll_seconds == MIN_POLL
    assert TaskStatus(task_id="t", status="working").poll_seconds == 1.0


@pytest.mark.parametrize(
    ("tool", "says"),
    [
        ("bad_status", "unknown status 'exploded'"),
        ("bad_input", "does not understand (k)"),
        ("bad_id", "does not match the protocol"),
        ("huge_id", "no valid taskId"),
    ],
)
def test_what_the_protocol_does_not_have_is_a_clear_error(
    hostile: tuple[Session, Any, HostileTasks], tool: str, says: str
) -> None:
    session, conn, _ = hostile
    flow = call(session, conn, tool)
    with pytest.raises(FlowError) as info:
        flow.result(timeout=30)
    assert says in str(info.value)
    assert conn.is_open  # the connection lives on
    assert session.store.all() == [] or all(r["task"]["status"] != "completed" for r in session.store.all())


def test_task_entries_of_a_record_are_checked() -> None:
    base = {
        "v": 1,
        "id": "f1",
        "server": {"name": "s", "target": "http://h/mcp"},
        "method": "tools/call",
        "name": "t",
        "round": 0,
        "pending": {},
    }
    good = {**base, "task": {"ref": "abcdefgh1234", "generation": "2026", "status": "working"}}
    assert check_record("f1", good) is None
    assert "no valid ref" in str(check_record("f1", {**base, "task": {"ref": "../../etc", "generation": "2026"}}))
    assert "no task generation" in str(
        check_record("f1", {**base, "task": {"ref": "abcdefgh1234", "generation": "1999"}})
    )
    assert "not a tool call" in str(check_record("f1", {**good, "method": "prompts/get"}))
    assert "not an object" in str(check_record("f1", {**base, "task": "abcdefgh1234"}))
    assert "no valid round number" in str(check_record("f1", base))  # without a task, round 0 is not a record
    assert "no questions" in str(check_record("f1", {**base, "round": 1}))


def test_a_received_notebooks_task_record_needs_consent_and_cannot_touch_my_handles(tmp_path: Path) -> None:
    handles = TaskHandles(tmp_path / "tasks.json")
    mine = handles.keep("my-secret-task-id", target="http://127.0.0.1:1/mcp", server="jobs")
    session = Session()
    session.task_handles = handles
    try:
        foreign = {"v": 1, "id": "f0reign1", "server": {"name": "jobs", "target": "http://127.0.0.1:1/mcp"}, "method": "tools/call",
                   "name": "slow_job", "arguments": {}, "round": 0, "pending": {},
                   "task": {"ref": mine, "generation": "2026", "status": "working"}}  # fmt: skip
        session.store.merge({"f0reign1": foreign}, "notebook")
        assert not session.store.is_trusted("f0reign1")
        with pytest.raises(SessionError) as info:
            session.saved.resume(SavedFlow.from_dict(foreign), CallOptions(), interactive=False, cell_id=None)
        assert info.value.kind == "consent_needed" and "not saved by you" in str(info.value)
        rows = session.saved.task_rows()
        assert (
            rows[0][7] == "saved, but its handle is not on this machine"
        )  # an unsigned record is not matched to my handles
        assert "my-secret-task-id" not in json.dumps(rows)
        session.saved.forget(everything=True)
        assert handles.task_id(mine) == "my-secret-task-id"  # forgetting someone else's record leaves my handle alone
    finally:
        session.close()


def test_odd_values_in_a_received_task_entry_are_dropped_not_computed_with(tmp_path: Path) -> None:
    """A received notebook's task entry passes the record checks with odd optional values: ``%mcp tasks`` lists it with
    them dropped (no ttl arithmetic on a string, no markup from a status), and the record round-trips as written."""
    session = Session()
    session.task_handles = TaskHandles(tmp_path / "tasks.json")
    try:
        odd = {"v": 1, "id": "0dd1", "server": {"name": "jobs", "target": "http://127.0.0.1:1/mcp"}, "method": "tools/call",
               "name": "slow_job", "round": 0, "pending": {},
               "task": {"ref": "abcdefgh12", "generation": "2025", "ttl_ms": "x", "created": 5, "status": "<b>x</b>"}}  # fmt: skip
        assert check_record("0dd1", odd) is None  # accepted: only what is used must be right
        session.store.merge({"0dd1": odd}, "notebook")
        (row,) = session.saved.task_rows()
        assert row[:8] == [
            "0dd1",
            "jobs",
            "slow_job",
            "working",
            "",
            "",
            "",
            "saved, but its handle is not on this machine",
        ]
        nulled = {**odd, "task": None}
        assert SavedFlow.from_dict(nulled).to_dict() == nulled  # an explicit null task stays as written (signatures)
    finally:
        session.close()
