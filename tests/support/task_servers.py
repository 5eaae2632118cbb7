"""Real MCP task servers for the test suite: one per tasks generation, written with the ``mcp`` SDK.

The SDK (mcp 2.3.0) has no task support on the server side for either generation: the
``mcp_types`` models of the 2025-11-25 tasks exist but "types only" (``mcp_types.methods`` leaves
``tasks/*`` and ``notifications/tasks/status`` out of every table), and nothing implements the
``io.modelcontextprotocol/tasks`` extension. So both wire protocols are built here on the SDK's own
hooks, with no fork and no patching:

- **2025-11-25** (tasks in core, SEP-1686), ``build_2025_server()``: a low-level ``Server``.
  The ``tasks`` capability comes from an overridden ``get_capabilities``; ``tasks/get``,
  ``tasks/result``, ``tasks/list`` and ``tasks/cancel`` are custom request handlers
  (``Server.add_request_handler``). A task-augmented ``tools/call`` (``params.task``) is answered
  by a ``Server.middleware`` that short-circuits the call: the runner validates every
  ``tools/call`` result on a handshake-era connection against ``CallToolResult``, so a
  ``CreateTaskResult`` cannot come from the ``tools/call`` handler. Status changes go out as
  ``notifications/tasks/status`` on the connection's standalone channel (the GET stream over HTTP).
  The server speaks the handshake era only: 2026-07-28 requests get -32601, so a client in
  ``auto`` mode falls back to ``initialize`` the way it does with server-everything.
- **2026-07-28** (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663),
  ``build_2026_server()``: an ``MCPServer`` with an ``Extension`` (SEP-2133): ``methods()``
  serves ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` at 2026-07-28 only, and
  ``intercept_tool_call`` turns a ``tools/call`` into a flat ``resultType: "task"`` when the
  request's ``_meta`` client capabilities declare the extension (the runner passes results with an
  extension ``resultType`` through unvalidated). Without the extension the optional tool runs
  inline and the required one answers -32021. No ``tasks/list``, no ``tasks/result``; no
  ``notifications/tasks`` either (``subscriptions/listen`` with ``taskIds`` is not implemented).

Tools (both servers):

- ``slow_job`` (task support "optional") and ``slow_job_required`` ("required"), with the
  arguments of ``JobArgs``: ``duration`` seconds of work in steps of half a second (each step is
  reported in ``statusMessage``; on 2025 also as ``notifications/tasks/status`` and, when the
  ``tools/call`` carried a ``progressToken``, ``notifications/progress``), ``ask`` (halfway the
  task goes ``input_required`` with one elicitation, "Which region?" with the field ``region``,
  and ends "Done in REGION"), ``fail`` (the job ends with the JSON-RPC error -32603 "Simulated
  failure": the task is ``failed``), ``tool_error`` (the job returns ``isError: true``: ``failed``
  on 2025, ``completed`` with that result on 2026, as each spec says), ``slow_start`` (seconds the
  ``tools/call`` takes before it answers with the task), ``ttl_ms`` (2026; on 2025 used when the
  ``task`` param has no ``ttl``) and ``poll_interval_ms``.
- ``task_stats`` (``reset``): what the server has seen (``Stats.snapshot``): requests per method,
  requests per task id and method, notifications it sent, and every live task's status. Over HTTP
  the same JSON is at ``GET /test/stats`` (``POST /test/reset`` clears it), which does not count.

Tasks live in the server process's memory until their ttl runs out (counted from ``createdAt``);
an expired task is forgotten, and ``tasks/get`` on it answers -32602. Task ids are random
(``secrets.token_urlsafe``). There is no authorization, so any caller holding an id reaches its task.

Run one: ``python -m tests.support.task_servers {2025|2026} [--transport stdio|http] [--port P]`` (HTTP
prints ``READY <url>``); from tests, ``running_task_server(generation)`` starts one over HTTP in a
subprocess (tasks outlive any client) and ``stdio_command(generation)`` is the command for stdio.
In process: ``make_server(generation)``; connect to the 2025 one with ``Client(server, mode="legacy")``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import secrets
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, MCPServer, require_client_extension
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp.shared.message import ServerMessageMetadata
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from mcp_types.jsonrpc import HEADER_MISMATCH
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.support.ready_process import running_ready_process, serve_ready

logger = logging.getLogger("tests.support.task_servers")

Generation = Literal["2025", "2026"]
GENERATIONS: tuple[Generation, ...] = ("2025", "2026")

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK_META = "io.modelcontextprotocol/related-task"
IMMEDIATE_RESPONSE_META = "io.modelcontextprotocol/model-immediate-response"
MODERN = frozenset(MODERN_PROTOCOL_VERSIONS)

OPTIONAL_TOOL = "slow_job"
REQUIRED_TOOL = "slow_job_required"
STATS_TOOL = "task_stats"
TASK_SUPPORT: dict[str, Literal["optional", "required"]] = {OPTIONAL_TOOL: "optional", REQUIRED_TOOL: "required"}

DEFAULT_TTL_MS = 300_000
MAX_TTL_MS = 24 * 3600 * 1000
DEFAULT_POLL_INTERVAL_MS = 250
STEP_SECONDS = 0.5
SIMULATED_FAILURE = "Simulated failure"
SIMULATED_TOOL_ERROR = "Simulated tool error"

ASK_KEY = "region"
ASK_MESSAGE = "Which region?"
ASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {ASK_KEY: {"type": "string", "title": "Region", "description": "Where the job runs"}},
    "required": [ASK_KEY],
}

TERMINAL = frozenset({"completed", "failed", "cancelled"})
REPO_ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------ the job
class JobArgs(BaseModel):
    """The arguments of ``slow_job`` and ``slow_job_required`` (the tools' input schema)."""

    model_config = ConfigDict(extra="forbid")

    duration: Annotated[
        float, Field(ge=0, le=600, description="Seconds of simulated work, reported in steps of half a second.")
    ] = 1.0
    fail: Annotated[bool, Field(description="End with the JSON-RPC error -32603 (the task ends failed).")] = False
    tool_error: Annotated[
        bool, Field(description="End with an isError result (failed on 2025-11-25, completed on 2026-07-28).")
    ] = False
    ask: Annotated[
        bool, Field(description="Halfway, ask 'Which region?' (field region); the result is 'Done in REGION'.")
    ] = False
    slow_start: Annotated[float, Field(ge=0, le=60, description="Seconds tools/call takes before it answers.")] = 0.0
    ttl_ms: Annotated[
        int | None,
        Field(ge=1, le=MAX_TTL_MS, description="The task's ttl in ms (2025-11-25: when the task param has none)."),
    ] = None
    poll_interval_ms: Annotated[
        int | None, Field(ge=1, le=60_000, description="The pollInterval the task suggests, in ms.")
    ] = None


JOB_SCHEMA: dict[str, Any] = JobArgs.model_json_schema()
STATS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reset": {"type": "boolean", "description": "Clear the counters after reading them."}},
}


