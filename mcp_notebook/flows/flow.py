"""``Flow``: one tools/call, prompts/get or resources/read exchange, driven round by round.

The flow uses the SDK's manual path (``allow_input_required=True``) so every round is visible:
it records the questions and the opaque ``request_state``, saves a record while it waits, answers
every input request of the round together, and retries with ``input_responses`` under the same
keys and the state byte for byte. Servers of the 2025 generation ask over the back-channel
instead; their requests arrive through the connection's callbacks into the same ``answer_*``
methods, so both generations meet one form, one model router and one roots list.

No widgets here: a flow reports to its view (``view``, a ``flows.ui.FlowUI``) and asks through an
``Answerer`` (whose ``ui`` is the same kind of object; headless, both are ``ui.HeadlessUI``).

Why this module is long: ``Flow`` is one state machine over two protocol generations (the manual
2026-07-28 rounds and the 2025 back-channel answered inside the same call), as httpx keeps its
``_client.py``; its words (``kinds``), its trace (``trace``) and its task following (``task_follow``)
live beside it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from ..core.kept import Kept
from ..core.limits import Limits
from ..core.redact import masked, secret_arguments
from ..core.text import one_line
from ..core.urls import visible
from ..errors import FlowError, Kind, describe_exception
from ..wire.routing import TAG_KEY
from ..wire.server_logs import not_serving, serving
from .kinds import STATE_ONLY_BACKOFF, FlowState, Method, Progress, Round
from .task_follow import TaskFollowing
from .trace import (
    dump,
    parse_requests,
    question_line,
    response_summary,
    sampling_request,
    shorten_token,
    task_received,
    trace_received,
    without_task_id,
)
from .ui import FlowUI, HeadlessUI

if TYPE_CHECKING:
    from ..notebook.apps import AppHost, LiveApp
    from ..wire.connection import Connection
    from ..wire.task_handles import TaskRef
    from ..wire.tasks import TaskHandles, TaskOptions, TaskStatus
    from .answering import Answerer
    from .record import SavedFlow
    from .store import Store

__all__ = ["ANSWERS_KEPT", "LOGS_KEPT", "NOTES_KEPT", "ROUNDS_KEPT", "Flow", "FlowState", "Method", "Round"]

ROUNDS_KEPT = 100
"""Rounds a flow keeps for its trace (``Flow.rounds``, ``%mcp trace``): the newest, the earlier ones counted.

