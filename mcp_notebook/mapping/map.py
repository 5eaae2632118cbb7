"""``map``: one tool called over many rows of data (a list, a pandas DataFrame, a Dask collection).

A notebook user with a table of 1,000 inputs wants one call per row, a few at a time, and the
results back in the order of the rows, without 1,000 widget areas, threads or cells. ``map`` runs
the calls as ordinary headless flows (``Session.start``) on the session's own loop, at most
``concurrency`` at a time (a fixed set of worker tasks, not a thread or task per row), retries a
failed call ``retries`` times after a short back-off, shows one progress bar for the whole map and
at the end one table of the rows that failed (secret arguments masked). The preset ``answers``
answer the questions of every row, as ``mcp_notebook.call(..., answers=...)`` does.

Past one kernel: a Dask DataFrame or bag runs partition by partition on the Dask workers. Each
worker process opens its own connection to the server (streamable HTTP only: a URL), with a bearer
token read from the worker's own environment (``bearer_env`` names the variable; only the name
travels in the task graph). The kernel's progress bar then moves as the partitions' futures
complete, and the failure table is the same.

pandas, ipywidgets and dask are imported only when the data or the kernel needs them, so
``mcp_notebook`` works without pandas and dask installed.
"""

from __future__ import annotations

import asyncio
import builtins
import concurrent.futures
import json
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from ..core.threads import KernelLoop
from ..core.text import content_text, one_line
from ..notebook.display import Table
from ..errors import FlowError, Kind, SessionError, describe_exception
from ..forms.model import Answers
from ..core.redact import masked, secret_arguments

if TYPE_CHECKING:
    from ..wire.connection import Connection
    from ..flows.flow import Flow
    from ..session.session import Session
    from ..flows.ui import FlowUI

__all__ = ["MapError", "MapStop", "map", "map_async", "map_magic"]

OnError = Literal["raise", "keep"]
Outcome = Any  # a CallToolResult, or the FlowError that took its place

BACKOFF = (0.1, 2.0)  # seconds before the first retry, and the most any retry waits (doubling in between)
REFRESH = 0.1  # seconds between redraws of the progress bar
ARGS_CHARS = 80  # characters of a failed row's arguments shown in the table
ERROR_CHARS = 160
SHOWN_FAILURES = 20  # rows of the failure table; the rest are counted
# errors a retry cannot fix: the same presets, protocol and server give the same answer
NOT_RETRIED: frozenset[Kind] = frozenset({"unanswered", "needs_legacy", "no_backchannel", "rounds_exceeded", "consent_needed", "bad_input"})


class MapError(FlowError):
    """Some rows of a ``map`` failed (``on_error="raise"``); raised once, after every row ran.

    ``failures`` lists ``(row, arguments, error)`` (arguments with secrets masked), ``table`` is
    the same as a ``display.Table``, and ``results`` holds every row's outcome in input order (a
    result, or the ``FlowError`` that took its place) so the work done is not lost.
    """

    def __init__(self, message: str, *, failures: list[tuple[int, dict[str, Any], FlowError]], results: list[Outcome], table: Table, server: str | None = None) -> None:
        super().__init__(message, kind="map_failed", server=server, details={"failed": len(failures), "total": len(results)})
        self.failures = failures
        self.results = results
        self.table = table


