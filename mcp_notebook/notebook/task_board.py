"""``TaskBoard``: many calls of one cell in one compact, live table instead of a widget area each.

A notebook that starts 100 tasks from a loop (``mcp_notebook.call(..., task=True)``) should see one
table of their states, not 100 cells' worth of forms and progress bars. The board is the flows'
``FlowUI``: headless (questions are answered from the preset answers, as in any plain-API call),
and every state change redraws the table, at most every ``REFRESH`` seconds (a summary line plus
one row per call: id, call, state, task status, the server's status message, time). It is a plain
display (HTML plus a text twin) updated in place through its display id: it needs no widget state
and saves with the notebook as the final table. Server text is escaped and cut.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..core.text import one_line
from ..core.threads import KernelLoop
from ..flows.ui import HeadlessUI
from .flow_report import shown_state
from .table import Table

if TYPE_CHECKING:
    from ..flows.flow import Flow

__all__ = ["TaskBoard"]

REFRESH = 0.5  # seconds between redraws while calls change
MESSAGE_CHARS = 80
ROWS_KEPT = 200
"""Calls a board keeps as rows: every call still running, and the newest finished ones up to this many rows in all.

A cell that starts tasks in a loop all day would otherwise hold every finished flow (and its result) and redraw an
ever longer table at each change. The summary line still counts every call, finished rows let go included."""


class TaskBoard(HeadlessUI):
    """One live table for the calls of one cell (the ``FlowUI`` of each); made and shown on the kernel thread."""

    def __init__(self, title: str = "calls started in this cell", key: Any = None) -> None:
        from IPython.display import display

        self.title = title
        self.key = key  # the cell it belongs to (its execution count): a later cell makes its own board
        self.flows: list[Flow] = []  # running ones, and the newest finished ones (ROWS_KEPT rows)
        self.let_go: Counter[str] = Counter()  # the shown states of the finished calls no longer listed
        self.main = KernelLoop()
        self._lock = threading.Lock()
        self._scheduled = False
        self._last = 0.0
        self.handle = display(
            self.table()._repr_mimebundle_(), raw=True, display_id=True
        )  # a Table shows itself (listing.py): raw keeps the id

    def add(self, flow: Flow) -> None:
        with self._lock:
            self.flows.append(flow)
            over = len(self.flows) - ROWS_KEPT
            if over > 0:  # the oldest finished calls go; a running one stays, however many there are
                for old in [f for f in self.flows if f.finished][:over]:
                    self.flows.remove(old)
                    self.let_go[_state(old)] += 1
        self._redraw_soon()

    # ------------------------------------------------------------------ FlowUI (loop thread)
    def changed(self, flow: Flow) -> None:
        self._redraw_soon()

    def _redraw_soon(self) -> None:
        """Redraw now, or once ``REFRESH`` has passed since the last one (one pending redraw at most)."""
        with self._lock:
            if self._scheduled:
                return
            self._scheduled = True
            wait = max(0.0, self._last + REFRESH - time.monotonic())
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None and wait > 0:
            loop.call_later(wait, self._redraw)
        else:
            self._redraw()

    def _redraw(self) -> None:
        with self._lock:
            self._scheduled = False
            self._last = time.monotonic()
        self.main.call(lambda: self.handle.update(self.table()._repr_mimebundle_(), raw=True))

    # ------------------------------------------------------------------ the table
    def table(self) -> Table:
        with self._lock:
            flows = list(self.flows)
            let_go = Counter(self.let_go)
        states = Counter(_state(f) for f in flows) + let_go
        summary = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
        total = len(flows) + let_go.total()
        rows = [
            [f.id, f.label, shown_state(f), f.task.status if f.task is not None else "", one_line(f.task.message if f.task is not None else _error(f), MESSAGE_CHARS), f"{_elapsed(f):.1f} s"]
            for f in flows
        ]  # fmt: skip
        title = f"{self.title}: {total} ({summary})" if total else self.title
        notes = (
            [f"{let_go.total():,} earlier finished calls not listed (the last {ROWS_KEPT} rows kept)"] if let_go else []
        )
        return Table(
            ["flow", "call", "state", "task", "message", "time"],
            rows,
            title=title,
            empty=f"{self.title}: none yet",
            notes=notes,
        )


def _state(flow: Flow) -> str:
    """The task's status while it runs, then the flow's shown state (``error`` for a tool's ``isError`` result)."""
    return flow.task.status if flow.task is not None and not flow.finished else shown_state(flow)


def _error(flow: Flow) -> str | None:
    return str(flow.error) if flow.error is not None else None


def _elapsed(flow: Flow) -> float:
    return (flow.ended or time.perf_counter()) - flow.started


def board_ui(existing: Any, key: Any) -> TaskBoard:
    """The board of the running cell (``key``: its execution count), made and shown on first use."""
    if isinstance(existing, TaskBoard) and existing.key == key:
        return existing
    board = TaskBoard(key=key)
    return board
