"""The 2025 back-channel of one connection: a server's questions, logs and notices, each routed to its call.

A 2025 server asks the client (elicitation, sampling, roots) and tells it things (log lines,
task status, resource changes) on the session, not inside the call that caused them. The SDK
calls one callback per kind, registered when the connection opens (``Connection._own``); this
module answers them by finding the call they belong to among the connection's running calls.

The calls are flows of the floor above (``flows.flow.Flow``); this floor names them only as
``Caller``, the few things the back channel reads and calls on one, which ``Flow`` has.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..errors import FlowError
from .transports import stdout_line

if TYPE_CHECKING:
    from mcp.client import ClientRequestContext, IncomingMessage
    from mcp.types import (
        CreateMessageRequestParams,
        CreateMessageResult,
        CreateMessageResultWithTools,
        ElicitRequestParams,
        ElicitResult,
        ErrorData,
        ListRootsResult,
        LoggingMessageNotificationParams,
    )

    from .connection import Connection
    from .tasks import TaskStatus

__all__ = ["BackChannel", "Caller", "NotesRoots", "covers"]


class NotesRoots(Protocol):
    """What answers a call's questions, as far as roots go: it notes in the call that roots were answered."""

    def note_roots(self, flow: Any, result: Any) -> Any: ...


class Caller(Protocol):
    """A call running on a connection, as the back channel sees it (``flows.flow.Flow`` is one, structurally).

    ``task``: the 2025/2026 task it follows, if any (its questions and status name it);
    ``route_tag``: what its calls carry in ``_meta`` over HTTP (``routing.py``).
    """

    @property
    def finished(self) -> bool: ...

    @property
    def task(self) -> TaskStatus | None: ...

    @property
    def route_tag(self) -> str: ...

    @property
    def answerer(self) -> NotesRoots: ...

    async def answer_elicitations(
        self, requests: dict[str, Any], single: bool = False, candidates: list[Any] | None = None
    ) -> Any: ...

    async def answer_sampling(self, key: str, params: Any, single: bool = False) -> Any: ...

    def on_log(self, entry: dict[str, Any]) -> None: ...

    def task_notified(self, status: TaskStatus) -> None: ...