# ---------------------------------------------------------------------- the public functions
def map(  # noqa: A001 - ``mcp_notebook.map`` is the name the issue asks for; builtins.map is used below by its full name
    server_tool: str,
    rows: Any,
    *,
    concurrency: int = 8,
    retries: int = 0,
    on_error: OnError = "raise",
    answers: Mapping[str, Any] | Answers | None = None,
    accept_defaults: bool = False,
    columns: Mapping[str, str] | None = None,
    column: str | None = None,
    expand: bool = False,
    session: Session | None = None,
    bearer_env: str | None = None,
) -> Any:
    """Call ``SERVER.TOOL`` once per row of ``rows``; results in input order.

    ``rows``: a list (or any iterable) of argument dicts; a pandas DataFrame (its columns are the
    arguments, renamed by ``columns``: column -> argument); or, for a tool with one argument, plain
    values (or ``column``: the one column of a DataFrame, or key of each dict, to pass). A Dask
    DataFrame or bag runs on the Dask workers (see the module docstring; ``bearer_env`` overrides
    the connection's, naming a variable of the workers' environment).

    Returns a list of ``CallToolResult``s, or for a DataFrame a new DataFrame: the input plus a
    column ``result`` with each result's value (``result_value``: its structured content, or the
    JSON its text holds, not a JSON string; ``expand=True``: the structured content as columns). A failed row (a ``FlowError``, or a result with ``isError``) is retried ``retries``
    times; ``on_error="raise"`` then raises one ``MapError`` naming the failed rows,
    ``"keep"`` puts the ``FlowError`` in the row's place and shows the failure table.

    Raises:
        MapError: some rows failed (``on_error="raise"``), once every row ran; ``results`` keeps them all.
        SessionError: the call or its rows cannot be mapped as given (``bad_input``).
        FlowError: ``SERVER`` is not connected (``not_connected``, ``unknown_connection``, ``several_connected``),
            or does not offer ``TOOL``.
    """
    session, conn, schema, spec = _prepare(server_tool, on_error, concurrency, retries, answers, accept_defaults, session)
    if _is_dask(rows):
        outcomes, arguments, frame = _map_dask(session, conn, spec, rows, schema, columns, column, bearer_env)
    else:
        arguments, frame = _arguments(rows, schema, columns, column)
        progress = MapProgress.in_kernel(len(arguments), f"{conn.name}.{spec.tool}")
        stop = MapStop()
        future = session.runtime.submit(run_rows(session, conn, spec, arguments, progress.step if progress else None, stop=stop))
        try:
            outcomes = progress.wait(future) if progress is not None else future.result()
        except KeyboardInterrupt:  # an interrupted cell: the rows stop with it, not in the background
            session.runtime.call_soon(stop.stop)
            raise
    return _finish(f"{conn.name}.{spec.tool}", conn, schema, arguments, outcomes, frame, on_error, expand, asked=False)


async def map_async(
    server_tool: str,
    rows: Any,
    *,
    concurrency: int = 8,
    retries: int = 0,
    on_error: OnError = "raise",
    answers: Mapping[str, Any] | Answers | None = None,
    accept_defaults: bool = False,
    columns: Mapping[str, str] | None = None,
    column: str | None = None,
    expand: bool = False,
    session: Session | None = None,
    bearer_env: str | None = None,
    ask: bool | None = None,
) -> Any:
    """``map`` for an awaiting cell, which can ask: ``priced = await mcp_notebook.map_async("shop.price", orders)``.

    Same arguments and results as ``map``. While a cell awaits, the kernel still handles widget
    clicks (ipykernel 7.4 and later), so a question no preset answers is shown in a form in the
    cell instead of failing its row: one form at a time, naming the asking row, with "Use this
    answer for every remaining row that asks this" (see ``map_questions``). ``ask``: ``None``
    asks when a person is at the cell (a front end that allows input, as ``%mcp call`` decides),
    ``False`` never (presets only), ``True`` insists. A Dask collection runs as ``map`` runs it
    (its workers answer from the presets only).
    """
    session, conn, schema, spec = _prepare(server_tool, on_error, concurrency, retries, answers, accept_defaults, session)
    label = f"{conn.name}.{spec.tool}"
    if _is_dask(rows):
        outcomes, arguments, frame = _map_dask(session, conn, spec, rows, schema, columns, column, bearer_env)
        return _finish(label, conn, schema, arguments, outcomes, frame, on_error, expand, asked=False)
    arguments, frame = _arguments(rows, schema, columns, column)
    stop = MapStop()
    questions = None
    if _can_ask(session, ask):
        from .questions import MapQuestions

        questions = MapQuestions(schema, label, stop=lambda: session.runtime.call_soon(stop.stop))
    progress = MapProgress.in_kernel(len(arguments), label, below=questions.widget if questions is not None else None)
    if questions is not None and progress is not None:
        questions.on_waiting = progress.set_note
    future = session.runtime.submit(run_rows(session, conn, spec, arguments, progress.step if progress else None, ui=questions, stop=stop))
    try:
        outcomes = await asyncio.wrap_future(future)
    finally:
        if progress is not None:
            progress.draw()
        if questions is not None:
            questions.finished()
    return _finish(label, conn, schema, arguments, outcomes, frame, on_error, expand, asked=questions is not None)


