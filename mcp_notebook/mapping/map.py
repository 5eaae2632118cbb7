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
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from ..core.redact import masked, secret_arguments
from ..core.text import one_line
from ..errors import FlowError, SessionError
from ..forms.model import Answers
from ..notebook.display import Table
from ..notebook.map_progress import MapProgress
from .frames import ARGS_CHARS, arguments_of, failure_table, is_dask, result_frame, show_table
from .rows import CallSpec, MapStop, Outcome, run_rows

if TYPE_CHECKING:
    from ..session.session import Session
    from ..wire.connection import Connection

__all__ = ["MapError", "MapStop", "map", "map_async", "map_magic"]

OnError = Literal["raise", "keep"]


class MapError(FlowError):
    """Some rows of a ``map`` failed (``on_error="raise"``); raised once, after every row ran.

    ``failures`` lists ``(row, arguments, error)`` (arguments with secrets masked), ``table`` is
    the same as a ``display.Table``, and ``results`` holds every row's outcome in input order (a
    result, or the ``FlowError`` that took its place) so the work done is not lost.
    """

    def __init__(
        self,
        message: str,
        *,
        failures: list[tuple[int, dict[str, Any], FlowError]],
        results: list[Outcome],
        table: Table,
        server: str | None = None,
    ) -> None:
        super().__init__(
            message, kind="map_failed", server=server, details={"failed": len(failures), "total": len(results)}
        )
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
    session, conn, schema, spec = _prepare(
        server_tool, on_error, concurrency, retries, answers, accept_defaults, session
    )
    if is_dask(rows):
        from .dask import map_dask  # distributed is optional: imported only for a Dask collection

        outcomes, arguments, frame = map_dask(session, conn, spec, rows, schema, columns, column, bearer_env)
    else:
        arguments, frame = arguments_of(rows, schema, columns, column)
        progress = MapProgress.in_kernel(len(arguments), f"{conn.name}.{spec.tool}")
        stop = MapStop()
        future = session.runtime.submit(
            run_rows(session, conn, spec, arguments, progress.step if progress else None, stop=stop)
        )
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
    answer for every remaining row that asks this" (see ``mapping.questions``). ``ask``: ``None``
    asks when a person is at the cell (a front end that allows input, as ``%mcp call`` decides),
    ``False`` never (presets only), ``True`` insists. A Dask collection runs as ``map`` runs it
    (its workers answer from the presets only).
    """
    session, conn, schema, spec = _prepare(
        server_tool, on_error, concurrency, retries, answers, accept_defaults, session
    )
    label = f"{conn.name}.{spec.tool}"
    if is_dask(rows):
        from .dask import map_dask  # distributed is optional: imported only for a Dask collection

        outcomes, arguments, frame = map_dask(session, conn, spec, rows, schema, columns, column, bearer_env)
        return _finish(label, conn, schema, arguments, outcomes, frame, on_error, expand, asked=False)
    arguments, frame = arguments_of(rows, schema, columns, column)
    stop = MapStop()
    questions = None
    if _can_ask(session, ask):
        from .questions import MapQuestions

        questions = MapQuestions(schema, label, stop=lambda: session.runtime.call_soon(stop.stop))
    progress = MapProgress.in_kernel(len(arguments), label, below=questions.widget if questions is not None else None)
    if questions is not None and progress is not None:
        questions.on_waiting = progress.set_note
    future = session.runtime.submit(
        run_rows(session, conn, spec, arguments, progress.step if progress else None, ui=questions, stop=stop)
    )
    try:
        outcomes = await asyncio.wrap_future(future)
    finally:
        if progress is not None:
            progress.draw()
        if questions is not None:
            questions.finished()
    return _finish(label, conn, schema, arguments, outcomes, frame, on_error, expand, asked=questions is not None)


def _prepare(
    server_tool: str,
    on_error: str,
    concurrency: int,
    retries: int,
    answers: Mapping[str, Any] | Answers | None,
    accept_defaults: bool,
    session: Session | None,
) -> tuple[Session, Connection, dict[str, Any], CallSpec]:
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
    return (
        session,
        conn,
        schema,
        CallSpec(tool=tool, concurrency=concurrency, retries=retries, answers=_presets(answers, accept_defaults)),
    )


ASK_NEEDS = (7, 4)  # the first ipykernel that handles comm messages (a form's clicks) while a cell awaits


def _can_ask(session: Session, ask: bool | None) -> bool:
    """Whether this map can show forms: in a kernel new enough, and (unless ``ask=True``) a person at the cell."""
    if ask is False:
        return False
    kernel = getattr(session.shell, "kernel", None)
    if kernel is None or threading.current_thread() is not threading.main_thread():
        if ask:
            raise SessionError(
                "ask=True needs a notebook kernel: a map outside one answers from its presets only", kind="bad_input"
            )
        return False
    import ipykernel

    version = tuple(int(p) for p in ipykernel.__version__.split(".")[:2] if p.isdigit())
    if version < ASK_NEEDS:
        if ask:
            raise SessionError(
                f"ask=True needs ipykernel {'.'.join(str(p) for p in ASK_NEEDS)} or later (this kernel runs {ipykernel.__version__}): it cannot hear a form's clicks while the cell awaits",
                kind="bad_input",
            )
        return False
    return bool(ask) or bool(session.cell_request().get("content", {}).get("allow_stdin", False))


def map_magic(
    session: Session,
    namespace: Mapping[str, Any],
    tool: str,
    over: str,
    column: str | None,
    concurrency: int,
    retries: int,
    keep_errors: bool,
    expand: bool,
    answers: Answers | None,
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


# ---------------------------------------------------------------------- rows in, results out
def _presets(answers: Mapping[str, Any] | Answers | None, accept_defaults: bool) -> Answers:
    if isinstance(answers, Answers):
        return replace(answers, accept_defaults=answers.accept_defaults or accept_defaults)
    return Answers(fields=dict(answers or {}), accept_defaults=accept_defaults)


def _finish(
    label: str,
    conn: Connection,
    schema: Mapping[str, Any],
    arguments: list[dict[str, Any]],
    outcomes: list[Outcome],
    frame: Any,
    on_error: OnError,
    expand: bool,
    asked: bool,
) -> Any:
    """The failure table, the error or the results (a list, or the DataFrame plus its result columns).

    ``asked``: the rows' questions could be answered in a form; if not, and rows failed for want
    of an answer, the table says how to give one.
    """
    failures = [(i, arguments[i], o) for i, o in enumerate(outcomes) if isinstance(o, FlowError)]
    if failures:
        table = failure_table(failures, schema, len(outcomes), label)
        unanswered = sorted(
            {str(e.missing_field) for _, _, e in failures if e.kind == "unanswered" and e.missing_field}
        )
        if unanswered and not asked:
            fields = one_line(", ".join(unanswered), ARGS_CHARS)  # the server's field names: bounded
            table.notes.append(
                f"{label} asked for {fields} and no preset answered: give answers={{...}} (%mcp map --answer FIELD=VALUE) for every row, "
                "or run `await mcp_notebook.map_async(...)` in a notebook to answer in a form, once for all rows"
            )  # fmt: skip
        if on_error == "raise":
            shown = [(i, masked(a, secret_arguments(a, schema)), e) for i, a, e in failures]
            text = table._repr_mimebundle_()["text/plain"]
            raise MapError(
                f"{text}\n(on_error='keep' returns the other results with each error in its row's place)",
                failures=shown,
                results=outcomes,
                table=table,
                server=conn.name,
            )
        show_table(table)
    if frame is None:
        return outcomes
    return result_frame(frame, outcomes, expand)
