"""Server text in the tables of many calls: the map's failure table and the TaskBoard of a cell's tasks.

A tool's error text and a task's status message are the server's: both tables show them escaped
and cut, through real calls of a hostile in-process server.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from mcp_notebook.mapping.map import map as map_rows
from mcp_notebook.notebook.task_board import MESSAGE_CHARS, TaskBoard
from mcp_notebook.session.session import Session

pytestmark = pytest.mark.timeout(60)

MARKUP = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


@pytest.fixture
def session_servers() -> dict[str, Any]:
    server: MCPServer[Any] = MCPServer("evil")

    @server.tool()
    def shout(n: int) -> str:
        raise ToolError(MARKUP + "x" * 10_000)

    return {"evil": server}


def test_the_map_failure_table_escapes_and_cuts_the_servers_errors(session: Session) -> None:
    results = map_rows("evil.shout", [{"n": i} for i in range(3)], on_error="keep", session=session)
    assert len(results) == 3 and all(MARKUP in str(r) for r in results)  # the whole error stays on the result
    from mcp_notebook.mapping.frames import failure_table

    table = failure_table([(i, {"n": i}, r) for i, r in enumerate(results)], {}, 3, "evil.shout")
    page = table._repr_mimebundle_()["text/html"]
    assert "<img" not in page and "<script>" not in page and "&lt;img" in page
    assert len(page) < 10_000  # each error cut, not 10,000 characters a row


def test_the_task_board_escapes_and_cuts_status_messages() -> None:
    from types import SimpleNamespace

    from mcp_notebook.flows.flow import FlowState
    from mcp_notebook.wire.tasks import TaskStatus

    board = TaskBoard.__new__(TaskBoard)  # the table alone: no cell to display in
    board.title, board.flows = "calls started in this cell", []
    from collections import Counter

    board.let_go = Counter()
    import threading

    board._lock = threading.Lock()
    task = TaskStatus(task_id="t", status="working", message=MARKUP + "y" * 5000)
    board.flows.append(
        SimpleNamespace(
            id="f1",
            label="evil.job",
            state=FlowState.RUNNING,
            task=task,
            finished=False,
            error=None,
            ended=None,
            started=0.0,
        )
    )  # type: ignore[arg-type]
    bundle = board.table()._repr_mimebundle_()
    assert "<img" not in bundle["text/html"] and "&lt;img" in bundle["text/html"]
    assert "y" * (MESSAGE_CHARS + 1) not in bundle["text/plain"]


def test_the_unanswered_note_under_the_map_table_escapes_and_cuts_the_servers_field_names() -> None:
    """Rows that failed for want of an answer name the server's fields under the table: escaped, and a thousand long names cut to one short line."""
    from mcp_notebook.errors import FlowError
    from mcp_notebook.mapping import map as mapping

    names = [f"{MARKUP}{i}" + "y" * 500 for i in range(1000)]
    failures = [FlowError("no answer", kind="unanswered", missing_field=n) for n in names]
    session = Session()
    try:
        server: MCPServer[Any] = MCPServer("evil")
        conn = session.connect("evil", server)
        with pytest.raises(mapping.MapError) as raised:
            mapping._finish(
                "evil.ask", conn, {}, [{"n": i} for i in range(1000)], list(failures), None, "raise", False, asked=False
            )
    finally:
        session.close()
    note = raised.value.table.notes[-1]
    assert note.startswith("evil.ask asked for <img") and len(note) < 500
    html = raised.value.table._repr_mimebundle_()["text/html"]
    assert "<img src=x" not in html and "&lt;img src=x" in html


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_a_servers_own_name_is_one_bounded_line_of_text(protocol: str) -> None:
    """The name a server gives itself (its handshake, or a pinned in-process server's own name) shows in the
    connect message and the %mcp servers table: one line, no control characters, at most 80 characters, escaped."""
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    from ..conftest import session_of

    name = "demo\n\x1b[31mred\r\x07" + MARKUP + "x" * 10_000
    shell = start_ipython() or get_ipython()  # the global test shell may already be running
    shell.run_line_magic("load_ext", "mcp_notebook")
    shell.user_ns["named_server"] = MCPServer(name)
    session: Any = session_of(shell)
    try:
        shell.run_line_magic("mcp", f"connect named named_server --protocol {protocol}")
        told = session.registry.get("named").server_name
        assert told is not None and len(told) <= 80 and told.isprintable() and told.startswith("demo [31mred <img")
        bundle = shell.run_line_magic("mcp", "servers")._repr_mimebundle_()
        assert "<script>" not in bundle["text/html"] and "<img" not in bundle["text/html"]
        assert "\x1b" not in bundle["text/plain"] and "\x1b" not in bundle["text/html"]
    finally:
        session.registry.disconnect("named")