def _prepare(
    server_tool: str, on_error: str, concurrency: int, retries: int, answers: Mapping[str, Any] | Answers | None, accept_defaults: bool, session: Session | None
) -> tuple[Session, Connection, dict[str, Any], _Spec]:
    """The checks and look-ups ``map`` and ``map_async`` share: the session, connection, tool schema and the rows' common spec."""
    if on_error not in ("raise", "keep"):
        raise SessionError(f"on_error must be 'raise' or 'keep', not {on_error!r}", kind="bad_input")
    if concurrency < 1 or retries < 0:
        raise SessionError("concurrency must be at least 1 and retries at least 0", kind="bad_input")
    if session is None:
        from ..session.api import default_session

        session = default_session()
    conn, tool = session.resolve(server_tool)
    schema = session.tool_schema_sync(conn, tool)
    return session, conn, schema, _Spec(tool=tool, concurrency=concurrency, retries=retries, answers=_presets(answers, accept_defaults))


ASK_NEEDS = (7, 4)  # the first ipykernel that handles comm messages (a form's clicks) while a cell awaits


def _can_ask(session: Session, ask: bool | None) -> bool:
    """Whether this map can show forms: in a kernel new enough, and (unless ``ask=True``) a person at the cell."""
    if ask is False:
        return False
    kernel = getattr(session.shell, "kernel", None)
    if kernel is None or threading.current_thread() is not threading.main_thread():
        if ask:
            raise SessionError("ask=True needs a notebook kernel: a map outside one answers from its presets only", kind="bad_input")
        return False
    import ipykernel

    version = tuple(int(p) for p in ipykernel.__version__.split(".")[:2] if p.isdigit())
    if version < ASK_NEEDS:
        if ask:
            raise SessionError(f"ask=True needs ipykernel {'.'.join(str(p) for p in ASK_NEEDS)} or later (this kernel runs {ipykernel.__version__}): it cannot hear a form's clicks while the cell awaits", kind="bad_input")
        return False
    return bool(ask) or bool(session.cell_request().get("content", {}).get("allow_stdin", False))


def map_magic(
    session: Session, namespace: Mapping[str, Any], tool: str, over: str, column: str | None, concurrency: int, retries: int, keep_errors: bool, expand: bool, answers: Answers | None
) -> Any:
    """``%mcp map SERVER.TOOL --over VAR ...`` after parsing: the rows are the variable ``over`` of the notebook.

    Returns what ``map`` returns (the magic binds it with ``-o VAR``); ``keep_errors`` is
    ``on_error="keep"``, else a failed row raises ``MapError`` once every row ran.
    """
    if over not in namespace:
        raise SessionError(f"no variable {over!r} in the notebook to map over", kind="bad_input")
    return map(
        tool, namespace[over], concurrency=concurrency, retries=retries, on_error="keep" if keep_errors else "raise",
        answers=answers, column=column, expand=expand, session=session,
    )  # fmt: skip


# ---------------------------------------------------------------------- running rows (the session's loop)
@dataclass(frozen=True)
class _Spec:
    """What every row's call shares; small and picklable (a Dask worker gets it in its task)."""

    tool: str
    concurrency: int
    retries: int
    answers: Answers = field(default_factory=Answers)


async def run_rows(
    session: Session, conn: Connection, spec: _Spec, arguments: Sequence[dict[str, Any]], step: Any = None, ui: FlowUI | None = None, stop: MapStop | None = None
) -> list[Outcome]:
    """Every row's call on this loop, at most ``spec.concurrency`` at once; outcomes in input order.

    A fixed set of worker tasks takes the next row index: 1,000 rows make ``concurrency`` tasks,
    not 1,000 tasks waiting on a semaphore. ``step(ok)`` is told of each row as it settles.
    ``ui`` answers the rows' questions (``map_questions.MapQuestions``); none: headless, presets only.
    ``stop`` ends the map early: rows not yet called fail ``cancelled``, as the ones in flight do.
    """
    outcomes: list[Outcome] = [None] * len(arguments)
    rows = iter(range(len(arguments)))
    stop = stop or MapStop()

    async def worker() -> None:
        for index in rows:  # one shared iterator: each index is taken once
            if stop.stopped:
                outcomes[index] = outcome = FlowError(f"{conn.name}.{spec.tool} was not called: the map was stopped", kind="cancelled", server=conn.name)
            else:
                outcomes[index] = outcome = await _call_with_retries(session, conn, spec, arguments[index], ui, stop)
            if step is not None:
                step(not isinstance(outcome, FlowError))

    await asyncio.gather(*(worker() for _ in range(min(spec.concurrency, len(arguments)) or 1)))
    return outcomes


