"""The row engine of a map: a fixed pool of worker tasks on the session's loop, each row's flow in its worker's task.

``run_rows`` starts ``concurrency`` workers that take rows in order, call the tool once per row
(``Flow.run_here``: no task or hop per row), retry what a retry can fix (``NOT_RETRIED`` are the kinds
it cannot: the same presets, protocol and server give the same answer) with a doubling back-off, and
stop early on ``MapStop`` (a Stop click, or the first failure with ``on_error="raise"``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..core.text import content_text
from ..errors import FlowError, Kind
from ..forms.model import Answers

if TYPE_CHECKING:
    from ..flows.flow import Flow
    from ..flows.ui import FlowUI
    from ..session.session import Session
    from ..wire.connection import Connection

__all__ = ["BACKOFF", "NOT_RETRIED", "CallSpec", "MapStop", "Outcome", "run_rows"]


Outcome = Any  # a CallToolResult, or the FlowError that took its place


BACKOFF = (0.1, 2.0)  # seconds before the first retry, and the most any retry waits (doubling in between)


# errors a retry cannot fix: the same presets, protocol and server give the same answer
NOT_RETRIED: frozenset[Kind] = frozenset(
    {"unanswered", "needs_legacy", "no_backchannel", "rounds_exceeded", "consent_needed", "bad_input"}
)


# ---------------------------------------------------------------------- running rows (the session's loop)
@dataclass(frozen=True)
class CallSpec:
    """What every row's call shares; small and picklable (a Dask worker gets it in its task)."""

    tool: str
    concurrency: int
    retries: int
    answers: Answers = field(default_factory=Answers)


async def run_rows(
    session: Session,
    conn: Connection,
    spec: CallSpec,
    arguments: Sequence[dict[str, Any]],
    step: Any = None,
    ui: FlowUI | None = None,
    stop: MapStop | None = None,
) -> list[Outcome]:
    """Every row's call on this loop, at most ``spec.concurrency`` at once; outcomes in input order.

    A fixed set of worker tasks takes the next row index: 1,000 rows make ``concurrency`` tasks,
    not 1,000 tasks waiting on a semaphore. ``step(ok)`` is told of each row as it settles.
    ``ui`` answers the rows' questions (``mapping.questions.MapQuestions``); none: headless, presets only.
    ``stop`` ends the map early: rows not yet called fail ``cancelled``, as the ones in flight do.
    """
    outcomes: list[Outcome] = [None] * len(arguments)
    rows = iter(range(len(arguments)))
    stop = stop or MapStop()

    async def worker() -> None:
        for index in rows:  # one shared iterator: each index is taken once
            if stop.stopped:
                outcomes[index] = outcome = FlowError(
                    f"{conn.name}.{spec.tool} was not called: the map was stopped", kind="cancelled", server=conn.name
                )
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


async def _call_with_retries(
    session: Session, conn: Connection, spec: CallSpec, arguments: dict[str, Any], ui: FlowUI | None, stop: MapStop
) -> Outcome:
    pause = BACKOFF[0]
    attempt = 0
    while True:
        outcome = await _call_once(session, conn, spec, arguments, ui, stop)
        if not isinstance(outcome, FlowError) or attempt >= spec.retries or outcome.kind in NOT_RETRIED or stop.stopped:
            return outcome
        attempt += 1
        await asyncio.sleep(pause)
        pause = min(pause * 2, BACKOFF[1])


async def _call_once(
    session: Session, conn: Connection, spec: CallSpec, arguments: dict[str, Any], ui: FlowUI | None, stop: MapStop
) -> Outcome:
    """One headless flow; a tool error (``isError``) counts as a failure with the tool's own text."""
    answers = replace(spec.answers, fields=dict(spec.answers.fields))  # each flow its own copy, as ``call`` makes
    flow = session.make_flow(
        "tools/call", conn, spec.tool, dict(arguments), answers=answers, save=False, ui=ui, progress=False
    )  # no progress asked: the map's bar counts rows; a progress token per row would only cost
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
        return FlowError(
            f"{flow.label} returned an error: {content_text(result.content)}",
            kind="tool_error",
            server=conn.name,
            data=result,
        )
    return result
