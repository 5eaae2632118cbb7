"""``TaskBoard``: the live table of one cell's calls keeps every running call and the newest finished ones."""

from __future__ import annotations

import pytest

from mcp_notebook.notebook.task_board import ROWS_KEPT, TaskBoard
from mcp_notebook.session.session import Session

from ..conftest import get_shell


def test_a_board_keeps_running_calls_and_its_newest_finished_rows_and_counts_them_all() -> None:
    """A cell that starts calls in a loop: past ``ROWS_KEPT`` rows the oldest finished calls go, a running one stays."""
    get_shell()  # a shell to display the board in (outside a kernel its updates run at once)
    session = Session()
    try:
        conn = session.connect("demo", "mcp_notebook.demo:demo")
        board = TaskBoard()
        slow = session.start("tools/call", conn, "slow_count", {"n": 1, "delay": 10}, ui=board, save=False)
        board.add(slow)  # still running while every other call comes and goes
        done = []
        for _ in range(ROWS_KEPT + 3):
            flow = session.start("tools/call", conn, "echo", {"text": "hi"}, ui=board, save=False)
            flow.result(timeout=30)
            board.add(flow)
            done.append(flow)
        assert not slow.finished
        assert len(board.flows) == ROWS_KEPT and board.flows[0] is slow and board.flows[1:] == done[4:]
        assert board.let_go == {"done": 4}
        table = board.table()
        assert table.title == f"calls started in this cell: {ROWS_KEPT + 4} ({ROWS_KEPT + 3} done, 1 running)"
        assert len(table.rows) == ROWS_KEPT
        assert table.notes == [f"4 earlier finished calls not listed (the last {ROWS_KEPT} rows kept)"]
        assert table.notes[0] in table._repr_mimebundle_()["text/plain"]
        slow.cancel()
        with pytest.raises(Exception):  # noqa: B017 - cancelled: whichever way the flow says so
            slow.result(timeout=30)
    finally:
        session.close()