class MapStop:
    """Stops a running map: no further row starts, and the rows in flight are cancelled (their servers are told).

    ``stop`` runs on the session's loop (elsewhere: ``session.runtime.call_soon(stop.stop)``, as
    a Stop button's click and an interrupted cell do).
    """

    def __init__(self) -> None:
        self.stopped = False
        self.flows: set[Flow] = set()  # the rows in flight (loop thread)

    def stop(self) -> None:
        self.stopped = True
        for flow in list(self.flows):
            flow.cancel()


async def _call_with_retries(session: Session, conn: Connection, spec: _Spec, arguments: dict[str, Any], ui: FlowUI | None, stop: MapStop) -> Outcome:
    pause = BACKOFF[0]
    attempt = 0
    while True:
        outcome = await _call_once(session, conn, spec, arguments, ui, stop)
        if not isinstance(outcome, FlowError) or attempt >= spec.retries or outcome.kind in NOT_RETRIED or stop.stopped:
            return outcome
        attempt += 1
        await asyncio.sleep(pause)
        pause = min(pause * 2, BACKOFF[1])


async def _call_once(session: Session, conn: Connection, spec: _Spec, arguments: dict[str, Any], ui: FlowUI | None, stop: MapStop) -> Outcome:
    """One headless flow; a tool error (``isError``) counts as a failure with the tool's own text."""
    answers = replace(spec.answers, fields=dict(spec.answers.fields))  # each flow its own copy, as ``call`` makes
    flow = session.make_flow("tools/call", conn, spec.tool, dict(arguments), answers=answers, save=False, ui=ui)
    flow.wants_progress = False  # the map's bar counts rows; a progress token per row would only cost
    stop.flows.add(flow)
    try:
        result = await flow.run_here()  # in this worker's task: no task and no hop per row
    except FlowError as exc:
        if exc.kind == "cancelled" and stop.stopped:
            return FlowError(f"{flow.label} did not finish: the map was stopped", kind="cancelled", server=conn.name)
        return exc
    finally:
        stop.flows.discard(flow)
    if getattr(result, "is_error", False):
        return FlowError(f"{flow.label} returned an error: {content_text(result.content)}", kind="tool_error", server=conn.name, data=result)
    return result