``max_rounds`` (10) bounds the rounds of a 2026-07-28 call, but a raised ``max_rounds`` lets a 'not ready'
server poll on, and a 2025 server asks over the back-channel as often as it likes inside one call. A
trace is read by a person, round by round: past a hundred rounds nobody reads the first ones, and a
round can hold a whole question. ``Flow.sent`` still counts every request."""
NOTES_KEPT = 50
"""Notes a flow keeps (``Flow.notes``: how each sampling request or roots request was answered, what went
unanswered...), the newest. One per answered back-channel request of a 2025 server, so without a bound
a server asking all day grows the flow; the report shows each as a line, and fifty lines is a page."""
ANSWERS_KEPT = 50
"""Answer summaries a flow keeps (``Flow.answer_summary``, the report's one "answered:" line), the newest,
for the same reason as ``NOTES_KEPT``: one per answered question, whatever the number of rounds."""
LOGS_KEPT = 200
"""Server log messages a flow keeps (``Flow.logs``, the report's "server log"), the newest: as many as its
live view shows (``notebook.live_view.LOG_LINES_KEPT``). The connection keeps its own 500 (``%mcp log``)."""


class Flow(TaskFollowing):
    """A running (or finished) MCP request; ``await flow`` or ``flow.result()`` gives the SDK result."""

    def __init__(
        self,
        conn: Connection,
        method: Method,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        answerer: Answerer,
        view: FlowUI | None = None,
        max_rounds: int = 10,
        timeout: float | None = None,
        store: Store | None = None,
        save: bool = True,
        cell_id: str | None = None,
        limits: Limits | None = None,
        prepare: Callable[[], Awaitable[dict[str, Any]]] | None = None,
        task: TaskOptions | None = None,
        task_handles: TaskHandles | None = None,
    ) -> None:
        self.id = secrets.token_hex(4)  # 8 hex digits, as the notebook's saved flows have always been named
        self.conn = conn
        self.method: Method = method
        self.name = name
        self.arguments = dict(arguments or {})
        self.answerer = answerer
        self.view: FlowUI = view or HeadlessUI()
        self.max_rounds = max_rounds
        self.timeout = timeout
        self.store = store
        self.save = save
        self.cell_id = cell_id
        self._prepare = prepare  # makes the arguments on the loop, first thing (see Session.start)
        self._wake = threading.Event()  # set when the outcome is known or the flow starts waiting (result())
        self.state = FlowState.RUNNING
        self.round = 0
        self.sent = 0  # requests sent (the header's rounds; a resumed flow counts the earlier ones)
        self.rounds: Kept[Round] = Kept(ROUNDS_KEPT)
        self.pending: dict[str, Any] = {}  # questions of the waiting round (SDK requests or dicts)
        self.answer_summary: Kept[str] = Kept(ANSWERS_KEPT)  # what was answered, without values
        self.notes: Kept[str] = Kept(NOTES_KEPT)
        self.said: set[str] = set()  # notes said once per flow, by kind ("oversize", "plain_call"): notes scroll out
        self.logs: Kept[dict[str, Any]] = Kept(LOGS_KEPT)
        self.progress_info: Progress | None = None
        self.wants_progress = True  # asks the server for progress (a map's rows do not: one bar counts rows)
        self.value: Any = None
        self.error: FlowError | None = None
        self.started = time.perf_counter()
        self.ended: float | None = None
        self._resume: tuple[str | None, dict[str, Any]] | None = None  # saved state and questions to go on from
        self.limits = limits or Limits()  # how much of its results and questions is rendered
        self._withheld: frozenset[str] = frozenset()  # secret arguments a saved record left out
        self._reworded: set[str] = set()  # question keys the server asked again with new wording
        self._secrets: frozenset[str] | None = None
        self._saved = False  # a record of this flow is in the store
        self._unanswered = False  # a headless run had no preset answer for a question
        self._backchannel_error: FlowError | None = None  # a 2025 back-channel question this client could not answer
        self._maybe_backchannel_error: FlowError | None = (
            None  # the same, for a question that may have been this call's
        )
        self._route_tag: str | None = None
        self._unreachable = False  # the server could not be reached
        self._forget = True  # remove the record when the flow is cancelled
        self._task: asyncio.Task[Any] | None = None
        self._here = self._ran_here = False  # running (ran) in its caller's task (run_here), not a task of its own
        self._here_cancels = 0  # cancellations cancel() made in that caller's task
        self._stderr_mark = 0
        self._server_log_mark = 0
        self.server_logged = 0  # records an in-process server logged during this flow (kept in the connection's log)
        self._future: concurrent.futures.Future[Any] | None = None
        # tasks (tasks.py): what the call asked for, the task as last seen, its saved reference
        self.task_options = task
        self.task_handles = task_handles
        self.task: TaskStatus | None = None
        self.task_ref: TaskRef | None = None
        self.task_started: float | None = None  # when this kernel began following the task (perf_counter)
        self.notebook: str | None = None  # the notebook's path, kept beside a task's handle
        self.shown = False  # already in its cell (live view or the magic's report): a cell's value shows nothing more
        self._task_notice: TaskStatus | None = None  # a status notification not yet taken by the poll loop
        self._task_event: asyncio.Event | None = None
        self._user_cancelled = False  # cancel() by the user: a task is cancelled on the server too
        # MCP Apps (apps.py): the session's host and the cell a finished call's App shows in; ``app`` once registered
        self.app_host: AppHost | None = None
        self.app_main: Any = None
        self.app: LiveApp | None = None

    @classmethod
    def from_saved(cls, conn: Connection, saved: SavedFlow, **options: Any) -> Flow:
        """A flow that goes on from a saved record: its id, round, state and questions (not started).

        ``options`` are the constructor's keywords (answerer, view, store, cell_id, ...); the
        arguments are the saved ones, and the withheld secret ones are asked again first.
        """
        flow = cls(conn, saved.method, saved.name, dict(saved.arguments or {}), **options)  # type: ignore[arg-type]
        flow.id, flow.round = saved.id, saved.round
        flow.sent = saved.round  # each round that was answered had been sent
        flow._resume = (saved.request_state, dict(saved.pending))
        flow._withheld = frozenset(saved.withheld or ())
        flow._saved = True
        if saved.task is not None:
            from ..wire.task_handles import TaskRef

            flow.task_ref = TaskRef.from_dict(saved.task)
        return flow

    # ------------------------------------------------------------------ public API (any thread)
    def start(self) -> Flow:
        """Schedule the flow on the runtime loop; returns at once.

        Started from the loop's own thread (``map``'s rows), the task is made at once: no wake-up
        of the loop through its self-pipe, which is a good part of a short call's cost.
        """
        self._future = concurrent.futures.Future()
        self._future.add_done_callback(_waker(self._wake))
        runtime = self.conn.runtime
        if runtime.in_loop_thread():
            self._spawn()
        else:
            runtime.call_soon(self._spawn)
        return self

    def _spawn(self) -> None:
        self._task = asyncio.ensure_future(self._settle())

    async def _settle(self) -> None:
        """Run the flow and settle the caller's future the moment the outcome is known.

        Settling from inside the task, rather than through the task's done-callback chain, wakes
        a waiting ``result()`` one loop iteration earlier: that hop is most of a short call's cost.
        """
        future = self._future
        assert future is not None
        try:
            value = await self._main()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            future.set_exception(exc)
        else:
            future.set_result(value)

    @property
    def state(self) -> FlowState:
        return self._state

    @state.setter
    def state(self, state: FlowState) -> None:
        self._state = state
        if state is FlowState.WAITING:
            self._wake.set()  # a kernel thread in result() must stop blocking the form

    @property
    def route_tag(self) -> str:
        """Sent in ``_meta`` on 2025 HTTP calls: routes their questions here (routing.py); made on first use."""
        if self._route_tag is None:
            self._route_tag = secrets.token_hex(8)
        return self._route_tag

    @property
    def finished(self) -> bool:
        return self.state in (FlowState.DONE, FlowState.FAILED, FlowState.CANCELLED)

    @property
    def label(self) -> str:
        """``server.tool`` (or prompt / URI) as the user typed it."""
        return f"{self.conn.name}.{self.name}" if self.method != "resources/read" else f"{self.conn.name} {self.name}"

    def result(self, timeout: float | None = None) -> Any:
        """Block until the flow ends and return the SDK result (only sensible headless).

        Raises:
            FlowError: the flow failed (its ``kind`` says how, e.g. ``still_saved``, ``rounds_exceeded``),
                was cancelled, or waits for an answer in its form (blocking would freeze the form).
            TimeoutError: it had not ended after ``timeout`` seconds (it goes on).
        """
        assert self._future is not None, "flow not started"
        try:
            if self.answerer.ui.needs_main_thread and threading.current_thread() is threading.main_thread():
                return self._result_watching_form(timeout)
            return self._future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"flow {self.id} still {self.state.value} after {timeout} s") from None
        except concurrent.futures.CancelledError:
            raise FlowError(f"flow {self.id} was cancelled") from None

    def _result_watching_form(self, timeout: float | None) -> Any:
        """Block, but not into a deadlock: a blocked kernel thread cannot receive the form's clicks."""
        future = self._future
        assert future is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self._wake.clear()  # cleared before looking, so a change after the look still wakes the wait
            if future.done():
                return future.result()
            if self.state is FlowState.WAITING:
                raise FlowError(
                    f"{self.label} is waiting for your answer in its form; blocking this cell with "
                    ".result() would freeze that form. Use `await flow` instead (or answer first)."
                ) from None
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise concurrent.futures.TimeoutError
            self._wake.wait(left)  # the outcome, or the flow starting to wait for its form

    def __await__(self) -> Any:
        assert self._future is not None, "flow not started"
        return asyncio.wrap_future(self._future).__await__()

    async def run_here(self) -> Any:
        """Run the (not started) flow in the calling task, on the runtime loop; returns its result.

        For a caller that runs many short flows one after another from its own task (``map``'s
        workers): no task per flow and no hop back, which is a third of a short call's cost.
        Raises as ``await flow`` does, except that a flow cancelled by ``cancel()`` raises a
        ``FlowError`` of kind ``cancelled``: the cancellation it made in the calling task is taken
        back (``Task.uncancel``), so the caller goes on. A cancellation of the caller's own task
        still raises ``CancelledError``.
        """
        task = asyncio.current_task()
        assert task is not None and self._future is None, (
            "run_here: a flow not started, from a task on the runtime loop"
        )
        self._future = concurrent.futures.Future()
        self._future.add_done_callback(_waker(self._wake))
        self._here = self._ran_here = True
        try:
            await self._settle()
        except asyncio.CancelledError:
            taken_back = self._here_cancels
            for _ in range(taken_back):
                task.uncancel()
            if taken_back and task.cancelling() == 0:
                raise FlowError(f"{self.label} was cancelled", kind="cancelled", server=self.conn.name) from None
            raise
        finally:
            self._here = False  # a cancel() from now on must not reach the calling task's next work
        return self._future.result()

    def when_done(self, callback: Callable[[Flow], None]) -> None:
        """Call ``callback(flow)`` once the flow has ended (at once if it has), on the thread that ends it."""
        assert self._future is not None, "flow not started"
        self._future.add_done_callback(lambda _future: callback(self))

    def done(self) -> bool:
        return self._future is not None and self._future.done()

    def cancel(self, forget: bool = True) -> None:
        """Cancel the flow; the SDK cancels the request on the server.

        ``forget=False`` keeps its saved record (the flow continues elsewhere: ``%mcp resume``).
        A call running as a task is cancelled on the server too, unless ``forget=False``.
        """
        self._forget = self._forget and forget
        self._user_cancelled = self._user_cancelled or forget
        task = self._task
        if task is not None and not task.done():
            self.conn.runtime.call_soon(self._cancel_asyncio_task, task)

    def _cancel_asyncio_task(self, task: asyncio.Task[Any]) -> None:
        """On the loop: cancel the flow's task, or, for a flow run in its caller's task, that task while it still runs this flow."""
        if task.done():
            return
        if self._ran_here:
            if not self._here:
                return  # finished meanwhile: a late cancel must not hit whatever the caller's task does next
            self._here_cancels += 1
        task.cancel()

    def __repr__(self) -> str:
        return f"<Flow {self.id} {self.label} {self.state.value} round {self.round}>"

    def _no_backchannel(self, text: str) -> FlowError | None:
        """The error for a server that could not ask its question because this connection has no back-channel.

        FastMCP 4 and the SDK's servers ask only over the 2025 back-channel (``ctx.elicit``,
        sampling, roots); on a 2026-07-28 connection they fail the call with a tool error
        instead. A 2025 connection over stateless HTTP has no back-channel either.
        """
        if not _NO_BACKCHANNEL.search(text):
            return None
        said = f"{self.label} failed: the server wanted to ask a question over the 2025 back-channel, which this connection does not have (it said: {text.strip()[:300]!r})."
        if self.conn.is_legacy:
            why = " The server runs without HTTP sessions (stateless), so on 2025-11-25 it cannot ask at all; ask its author for the 2026-07-28 way (questions returned in the result)."
            return FlowError(said + why, kind="no_backchannel", server=self.conn.name)
        how = " Connect again with protocol 'legacy' (2025-11-25) and call again: then it asks, and the form or presets answer."
        return FlowError(said + how, kind="needs_legacy", server=self.conn.name, details={"connection": self.conn})

    # ------------------------------------------------------------------ driving (loop thread)
    async def _main(self) -> Any:
        self._task = asyncio.current_task()
        self.conn.flows.append(self)
        self._stderr_mark = self.conn._call_mark = (
            self.conn.stderr_mark()
        )  # an error shows only stderr written from here on
        self._server_log_mark = self.conn.server_logged
        failure_before = self.conn.auth_failure  # a sign-in that fails during this flow explains its error
        self.view.changed(self)
        try:
            async with asyncio.timeout(self.timeout):
                sign_in = self.conn.sign_in
                if sign_in is not None and sign_in.pending is not None and hasattr(self.view, "show_sign_in"):
                    self.view.show_sign_in(sign_in.pending, sign_in)  # the sign-in this call waits for, here too
                await self.conn.wait_open(None)  # a connection still signing in: its sign-in has its own timeout
                with serving(self.conn.server_sink):  # an in-process server's log records: to its log, not the cell
                    if self._prepare is not None:
                        prepare, self._prepare = self._prepare, None
                        self.arguments = await prepare()
                    self.value = await self._drive()
                if self._backchannel_error is not None:  # the server's reply to an unanswered question is moot
                    raise self._backchannel_error
                if self._maybe_backchannel_error is not None and getattr(self.value, "is_error", False):
                    raise self._maybe_backchannel_error  # this call failed after a question nobody could tell was its own
                if getattr(self.value, "is_error", False):
                    refused = self._no_backchannel(_result_text(self.value))
                    if refused is not None:
                        raise refused
        except asyncio.CancelledError:
            self._finish(FlowState.CANCELLED, FlowError(f"{self.label} was cancelled"))
            raise
        except TimeoutError:
            error = FlowError(f"{self.label} took longer than {self.timeout} s and was stopped", code=-32001)
        except BaseException as exc:  # noqa: BLE001 - explained, then re-raised as FlowError
            exc = (
                self._backchannel_error or self._maybe_backchannel_error or exc
            )  # 2025: fail as a 2026-07-28 round would, not with the server's echo
            self._unreachable = _unreachable(exc) or not self.conn.is_open
            refused = None if isinstance(exc, FlowError) else self._no_backchannel(str(exc))
            if isinstance(exc, FlowError):
                error = exc
            elif refused is not None:
                error = refused
            elif self.conn.auth_failure is not None and self.conn.auth_failure is not failure_before:
                error = self.conn.sign_in_error(f"{self.label} failed", FlowError)
                if error.kind != "auth_required":
                    error.args = (f"{self.label} failed. {error}",)
            else:
                text, code, data = describe_exception(exc)
                refused = (
                    self.conn.auth_error(f"{self.label} failed", FlowError) if code == -32603 else None
                )  # an HTTP 401/403
                error = refused or FlowError(
                    self.conn._with_stderr(f"{self.label} failed: {text}", self._stderr_mark), code=code, data=data
                )
        else:
            if self.app_host is not None:
                self.app = await self.app_host.register(self, self.app_main)  # its report shows the App
            self._finish(FlowState.DONE, None)
            return self.value
        finally:
            if self in self.conn.flows:
                self.conn.flows.remove(self)
        if error.kind == "task_handle_missing":
            pass  # kept as it was, for whoever holds the handle; the error says why it cannot go on here
        elif self._keep_record(error) and self.task_ref is not None:
            error = FlowError(
                f"{error}\nThe task goes on on the server; flow {self.id} is still saved (the task's handle on this machine only) "
                "and can be resumed to follow it again.", code=error.code, data=error.data,
                kind="still_saved", flow_id=self.id, server=self.conn.name, reason="task", details={"error": error},
            )  # fmt: skip
        elif self._keep_record(error):
            reason = "unanswered" if self._unanswered else "unreachable"
            how = "given the missing answers" if self._unanswered else "once the server answers again"
            error = FlowError(
                f"{error}\nThe flow is still saved as {self.id}; it can be resumed {how}.", code=error.code, data=error.data,
                kind="still_saved", flow_id=self.id, server=self.conn.name, reason=reason, details={"error": error},
                missing_field=error.missing_field,
            )  # fmt: skip
        self._finish(FlowState.FAILED, error)
        raise error

    def _finish(self, state: FlowState, error: FlowError | None) -> None:
        self.state, self.error, self.ended = state, error, time.perf_counter()
        self.server_logged = self.conn.server_logged - self._server_log_mark
        self.pending = {}
        if self.store is not None:
            if state is FlowState.CANCELLED and not self._forget:
                pass  # taken over by a resume elsewhere: the record stays
            elif state is FlowState.CANCELLED and self.task_ref is not None and not self._user_cancelled:
                pass  # the kernel or its loop stopped, not the user: the task runs on and can be followed again
            elif state is FlowState.DONE or not self._keep_record(error):
                self.store.delete(self.id)
                self._drop_task_handle()
        self.view.changed(self)

    _TASK_ENDED: frozenset[Kind] = frozenset({"task_gone", "task_failed", "task_cancelled", "task_invalid"})

    def _keep_record(self, error: FlowError | None) -> bool:
        """A saved flow stays resumable when its server was unreachable or a headless run lacked an answer.

        A task stays resumable until it ended (or is gone): whatever stopped this kernel following it.
        """
        if error is None or not self._saved:
            return False
        if self.task_ref is not None:
            if self._user_cancelled:
                return False
            ended = self.task is not None and self.task.terminal and not self._unreachable
            return not ended and error.kind not in self._TASK_ENDED
        if self.round < 1:
            return False
        return self._unanswered or self._unreachable or error.code in (-32000, -32001)

    async def _drive(self) -> Any:
        from mcp.types import InputRequiredResult

        responses: dict[str, Any] | None = None
        state: str | None = None
        pause = STATE_ONLY_BACKOFF[0]
        not_ready = 0  # rounds the server answered with a state and no question ("not yet")
        asked: dict[str, str] = {}  # question key -> the wording it was last answered under
        if self._resume is not None and self.task_ref is not None:
            return await self._follow_task(None)
        if self._resume is not None:
            state, requests = self._resume
            missing = sorted(n for n in self._withheld if n not in self.arguments)
            if missing:
                await self._ask_withheld(missing)
            if requests:
                self.pending = dict(requests)
                responses = await self._answer_round(parse_requests(requests))
        from ..wire.tasks import TaskStatus

        while True:
            result = await self._send(responses, state)
            if isinstance(result, TaskStatus):
                return await self._follow_task(result)
            if not isinstance(result, InputRequiredResult):
                return result
            self.round += 1
            if not result.input_requests:
                not_ready += 1
            if self.round > self.max_rounds:
                said = (
                    f"answered 'not ready' (a request state, no question) {not_ready} of {self.round} times"
                    if not_ready else f"still asked for input after {self.max_rounds} rounds"
                )  # fmt: skip
                if self._reworded:
                    said += f", re-wording {', '.join(repr(k) for k in sorted(self._reworded))} each time"
                raise FlowError(
                    f"{self.label}: the server {said}; stopped at the max_rounds setting ({self.max_rounds}).",
                    kind="rounds_exceeded", flow_id=self.id, server=self.conn.name, details={"max_rounds": self.max_rounds},
                )  # fmt: skip
            state = result.request_state
            requests = result.input_requests or {}
            self.pending = dict(requests)  # dumped only when a record is written
            if self.store is not None and self.save and requests:
                record = self.record(state)
                # the first record of a kernel reads Jupyter's notary secret (a file; nbformat's import if none yet): off the loop
                oversize = (
                    self.store.save(record)
                    if self.store.signer.ready
                    else await asyncio.to_thread(self.store.save, record)
                )
                self._saved = oversize is None
                if oversize is not None and "oversize" not in self.said:
                    self.said.add("oversize")
                    self.notes.append(
                        f"not saved in the notebook: the server's state makes the record {oversize:,} bytes, over the "
                        f"limit of {self.store.max_record_bytes:,}; this flow cannot be resumed in another kernel"
                    )
            if not requests:  # "not yet": retry after a short back-off, like the SDK does
                await asyncio.sleep(pause)
                pause = min(pause * 2, STATE_ONLY_BACKOFF[1])
                responses = None
                continue
            pause = STATE_ONLY_BACKOFF[0]
            self._notice_reworded(requests, asked)
            responses = await self._answer_round(requests)

    async def _send(self, responses: dict[str, Any] | None, state: str | None) -> Any:
        from mcp.types import CallToolResult, InputRequiredResult

        from ..wire.tasks import TaskStatus

        session = self.conn.session
        # trace entries are built lazily: dumping every round's messages up front creates garbage
        # that, with many concurrent flows, costs more in collections than the call itself
        entry = Round(number=self.round + 1, sent=SentLater(responses, state))
        self.rounds.append(entry)
        self.sent += 1
        self.state = FlowState.RUNNING
        self.view.changed(self)
        common: dict[str, Any] = {"allow_input_required": True, "input_responses": responses, "request_state": state}
        if self.conn.tags_calls:
            common["meta"] = {TAG_KEY: self.route_tag}
        if self.method == "tools/call":
            tasks = self.conn.task_client
            if tasks is not None and tasks.generation == "2025" and await self._wants_task():
                status = await tasks.create(
                    self.name,
                    self.arguments,
                    self.task_options.ttl_ms if self.task_options else None,
                    common.get("meta"),
                )
                entry.ended, entry.received = time.perf_counter(), task_received(status)
                return status
            progress = self._on_progress if self.wants_progress else None
            result = await session.call_tool(
                self.name, self.arguments, progress_callback=progress, allow_claimed=True, **common
            )
            if tasks is not None and not isinstance(result, (CallToolResult, InputRequiredResult)):
                status = TaskStatus.from_wire(result.model_dump(by_alias=True, mode="json", exclude_none=True))
                entry.ended, entry.received = time.perf_counter(), task_received(status)
                return status
            if self.task_options is not None and self.task_options.requested and "plain_call" not in self.said:
                self.said.add("plain_call")
                self.notes.append(self._ran_inline(tasks))
        elif self.method == "prompts/get":
            result = await session.get_prompt(self.name, {k: _as_text(v) for k, v in self.arguments.items()}, **common)
        else:
            result = await session.read_resource(self.name, **common)
        entry.ended = time.perf_counter()
        entry.received = partial(trace_received, result)
        return result

    def _notice_reworded(self, requests: dict[str, Any], asked: dict[str, str]) -> None:
        """A question asked again under its answered key with new wording: said once, naming the rule.

        The SDK pins an answer to the exact question it answered; a server that puts per-call data (a
        time, a counter) in the message asks again every round, and the flow loops until ``max_rounds``.
        """
        from mcp.types import ElicitRequest

        for key, request in requests.items():
            if not isinstance(request, ElicitRequest):
                continue
            message = str(getattr(request.params, "message", ""))
            before = asked.get(key)
            asked[key] = message
            if before is None or before == message or key in self._reworded:
                continue
            self._reworded.add(key)
            self.notes.append(
                f"the server asked {visible(key)!r} again with new wording ({visible(one_line(before, 60))!r}, now "
                f"{visible(one_line(message, 60))!r}): "
                "an answer is pinned to the exact question, so a message that changes each round is asked again and again. "
                "Build the message from the tool's arguments, not from per-call data such as the time."
            )

    async def _answer_round(self, requests: dict[str, Any]) -> dict[str, Any]:
        """Answer every input request of one round together (one form for all elicitations)."""
        from mcp.types import CreateMessageRequest, ElicitRequest, ErrorData, ListRootsRequest

        elicitations = {k: r.params for k, r in requests.items() if isinstance(r, ElicitRequest)}
        jobs: dict[str, Any] = {}
        if elicitations:
            jobs["__forms__"] = self.answer_elicitations(elicitations)
        for key, request in requests.items():
            if isinstance(request, CreateMessageRequest):
                jobs[key] = self.answer_sampling(key, request.params)
            elif isinstance(request, ListRootsRequest):
                jobs[key] = self.answer_roots()
            elif not isinstance(request, ElicitRequest):
                raise FlowError(f"{self.label}: the server sent an input request this client does not know: {key}")
        results = dict(zip(jobs, await asyncio.gather(*jobs.values()), strict=True))
        responses: dict[str, Any] = results.pop("__forms__", {}) | results
        for key, answer in responses.items():
            if isinstance(answer, ErrorData):
                raise FlowError(f"{self.label}: could not answer {key!r}: {answer.message}", code=answer.code)
        self.pending = {}
        return responses

    # ------------------------------------------------------------------ answering (both generations)
    async def answer_elicitations(
        self, requests: dict[str, Any], single: bool = False, candidates: list[Flow] | None = None
    ) -> Any:
        """Elicitation requests of one round -> ``ElicitResult`` per key (one form for all).

        ``candidates``: a 2025 back-channel question that could come from any of these running
        calls (the transport does not say which): it is asked without any call's presets, and
        the form names the calls.
        """
        if single:  # back-channel request of a 2025 server: show it, record it in the trace
            self.pending = {
                key: {"method": "elicitation/create", "params": without_task_id(dump(p))} for key, p in requests.items()
            }
            # the 2025 back-channel request arrives while request ``round + 1`` is in flight
            self.rounds.append(Round(number=self.round + 1, direction="server->client", received=dict(self.pending)))
        self.state = FlowState.WAITING
        self.view.changed(self)
        try:
            context = _several_calls(candidates) if candidates else ""
            with not_serving():  # the answer is the user's side, not the server's
                answers = await self.answerer.elicit(self, requests, context=context)
        except FlowError as exc:
            unanswered = not self.answerer.ui.interactive  # headless: no preset answer fitted
            if single and candidates:  # whichever call asked fails with it when the server's reply comes
                for flow in candidates:
                    flow._maybe_backchannel_error = flow._maybe_backchannel_error or exc
                    flow._unanswered = flow._unanswered or unanswered
                    # its reply may be a plain result built on the cancel it was told (Connection._on_elicit)
                    flow.notes.append(
                        f"a question that may have been this call's went unanswered and the server was told 'cancel': {exc}"
                    )
            else:
                self._unanswered = unanswered
                if (
                    single
                ):  # the flow fails with the first one once the server's call returns (told 'cancel', it may ask more)
                    self._backchannel_error = self._backchannel_error or exc
            raise
        finally:
            self.state = FlowState.RUNNING
            self.pending = {}
            self.view.changed(self)
        for key, answer in answers.items():
            fields = sorted((answer.content or {}).keys()) if getattr(answer, "content", None) else []
            detail = f" ({', '.join(fields)})" if fields else ""
            self.answer_summary.append(f"{question_line(key, requests.get(key))}: {answer.action}{detail}")
        if single:
            self.rounds[-1].sent = {key: response_summary(a) for key, a in answers.items()}
            self.rounds[-1].answered = next(iter(answers.values()), None)
            self.rounds[-1].ended = time.perf_counter()
            return next(iter(answers.values()))
        return answers

    async def waiting_for(self, awaitable: Awaitable[Any]) -> Any:
        """Show this flow as waiting while a person answers ``awaitable`` (a review panel); give up if the flow ends meanwhile.

        ``sampling.reviewer.Asking``: the sampling answerer waits for a review through this, never by setting the state itself.
        """
        from ..sampling.providers.base import wait_for_user

        self.state = FlowState.WAITING
        self.view.changed(self)
        try:
            return await wait_for_user(self, awaitable)
        finally:
            if self.state is FlowState.WAITING:
                self.state = FlowState.RUNNING
                self.view.changed(self)

    async def answer_sampling(self, key: str, params: Any, single: bool = False) -> Any:
        """A model's reply to one sampling request (``ErrorData`` when refused or failed).

        ``single``: a 2025 back-channel request, recorded in the trace as a server→client round with
        the reply's summary, as a back-channel elicitation is (on 2026-07-28 the request is in the
        round's ``input_requests`` and the reply in the next request's ``inputResponses``).
        """
        entry = None
        if single:  # it arrives while request ``round + 1`` is in flight
            entry = Round(number=self.round + 1, direction="server->client", received={key: sampling_request(params)})
            self.rounds.append(entry)
        with not_serving():  # the user's model (a callable, a provider's SDK) logs as the user's code
            result = await self.answerer.sample(self, key, params)
        failed = getattr(result, "code", None) is not None and not hasattr(result, "role")
        self.answer_summary.append(f"{key}: {'sampling failed' if failed else 'sampled'}")
        if entry is not None:
            entry.sent, entry.answered, entry.ended = {key: response_summary(result)}, result, time.perf_counter()
        return result

    async def answer_roots(self) -> Any:
        with not_serving():
            return await self.answerer.roots(self)

    # ------------------------------------------------------------------ notifications
    async def _on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress_info = Progress(progress, total, message)
        self.view.progress(self)

    def on_log(self, entry: dict[str, Any]) -> None:
        self.logs.append(entry)
        self.view.log(self, entry)

    async def _ask_withheld(self, names: list[str]) -> None:
        """A resumed flow's secret arguments were never saved: ask for them again, like a question."""
        from mcp.types import ElicitRequestFormParams

        schema = self._tool_schema() or {}
        found = schema.get("properties")
        properties: dict[str, Any] = found if isinstance(found, dict) else {}
        fields: dict[str, Any] = {}
        for name in names:
            found = properties.get(name)
            prop: dict[str, Any] = found if isinstance(found, dict) else {}
            kind = prop.get("type") if prop.get("type") in ("string", "number", "integer", "boolean") else "string"
            fields[name] = {
                "type": kind,
                "title": str(prop.get("title") or name),
                "description": "never saved in the notebook; needed again to continue",
            }
        params = ElicitRequestFormParams(
            message=f"To continue {self.label}, give again the arguments that were not saved: {', '.join(names)}",
            requested_schema={"type": "object", "properties": fields, "required": names},
        )
        answer = (await self.answer_elicitations({"arguments": params}))["arguments"]
        if answer.action != "accept" or not answer.content:
            raise FlowError(
                f"{self.label}: the arguments {', '.join(names)} were not given again; the saved flow was not continued",
                code=-32000,
            )
        self.arguments.update({k: v for k, v in answer.content.items() if k in names})

    def _tool_schema(self) -> dict[str, Any] | None:
        if self.method != "tools/call":
            return None
        tool = (self.conn.cached_tools or {}).get(self.name)
        return (tool.input_schema or {}) if tool is not None else None

    @property
    def secret_arguments(self) -> frozenset[str]:
        """Arguments never saved or traced: secret by the tool's schema or by their name."""
        if self._secrets is None:
            self._secrets = secret_arguments(self.arguments, self._tool_schema()) | self._withheld
        return self._secrets

    # ------------------------------------------------------------------ records and trace
    def saved(self, request_state: str | None) -> SavedFlow:
        """The saved record (DESIGN.md "Saved flows"): questions and state, never answers or secret arguments."""
        from .record import SavedFlow

        secrets = self.secret_arguments
        withheld = sorted(secrets & (self.arguments.keys() | self._withheld))
        return SavedFlow(
            id=self.id,
            cell_id=self.cell_id,
            server={"name": self.conn.name, **self.conn.target.saved()},
            method=self.method,
            name=self.name,
            arguments={k: v for k, v in self.arguments.items() if k not in secrets},
            round=self.round,
            request_state=request_state,
            pending={key: dump(req) for key, req in self.pending.items()},
            updated=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            withheld=withheld or None,
            task=self.task_ref.to_dict() if self.task_ref is not None else None,
        )

    def record(self, request_state: str | None) -> dict[str, Any]:
        """``saved(request_state)`` in the dict form the notebook keeps."""
        return self.saved(request_state).to_dict()

    def _trace_sent(self, responses: dict[str, Any] | None, state: str | None) -> dict[str, Any]:
        params: dict[str, Any] = {"name" if self.method != "resources/read" else "uri": self.name}
        if self.method != "resources/read":
            params["arguments"] = masked(self.arguments, self.secret_arguments)
        if responses:
            params["inputResponses"] = {k: response_summary(v) for k, v in responses.items()}
        if state is not None:
            params["requestState"] = shorten_token(state)
        return {"method": self.method, "params": params}

    def trace(self, times: bool = False) -> list[dict[str, Any]]:
        """Every message of the flow in the order it crossed the wire, as ``{round, from, to, kind, message}``.

        A 2025 back-channel exchange happens *inside* a request, so events are ordered by time:
        the request, the server's question, the client's answer, then the request's result.
        ``times`` adds ``ms``: when each crossed, in milliseconds since the call began (what shows a
        "not ready" back-off: 50 ms, doubling to 250 ms).
        """
        timed: list[tuple[float, int, dict[str, Any]]] = []
        for r in self.rounds:
            done = r.ended if r.ended is not None else r.started
            if r.direction == "client->server":
                timed.append(
                    (
                        r.started,
                        len(timed),
                        {
                            "round": r.number,
                            "from": "client",
                            "to": "server",
                            "kind": "request",
                            "message": _resolve(r.sent, self),
                        },
                    )
                )
                if r.received:
                    timed.append(
                        (
                            done,
                            len(timed),
                            {
                                "round": r.number,
                                "from": "server",
                                "to": "client",
                                "kind": "result",
                                "message": _resolve(r.received),
                            },
                        )
                    )
            else:
                timed.append(
                    (
                        r.started,
                        len(timed),
                        {"round": r.number, "from": "server", "to": "client", "kind": "request", "message": r.received},
                    )
                )
                if r.sent:
                    timed.append(
                        (
                            done,
                            len(timed),
                            {
                                "round": r.number,
                                "from": "client",
                                "to": "server",
                                "kind": "result",
                                "message": {"result": r.sent},
                            },
                        )
                    )
        ordered = sorted(timed, key=lambda item: (item[0], item[1]))
        if times:
            return [{**event, "ms": max(0, round((at - self.started) * 1000))} for at, _, event in ordered]
        return [event for _, _, event in ordered]


def _resolve(value: Any, flow: Flow | None = None) -> Any:
    if isinstance(value, SentLater) and flow is not None:
        return flow._trace_sent(value.responses, value.state)
    return value() if callable(value) else value


@dataclass(frozen=True)
class SentLater:
    """A request's trace entry, built from these only when the trace is read (``Flow._trace_sent``).

    Not a bound method of the flow: that would make a reference cycle of every flow, which only
    the garbage collector frees, and a map's thousand flows would then cost collections.
    """

    responses: dict[str, Any] | None
    state: str | None


def _waker(event: threading.Event) -> Callable[[Any], None]:
    """A future's done-callback that sets ``event`` (and holds nothing else: no cycle through the flow)."""
    return lambda _future: event.set()


_TRANSPORT_ERRORS = {"ConnectError", "ConnectTimeout", "RemoteProtocolError", "ReadError", "WriteError", "NetworkError"}


def _unreachable(exc: BaseException) -> bool:
    """Whether a failure means the server could not be reached (worth resuming later)."""
    from ..errors import leaf_exceptions

    return any(type(e).__name__ in _TRANSPORT_ERRORS or isinstance(e, ConnectionError) for e in leaf_exceptions(exc))


def _as_text(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value)


_NO_BACKCHANNEL = re.compile(
    r"via server-initiated requests is unavailable on 2026-07-28|has no back-channel for server-initiated requests"
)


def _result_text(result: Any) -> str:
    """The text blocks of a tool result, joined (what a server says in an error result)."""
    return "\n".join(getattr(block, "text", "") for block in getattr(result, "content", None) or [])


def _several_calls(flows: list[Flow]) -> str:
    """What a form says when a question could come from any of ``flows`` (the server does not say which)."""
    calls = ", ".join(f"{f.label} ({f.id})" for f in flows)
    return (
        f"{len(flows)} calls are running on this server ({calls}) and it does not say which one asks; "
        "no call's preset answers are used. Run them one after another, or connect over streamable HTTP, to keep them apart."
    )
