"""How a flow follows the task its call became: poll, answer its questions, fetch its result, keep its handle.

``wire.tasks`` does the protocol of both generations (``follow`` polls and calls back a
``TaskHost``: ``task_changed``, ``answer_task``, ``next_change``); this is the flow's side of it,
``TaskFollowing``, a part the flow holds (``Flow.following``): the task as last seen, its saved
reference and what the call asked of tasks. It keeps no reference to its flow (a map's thousand
flows stay free of cycles); each step is handed the flow it works for. A task's id is kept in the
user's ``TaskHandles`` under a ref (never in the notebook), the saved record follows the task's
status, a resumed record finds its task again only on the target that started it, and a task the
user cancels is cancelled on the server too.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import FlowError
from .kinds import FlowState, Round
from .trace import parse_requests

if TYPE_CHECKING:
    from mcp.types import Tool

    from ..wire.task_handles import TaskHandles, TaskOptions, TaskRef
    from ..wire.tasks import TaskClient, TaskStatus
    from .flow import Flow

__all__ = ["TaskFollowing"]


class TaskFollowing:
    """The task-following part of a ``flows.flow.Flow``: its task's state, and the steps that follow it."""

    def __init__(self, options: TaskOptions | None, handles: TaskHandles | None) -> None:
        self.task_options = options  # what the call asked for (``--task``, its ttl)
        self.task_handles = handles  # the user's task handles; the default file when ``None`` and a task needs it
        self.task: TaskStatus | None = None  # the task as last seen
        self.task_ref: TaskRef | None = None  # its saved reference (the record's ``task``)
        self.task_started: float | None = None  # when this kernel began following the task (perf_counter)
        self.user_cancelled = False  # cancel() by the user: a task is cancelled on the server too
        self._task_notice: TaskStatus | None = None  # a status notification not yet taken by the poll loop
        self._task_event: asyncio.Event | None = None

    async def wants_task(self, flow: Flow) -> bool:
        """2025: whether to ask for a task: the tool requires one, or ``--task`` and the tool allows one."""
        tools = flow.conn.cached_tools
        if tools is None or flow.name not in tools:
            tools = await flow.conn.tools()
        tool: Tool | None = tools.get(flow.name)
        execution = tool.execution if tool is not None else None
        support = execution.task_support if execution is not None else None
        requested = self.task_options is not None and self.task_options.requested
        return support == "required" or (requested and support == "optional")

    def ran_inline(self, flow: Flow, tasks: TaskClient | None) -> str:
        if tasks is None:
            return f"ran as a plain call: {flow.conn.name} does not offer tasks"
        if tasks.generation == "2026":
            return "ran as a plain call: on 2026-07-28 the server decides which calls become tasks, and it answered at once"
        return f"ran as a plain call: the tool {flow.name!r} does not support running as a task"

    async def follow(self, flow: Flow, status: TaskStatus | None) -> Any:
        """Follow the task this call became (``status``), or the saved one (``None``): poll, answer, fetch the result."""
        from mcp import MCPError

        from ..wire.tasks import fingerprint, follow, gone

        client = flow.conn.task_client
        ref = self.task_ref
        if client is None:
            raise FlowError(
                f"{flow.label}: {flow.conn.name} no longer offers tasks, so the task cannot be followed",
                kind="task_gone",
                server=flow.conn.name,
            )
        if status is None:  # resumed: the handle lives in this user's task handles, never in the notebook
            assert ref is not None
            if ref.generation != client.generation:
                raise FlowError(
                    f"{flow.label}: the task was started on a {ref.generation} connection and {flow.conn.name} now speaks {client.generation}",
                    kind="task_gone",
                )
            entry = self._handles().get(ref.ref)
            task_id = entry.get("task_id") if isinstance(entry.get("task_id"), str) else None
            from ..wire.task_handles import TaskHandles, describe_identity

            identity = flow.conn.target.identity()
            if task_id is not None and not TaskHandles.belongs_to(
                entry, identity
            ):  # the whole target: command, arguments, folder, env names
                raise FlowError(
                    f"{flow.label}: the saved task was started on {describe_identity(entry.get('identity', entry.get('target')))}, "
                    f"not on {describe_identity(identity)}; its handle is not sent to another server",
                    kind="task_handle_missing", flow_id=flow.id, server=flow.conn.name,
                )  # fmt: skip
            if task_id is None:
                raise FlowError(
                    f"{flow.label}: the task's handle is not on this machine. Task handles are kept only in the Jupyter data folder "
                    "of the user who started the task, never in the notebook; open the notebook there to follow it, or call the tool again.",
                    kind="task_handle_missing", flow_id=flow.id, server=flow.conn.name,
                )  # fmt: skip
            from ..wire.tasks import TaskStatus as _Status

            status = _Status(
                task_id=task_id, status=ref.status, created_at=ref.created, ttl_ms=ref.ttl_ms, poll_ms=ref.poll_ms
            )
            self.task = status
            self.task_started = time.perf_counter()
            try:
                status = await client.get(task_id)
            except asyncio.CancelledError:
                await self._tell_server_cancelled(flow, client)
                raise
            except MCPError as exc:
                raise (gone(exc, self.task, flow.label) or exc) from None
        else:
            if flow.conn.target.kind != "http":  # said before the task shows, so whoever sees the task sees why
                flow.notes.append(
                    f"{flow.conn.name} runs inside this kernel's process tree ({flow.conn.target.kind}): its tasks end with the kernel, "
                    "so this one cannot be followed from a new kernel; serve it over HTTP for that"
                )  # fmt: skip
            self.task, self.task_started = status, time.perf_counter()
            store = flow.options.store
            if store is not None and flow.options.save:
                where = {"server": flow.conn.name, "target": flow.conn.target.describe(), "identity": flow.conn.target.identity(), "tool": flow.name, "flow_id": flow.id,
                         "cell_id": flow.options.cell_id, "notebook": flow.options.notebook, "created": status.created_at, "generation": client.generation}  # fmt: skip
                from ..wire.task_handles import TaskRef

                self.task_ref = TaskRef(
                    self._handles().keep(status.task_id, **where), client.generation, created=status.created_at
                ).seen(status)
                if store.signer.ready:
                    self._save_task_record(flow)
                else:  # the first record of this kernel reads Jupyter's notary secret (a file): off the loop
                    try:
                        await asyncio.to_thread(self._save_task_record, flow)
                    except asyncio.CancelledError:  # a cancel while the record is written still reaches the server
                        await self._tell_server_cancelled(flow, client)
                        raise
        polling = Round(
            number=flow.round + 1, sent={"method": "tasks/get", "params": {"taskId": fingerprint(status.task_id)}}
        )
        flow.rounds.append(polling)
        try:
            return await follow(client, status, _Host(self, flow), set(ref.answered) if ref is not None else None)
        except asyncio.CancelledError:
            await self._tell_server_cancelled(flow, client)
            raise
        except MCPError as exc:
            raise (gone(exc, self.task, flow.label) or exc) from None
        finally:
            polling.ended = time.perf_counter()
            polling.received = {"status": self.task.status if self.task is not None else None}

    async def _tell_server_cancelled(self, flow: Flow, client: TaskClient) -> None:
        """The wait was cancelled: when the user cancelled (not a kernel shutting down), the server's task is too."""
        if self.user_cancelled and self.task is not None and not self.task.terminal and client.can_cancel:
            await self._cancel_task(flow, client, self.task.task_id)

    async def _cancel_task(self, flow: Flow, client: TaskClient, task_id: str) -> None:
        """The user cancelled: tell the server (bounded; a server that cannot be told keeps the task)."""
        try:
            await asyncio.shield(asyncio.wait_for(client.cancel(task_id), 10))
        except Exception:  # noqa: BLE001 - the cancellation stands here either way
            flow.notes.append(
                "the server could not be told to cancel the task; it may run on until its time to live ends"
            )

    def _handles(self) -> TaskHandles:
        if self.task_handles is None:
            from ..wire.task_handles import TaskHandles

            self.task_handles = TaskHandles()
        return self.task_handles

    def drop_handle(self) -> None:
        if self.task_ref is not None:
            self._handles().remove(self.task_ref.ref)

    def _save_task_record(self, flow: Flow) -> None:
        store = flow.options.store
        if store is not None and flow.options.save and self.task_ref is not None:
            oversize = store.save(flow.record(None))
            flow.in_store = oversize is None

    # what follow() calls back (through _Host, which hands each step its flow)
    def task_changed(self, flow: Flow, status: TaskStatus) -> None:
        """A poll or notification: the view shows it; the record follows a change of status (loop thread)."""
        previous, self.task = self.task, status
        ref = self.task_ref
        if ref is not None and (previous is None or previous.status != status.status or ref.status != status.status):
            self.task_ref = ref.seen(status)
            if not status.terminal:
                self._save_task_record(flow)
        flow.state = FlowState.RUNNING
        flow.view.changed(flow)

    async def answer_task(self, flow: Flow, requests: dict[str, Any]) -> dict[str, Any]:
        """2026: the input requests of an ``input_required`` task, answered like a round's."""
        flow.round += 1
        try:
            parsed = parse_requests(requests)
        except Exception:  # noqa: BLE001 - a request this client cannot read
            raise FlowError(
                f"{flow.label}: the task asks for input this client does not understand ({', '.join(list(requests)[:5])})",
                kind="task_invalid",
            ) from None
        flow.pending = dict(parsed)
        responses = await flow.answer_round(parsed)
        if self.task_ref is not None:
            from dataclasses import replace

            self.task_ref = replace(self.task_ref, answered=[*self.task_ref.answered, *responses])
            self._save_task_record(flow)
        return responses

    async def next_change(self, timeout: float) -> TaskStatus | None:
        """Wait ``timeout`` seconds, or less when a status notification arrives (returned)."""
        if self._task_event is None:
            self._task_event = asyncio.Event()
        event = self._task_event
        if self._task_notice is None:
            try:
                await asyncio.wait_for(event.wait(), timeout)
            except TimeoutError:
                pass
        event.clear()
        notice, self._task_notice = self._task_notice, None
        return notice

    def task_notified(self, status: TaskStatus) -> None:
        """A 2025 ``notifications/tasks/status`` for this flow's task (loop thread)."""
        self._task_notice = status
        if self._task_event is not None:
            self._task_event.set()


@dataclass(frozen=True)
class _Host:
    """``wire.tasks.follow``'s ``TaskHost`` for one flow: made for one follow, so the following holds no flow."""

    following: TaskFollowing
    flow: Flow

    def task_changed(self, status: TaskStatus) -> None:
        self.following.task_changed(self.flow, status)

    async def answer_task(self, requests: dict[str, Any]) -> dict[str, Any]:
        return await self.following.answer_task(self.flow, requests)

    async def next_change(self, timeout: float) -> TaskStatus | None:
        return await self.following.next_change(timeout)