# ---------------------------------------------------------------------- the progress bar (kernel thread)
class MapProgress:
    """One ``IntProgress`` and a label for a whole map, drawn only on the kernel thread.

    Rows settle on the session's loop (``step``). A redraw crosses to the kernel with
    ``KernelLoop.to_kernel``, at most every ``REFRESH`` seconds. While ``map`` blocks the kernel
    thread waiting for its rows (a plain call in a cell), the kernel's loop cannot run that
    crossing until the cell ends, so the waiting thread draws itself: ``wait`` sleeps on an event
    that each due redraw sets (no polling) and redraws on the kernel thread, in the cell.
    """

    def __init__(self, total: int, label: str, below: Any = None) -> None:
        import ipywidgets as widgets
        from IPython.display import display

        self.total, self.label = total, label
        self.done = self.failed = 0
        self.note = ""
        self.started = time.monotonic()
        self.main = KernelLoop()
        self.bar = widgets.IntProgress(value=0, min=0, max=max(total, 1), description="", bar_style="info", layout=widgets.Layout(width="220px"))
        self.text = widgets.Label(value=self._line())
        self.box = widgets.HBox([self.bar, self.text])
        self.box.add_class("mcp-notebook-map")
        shown = self.box if below is None else widgets.VBox([self.box, below])
        self._lock = threading.Lock()
        self._scheduled = False
        self._last = 0.0
        self._wake = threading.Event()
        self._waiting = False  # the kernel thread is inside ``wait``: it draws, the kernel loop cannot
        display(shown)

    @classmethod
    def in_kernel(cls, total: int, label: str, below: Any = None) -> MapProgress | None:
        """A bar shown in the running cell, or ``None`` outside a kernel (scripts, plain IPython): nothing to draw on."""
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - IPython is a dependency
            return None
        shell = get_ipython()
        if shell is None or getattr(shell, "kernel", None) is None or threading.current_thread() is not threading.main_thread():
            return None
        return cls(total, label, below)

    def _line(self) -> str:
        failed = f", {self.failed} failed" if self.failed else ""
        note = f" · {self.note}" if self.note else ""
        return f"{self.label}: {self.done} of {self.total}{failed} ({time.monotonic() - self.started:.1f} s){note}"

    def set_note(self, note: str) -> None:
        """A word after the count (kernel thread): ``map_async`` says when the rows wait for an answer."""
        self.note = note
        self.draw()

    # ------------------------------------------------------------------ any thread
    def step(self, ok: bool, count: int = 1, failed: int | None = None) -> None:
        """``count`` rows settled (``failed`` of them failed; by default all or none, by ``ok``); redraw when due."""
        with self._lock:
            self.done += count
            self.failed += (0 if ok else count) if failed is None else failed
            if self._scheduled:
                return
            self._scheduled = True
            wait = max(0.0, self._last + REFRESH - time.monotonic())
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None and wait > 0:
            loop.call_later(wait, self._due)
        else:
            self._due()

    def _due(self) -> None:
        with self._lock:
            self._scheduled = False
            self._last = time.monotonic()
            waiting = self._waiting
        if waiting:
            self._wake.set()
        else:
            self.main.to_kernel(self.draw)

    # ------------------------------------------------------------------ kernel thread
    def draw(self) -> None:
        with self._lock:
            done, failed, line = self.done, self.failed, self._line()
        self.bar.value = done
        self.text.value = line
        if done >= self.total:
            self.bar.bar_style = "danger" if failed else "success"

    def wait(self, future: concurrent.futures.Future[Any]) -> Any:
        """``future.result()``, redrawing the bar on this (the kernel's) thread while it waits."""
        future.add_done_callback(lambda _f: self._wake.set())
        with self._lock:
            self._waiting = True
        try:
            while True:
                self._wake.clear()  # cleared before looking: a set after this wakes the wait below
                if future.done():
                    break
                self.draw()
                self._wake.wait()
        finally:
            with self._lock:
                self._waiting = False
            self.draw()
        return future.result()


# ---------------------------------------------------------------------- rows in, results out
def _presets(answers: Mapping[str, Any] | Answers | None, accept_defaults: bool) -> Answers:
    if isinstance(answers, Answers):
        return replace(answers, accept_defaults=answers.accept_defaults or accept_defaults)
    return Answers(fields=dict(answers or {}), accept_defaults=accept_defaults)


def _from(rows: Any, package: str) -> bool:
    module = type(rows).__module__
    return module == package or module.startswith(package + ".")


def _is_pandas(rows: Any) -> bool:
    return _from(rows, "pandas") and hasattr(rows, "to_dict") and hasattr(rows, "columns")


def _is_series(rows: Any) -> bool:
    return _from(rows, "pandas") and type(rows).__name__ == "Series"


def _is_dask(rows: Any) -> bool:
    return _from(rows, "dask") and hasattr(rows, "to_delayed")


def _single_argument(schema: Mapping[str, Any]) -> str:
    """The argument a one-argument tool takes (its one property, else its one required property)."""
    properties = list((schema.get("properties") or {}).keys())
    required = [str(n) for n in schema.get("required") or []]
    if len(properties) == 1:
        return str(properties[0])
    if len(required) == 1:
        return required[0]
    raise SessionError(
        f"plain values (or column=) need a tool with one argument; this one takes {', '.join(builtins.map(str, properties)) or 'none'}: give rows as dicts or a DataFrame",
        kind="bad_input",
    )  # fmt: skip


