"""Wire-level checks of the task servers in ``tests/support/task_servers.py`` and of the fastmcp-tasks peer.

No mcp_notebook code: the raw SDK client (``mcp.Client``) sends the task methods as small
``Request`` classes through ``ClientSession.send_request``. The one exception is the 2025-11-25
task-augmented ``tools/call``: the session validates every ``tools/call`` result at that version
against ``CallToolResult``, so a ``CreateTaskResult`` only comes through the session's dispatcher
(``session._dispatcher.send_raw_request``, private; see the tasks notes). Status notifications of
2025 are read with a ``NotificationBinding`` (the session drops methods it does not know
otherwise). The servers run over HTTP as subprocesses (tasks outlive clients), over stdio, and
in process; fastmcp-tasks runs from its own venv, ``.peers/venv-tasks`` (installed on first use).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any, ClassVar, Literal

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.context import ClientRequestContext
from mcp.client.extension import ClaimContext, ClientExtension, NotificationBinding, ResultClaim
from pydantic import ConfigDict

from tests.peers import servers
from tests.support import task_servers as ts

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

POLL_MS = 100  # the servers' suggested poll interval in this module
WAIT = 15.0  # seconds any one wait may take
RELATED = ts.RELATED_TASK_META


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def url_2025() -> Iterator[str]:
    with ts.running_task_server("2025", poll_interval_ms=POLL_MS) as url:
        yield url


@pytest.fixture(scope="module")
def url_2026() -> Iterator[str]:
    with ts.running_task_server("2026", poll_interval_ms=POLL_MS) as url:
        yield url


@pytest.fixture(scope="module")
def fastmcp_tasks() -> StdioServerParameters:
    """The fastmcp-tasks peer over stdio, installed into ``.peers/venv-tasks`` on first use."""
    servers.ensure_installed([servers.VENV_TASKS_STAMP])
    command = servers.fastmcp_tasks()
    return StdioServerParameters(command=command[0], args=command[1:])


def stdio(generation: ts.Generation) -> StdioServerParameters:
    command = ts.stdio_command(generation, "--poll-interval-ms", str(POLL_MS))
    return StdioServerParameters(command=command[0], args=command[1:])


def stats(url: str) -> dict[str, Any]:
    """What the server at ``url`` has seen (``GET /test/stats``, not counted itself)."""
    response = httpx2.get(ts.stats_url(url), timeout=10)
    response.raise_for_status()
    data: dict[str, Any] = response.json()
    return data


def texts(result: types.CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, types.TextContent))


class Loose(types.Result):
    """Any result, every wire field kept (``model_extra``)."""

    model_config = ConfigDict(extra="allow")
    result_type: str | None = None


# ------------------------------------------------------------------------------------------ 2025-11-25 client side
class StatusWatch(ClientExtension):
    """Collects ``notifications/tasks/status`` (unknown to the session's tables at 2025-11-25)."""

    identifier = "dev.mcp-notebook/test-task-status"

    def __init__(self) -> None:
        self.seen: list[types.TaskStatusNotificationParams] = []

    def notifications(self) -> list[NotificationBinding[Any]]:
        async def collect(params: types.TaskStatusNotificationParams) -> None:
            self.seen.append(params)

        return [
            NotificationBinding(
                method="notifications/tasks/status", params_type=types.TaskStatusNotificationParams, handler=collect
            )
        ]

    def statuses(self, task_id: str) -> list[str]:
        return [n.status for n in self.seen if n.task_id == task_id]


class Legacy:
    """A 2025-11-25 client: ``mcp.Client(mode="legacy")`` plus the task methods."""

    def __init__(self, client: Client, watch: StatusWatch, elicitations: list[tuple[str, Any]]) -> None:
        self.client = client
        self.watch = watch
        self.elicitations = elicitations
        self.messages: list[str | None] = []
        """Every ``statusMessage`` the polls saw."""

    async def create(
        self,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        ttl: int | None = 60_000,
        meta: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A task-augmented ``tools/call``; returns the ``CreateTaskResult`` (wire dict)."""
        params: dict[str, Any] = {
            "name": tool,
            "arguments": arguments or {},
            "task": {} if ttl is None else {"ttl": ttl},
        }
        if meta:
            params["_meta"] = meta
        return await self.client.session._dispatcher.send_raw_request("tools/call", params, None)

    async def get(self, task_id: str) -> types.GetTaskResult:
        return await self.client.session.send_request(
            types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)), types.GetTaskResult
        )

    async def result(self, task_id: str) -> types.CallToolResult:
        return await self.client.session.send_request(
            types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)), types.CallToolResult
        )

    async def cancel(self, task_id: str) -> types.CancelTaskResult:
        return await self.client.session.send_request(
            types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id)), types.CancelTaskResult
        )

    async def list(self) -> types.ListTasksResult:
        return await self.client.session.send_request(types.ListTasksRequest(), types.ListTasksResult)

    async def poll(self, task_id: str, until: set[str]) -> tuple[types.GetTaskResult, int]:
        """``tasks/get`` every ``pollInterval`` until the status is in ``until``; returns it and the number of polls."""
        polls = 0
        with anyio.fail_after(WAIT):
            while True:
                task = await self.get(task_id)
                polls += 1
                self.messages.append(task.status_message)
                if task.status in until:
                    return task, polls
                await anyio.sleep((task.poll_interval or POLL_MS) / 1000)


@asynccontextmanager
async def legacy(target: Any, *, region: str = "eu-west", mode: str = "legacy") -> AsyncIterator[Legacy]:
    watch = StatusWatch()
    elicitations: list[tuple[str, Any]] = []

    async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicitations.append((params.message, context.meta))
        return types.ElicitResult(action="accept", content={"region": region})

    async with Client(target, mode=mode, extensions=[watch], elicitation_callback=elicit) as client:
        yield Legacy(client, watch, elicitations)


# ------------------------------------------------------------------------------------------ 2026-07-28 client side
class TaskHandle(types.Result):
    """The flat ``CreateTaskResult`` of SEP-2663 (``resultType: "task"``)."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class DetailedTask(types.Result):
    """``tasks/get`` of SEP-2663: the task, with ``result``, ``error`` or ``inputRequests`` inlined."""

    model_config = ConfigDict(extra="allow")
    result_type: str | None = None
    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class TaskIdParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param: ClassVar[str | None] = "taskId"


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param: ClassVar[str | None] = "taskId"


class UpdateTaskParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class UpdateTask(types.Request[UpdateTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams
    name_param: ClassVar[str | None] = "taskId"


class MisroutedParams(types.RequestParams):
    task_id: str
    route: str


class MisroutedGet(types.Request[MisroutedParams, Literal["tasks/get"]]):
    """``tasks/get`` whose ``Mcp-Name`` header names another task than its body."""

    method: Literal["tasks/get"] = "tasks/get"
    params: MisroutedParams
    name_param: ClassVar[str | None] = "route"


async def no_resolver(created: TaskHandle, ctx: ClaimContext) -> types.CallToolResult:
    raise AssertionError("these tests take the task handle (allow_claimed=True) and poll it themselves")


class TasksExtension(ClientExtension):
    """Declares ``io.modelcontextprotocol/tasks`` in every request's capabilities and claims ``resultType: "task"``."""

    identifier = ts.TASKS_EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=no_resolver)]


class Modern:
    """A 2026-07-28 client that declares the tasks extension."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.messages: list[str | None] = []
        """Every ``statusMessage`` the polls saw."""

    async def create(self, tool: str, arguments: dict[str, Any] | None = None) -> TaskHandle:
        handle = await self.client.session.call_tool(tool, arguments or {}, allow_claimed=True)
        assert isinstance(handle, TaskHandle), handle
        return handle

    async def get(self, task_id: str) -> DetailedTask:
        return await self.client.session.send_request(GetTask(params=TaskIdParams(task_id=task_id)), DetailedTask)

    async def cancel(self, task_id: str) -> Loose:
        return await self.client.session.send_request(CancelTask(params=TaskIdParams(task_id=task_id)), Loose)

    async def update(self, task_id: str, responses: dict[str, Any]) -> Loose:
        return await self.client.session.send_request(
            UpdateTask(params=UpdateTaskParams(task_id=task_id, input_responses=responses)), Loose
        )

    async def poll(self, task_id: str, until: set[str], *, at_most: float | None = None) -> tuple[DetailedTask, int]:
        """``tasks/get`` every ``pollIntervalMs`` (or ``at_most`` seconds, if sooner) until the status is in ``until``."""
        polls = 0
        with anyio.fail_after(WAIT):
            while True:
                task = await self.get(task_id)
                polls += 1
                self.messages.append(task.status_message)
                if task.status in until:
                    return task, polls
                interval = (task.poll_interval_ms or POLL_MS) / 1000
                await anyio.sleep(interval if at_most is None else min(interval, at_most))


@asynccontextmanager
async def modern(target: Any) -> AsyncIterator[Modern]:
    async with Client(target, extensions=[TasksExtension()]) as client:
        assert client.protocol_version == "2026-07-28"
        yield Modern(client)


async def mcp_error(call: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await call
    return caught.value


# ------------------------------------------------------------------------------------------ 2025-11-25
async def test_2025_handshake_capabilities_and_tools(url_2025: str) -> None:
    """An auto-mode client falls back to initialize (2026 requests get -32601) and sees the tasks capability."""
    async with legacy(url_2025, mode="auto") as c:
        assert c.client.protocol_version == "2025-11-25"
        tasks = c.client.server_capabilities.tasks if c.client.server_capabilities else None
        assert tasks is not None and tasks.list is not None and tasks.cancel is not None
        assert tasks.requests is not None and tasks.requests.tools is not None and tasks.requests.tools.call is not None
        listed = {
            tool.name: tool.execution.task_support if tool.execution else None
            for tool in (await c.client.list_tools()).tools
        }
        assert listed == {"slow_job": "optional", "slow_job_required": "required", "task_stats": "forbidden"}
        assert (
            await mcp_error(c.client.call_tool("slow_job_required", {"duration": 0}))
        ).code == types.METHOD_NOT_FOUND
        assert (await mcp_error(c.create("task_stats"))).code == types.METHOD_NOT_FOUND
        inline = await c.client.call_tool("slow_job", {"duration": 0.2})
        assert texts(inline) == "Done after 0.2s"
    assert stats(url_2025)["requests"].get("server/discover", 0) >= 1


async def test_2025_create_poll_result(url_2025: str) -> None:
    async with legacy(url_2025) as c:
        created = await c.create("slow_job_required", {"duration": 1}, ttl=60_000, meta={"progressToken": "p-1"})
        task = created["task"]
        assert task["status"] == "working" and task["ttl"] == 60_000 and task["pollInterval"] == POLL_MS
        assert {"taskId", "createdAt", "lastUpdatedAt", "statusMessage"} <= task.keys()
        assert ts.IMMEDIATE_RESPONSE_META in created["_meta"]
        task_id = task["taskId"]
        assert task_id in {t.task_id for t in (await c.list()).tasks}
        done, polls = await c.poll(task_id, {"completed"})
        assert done.status_message == "The job is done." and done.last_updated_at >= done.created_at
        assert "Working: step 1 of 2" in c.messages  # progress in statusMessage
        result = await c.result(task_id)
        assert texts(result) == "Done after 1s" and not result.is_error
        assert result.meta is not None and result.meta[RELATED] == {"taskId": task_id}
        with anyio.fail_after(WAIT):
            while "completed" not in c.watch.statuses(task_id):
                await anyio.sleep(0.05)
        assert (
            c.watch.statuses(task_id)[-1] == "completed" and len(c.watch.statuses(task_id)) >= 3
        )  # the steps, then completed
    seen = stats(url_2025)
    assert seen["task_requests"][task_id] == {"tasks/get": polls, "tasks/result": 1}
    assert seen["notifications_sent"]["notifications/progress"] >= 2


async def test_2025_cancel(url_2025: str) -> None:
    async with legacy(url_2025) as c:
        task_id = (await c.create("slow_job", {"duration": 10}))["task"]["taskId"]
        cancelled = await c.cancel(task_id)
        assert cancelled.task_id == task_id and cancelled.status == "cancelled"
        assert (await c.get(task_id)).status == "cancelled"
        again = await mcp_error(c.cancel(task_id))
        assert again.code == types.INVALID_PARAMS and "terminal" in again.message
        assert (await mcp_error(c.result(task_id))).code == types.INTERNAL_ERROR
    seen = stats(url_2025)
    assert seen["task_requests"][task_id]["tasks/cancel"] == 2
    assert seen["tasks"][task_id]["status"] == "cancelled"


async def test_2025_fail_and_tool_error(url_2025: str) -> None:
    async with legacy(url_2025) as c:
        failing = (await c.create("slow_job", {"duration": 0.2, "fail": True}))["task"]["taskId"]
        erring = (await c.create("slow_job", {"duration": 0.2, "tool_error": True}))["task"]["taskId"]
        failed, _ = await c.poll(failing, {"completed", "failed", "cancelled"})
        assert failed.status == "failed" and ts.SIMULATED_FAILURE in (failed.status_message or "")
        error = await mcp_error(c.result(failing))  # tasks/result answers what tools/call would have: the error
        assert (error.code, error.message) == (types.INTERNAL_ERROR, ts.SIMULATED_FAILURE)
        tool_failed, _ = await c.poll(erring, {"completed", "failed", "cancelled"})
        assert tool_failed.status == "failed"  # SEP-1686: an isError tool result fails the task
        result = await c.result(erring)
        assert result.is_error and texts(result) == ts.SIMULATED_TOOL_ERROR


async def test_2025_ask_through_tasks_result(url_2025: str) -> None:
    """input_required, then tasks/result carries the elicitation (related to the task) and blocks until done."""
    async with legacy(url_2025, region="ap-south") as c:
        task_id = (await c.create("slow_job", {"duration": 0.4, "ask": True}))["task"]["taskId"]
        waiting, _ = await c.poll(task_id, {"input_required", "completed", "failed"})
        assert waiting.status == "input_required" and ts.ASK_MESSAGE in (waiting.status_message or "")
        result = await c.result(task_id)
        assert texts(result) == "Done in ap-south"
        assert c.elicitations == [(ts.ASK_MESSAGE, {RELATED: {"taskId": task_id}})]
        assert (await c.get(task_id)).status == "completed"
        assert "input_required" in c.watch.statuses(task_id)


async def test_2025_ttl_expiry(url_2025: str) -> None:
    async with legacy(url_2025) as c:
        task_id = (await c.create("slow_job", {"duration": 0}, ttl=1000))["task"]["taskId"]
        assert (await c.get(task_id)).ttl == 1000
        await anyio.sleep(1.3)
        gone = await mcp_error(c.get(task_id))
        assert gone.code == types.INVALID_PARAMS
        assert task_id not in {t.task_id for t in (await c.list()).tasks}
        assert (await mcp_error(c.get("no-such-task"))).code == types.INVALID_PARAMS


async def test_2025_task_outlives_its_client(url_2025: str) -> None:
    async with legacy(url_2025) as first:
        task_id = (await first.create("slow_job", {"duration": 0.5}))["task"]["taskId"]
    async with legacy(url_2025) as second:  # a new connection (new HTTP session) picks it up by id
        await second.poll(task_id, {"completed"})
        assert texts(await second.result(task_id)) == "Done after 0.5s"


async def test_2025_over_stdio_and_in_process() -> None:
    for target in (stdio("2025"), ts.make_server("2025", poll_interval_ms=POLL_MS)):
        async with legacy(target) as c:
            task_id = (await c.create("slow_job", {"duration": 0.2, "ask": True}))["task"]["taskId"]
            await c.poll(task_id, {"input_required"})
            assert texts(await c.result(task_id)) == "Done in eu-west"
            stats_result = await c.client.call_tool("task_stats", {})
            assert isinstance(stats_result.structured_content, dict)
            assert stats_result.structured_content["task_requests"][task_id]["tasks/result"] == 1
            assert json.loads(texts(stats_result)) == stats_result.structured_content


# ------------------------------------------------------------------------------------------ 2026-07-28
async def test_2026_without_the_extension(url_2026: str) -> None:
    async with Client(url_2026) as client:
        assert client.protocol_version == "2026-07-28"
        extensions = client.server_capabilities.extensions if client.server_capabilities else None
        assert extensions is not None and ts.TASKS_EXTENSION in extensions
        inline = await client.call_tool("slow_job", {"duration": 0.2})
        assert texts(inline) == "Done after 0.2s"
        missing = await mcp_error(client.call_tool("slow_job_required", {"duration": 0.2}))
        assert missing.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
        assert missing.data == {"requiredCapabilities": {"extensions": {ts.TASKS_EXTENSION: {}}}}
        assert (
            await mcp_error(client.session.send_request(GetTask(params=TaskIdParams(task_id="x")), DetailedTask))
        ).code == types.MISSING_REQUIRED_CLIENT_CAPABILITY

        async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
            return types.ElicitResult(action="accept", content={"region": "us-east"})

    async with Client(
        url_2026, elicitation_callback=elicit
    ) as client:  # inline ask: an input_required round of tools/call
        assert texts(await client.call_tool("slow_job", {"duration": 0, "ask": True})) == "Done in us-east"


async def test_2026_create_poll_complete(url_2026: str) -> None:
    async with modern(url_2026) as c:
        handle = await c.create("slow_job", {"duration": 1})
        assert handle.status == "working" and handle.ttl_ms == ts.DEFAULT_TTL_MS and handle.poll_interval_ms == POLL_MS
        assert handle.status_message and handle.created_at == handle.last_updated_at
        done, polls = await c.poll(handle.task_id, {"completed", "failed", "cancelled"})
        assert done.status == "completed" and done.result_type == "complete"
        assert "Working: step 1 of 2" in c.messages  # progress in statusMessage
        assert done.result == {"content": [{"type": "text", "text": "Done after 1s"}], "isError": False}
        assert polls >= 3
        misrouted = MisroutedGet(params=MisroutedParams(task_id=handle.task_id, route="another-task"))
        assert (await mcp_error(c.client.session.send_request(misrouted, DetailedTask))).code == types.HEADER_MISMATCH
        assert (
            await mcp_error(c.client.session.send_request(types.ListTasksRequest(), Loose))
        ).code == types.METHOD_NOT_FOUND
    seen = stats(url_2026)
    assert seen["task_requests"][handle.task_id] == {"tasks/get": polls + 1}  # + the misrouted one


async def test_2026_cancel(url_2026: str) -> None:
    async with modern(url_2026) as c:
        handle = await c.create("slow_job_required", {"duration": 10})
        ack = await c.cancel(handle.task_id)
        assert ack.result_type == "complete" and not ack.model_extra
        assert (await c.get(handle.task_id)).status == "cancelled"
    seen = stats(url_2026)
    assert seen["task_requests"][handle.task_id] == {"tasks/cancel": 1, "tasks/get": 1}
    assert seen["tasks"][handle.task_id]["status"] == "cancelled"


async def test_2026_fail_and_tool_error(url_2026: str) -> None:
    async with modern(url_2026) as c:
        failing = await c.create("slow_job", {"duration": 0.2, "fail": True})
        erring = await c.create("slow_job", {"duration": 0.2, "tool_error": True})
        failed, _ = await c.poll(failing.task_id, {"completed", "failed", "cancelled"})
        assert failed.status == "failed" and failed.result is None
        assert failed.error == {"code": types.INTERNAL_ERROR, "message": ts.SIMULATED_FAILURE}
        completed, _ = await c.poll(erring.task_id, {"completed", "failed", "cancelled"})
        assert completed.status == "completed"  # SEP-2663: an isError result is not a failed task
        assert completed.result is not None and completed.result["isError"] is True


async def test_2026_ask_then_update(url_2026: str) -> None:
    async with modern(url_2026) as c:
        handle = await c.create("slow_job", {"duration": 0.4, "ask": True})
        waiting, _ = await c.poll(handle.task_id, {"input_required", "completed", "failed"})
        assert waiting.status == "input_required" and waiting.input_requests is not None
        request = waiting.input_requests[ts.ASK_KEY]
        assert request["method"] == "elicitation/create" and request["params"]["message"] == ts.ASK_MESSAGE
        assert request["params"]["requestedSchema"]["properties"].keys() == {"region"}
        ack = await c.update(
            handle.task_id,
            {
                "ignored-key": {"action": "decline"},
                ts.ASK_KEY: {"action": "accept", "content": {"region": "eu-central"}},
            },
        )
        assert ack.result_type == "complete"
        done, _ = await c.poll(handle.task_id, {"completed", "failed"})
        assert done.result is not None and done.result["content"][0]["text"] == "Done in eu-central"
        assert done.input_requests is None


async def test_2026_ttl_expiry_and_unknown_ids(url_2026: str) -> None:
    async with modern(url_2026) as c:
        handle = await c.create("slow_job", {"duration": 0, "ttl_ms": 1000})
        assert handle.ttl_ms == 1000
        await c.poll(handle.task_id, {"completed"})
        await anyio.sleep(1.3)
        for call in (c.get(handle.task_id), c.cancel(handle.task_id), c.update(handle.task_id, {})):
            assert (await mcp_error(call)).code == types.INVALID_PARAMS


async def test_2026_task_outlives_its_client_and_runs_over_stdio(url_2026: str) -> None:
    async with modern(url_2026) as first:
        handle = await first.create("slow_job", {"duration": 0.5})
    async with modern(url_2026) as second:
        done, _ = await second.poll(handle.task_id, {"completed"})
        assert done.result is not None and done.result["content"][0]["text"] == "Done after 0.5s"
    for target in (stdio("2026"), ts.make_server("2026", poll_interval_ms=POLL_MS)):
        async with modern(target) as c:
            task = await c.create("slow_job", {"duration": 0.2, "ask": True})
            await c.poll(task.task_id, {"input_required"})
            await c.update(task.task_id, {ts.ASK_KEY: {"action": "accept", "content": {"region": "sa-east"}}})
            done, _ = await c.poll(task.task_id, {"completed"})
            assert done.result is not None and done.result["content"][0]["text"] == "Done in sa-east"


# ------------------------------------------------------------------------------------------ fastmcp-tasks 4.1.4
async def test_fastmcp_tasks_create_poll_complete(fastmcp_tasks: StdioServerParameters) -> None:
    async with modern(fastmcp_tasks) as c:
        extensions = c.client.server_capabilities.extensions if c.client.server_capabilities else None
        assert extensions is not None and ts.TASKS_EXTENSION in extensions
        handle = await c.create("crunch", {"duration": 0.5, "items": 7})  # task=True: fastmcp-tasks' defaults
        assert handle.status == "working" and handle.poll_interval_ms == 5000 and handle.ttl_ms == 900_000
        done, polls = await c.poll(handle.task_id, {"completed", "failed", "cancelled"}, at_most=0.2)
        assert done.status == "completed" and polls >= 2
        assert done.result is not None and done.result["content"][0]["text"] == "Crunched 7 for 0.5s"
    async with Client(fastmcp_tasks) as plain:  # without the extension: inline, or -32021 for the required tool
        assert texts(await plain.call_tool("crunch", {"duration": 0})) == "Crunched 3 for 0s"
        assert (
            await mcp_error(plain.call_tool("crunch_required", {"duration": 0}))
        ).code == types.MISSING_REQUIRED_CLIENT_CAPABILITY


async def test_fastmcp_tasks_cancel(fastmcp_tasks: StdioServerParameters) -> None:
    async with modern(fastmcp_tasks) as c:
        handle = await c.create("crunch_required", {"duration": 30})
        assert handle.poll_interval_ms == 200  # TaskConfig(poll_interval=...)
        await c.cancel(handle.task_id)
        cancelled, _ = await c.poll(handle.task_id, {"cancelled", "completed", "failed"})
        assert cancelled.status == "cancelled"
