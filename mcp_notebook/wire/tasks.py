"""Long-running tool calls as tasks: both wire generations, on the SDK's client extension hooks.

A task-augmented call returns a handle at once; the client polls its status, answers what it asks
for, and fetches the result when it is done, possibly from another connection or another kernel.
The ``mcp`` SDK (2.3) leaves tasks out, so they are built here, small and apart from the flow
engine (``flows.Flow`` uses them when a call becomes a task):

* **2026-07-28**, the extension ``io.modelcontextprotocol/tasks`` (SEP-2663): ``TasksExtension``
  declares it in every request's client capabilities and claims the flat ``resultType: "task"``
  result of ``tools/call`` (``TaskHandle``); ``tasks/get`` (the result, error or input requests
  inlined), ``tasks/update`` and ``tasks/cancel`` go through ``ClientSession.send_request`` with
  small request classes whose ``name_param`` adds the ``Mcp-Name`` header. The server decides
  whether a call becomes a task.
* **2025-11-25**, tasks in core (SEP-1686): the client asks for a task with ``params.task``; the
  session validates every ``tools/call`` result against ``CallToolResult`` at that version, so the
  create goes through the session's dispatcher (``_dispatcher.send_raw_request``, the one private
  name used, see ``TaskClient.create``). ``tasks/get``, ``tasks/result``, ``tasks/list`` and
  ``tasks/cancel`` are ordinary ``send_request`` calls with the ``mcp_types`` models, and
  ``notifications/tasks/status`` reaches ``TasksExtension`` through a ``NotificationBinding``.
  Questions come over the back-channel while ``tasks/result`` waits, tagged with the related
  task (``RELATED_TASK``), so the connection hands them to the flow that follows that task.

``follow`` is the polling loop of both: it waits ``pollInterval`` between polls (never less;
bounded by ``MIN_POLL`` and ``MAX_POLL`` against hostile values), hands input requests to its
host (the flow: forms, presets, models), and returns the tool's ``CallToolResult``.

A task id is a bearer-like handle (a 2026 server may answer ``tasks/get`` to anyone holding it).
It is kept like a token, in ``TaskHandles`` (``tasks.json`` in the user's Jupyter data folder,
0600), under a random ``ref``; a notebook's record holds only that ref and non-secret facts. No
output or trace shows an id: ``fingerprint`` stands in for it.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, NotificationBinding, ResultClaim
from pydantic import ConfigDict

from ..errors import FlowError
from .task_handles import TaskHandles, TaskOptions, TaskRef

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

__all__ = [
    "RELATED_TASK",
    "TASKS_EXTENSION",
    "TaskClient",
    "TaskHandle",
    "TaskHandles",
    "TaskOptions",
    "TaskRef",
    "TaskStatus",
    "TasksExtension",
    "fingerprint",
    "follow",
    "task_client_for",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
STATUSES = frozenset({"working", "input_required", *TERMINAL})
MIN_POLL = 0.1  # seconds: a server suggesting 0 does not make the client spin
DEFAULT_POLL = 1.0  # seconds, when the server suggests nothing
MAX_POLL = 300.0  # seconds: a huge suggestion does not leave a task unwatched for days
MAX_MESSAGE = 2000  # characters of a statusMessage kept (server text, shown escaped)
Generation = Literal["2025", "2026"]


# ------------------------------------------------------------------------------------------ wire models
class TaskHandle(types.Result):
    """SEP-2663's flat ``CreateTaskResult`` (``resultType: "task"``), the claimed ``tools/call`` result."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class _Loose(types.Result):
    """Any result, every field kept (``tasks/get`` of SEP-2663, acks)."""

    model_config = ConfigDict(extra="allow")


class _TaskIdParams(types.RequestParams):
    task_id: str