def _arguments(rows: Any, schema: Mapping[str, Any], columns: Mapping[str, str] | None, column: str | None) -> tuple[list[dict[str, Any]], Any]:
    """Each row's arguments, and the DataFrame they came from (``None`` for other inputs)."""
    rename = dict(columns or {})
    if _is_pandas(rows):
        frame = rows
        if column is not None:
            if column not in frame.columns:
                raise SessionError(f"the DataFrame has no column {column!r}", kind="bad_input")
            name = rename.get(column) or _single_argument(schema)
            return [{name: _plain(v)} for v in frame[column].tolist()], frame
        records = frame.rename(columns=rename).to_dict(orient="records")
        return [{str(k): _plain(v) for k, v in record.items()} for record in records], frame
    if _is_series(rows):
        name = _single_argument(schema)
        return [{name: _plain(v)} for v in rows.tolist()], None
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise SessionError(f"rows must be a list of argument dicts, a DataFrame or an iterable of values, not {type(rows).__name__}", kind="bad_input")
    arguments: list[dict[str, Any]] = []
    single: str | None = None
    for row in rows:
        if isinstance(row, Mapping) and column is None:
            arguments.append({rename.get(str(k), str(k)): v for k, v in row.items()})
            continue
        single = single or _single_argument(schema)
        value = row[column] if column is not None and isinstance(row, Mapping) else row
        arguments.append({rename.get(column or "", single): value})
    return arguments, None


def _plain(value: Any) -> Any:
    """A DataFrame cell as JSON-ready Python: numpy scalars become ints and floats, NaN stays a float."""
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        return item()
    return value


def _finish(
    label: str, conn: Connection, schema: Mapping[str, Any], arguments: list[dict[str, Any]], outcomes: list[Outcome], frame: Any, on_error: OnError, expand: bool, asked: bool
) -> Any:
    """The failure table, the error or the results (a list, or the DataFrame plus its result columns).

    ``asked``: the rows' questions could be answered in a form; if not, and rows failed for want
    of an answer, the table says how to give one.
    """
    failures = [(i, arguments[i], o) for i, o in enumerate(outcomes) if isinstance(o, FlowError)]
    if failures:
        table = failure_table(failures, schema, len(outcomes), label)
        unanswered = sorted({str(e.missing_field) for _, _, e in failures if e.kind == "unanswered" and e.missing_field})
        if unanswered and not asked:
            fields = one_line(", ".join(unanswered), ARGS_CHARS)  # the server's field names: bounded
            table.notes.append(
                f"{label} asked for {fields} and no preset answered: give answers={{...}} (%mcp map --answer FIELD=VALUE) for every row, "
                "or run `await mcp_notebook.map_async(...)` in a notebook to answer in a form, once for all rows"
            )  # fmt: skip
        if on_error == "raise":
            shown = [(i, masked(a, secret_arguments(a, schema)), e) for i, a, e in failures]
            text = table._repr_mimebundle_()["text/plain"]
            raise MapError(f"{text}\n(on_error='keep' returns the other results with each error in its row's place)", failures=shown, results=outcomes, table=table, server=conn.name)
        _show(table)
    if frame is None:
        return outcomes
    return result_frame(frame, outcomes, expand)


def failure_table(failures: list[tuple[int, dict[str, Any], FlowError]], schema: Mapping[str, Any], total: int, label: str) -> Table:
    """Row index, arguments (secret ones masked), error: one line per failed row, the first ``SHOWN_FAILURES`` of them.

    Compact on purpose: 900 failed rows of one cause would bury the cell; the rest are counted
    in a note (``MapError.failures`` and the kept results have them all).
    """
    rows = [[i, row_text(a, schema, ARGS_CHARS), one_line(_error_text(e, label), ERROR_CHARS)] for i, a, e in failures[:SHOWN_FAILURES]]
    notes = [f"... and {len(failures) - SHOWN_FAILURES} more failed rows"] if len(failures) > SHOWN_FAILURES else []
    return Table(["row", "arguments", "error"], rows, title=f"{len(failures)} of {total} calls of {label} failed", notes=notes, wrap=True)