class BackChannel:
    """The SDK's ElicitationFnT, SamplingFnT, ListRootsFnT, LoggingFnT and MessageHandlerFnT of one connection.

    Also the 2025 ``notifications/tasks/status`` handler of the tasks extension. Reads the
    connection's running calls (``flows``), its HTTP routes, its roots; writes its log.
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def running(self) -> list[Caller]:
        return [flow for flow in self.conn.flows if not flow.finished]

    def asker(self, request_id: Any, meta: Any = None) -> tuple[Caller | None, list[Caller]]:
        """The flow a server→client request belongs to, and the running flows when that cannot be told.

        A question of a 2025 task names it (``_meta`` related-task): it goes to the flow following
        that task. Over streamable HTTP the question arrives on the stream of the call that asks
        (``routing.StreamRoutes``). Elsewhere a 2025 request carries no link to its call: with one
        call running it is that call's; with several, the oldest shows it and all are listed, so
        the question is answered without any call's presets.
        """
        from .tasks import RELATED_TASK

        running = self.running()
        related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
        task_id = related.get("taskId") if isinstance(related, dict) else None
        if isinstance(task_id, str):
            for flow in running:
                if flow.task is not None and flow.task.task_id == task_id:
                    return flow, []
        routes = self.conn.routes
        tag = routes.origin(request_id) if routes is not None else None
        if tag is not None:
            for flow in running:
                if flow.route_tag == tag:
                    return flow, []
        if len(running) <= 1:
            return (running[0] if running else None), []
        return running[0], running

    async def on_elicit(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        """A 2025 back-channel question: the flow's answer, or what the server is told when there is none.

        A question nobody in this run can answer (headless without a fitting preset, a form over the
        limits, a link a headless run cannot open) is answered ``cancel``, the elicitation result for
        "dismissed without an explicit choice", which every server handles; the reason (the missing
        field, the flag to give) stays in the notebook, where the flow fails with it. Left to the SDK,
        the exception would reach the server as a JSON-RPC error with code 0 and our hint as its text.
        A failure of ours is -32603 (internal error) without its text.
        """
        from mcp.types import INTERNAL_ERROR, ElicitResult, ErrorData

        flow, candidates = self.asker(context.request_id, context.meta)
        if flow is None:
            return ErrorData(code=-32600, message="No notebook flow is waiting for this request")
        try:
            answer: ElicitResult | ErrorData = await flow.answer_elicitations(
                {str(context.request_id): params}, single=True, candidates=candidates
            )
            return answer
        except FlowError:
            if flow.task is not None:
                # A task's question stays open on the server for a later `%mcp resume` (the task is
                # kept): a cancel would end it. The server gets a real error code, not our hint.
                return ErrorData(
                    code=INTERNAL_ERROR, message="No answer in this run; the question stays open for a later resume"
                )
            # the flow keeps the reason and fails with it (Flow.answer_elicitations)
            return ElicitResult(action="cancel")
        except Exception as exc:  # noqa: BLE001 - a bug of ours: the server gets a real code, the log its kind (its text may quote answers)
            self.conn.logs.append(
                {
                    "level": "error",
                    "logger": "mcp-notebook",
                    "data": f"could not answer an elicitation: {type(exc).__name__}",
                }
            )
            return ErrorData(code=INTERNAL_ERROR, message="The notebook client failed while answering this request")

    async def on_sample(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | CreateMessageResultWithTools | ErrorData:
        from mcp.types import ErrorData

        flow, candidates = self.asker(context.request_id, context.meta)
        if flow is None:
            return ErrorData(code=-32600, message="No notebook flow is waiting for this request")
        # sampling has no per-call presets (the session's models answer), so the oldest call shows it either way
        reply: CreateMessageResult | CreateMessageResultWithTools | ErrorData = await flow.answer_sampling(
            str(context.request_id), params, single=True
        )
        return reply

    async def on_roots(self, context: ClientRequestContext) -> ListRootsResult | ErrorData:
        """Roots belong to the session: asked after connecting or after ``roots/list_changed``, no flow needed."""
        result = self.conn.roots.result()
        flow, _ = self.asker(context.request_id, context.meta)
        if flow is not None:  # asked during a call: the flow's notes say so, same answer
            flow.answerer.note_roots(flow, result)
        return result

    async def on_log(self, params: LoggingMessageNotificationParams) -> None:
        entry = {"level": params.level, "logger": params.logger, "data": params.data}
        self.conn.logs.append(entry)
        running = self.running()
        if len(running) == 1:  # with several calls running, a log line belongs to the connection's log only
            running[0].on_log(entry)

    async def on_task_status(self, status: TaskStatus) -> None:
        """A 2025 ``notifications/tasks/status``: to the flow following that task, if any."""
        for flow in self.running():
            if flow.task is not None and flow.task.task_id == status.task_id:
                flow.task_notified(status)

    async def on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            if self.conn.target.kind == "stdio" and stdout_line(message) is not None:
                return  # kept by ``Connection._heard_from`` as it was read
            self.conn.logs.append({"level": "error", "logger": "transport", "data": str(message)})
            return
        self.resource_updated(message)

    def resource_updated(self, message: Any) -> None:
        """2025 ``notifications/resources/updated``: wake whoever follows that URI or one it lies under (loop thread).

        The spec lets a server name a sub-resource of the subscribed one. Never waits: an in-process
        server's ``send_resource_updated`` runs this inline.
        """
        if getattr(message, "method", None) != "notifications/resources/updated":
            return
        uri = getattr(getattr(message, "params", None), "uri", None)
        wakers = self.conn.resource_wakers
        if not isinstance(uri, str) or not wakers:
            return
        for watched, wake in list(wakers.items()):
            if covers(watched, uri):
                wake()


def covers(watched: str, changed: str) -> bool:
    """Whether a change of ``changed`` concerns a follower of ``watched`` (the same URI, or one under it)."""
    return changed == watched or changed.startswith(watched.rstrip("/") + "/")