class _GetTask(types.Request[_TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskIdParams
    name_param: ClassVar[str | None] = "taskId"  # SEP-2663: Mcp-Name carries the task id over HTTP


class _CancelTask(types.Request[_TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: _TaskIdParams
    name_param: ClassVar[str | None] = "taskId"


class _UpdateParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class _UpdateTask(types.Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams
    name_param: ClassVar[str | None] = "taskId"


# ------------------------------------------------------------------------------------------ what we know of a task
@dataclass(frozen=True)
class TaskStatus:
    """One task as last seen, in either generation's terms."""

    task_id: str
    status: str
    message: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    ttl_ms: int | None = None
    poll_ms: int | None = None
    result: dict[str, Any] | None = None  # 2026: the inlined CallToolResult of a completed task
    error: dict[str, Any] | None = None  # 2026: the JSON-RPC error of a failed task
    input_requests: dict[str, Any] | None = None  # 2026: what an input_required task asks

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def poll_seconds(self) -> float:
        """The wait before the next poll: the server's ``pollInterval``, within [MIN_POLL, MAX_POLL]."""
        if self.poll_ms is None:
            return DEFAULT_POLL
        return min(MAX_POLL, max(MIN_POLL, self.poll_ms / 1000))

    def age(self, now: float | None = None) -> float | None:
        """Seconds since the server created the task (its clock's ``createdAt``); ``None`` when unknown."""
        created = _timestamp(self.created_at)
        return None if created is None else max(0.0, (now if now is not None else time.time()) - created)

    def took(self) -> float | None:
        """Seconds from creation to the last update (for an ended task: how long it ran)."""
        created, updated = _timestamp(self.created_at), _timestamp(self.updated_at)
        return None if created is None or updated is None else max(0.0, updated - created)

    def expired(self, now: float | None = None) -> bool:
        """Whether the ttl has run out since ``createdAt`` (the server may then forget the task)."""
        created = _timestamp(self.created_at)
        if created is None or self.ttl_ms is None:
            return False
        return (now if now is not None else time.time()) > created + self.ttl_ms / 1000

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> TaskStatus:
        """A task from either generation's JSON (``ttl``/``ttlMs``, ``pollInterval``/``pollIntervalMs``), checked."""
        task_id, status = data.get("taskId"), data.get("status")
        if not isinstance(task_id, str) or not task_id or len(task_id) > 1000:
            raise FlowError("the server's task has no valid taskId", kind="task_invalid")
        if status not in STATUSES:
            raise FlowError(f"the server's task has an unknown status {str(status)[:40]!r}", kind="task_invalid")
        message = data.get("statusMessage")
        ttl = data.get("ttlMs", data.get("ttl"))
        poll = data.get("pollIntervalMs", data.get("pollInterval"))
        return cls(
            task_id=task_id,
            status=status,
            message=message[:MAX_MESSAGE] if isinstance(message, str) else None,
            created_at=_text(data.get("createdAt")),
            updated_at=_text(data.get("lastUpdatedAt")),
            ttl_ms=_count(ttl),
            poll_ms=_count(poll),
            result=data.get("result") if isinstance(data.get("result"), dict) else None,
            error=data.get("error") if isinstance(data.get("error"), dict) else None,
            input_requests=data.get("inputRequests") if isinstance(data.get("inputRequests"), dict) else None,
        )


def _text(value: Any) -> str | None:
    return value[:64] if isinstance(value, str) else None


def _count(value: Any) -> int | None:
    return (
        int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 2**53 else None
    )


def _timestamp(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def fingerprint(task_id: str) -> str:
    """What outputs and traces show instead of a task id: a short one-way digest."""
    return "task#" + hashlib.sha256(task_id.encode()).hexdigest()[:10]


# ------------------------------------------------------------------------------------------ the extension
StatusListener = Callable[[TaskStatus], Awaitable[None]]


class TasksExtension(ClientExtension):
    """Declares ``io.modelcontextprotocol/tasks`` (2026), claims its task results, hears 2025 status notifications.

    ``on_status`` gets every ``notifications/tasks/status`` (the connection routes it to the flow
    following that task). The claim's resolver serves plain ``Client.call_tool`` users (it polls
    to the end); flows take the handle instead (``allow_claimed=True``) and follow it themselves.
    """

    identifier = TASKS_EXTENSION

    def __init__(self, on_status: StatusListener | None = None) -> None:
        self.on_status = on_status

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self._resolve)]

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        return [
            NotificationBinding(
                method="notifications/tasks/status",
                params_type=types.TaskStatusNotificationParams,
                handler=self._status,
            )
        ]

    async def _status(self, params: types.TaskStatusNotificationParams) -> None:
        if self.on_status is not None:
            try:
                status = TaskStatus.from_wire(params.model_dump(by_alias=True, mode="json", exclude_none=True))
            except FlowError:
                return  # a malformed notification is dropped; polling goes on
            await self.on_status(status)

    @staticmethod
    async def _resolve(handle: TaskHandle, ctx: ClaimContext) -> types.CallToolResult:
        client = TaskClient(ctx.session, "2026")
        return await follow(
            client, TaskStatus.from_wire(handle.model_dump(by_alias=True, mode="json", exclude_none=True)), _QuietHost()
        )


# ------------------------------------------------------------------------------------------ the methods
class TaskClient:
    """The task methods of one open session, in its generation's words."""

    def __init__(
        self, session: ClientSession, generation: Generation, *, can_list: bool = False, can_cancel: bool = True
    ) -> None:
        self.session = session
        self.generation: Generation = generation
        self.can_list = can_list  # 2025 servers that declare tasks.list
        self.can_cancel = can_cancel

    async def create(
        self, tool: str, arguments: dict[str, Any], ttl_ms: int | None, meta: dict[str, Any] | None = None
    ) -> TaskStatus:
        """2025: a task-augmented ``tools/call``; returns the created task.

        Sent through the session's dispatcher: ``send_request`` would validate the reply against
        ``CallToolResult`` (the only ``tools/call`` result of its 2025 tables) and refuse the
        ``CreateTaskResult``. The dispatcher is private to the SDK; this is its only use here.
        """
        params: dict[str, Any] = {
            "name": tool,
            "arguments": arguments,
            "task": {} if ttl_ms is None else {"ttl": ttl_ms},
        }
        if meta:
            params["_meta"] = meta
        raw = await self.session._dispatcher.send_raw_request("tools/call", params, None)
        task = raw.get("task") if isinstance(raw, dict) else None
        if not isinstance(task, dict):
            raise FlowError(f"{tool}: the server answered a task-augmented call without a task", kind="task_invalid")
        return TaskStatus.from_wire(task)

    async def get(self, task_id: str) -> TaskStatus:
        if self.generation == "2026":
            detailed = await self.session.send_request(_GetTask(params=_TaskIdParams(task_id=task_id)), _Loose)
            return TaskStatus.from_wire(detailed.model_dump(by_alias=True, mode="json", exclude_none=True))
        task = await self.session.send_request(
            types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)), types.GetTaskResult
        )
        return TaskStatus.from_wire(task.model_dump(by_alias=True, mode="json", exclude_none=True))

    async def result(self, status: TaskStatus) -> types.CallToolResult:
        """The tool's result: 2026 inlines it in the completed task; 2025 asks ``tasks/result`` (which waits for the end)."""
        if self.generation == "2026":
            if status.result is None:
                raise FlowError("the server reported the task completed without its result", kind="task_invalid")
            return types.CallToolResult.model_validate(status.result, by_name=False)
        request = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=status.task_id))
        return await self.session.send_request(request, types.CallToolResult)

    async def update(self, task_id: str, responses: dict[str, Any]) -> None:
        """2026: send the answers to an ``input_required`` task."""
        wire = {
            key: value.model_dump(by_alias=True, mode="json", exclude_none=True)
            if hasattr(value, "model_dump")
            else value
            for key, value in responses.items()
        }
        await self.session.send_request(
            _UpdateTask(params=_UpdateParams(task_id=task_id, input_responses=wire)), _Loose
        )

    async def cancel(self, task_id: str) -> None:
        if self.generation == "2026":
            await self.session.send_request(_CancelTask(params=_TaskIdParams(task_id=task_id)), _Loose)
        else:
            await self.session.send_request(
                types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id)), types.CancelTaskResult
            )

    async def list(self, limit: int = 1000) -> list[TaskStatus]:
        """2025 servers that list tasks: every one, following pagination (at most ``limit``)."""
        tasks: list[TaskStatus] = []
        cursor: str | None = None
        while len(tasks) < limit:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self.session.send_request(types.ListTasksRequest(params=params), types.ListTasksResult)
            for task in page.tasks:
                try:
                    tasks.append(TaskStatus.from_wire(task.model_dump(by_alias=True, mode="json", exclude_none=True)))
                except FlowError:
                    continue
            cursor = page.next_cursor
            if not cursor:
                break
        return tasks[:limit]