def _error_text(error: FlowError, label: str) -> str:
    """The error without the ``SERVER.TOOL`` every row of the table shares (named in its title)."""
    text = str(error)
    for prefix in (f"{label} returned an error: ", f"{label} failed: ", f"{label} "):
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


def row_text(arguments: Mapping[str, Any], schema: Mapping[str, Any], width: int) -> str:
    """A row's arguments as one line, ``name='value', ...``, secret ones masked, cut to ``width``."""
    return one_line(", ".join(f"{k}={v!r}" for k, v in masked(arguments, secret_arguments(arguments, schema)).items()), width)


def _show(table: Table) -> None:
    """The failure table in the cell (or IPython's output); a script without IPython gets the outcomes only."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython is a dependency
        return
    if get_ipython() is not None:
        display(table)


def result_frame(frame: Any, outcomes: list[Outcome], expand: bool) -> Any:
    """The input DataFrame plus ``result`` (each result's value, ``result_value``, or its ``FlowError``) or, expanded, its structured content's keys."""
    pd = _pandas()
    if not expand:
        out = frame.copy()
        out["result"] = [o if isinstance(o, FlowError) else result_value(o) for o in outcomes]
        return out
    records = [{} if isinstance(o, FlowError) else _structured(o) for o in outcomes]
    expanded = pd.DataFrame.from_records(records, index=frame.index)
    if any(isinstance(o, FlowError) for o in outcomes):
        expanded["error"] = [o if isinstance(o, FlowError) else None for o in outcomes]
    expanded = expanded.rename(columns={c: f"{c}_result" for c in expanded.columns if c in frame.columns})  # never overwrite an input column
    return pd.concat([frame, expanded], axis=1)


def _pandas() -> Any:
    """pandas, imported only for a DataFrame's results (an optional dependency, without type stubs here)."""
    import importlib

    return importlib.import_module("pandas")


def result_value(result: Any) -> Any:
    """A result as one value for a DataFrame cell: a value, not the JSON text of one.

    The structured content (a dict; a ``{"result": X}`` alone, the SDK's wrapping of a tool that
    returns a plain value, is ``X``, as ``expand=True`` makes it a column named ``result``), else
    the text of a single text block; a text (or a wrapped string) that holds a JSON object or
    array is that object or array. Other texts stay text, also one that reads as a number: only
    the tool's structured output says it is one.
    """
    content = getattr(result, "structured_content", None)
    blocks = list(getattr(result, "content", []) or [])
    if isinstance(content, Mapping):
        value = content["result"] if list(content) == ["result"] else dict(content)
        return _json_value(value) if isinstance(value, str) else value
    if len(blocks) == 1 and getattr(blocks[0], "type", None) == "text":
        return _json_value(str(blocks[0].text))
    return content_text(blocks)


def _json_value(text: str) -> Any:
    """The object or array ``text`` holds as JSON, else ``text`` itself."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass
    return text


def _structured(result: Any) -> dict[str, Any]:
    """A result's structured content as one row; a tool without any gives its text as ``result``."""
    content = getattr(result, "structured_content", None)
    if isinstance(content, Mapping):
        return dict(content)
    return {"result": content_text(result.content)}


# ---------------------------------------------------------------------- past one kernel: Dask
@dataclass(frozen=True)
class _Remote:
    """How a Dask worker reaches the server: the URL, the protocol and the *name* of the token variable (never its value)."""

    name: str  # the kernel's connection name, so errors from a worker read as they do here
    url: str
    bearer_env: str | None
    protocol: str
    spec: _Spec


PLUGIN_NAME = "mcp-notebook-connections"


def _map_dask(
    session: Session, conn: Connection, spec: _Spec, rows: Any, schema: Mapping[str, Any], columns: Mapping[str, str] | None, column: str | None, bearer_env: str | None
) -> tuple[list[Outcome], list[dict[str, Any]], Any]:
    """Partitions as Dask tasks on the workers; outcomes, arguments and (for a DataFrame) the gathered input, in order."""
    import dask
    from distributed import as_completed, get_client

    target = conn.target
    if target.kind != "http":
        raise SessionError(f"{conn.name} is a {target.kind} server: Dask workers can reach only an HTTP URL (connect to the server's URL)", kind="bad_input")
    if target.headers or target.served_token is not None:
        raise SessionError(
            f"{conn.name} sends header values or a served token that stay in this kernel; give Dask workers their token with bearer_env='VAR' (read from each worker's environment)",
            kind="bad_input",
        )  # fmt: skip
    try:
        client = get_client()
    except ValueError:
        raise SessionError("no Dask client: start one first (distributed.Client(...)) to map a Dask collection", kind="bad_input") from None
    remote = _Remote(name=conn.name, url=target.url, bearer_env=bearer_env or target.bearer_env, protocol=str(conn.protocol), spec=spec)
    from .dask import Connections

    client.register_plugin(Connections(), name=PLUGIN_NAME)
    is_frame = hasattr(rows, "columns")
    parts = rows.to_delayed()
    run = dask.delayed(_run_partition, pure=False)
    futures = client.compute([run(part, remote, _schema_part(schema), dict(columns or {}), column, is_frame) for part in parts])
    order = {f.key: i for i, f in enumerate(futures)}
    progress = MapProgress.in_kernel(0, f"{conn.name}.{spec.tool} on Dask")
    done: dict[int, tuple[list[dict[str, Any]], list[Outcome], Any]] = {}
    for future in as_completed(futures):
        try:
            arguments, outcomes, part = future.result()
        except Exception as exc:  # noqa: BLE001 - a worker died or the partition could not be built: no row count to blame
            client.cancel(futures)
            text, _, _ = describe_exception(exc)
            raise FlowError(f"{conn.name}.{spec.tool} on Dask: partition {order[future.key]} failed as a whole ({text}); no results kept", server=conn.name) from None
        done[order[future.key]] = (arguments, outcomes, part)
        if progress is not None:
            progress.total += len(arguments)  # rows per partition are known once it ran
            progress.bar.max = max(progress.total, 1)
            progress.step(True, count=len(arguments), failed=sum(isinstance(o, FlowError) for o in outcomes))
            progress.draw()  # the kernel thread is waiting here: draw now
    all_args: list[dict[str, Any]] = []
    all_outcomes: list[Outcome] = []
    for i in range(len(futures)):
        a, o, _ = done[i]
        all_args.extend(a)
        all_outcomes.extend(o)
    frame = None
    if is_frame:
        pd = _pandas()
        frames = [done[i][2] for i in range(len(futures))]
        frame = pd.concat(frames) if frames else pd.DataFrame()
    if progress is not None:
        progress.total = len(all_outcomes)
        progress.draw()
    return all_outcomes, all_args, frame


def _schema_part(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The part of the tool's schema a worker needs to build arguments (its properties and required list)."""
    return {"properties": dict(schema.get("properties") or {}), "required": list(schema.get("required") or [])}


def _run_partition(part: Any, remote: _Remote, schema: dict[str, Any], columns: dict[str, str], column: str | None, is_frame: bool) -> tuple[list[dict[str, Any]], list[Outcome], Any]:
    """On a Dask worker: one partition's rows through this process's own connection; (arguments, outcomes, the partition)."""
    arguments, _ = _arguments(part, schema, columns, column)
    try:
        session, conn = _worker_connection(remote)
    except FlowError as exc:  # the server refused or was unreachable from this worker: every row of the partition says so
        return arguments, [_portable(exc)] * len(arguments), part if is_frame else None
    outcomes = session.runtime.run(run_rows(session, conn, remote.spec, arguments))
    return arguments, [_portable(o) for o in outcomes], part if is_frame else None


def _worker_connection(remote: _Remote) -> tuple[Any, Connection]:
    """This worker's session and connection for ``remote`` (through the connections plugin registered by the map)."""
    from distributed import get_worker

    plugin: Any = get_worker().plugins[PLUGIN_NAME]
    found: tuple[Any, Connection] = plugin.get(remote)
    return found


def _portable(outcome: Outcome) -> Outcome:
    """An outcome that pickles back to the kernel: a ``FlowError`` without its live details (a connection)."""
    if isinstance(outcome, FlowError):
        return FlowError(str(outcome), code=outcome.code, kind=outcome.kind, server=outcome.server, missing_field=outcome.missing_field, reason=outcome.reason)
    return outcome
