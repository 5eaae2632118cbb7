"""``Flow``: one tools/call, prompts/get or resources/read exchange, driven round by round.

The flow uses the SDK's manual path (``allow_input_required=True``) so every round is visible:
it records the questions and the opaque ``request_state``, saves a record while it waits, answers
every input request of the round together, and retries with ``input_responses`` under the same
keys and the state byte for byte. Servers of the 2025 generation ask over the back-channel
instead; their requests arrive through the connection's callbacks into the same ``answer_*``
methods, so both generations meet one form, one model router and one roots list.

No widgets here: a flow reports to its view (``view``, a ``flows.ui.FlowUI``) and asks through an
``Answerer`` (whose ``ui`` is the same kind of object; headless, both are ``ui.HeadlessUI``). All it
is told comes at construction, in one frozen ``options.FlowOptions``.

This module is the state machine and its handle across threads (``start``, ``result``, ``await``,
``cancel``); its parts live beside it, each a module of one job: its words (``kinds``), its
questions (``asking``), how its failure is told (``failure``), its trace (``trace``) and the task
its call may become (``task_follow``, a ``TaskFollowing`` the flow holds).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from ..core.kept import Kept
from ..core.redact import secret_arguments
from ..errors import FlowError
from ..wire.routing import TAG_KEY
from ..wire.server_logs import serving
from . import asking
from .failure import explained, keeps_record, no_backchannel, result_text, still_saved, unreachable
from .kinds import STATE_ONLY_BACKOFF, FlowState, Method, Progress, Round
from .task_follow import TaskFollowing
from .trace import SentLater, events, parse_requests, task_received, trace_received
from .ui import ShowsSignIn

if TYPE_CHECKING:
    from ..core.limits import Limits
    from ..wire.connection import Connection
    from ..wire.task_handles import TaskRef
    from ..wire.tasks import TaskStatus
    from .answering import Answerer
    from .options import AppHost, FlowOptions, ShownApp
    from .record import SavedFlow
    from .store import Store
    from .ui import FlowUI

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


class Flow:
    """A running (or finished) MCP request; ``await flow`` or ``flow.result()`` gives the SDK result.

    Made with everything it needs: the call (server, method, name, arguments) and ``options``, what
    the session told it once (``FlowOptions``: its view, its answerer, its bounds, where its record
    goes, the App host). Nothing is set on a flow from outside after that.
    """

    def __init__(
        self, conn: Connection, method: Method, name: str, arguments: dict[str, Any] | None, options: FlowOptions
    ) -> None:
        self.id = secrets.token_hex(4)  # 8 hex digits, as the notebook's saved flows have always been named
        self.conn = conn
        self.method: Method = method
        self.name = name
        self.arguments = dict(arguments or {})
        self.options = options
        self.following = TaskFollowing(options.task, options.task_handles)  # the task the call may become
        self._prepare = options.prepare  # makes the arguments on the loop, first thing (see Session.start)
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
        self.value: Any = None
        self.error: FlowError | None = None
        self.started = time.perf_counter()
        self.ended: float | None = None
        self._resume: tuple[str | None, dict[str, Any]] | None = None  # saved state and questions to go on from
        self._withheld: frozenset[str] = frozenset()  # secret arguments a saved record left out
        self._reworded: set[str] = set()  # question keys the server asked again with new wording
        self._secrets: frozenset[str] | None = None
        self.in_store = False  # a record of this flow is in the store
        self._unanswered = False  # a headless run had no preset answer for a question
        self._backchannel_error: FlowError | None = None  # a 2025 back-channel question this client could not answer
        self._maybe_backchannel_error: FlowError | None = None  # the same, for a question that may be this call's
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
        self.shown = False  # already in its cell (live view or the magic's report): a cell's value shows nothing more
        self.app: ShownApp | None = None  # the MCP App its report shows, once registered (``options.apps``)

    @classmethod
    def from_saved(cls, conn: Connection, saved: SavedFlow, options: FlowOptions) -> Flow:
        """A flow that goes on from a saved record: its id, round, state and questions (not started).

        The arguments are the saved ones, and the withheld secret ones are asked again first.
        """
        flow = cls(conn, saved.method, saved.name, dict(saved.arguments or {}), options)  # type: ignore[arg-type]
        flow.id, flow.round = saved.id, saved.round
        flow.sent = saved.round  # each round that was answered had been sent
        flow._resume = (saved.request_state, dict(saved.pending))
        flow._withheld = frozenset(saved.withheld or ())
        flow.in_store = True
        if saved.task is not None:
            from ..wire.task_handles import TaskRef

            flow.following.task_ref = TaskRef.from_dict(saved.task)
        return flow

    # ------------------------------------------------------------------ what it was told, and its task (read-only)
    @property
    def answerer(self) -> Answerer:
        return self.options.answerer

    @property
    def view(self) -> FlowUI:
        return self.options.view

    @property
    def limits(self) -> Limits:
        return self.options.limits

    @property
    def store(self) -> Store | None:
        return self.options.store

    @property
    def app_host(self) -> AppHost | None:
        return self.options.apps

    @property
    def cell_id(self) -> str | None:
        """The cell the flow runs for (its live area and report are sent to the pages for that cell)."""
        return self.options.cell_id

    @property
    def task(self) -> TaskStatus | None:
        """The task this call became, as last seen (``None``: a plain call)."""
        return self.following.task

    @property
    def task_ref(self) -> TaskRef | None:
        return self.following.task_ref

    @property
    def task_started(self) -> float | None:
        return self.following.task_started

    def task_notified(self, status: TaskStatus) -> None:
        """A 2025 ``notifications/tasks/status`` for this flow's task (loop thread; ``Connection`` routes it)."""
        self.following.task_notified(status)

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
        self.following.user_cancelled = self.following.user_cancelled or forget
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
            async with asyncio.timeout(self.options.timeout):
                sign_in = self.conn.sign_in
                if sign_in is not None and sign_in.pending is not None and isinstance(self.view, ShowsSignIn):
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
                    refused = no_backchannel(self, result_text(self.value))
                    if refused is not None:
                        raise refused
        except asyncio.CancelledError:
            self._finish(FlowState.CANCELLED, FlowError(f"{self.label} was cancelled"))
            raise
        except TimeoutError:
            error = FlowError(f"{self.label} took longer than {self.options.timeout} s and was stopped", code=-32001)
        except BaseException as exc:  # noqa: BLE001 - explained, then re-raised as FlowError
            exc = (
                self._backchannel_error or self._maybe_backchannel_error or exc
            )  # 2025: fail as a 2026-07-28 round would, not with the server's echo
            self._unreachable = unreachable(exc) or not self.conn.is_open
            error = explained(self, exc, failure_before)
        else:
            if self.options.apps is not None:
                self.app = await self.options.apps.register(self, self.options.app_main)  # its report shows the App
            self._finish(FlowState.DONE, None)
            return self.value
        finally:
            if self in self.conn.flows:
                self.conn.flows.remove(self)
        error = still_saved(self, error)
        self._finish(FlowState.FAILED, error)
        raise error

    def _finish(self, state: FlowState, error: FlowError | None) -> None:
        self.state, self.error, self.ended = state, error, time.perf_counter()
        self.server_logged = self.conn.server_logged - self._server_log_mark
        self.pending = {}
        if self.store is not None:
            if state is FlowState.CANCELLED and not self._forget:
                pass  # taken over by a resume elsewhere: the record stays
            elif state is FlowState.CANCELLED and self.task_ref is not None and not self.following.user_cancelled:
                pass  # the kernel or its loop stopped, not the user: the task runs on and can be followed again
            elif state is FlowState.DONE or not keeps_record(self, error):
                self.store.delete(self.id)
                self.following.drop_handle()
        self.view.changed(self)

    async def _drive(self) -> Any:
        from mcp.types import InputRequiredResult

        responses: dict[str, Any] | None = None
        state: str | None = None
        pause = STATE_ONLY_BACKOFF[0]
        not_ready = 0  # rounds the server answered with a state and no question ("not yet")
        asked: dict[str, str] = {}  # question key -> the wording it was last answered under
        if self._resume is not None and self.task_ref is not None:
            return await self.following.follow(self, None)
        if self._resume is not None:
            state, requests = self._resume
            missing = sorted(n for n in self._withheld if n not in self.arguments)
            if missing:
                await asking.ask_withheld(self, missing)
            if requests:
                self.pending = dict(requests)
                responses = await self.answer_round(parse_requests(requests))
        from ..wire.tasks import TaskStatus

        while True:
            result = await self._send(responses, state)
            if isinstance(result, TaskStatus):
                return await self.following.follow(self, result)
            if not isinstance(result, InputRequiredResult):
                return result
            self.round += 1
            if not result.input_requests:
                not_ready += 1
            if self.round > self.options.max_rounds:
                said = (
                    f"answered 'not ready' (a request state, no question) {not_ready} of {self.round} times"
                    if not_ready else f"still asked for input after {self.options.max_rounds} rounds"
                )  # fmt: skip
                if self._reworded:
                    said += f", re-wording {', '.join(repr(k) for k in sorted(self._reworded))} each time"
                raise FlowError(
                    f"{self.label}: the server {said}; stopped at the max_rounds setting ({self.options.max_rounds}).",
                    kind="rounds_exceeded", flow_id=self.id, server=self.conn.name, details={"max_rounds": self.options.max_rounds},
                )  # fmt: skip
            state = result.request_state
            requests = result.input_requests or {}
            self.pending = dict(requests)  # dumped only when a record is written
            if self.store is not None and self.options.save and requests:
                record = self.record(state)
                # the first record of a kernel reads Jupyter's notary secret (a file; nbformat's import if none yet): off the loop
                oversize = (
                    self.store.save(record)
                    if self.store.signer.ready
                    else await asyncio.to_thread(self.store.save, record)
                )
                self.in_store = oversize is None
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
            asking.notice_reworded(self, requests, asked)
            responses = await self.answer_round(requests)

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
            if tasks is not None and tasks.generation == "2025" and await self.following.wants_task(self):
                status = await tasks.create(
                    self.name,
                    self.arguments,
                    self.options.task.ttl_ms if self.options.task else None,
                    common.get("meta"),
                )
                entry.ended, entry.received = time.perf_counter(), task_received(status)
                return status
            progress = self._on_progress if self.options.progress else None
            result = await session.call_tool(
                self.name, self.arguments, progress_callback=progress, allow_claimed=True, **common
            )
            if tasks is not None and not isinstance(result, (CallToolResult, InputRequiredResult)):
                status = TaskStatus.from_wire(result.model_dump(by_alias=True, mode="json", exclude_none=True))
                entry.ended, entry.received = time.perf_counter(), task_received(status)
                return status
            if self.options.task is not None and self.options.task.requested and "plain_call" not in self.said:
                self.said.add("plain_call")
                self.notes.append(self.following.ran_inline(self, tasks))
        elif self.method == "prompts/get":
            result = await session.get_prompt(self.name, {k: _as_text(v) for k, v in self.arguments.items()}, **common)
        else:
            result = await session.read_resource(self.name, **common)
        entry.ended = time.perf_counter()
        entry.received = partial(trace_received, result)
        return result

    # ------------------------------------------------------------------ answering (both generations: asking.py)
    async def answer_round(self, requests: dict[str, Any]) -> dict[str, Any]:
        """Answer every input request of one round together (one form for all elicitations)."""
        return await asking.answer_round(self, requests)

    async def answer_elicitations(
        self, requests: dict[str, Any], single: bool = False, candidates: list[Flow] | None = None
    ) -> Any:
        """Elicitation requests of one round (or one 2025 back-channel request, ``single``) -> ``ElicitResult`` per key."""
        return await asking.answer_elicitations(self, requests, single, candidates)

    async def waiting_for(self, awaitable: Awaitable[Any]) -> Any:
        """Show this flow as waiting while a person answers ``awaitable`` (a sampling review panel)."""
        return await asking.waiting_for(self, awaitable)

    async def answer_sampling(self, key: str, params: Any, single: bool = False) -> Any:
        """A model's reply to one sampling request (``ErrorData`` when refused or failed)."""
        return await asking.answer_sampling(self, key, params, single)

    async def answer_roots(self) -> Any:
        return await asking.answer_roots(self)

    # ------------------------------------------------------------------ notifications
    async def _on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress_info = Progress(progress, total, message)
        self.view.progress(self)

    def on_log(self, entry: dict[str, Any]) -> None:
        self.logs.append(entry)
        self.view.log(self, entry)

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
    def trace(self, times: bool = False) -> list[dict[str, Any]]:
        """Every message of the flow in the order it crossed the wire (``trace.events``); ``times`` adds ``ms``."""
        return events(self, times)

    def record(self, request_state: str | None) -> dict[str, Any]:
        """The saved record (``record.SavedFlow.of``) in the dict form the notebook keeps."""
        from .record import SavedFlow

        return SavedFlow.of(self, request_state).to_dict()


def _waker(event: threading.Event) -> Callable[[Any], None]:
    """A future's done-callback that sets ``event`` (and holds nothing else: no cycle through the flow)."""
    return lambda _future: event.set()


def _as_text(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value)