# ------------------------------------------------------------------------------------------ following a task
def task_client_for(session: ClientSession, legacy: bool) -> TaskClient | None:
    """The task methods ``session``'s server offers, or ``None`` (``legacy``: a 2025-generation session).

    A 2025 server declares ``tasks.requests.tools.call`` in its capabilities; a 2026-07-28 one the
    tasks extension.
    """
    capabilities = session.server_capabilities
    if capabilities is None:
        return None
    if legacy:
        tasks = capabilities.tasks
        calls = (
            tasks.requests.tools.call
            if tasks is not None and tasks.requests is not None and tasks.requests.tools is not None
            else None
        )
        if tasks is None or calls is None:
            return None
        return TaskClient(session, "2025", can_list=tasks.list is not None, can_cancel=tasks.cancel is not None)
    if TASKS_EXTENSION in (capabilities.extensions or {}):
        return TaskClient(session, "2026")
    return None


class TaskHost(Protocol):
    """What ``follow`` needs from whoever shows the task (a flow)."""

    def task_changed(self, status: TaskStatus) -> None: ...

    async def answer_task(self, requests: dict[str, Any]) -> dict[str, Any]: ...

    async def next_change(self, timeout: float) -> TaskStatus | None: ...


class _QuietHost:
    """The host of the claim resolver: no view; questions cannot be answered there."""

    def task_changed(self, status: TaskStatus) -> None:
        pass

    async def answer_task(self, requests: dict[str, Any]) -> dict[str, Any]:
        raise FlowError(
            "the task asks for input, which Client.call_tool cannot give; run it through mcp-notebook's flows",
            kind="unanswered",
        )

    async def next_change(self, timeout: float) -> TaskStatus | None:
        await asyncio.sleep(timeout)
        return None