def parse_args(arguments: Mapping[str, Any] | None) -> JobArgs:
    try:
        return JobArgs.model_validate(dict(arguments or {}))
    except ValidationError as exc:
        raise MCPError(
            code=INVALID_PARAMS, message=f"Invalid arguments: {exc.errors(include_url=False, include_input=False)}"
        ) from None


@dataclass
class JobOutcome:
    """What a job ends with: a ``CallToolResult`` (wire dict) or a JSON-RPC error (``{code, message}``)."""

    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


AskFn = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Takes ``elicitation/create`` params, returns the ``ElicitResult`` (wire dict)."""
ProgressFn = Callable[[int, int, str], Awaitable[None]]


def tool_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def ask_params(meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"mode": "form", "message": ASK_MESSAGE, "requestedSchema": ASK_SCHEMA}
    if meta:
        params["_meta"] = meta
    return params


async def run_job(args: JobArgs, *, progress: ProgressFn, ask: AskFn) -> JobOutcome:
    """The simulated work, the same in every mode: steps, maybe a question halfway, an outcome."""
    steps = max(1, min(1200, math.ceil(args.duration / STEP_SECONDS)))
    region: str | None = None
    for step in range(steps):
        if args.ask and step == steps // 2:
            answer = await ask(ask_params())
            content = answer.get("content") or {}
            if answer.get("action") != "accept" or not isinstance(content.get(ASK_KEY), str):
                return JobOutcome(result=tool_result(f"No region given ({answer.get('action')}).", is_error=True))
            region = content[ASK_KEY]
        await asyncio.sleep(args.duration / steps)
        await progress(step + 1, steps, f"Working: step {step + 1} of {steps}")
    if args.fail:
        return JobOutcome(error={"code": INTERNAL_ERROR, "message": SIMULATED_FAILURE})
    if args.tool_error:
        return JobOutcome(result=tool_result(SIMULATED_TOOL_ERROR, is_error=True))
    return JobOutcome(
        result=tool_result(f"Done in {region}" if region is not None else f"Done after {args.duration:g}s")
    )


# ------------------------------------------------------------------------------------------ tasks
def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(eq=False)
class TaskRecord:
    """One task in the server's memory."""

    task_id: str
    generation: Generation
    tool: str
    args: JobArgs
    ttl_ms: int | None
    poll_interval_ms: int
    created_at: str = field(default_factory=now_iso)
    created_monotonic: float = field(default_factory=time.monotonic)
    last_updated_at: str = ""
    status: str = "working"
    status_message: str | None = "The job has started."
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    question: dict[str, Any] | None = None
    """The pending ``elicitation/create`` params while ``input_required``."""
    answer: asyncio.Future[dict[str, Any]] | None = None
    asking: bool = False
    """2025: a ``tasks/result`` has sent the pending question and waits for the client's answer."""
    worker: asyncio.Task[None] | None = None
    session: Any = None
    """2025: the ``ServerSession`` of the request that last touched the task; notifications go there."""
    on_change: Callable[[TaskRecord], Awaitable[None]] | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.last_updated_at = self.created_at

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        return self.ttl_ms is not None and now >= self.created_monotonic + self.ttl_ms / 1000

    async def update(
        self,
        *,
        status: str | None = None,
        message: str | None = None,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """Change the task (never once terminal) and tell whoever listens."""
        if self.terminal:
            return
        if status is not None:
            self.status = status
        if message is not None:
            self.status_message = message
        if result is not None:
            self.result = result
        if error is not None:
            self.error = error
        self.last_updated_at = now_iso()
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        if self.on_change is not None:
            try:
                await self.on_change(self)
            except Exception:  # a listener that went away costs only its notification
                logger.debug("task %s: status listener failed", self.task_id, exc_info=True)

    async def wait_change(self) -> None:
        await self._changed.wait()

    async def finish(self, outcome: JobOutcome) -> None:
        if outcome.error is not None:
            await self.update(
                status="failed", message=f"Tool execution failed: {outcome.error['message']}", error=outcome.error
            )
            return
        result = outcome.result or tool_result("")
        if result.get("isError") and self.generation == "2025":  # SEP-1686: an isError tool result fails the task
            text = " ".join(block.get("text", "") for block in result.get("content", []))
            await self.update(status="failed", message=f"Tool execution failed: {text}", result=result)
            return
        await self.update(status="completed", message="The job is done.", result=result)

    async def cancel(self) -> None:
        """Mark the task cancelled (before anything else can finish it) and stop its worker."""
        if self.terminal:
            return
        worker = self.worker
        await self.update(status="cancelled", message="The task was cancelled by request.")
        self.stop(worker)

    def stop(self, worker: asyncio.Task[None] | None = None) -> None:
        worker = worker or self.worker
        if worker is not None and not worker.done():
            worker.cancel()
        if self.answer is not None and not self.answer.done():
            self.answer.cancel()

    def wire_2025(self) -> dict[str, Any]:
        """The SEP-1686 ``Task``."""
        task: dict[str, Any] = {"taskId": self.task_id, "status": self.status}
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        task.update(
            createdAt=self.created_at,
            lastUpdatedAt=self.last_updated_at,
            ttl=self.ttl_ms,
            pollInterval=self.poll_interval_ms,
        )
        return task

    def wire_2026(self, *, detailed: bool) -> dict[str, Any]:
        """The SEP-2663 ``Task``; ``detailed``: the ``DetailedTask`` of ``tasks/get`` (result, error or inputRequests inlined)."""
        task: dict[str, Any] = {"taskId": self.task_id, "status": self.status}
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        task.update(
            createdAt=self.created_at,
            lastUpdatedAt=self.last_updated_at,
            ttlMs=self.ttl_ms,
            pollIntervalMs=self.poll_interval_ms,
        )
        if detailed:
            if self.status == "completed" and self.result is not None:
                task["result"] = self.result
            elif self.status == "failed" and self.error is not None:
                task["error"] = self.error
            elif self.status == "input_required" and self.question is not None:
                task["inputRequests"] = {ASK_KEY: {"method": "elicitation/create", "params": self.question}}
        return task


class TaskStore:
    """The tasks of one server process; expired ones are forgotten on the next access."""

    def __init__(self) -> None:
        self.tasks: dict[str, TaskRecord] = {}

    def purge(self) -> None:
        now = time.monotonic()
        for task_id, record in list(self.tasks.items()):
            if record.expired(now):
                del self.tasks[task_id]
                record.stop()

    def add(self, record: TaskRecord) -> None:
        self.purge()
        self.tasks[record.task_id] = record

    def get(self, task_id: str) -> TaskRecord:
        self.purge()
        record = self.tasks.get(task_id)
        if record is None:
            raise MCPError(
                code=INVALID_PARAMS,
                message="Failed to retrieve task: Task not found (unknown, or expired and forgotten)",
            )
        return record

    def newest_first(self) -> list[TaskRecord]:
        self.purge()
        return sorted(self.tasks.values(), key=lambda r: r.created_monotonic, reverse=True)


@dataclass
class Stats:
    """What a server has seen, for tests: polling load, cancels that arrived, notifications sent."""

    requests: Counter[str] = field(default_factory=Counter)
    task_requests: dict[str, Counter[str]] = field(default_factory=dict)
    notifications_received: Counter[str] = field(default_factory=Counter)
    notifications_sent: Counter[str] = field(default_factory=Counter)
    tasks_created: int = 0

    def count(self, method: str, params: Any, is_request: bool) -> None:
        if not is_request:
            self.notifications_received[method] += 1
            return
        self.requests[method] += 1
        task_id = params.get("taskId") if isinstance(params, Mapping) else None
        if method.startswith("tasks/") and isinstance(task_id, str):
            self.task_requests.setdefault(task_id, Counter())[method] += 1

    def reset(self) -> None:
        self.requests.clear()
        self.task_requests.clear()
        self.notifications_received.clear()
        self.notifications_sent.clear()
        self.tasks_created = 0


@dataclass
class TaskServerState:
    """The store, the counters and the defaults of one server."""

    generation: Generation
    poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS
    default_ttl_ms: int = DEFAULT_TTL_MS
    store: TaskStore = field(default_factory=TaskStore)
    stats: Stats = field(default_factory=Stats)

    def new_task(self, tool: str, args: JobArgs, ttl_ms: int | None) -> TaskRecord:
        record = TaskRecord(
            task_id=secrets.token_urlsafe(18),
            generation=self.generation,
            tool=tool,
            args=args,
            ttl_ms=None if ttl_ms is None else min(ttl_ms, MAX_TTL_MS),
            poll_interval_ms=args.poll_interval_ms or self.poll_interval_ms,
        )
        self.store.add(record)
        self.stats.tasks_created += 1
        return record

    def snapshot(self) -> dict[str, Any]:
        """``task_stats``: ``requests`` {method: n}, ``task_requests`` {taskId: {method: n}},
        ``notifications_received``/``notifications_sent`` {method: n}, ``tasks_created``, and ``tasks``
        {taskId: {tool, status, statusMessage}} for the tasks still in memory."""
        stats = self.stats
        return {
            "generation": self.generation,
            "requests": dict(stats.requests),
            "task_requests": {task_id: dict(counts) for task_id, counts in stats.task_requests.items()},
            "notifications_received": dict(stats.notifications_received),
            "notifications_sent": dict(stats.notifications_sent),
            "tasks_created": stats.tasks_created,
            "tasks": {
                r.task_id: {"tool": r.tool, "status": r.status, "statusMessage": r.status_message}
                for r in self.store.newest_first()
            },
        }

    def stats_result(self, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        snapshot = self.snapshot()
        if (arguments or {}).get("reset"):
            self.stats.reset()
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(snapshot))], structured_content=snapshot
        )

    async def count_requests(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """``Server.middleware``: count every inbound message by method (and task id)."""
        self.stats.count(ctx.method, ctx.params, ctx.request_id is not None)
        return await call_next(ctx)

    def http_routes(self) -> list[Route]:
        async def stats(request: Request) -> Response:
            return JSONResponse(self.snapshot())

        async def reset(request: Request) -> Response:
            self.stats.reset()
            return JSONResponse({"reset": True})

        return [Route("/test/stats", stats, methods=["GET"]), Route("/test/reset", reset, methods=["POST"])]


def start_worker(record: TaskRecord, on_progress: ProgressFn | None = None) -> None:
    """Run the job of ``record`` in the background; its question, if any, waits on ``record.answer``."""

    async def ask(params: dict[str, Any]) -> dict[str, Any]:
        record.answer = asyncio.get_running_loop().create_future()
        record.question = params
        await record.update(status="input_required", message=f"Waiting for input: {ASK_MESSAGE}")
        try:
            return await record.answer
        finally:
            record.question = None
            record.answer = None
            record.asking = False
            await record.update(status="working", message="Input received; the job goes on.")

    async def progress(step: int, steps: int, message: str) -> None:
        await record.update(message=message)
        if on_progress is not None:
            await on_progress(step, steps, message)

    async def work() -> None:
        try:
            outcome = await run_job(record.args, progress=progress, ask=ask)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("task %s: the job crashed", record.task_id)
            outcome = JobOutcome(error={"code": INTERNAL_ERROR, "message": "Internal error"})
        await record.finish(outcome)

    record.worker = asyncio.create_task(work(), name=f"task-{record.task_id}")


def wire(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


# ------------------------------------------------------------------------------------------ 2025-11-25
class LegacyTaskServer(Server[Any]):
    """The 2025-11-25 generation (SEP-1686) on the low-level ``Server``; see the module docstring."""

    def __init__(self, state: TaskServerState) -> None:
        super().__init__(
            "task-server-2025",
            version="1.0.0",
            instructions="Tasks of the 2025-11-25 protocol (SEP-1686): call slow_job with a task param, then poll tasks/get.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self.task_state = state
        self.middleware.extend([state.count_requests, self._handshake_era_only, self._task_augmented_call])
        self.add_request_handler("tasks/get", types.GetTaskRequestParams, self._tasks_get)
        self.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, self._tasks_result)
        self.add_request_handler("tasks/list", types.PaginatedRequestParams, self._tasks_list)
        self.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, self._tasks_cancel)

    def get_capabilities(
        self,
        notification_options: Any = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        capabilities = super().get_capabilities(
            notification_options, experimental_capabilities, extensions, protocol_version=protocol_version
        )
        if protocol_version in MODERN:
            return capabilities
        tasks = types.ServerTasksCapability(
            list=types.TasksListCapability(),
            cancel=types.TasksCancelCapability(),
            requests=types.ServerTasksRequestsCapability(
                tools=types.TasksToolsCapability(call=types.TasksCallCapability())
            ),
        )
        return capabilities.model_copy(update={"tasks": tasks})

    # -- middleware
    async def _handshake_era_only(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.protocol_version in MODERN:
            if ctx.request_id is None:
                return None
            raise MCPError(
                code=METHOD_NOT_FOUND,
                message="This server speaks the handshake protocol (2025-11-25) only",
                data=ctx.method,
            )
        return await call_next(ctx)

    async def _task_augmented_call(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        raw = ctx.params
        if ctx.method != "tools/call" or not isinstance(raw, Mapping) or raw.get("task") is None:
            return await call_next(ctx)
        try:
            params = types.CallToolRequestParams.model_validate(dict(raw), by_name=False)
        except ValidationError:
            raise MCPError(code=INVALID_PARAMS, message="Invalid tools/call params") from None
        if params.name not in TASK_SUPPORT:  # forbidden (or unknown): SEP-1686 says -32601
            raise MCPError(
                code=METHOD_NOT_FOUND, message=f"Tool {params.name!r} does not support task-augmented execution"
            )
        args = parse_args(params.arguments)
        if args.slow_start:
            await asyncio.sleep(args.slow_start)
        state = self.task_state
        requested = params.task.ttl if params.task is not None else None
        record = state.new_task(
            params.name, args, requested if requested is not None else (args.ttl_ms or state.default_ttl_ms)
        )
        record.session = ctx.session
        record.on_change = self._send_status
        meta = raw.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, Mapping) else None
        start_worker(record, None if token is None else self._progress_sender(record, token))
        return {
            "task": record.wire_2025(),
            "_meta": {IMMEDIATE_RESPONSE_META: f"Started task {record.task_id}; its result comes with tasks/result."},
        }

    # -- notifications (standalone channel of the session that last touched the task)
    async def _send_status(self, record: TaskRecord) -> None:
        if record.session is None:
            return
        notification = types.TaskStatusNotification.model_validate(
            {"method": "notifications/tasks/status", "params": record.wire_2025()}
        )
        await record.session.send_notification(cast(Any, notification))
        self.task_state.stats.notifications_sent["notifications/tasks/status"] += 1

    def _progress_sender(self, record: TaskRecord, token: str | int) -> ProgressFn:
        async def send(step: int, steps: int, message: str) -> None:
            if record.session is None:
                return
            params = {
                "progressToken": token,
                "progress": step,
                "total": steps,
                "message": message,
                "_meta": {RELATED_TASK_META: {"taskId": record.task_id}},
            }
            try:
                await record.session.send_notification(
                    types.ProgressNotification.model_validate({"method": "notifications/progress", "params": params})
                )
            except Exception:
                logger.debug("task %s: progress notification failed", record.task_id, exc_info=True)
                return
            self.task_state.stats.notifications_sent["notifications/progress"] += 1

        return send

    # -- tools
    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        def job_tool(name: str, support: Literal["optional", "required"], what: str) -> types.Tool:
            return types.Tool(
                name=name,
                description=what,
                input_schema=JOB_SCHEMA,
                execution=types.ToolExecution(task_support=support),
            )

        return types.ListToolsResult(
            tools=[
                job_tool(
                    OPTIONAL_TOOL,
                    "optional",
                    "A simulated job; runs inline, or as a task when the call has a task param.",
                ),
                job_tool(
                    REQUIRED_TOOL,
                    "required",
                    "A simulated job that runs as a task only (a call without a task param gets -32601).",
                ),
                types.Tool(
                    name=STATS_TOOL,
                    description="What this server has seen (requests per method and task, notifications sent, tasks).",
                    input_schema=STATS_SCHEMA,
                    execution=types.ToolExecution(task_support="forbidden"),
                ),
            ]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name == STATS_TOOL:
            return self.task_state.stats_result(params.arguments)
        if params.name == REQUIRED_TOOL:
            raise MCPError(
                code=METHOD_NOT_FOUND,
                message=f"Tool {REQUIRED_TOOL!r} requires task-augmented execution (a task param)",
            )
        if params.name != OPTIONAL_TOOL:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"Unknown tool: {params.name}")], is_error=True
            )
        args = parse_args(params.arguments)
        if args.slow_start:
            await asyncio.sleep(args.slow_start)

        async def ask(question: dict[str, Any]) -> dict[str, Any]:
            answer = await ctx.session.elicit_form(ASK_MESSAGE, ASK_SCHEMA, related_request_id=ctx.request_id)
            return wire(answer)

        async def progress(step: int, steps: int, message: str) -> None:
            await ctx.session.report_progress(step, steps, message)

        outcome = await run_job(args, progress=progress, ask=ask)
        if outcome.error is not None:
            raise MCPError(code=outcome.error["code"], message=outcome.error["message"])
        return types.CallToolResult.model_validate(outcome.result)

    # -- tasks/*
    def _touch(self, ctx: ServerRequestContext[Any], task_id: str) -> TaskRecord:
        record = self.task_state.store.get(task_id)
        record.session = ctx.session
        return record

    async def _tasks_get(self, ctx: ServerRequestContext[Any], params: types.GetTaskRequestParams) -> dict[str, Any]:
        return self._touch(ctx, params.task_id).wire_2025()

    async def _tasks_result(
        self, ctx: ServerRequestContext[Any], params: types.GetTaskPayloadRequestParams
    ) -> dict[str, Any]:
        """Blocks until the task is terminal; a pending question goes out on this request's stream."""
        record = self._touch(ctx, params.task_id)
        related = {RELATED_TASK_META: {"taskId": record.task_id}}
        while not record.terminal:
            if record.question is not None and record.answer is not None and not record.asking:
                answer_future = record.answer
                record.asking = True
                try:
                    request = types.ElicitRequest.model_validate(
                        {"method": "elicitation/create", "params": ask_params(related)}
                    )
                    answer = await ctx.session.send_request(
                        request, types.ElicitResult, metadata=ServerMessageMetadata(related_request_id=ctx.request_id)
                    )
                except BaseException:
                    record.asking = False
                    raise
                if not answer_future.done():
                    answer_future.set_result(wire(answer))
                continue
            await record.wait_change()
        if record.status == "cancelled" or (record.result is None and record.error is None):
            raise MCPError(code=INTERNAL_ERROR, message=f"Task {record.task_id} was cancelled and has no result")
        if record.error is not None:
            raise MCPError(code=record.error["code"], message=record.error["message"], data=record.error.get("data"))
        assert record.result is not None
        return {**record.result, "_meta": {**record.result.get("_meta", {}), **related}}

    async def _tasks_list(self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams) -> dict[str, Any]:
        records = self.task_state.store.newest_first()
        page = 50
        try:
            start = int(params.cursor) if params.cursor is not None else 0
        except ValueError:
            raise MCPError(code=INVALID_PARAMS, message="Invalid cursor") from None
        if not 0 <= start <= len(records):
            raise MCPError(code=INVALID_PARAMS, message="Invalid cursor")
        result: dict[str, Any] = {"tasks": [r.wire_2025() for r in records[start : start + page]]}
        if start + page < len(records):
            result["nextCursor"] = str(start + page)
        return result

    async def _tasks_cancel(
        self, ctx: ServerRequestContext[Any], params: types.CancelTaskRequestParams
    ) -> dict[str, Any]:
        record = self._touch(ctx, params.task_id)
        if record.terminal:
            raise MCPError(
                code=INVALID_PARAMS, message=f"Cannot cancel task: already in terminal status '{record.status}'"
            )
        await record.cancel()
        return record.wire_2025()


def build_2025_server(
    *, poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS, default_ttl_ms: int = DEFAULT_TTL_MS
) -> LegacyTaskServer:
    return LegacyTaskServer(TaskServerState("2025", poll_interval_ms=poll_interval_ms, default_ttl_ms=default_ttl_ms))


# ------------------------------------------------------------------------------------------ 2026-07-28
class UpdateTaskParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


def declares_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request's client capabilities (the 2026 per-request ``_meta``) list the extension."""
    capabilities = ctx.session.client_capabilities
    return bool(capabilities and capabilities.extensions and TASKS_EXTENSION in capabilities.extensions)


class TasksExtension(Extension):
    """``io.modelcontextprotocol/tasks`` (SEP-2663) on the SDK's server ``Extension`` hooks."""

    identifier = TASKS_EXTENSION

    def __init__(self, state: TaskServerState) -> None:
        self.state = state

    def methods(self) -> Sequence[MethodBinding]:
        return [
            MethodBinding(
                method="tasks/get", params_type=types.GetTaskRequestParams, handler=self._get, protocol_versions=MODERN
            ),
            MethodBinding(
                method="tasks/update", params_type=UpdateTaskParams, handler=self._update, protocol_versions=MODERN
            ),
            MethodBinding(
                method="tasks/cancel",
                params_type=types.CancelTaskRequestParams,
                handler=self._cancel,
                protocol_versions=MODERN,
            ),
        ]

    async def intercept_tool_call(
        self, params: types.CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        support = TASK_SUPPORT.get(params.name)
        if support is None:
            return await call_next(ctx)
        if ctx.protocol_version not in MODERN or not declares_tasks(ctx):
            if support == "required":
                require_client_extension(ctx, TASKS_EXTENSION)  # raises -32021 with requiredCapabilities
            return await call_next(ctx)
        args = parse_args(params.arguments)
        if args.slow_start:
            await asyncio.sleep(args.slow_start)
        record = self.state.new_task(params.name, args, args.ttl_ms or self.state.default_ttl_ms)
        start_worker(record)
        return {"resultType": "task", **record.wire_2026(detailed=False)}

    def _record(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> TaskRecord:
        require_client_extension(ctx, TASKS_EXTENSION)
        request = ctx.request
        headers = getattr(request, "headers", None)
        if (
            headers is not None
            and (name := decode_header_value(headers.get(MCP_NAME_HEADER))) is not None
            and name != task_id
        ):
            raise MCPError(code=HEADER_MISMATCH, message=f"Mcp-Name header {name!r} does not match params.taskId")
        return self.state.store.get(task_id)

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: types.GetTaskRequestParams) -> dict[str, Any]:
        return {"resultType": "complete", **self._record(ctx, params.task_id).wire_2026(detailed=True)}

    async def _update(self, ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams) -> dict[str, Any]:
        record = self._record(ctx, params.task_id)
        response = params.input_responses.get(ASK_KEY)
        future = record.answer
        if (
            response is not None and record.question is not None and future is not None and not future.done()
        ):  # other keys: ignored
            try:
                answer = wire(types.ElicitResult.model_validate(response, by_name=False))
            except ValidationError:
                raise MCPError(
                    code=INVALID_PARAMS, message=f"inputResponses[{ASK_KEY!r}] is not an ElicitResult"
                ) from None
            future.set_result(answer)
        return {"resultType": "complete"}

    async def _cancel(
        self, ctx: ServerRequestContext[Any, Any], params: types.CancelTaskRequestParams
    ) -> dict[str, Any]:
        await self._record(ctx, params.task_id).cancel()
        return {"resultType": "complete"}


class ModernTaskServer(MCPServer[Any]):
    """The 2026-07-28 generation (SEP-2663) on ``MCPServer`` plus ``TasksExtension``; see the module docstring."""

    def __init__(self, state: TaskServerState) -> None:
        super().__init__(
            "task-server-2026",
            version="1.0.0",
            instructions="Tasks of the io.modelcontextprotocol/tasks extension: declare it and call slow_job; poll tasks/get.",
            extensions=[TasksExtension(state)],
            middleware=[state.count_requests],
            log_level="WARNING",
        )
        self.task_state = state
        for route in state.http_routes():
            self.custom_route(route.path, methods=sorted(route.methods or ()))(route.endpoint)
        self.add_tool(
            self._slow_job,
            name=OPTIONAL_TOOL,
            description="A simulated job; runs as a task when the client declares io.modelcontextprotocol/tasks, else inline.",
            structured_output=False,
        )
        self.add_tool(
            self._slow_job,
            name=REQUIRED_TOOL,
            description="A simulated job that runs as a task only (without the extension: -32021).",
            structured_output=False,
        )
        self.add_tool(
            self._task_stats,
            name=STATS_TOOL,
            description="What this server has seen (requests per method and task, tasks).",
            structured_output=False,
        )

    async def _task_stats(self, reset: bool = False) -> types.CallToolResult:
        return self.task_state.stats_result({"reset": reset})

    async def _slow_job(
        self,
        ctx: Context,
        duration: Annotated[float, Field(ge=0, le=600)] = 1.0,
        fail: bool = False,
        tool_error: bool = False,
        ask: bool = False,
        slow_start: Annotated[float, Field(ge=0, le=60)] = 0.0,
        ttl_ms: int | None = None,
        poll_interval_ms: int | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Inline: the job runs within the call (a question is a 2026 input_required round, or an elicitation on 2025)."""
        args = JobArgs(
            duration=duration,
            fail=fail,
            tool_error=tool_error,
            ask=ask,
            slow_start=slow_start,
            ttl_ms=ttl_ms,
            poll_interval_ms=poll_interval_ms,
        )
        modern = ctx.protocol_version in MODERN
        given = (ctx.input_responses or {}).get(ASK_KEY)
        if args.ask and modern and given is None:
            request = types.ElicitRequest.model_validate({"method": "elicitation/create", "params": ask_params()})
            return types.InputRequiredResult(input_requests={ASK_KEY: request})
        if args.slow_start:
            await asyncio.sleep(args.slow_start)

        async def answer(question: dict[str, Any]) -> dict[str, Any]:
            if modern:
                return wire(cast(BaseModel, given))
            return wire(await ctx.session.elicit_form(ASK_MESSAGE, ASK_SCHEMA, related_request_id=ctx.request_id))

        async def progress(step: int, steps: int, message: str) -> None:
            await ctx.report_progress(step, steps, message)

        outcome = await run_job(args, progress=progress, ask=answer)
        if outcome.error is not None:
            raise MCPError(code=outcome.error["code"], message=outcome.error["message"])
        return types.CallToolResult.model_validate(outcome.result)


def build_2026_server(
    *, poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS, default_ttl_ms: int = DEFAULT_TTL_MS
) -> ModernTaskServer:
    return ModernTaskServer(TaskServerState("2026", poll_interval_ms=poll_interval_ms, default_ttl_ms=default_ttl_ms))


def make_server(
    generation: Generation, *, poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS, default_ttl_ms: int = DEFAULT_TTL_MS
) -> LegacyTaskServer | ModernTaskServer:
    """A fresh server (its own tasks and counters) for in-process use or to run."""
    if generation == "2025":
        return build_2025_server(poll_interval_ms=poll_interval_ms, default_ttl_ms=default_ttl_ms)
    if generation == "2026":
        return build_2026_server(poll_interval_ms=poll_interval_ms, default_ttl_ms=default_ttl_ms)
    raise ValueError(f"generation must be one of {GENERATIONS}, got {generation!r}")


# ------------------------------------------------------------------------------------------ running
async def serve_stdio(server: LegacyTaskServer | ModernTaskServer) -> None:
    if isinstance(server, LegacyTaskServer):
        # The handshake-only loop: a 2026 request (server/discover) gets -32601 and the client
        # falls back to initialize on the same pipe (the dual-era loop would lock the pipe to 2026).
        async with stdio_server() as (read_stream, write_stream):
            await serve_loop(server, read_stream, write_stream, lifespan_state={})
    else:
        await server.run_stdio_async()


def http_app(server: LegacyTaskServer | ModernTaskServer) -> Any:
    """The server's streamable HTTP app, with the stats routes (``MCPServer`` adds its custom routes itself)."""
    if isinstance(server, LegacyTaskServer):
        return server.streamable_http_app(custom_starlette_routes=server.task_state.http_routes())
    return server.streamable_http_app()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.task_servers",
        description="An MCP task server for tests (2025-11-25 tasks or the 2026-07-28 tasks extension).",
    )
    parser.add_argument("generation", choices=GENERATIONS)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--port", type=int, default=0, help="HTTP port on --host (0: the OS picks one; READY shows the URL)"
    )
    parser.add_argument(
        "--poll-interval-ms",
        type=int,
        default=DEFAULT_POLL_INTERVAL_MS,
        help="the pollInterval tasks suggest (a call's poll_interval_ms wins)",
    )
    parser.add_argument(
        "--default-ttl-ms", type=int, default=DEFAULT_TTL_MS, help="ttl of a task whose call names none"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    server = make_server(args.generation, poll_interval_ms=args.poll_interval_ms, default_ttl_ms=args.default_ttl_ms)
    if args.transport == "stdio":
        asyncio.run(serve_stdio(server))
        return 0
    serve_ready(http_app(server), args.host, args.port)
    return 0


# ------------------------------------------------------------------------------------------ from tests
def stdio_command(generation: Generation, *options: str) -> list[str]:
    """The command that runs a task server over stdio (``-P``: the tests folder stays off ``sys.path``)."""
    return [sys.executable, "-P", str(Path(__file__).resolve()), generation, *options]


def stats_url(url: str) -> str:
    """``GET`` this for the stats of the server at MCP endpoint ``url`` (not counted in them)."""
    return url.rsplit("/mcp", 1)[0] + "/test/stats"


@contextmanager
def running_task_server(
    generation: Generation,
    transport: Literal["http"] = "http",
    *,
    poll_interval_ms: int | None = None,
    default_ttl_ms: int | None = None,
    startup_timeout: float = 30.0,
) -> Iterator[str]:
    """Start a task server over HTTP in a subprocess; yields its MCP URL and stops it on exit.

    Its tasks live in that process, so they outlive any client. For stdio there is nothing to
    start beforehand: the client spawns ``stdio_command(generation)``.
    """
    if transport != "http":
        raise ValueError(
            "running_task_server starts HTTP servers; for stdio let the client spawn stdio_command(generation)"
        )
    options = ["--transport", "http", "--port", "0"]
    if poll_interval_ms is not None:
        options += ["--poll-interval-ms", str(poll_interval_ms)]
    if default_ttl_ms is not None:
        options += ["--default-ttl-ms", str(default_ttl_ms)]
    with running_ready_process(stdio_command(generation, *options), "task server", startup_timeout) as (url, _proc):
        yield url


if __name__ == "__main__":
    sys.exit(main())