async def follow(
    client: TaskClient, status: TaskStatus, host: TaskHost, answered: set[str] | None = None
) -> types.CallToolResult:
    """Poll ``status`` to its end and return the tool's result (``answered``: 2026 input keys already sent).

    Polls are at least ``pollInterval`` apart; a 2025 status notification is taken as the next
    status without a poll. Input requests go to ``host.answer_task`` (2026: then ``tasks/update``);
    on 2025 ``tasks/result`` is called, and its questions come over the back-channel.
    """
    answered = answered if answered is not None else set()
    task_id = status.task_id
    while True:
        host.task_changed(status)
        if status.terminal:
            break
        if status.status == "input_required":
            if client.generation == "2025":
                return await _final_result(
                    client, status, host
                )  # the server asks over this request's stream, then answers
            fresh = {k: v for k, v in (status.input_requests or {}).items() if k not in answered}
            if fresh:
                responses = await host.answer_task(fresh)
                await client.update(task_id, responses)
                answered.update(fresh)
                status = await client.get(task_id)
                continue
        notified = await host.next_change(status.poll_seconds)
        status = notified if notified is not None and notified.task_id == task_id else await client.get(task_id)
    if status.status == "cancelled":
        raise FlowError(f"the task was cancelled on the server{_said(status)}", kind="task_cancelled")
    if status.status == "failed" and client.generation == "2026":
        error = status.error or {}
        code = error.get("code") if isinstance(error.get("code"), int) else None
        text = error.get("message") if isinstance(error.get("message"), str) else status.message or "no reason given"
        raise FlowError(
            f"the task failed: {str(text)[:MAX_MESSAGE]}", code=code, kind="task_failed", data=error.get("data")
        )
    return await _final_result(client, status, host)  # 2025 failed: tasks/result answers what tools/call would have


async def _final_result(client: TaskClient, status: TaskStatus, host: TaskHost) -> types.CallToolResult:
    """The result; a 2025 ``tasks/result`` answers only once the task has ended, which the host is shown."""
    result = await client.result(status)
    if not status.terminal:
        ended = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        host.task_changed(
            replace(status, status="failed" if result.is_error else "completed", message=None, updated_at=ended)
        )
    return result


def _said(status: TaskStatus) -> str:
    return f" ({status.message})" if status.message else ""


def gone(error: BaseException, status: TaskStatus | None, label: str) -> FlowError | None:
    """The error for a task the server no longer knows (-32602), saying whether its ttl had run out."""
    from mcp import MCPError

    if not isinstance(error, MCPError) or error.code != types.INVALID_PARAMS:
        return None
    if status is not None and status.expired():
        why = (
            f"its time to live ({(status.ttl_ms or 0) / 1000:g} s from its creation) ran out, and the server forgot it"
        )
    else:
        why = "the server does not know it (it was restarted and lost its tasks, or forgot it early)"
    return FlowError(
        f"{label}: the task is gone: {why}. Call the tool again to start a new one.", code=error.code, kind="task_gone"
    )
