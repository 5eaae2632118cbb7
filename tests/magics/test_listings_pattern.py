"""``%mcp tools SERVER PATTERN`` keeps the tools whose name the glob matches (``magics/listings.py``).

Two real in-process servers, listed through the shell's ``%mcp`` as a person types it: a pattern
after a server filters that server's tools; a pattern alone (not a connection's name, holding a
glob character) filters every server's; a pattern that matches nothing says so. Descriptions are
whole in the rows (the table folds them), with an App note after the first line.
"""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.mcpserver import MCPServer

from ..conftest import session_of


def _server(name: str, tools: list[str]) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(name)
    for tool in tools:

        def fn(x: int = 0) -> int:
            return x

        server.tool(name=tool, description=f"The {tool} tool.\nIt takes x and gives x back.")(fn)
    return server


@pytest.fixture(autouse=True)
def alpha_and_beta(undo_each_test: InteractiveShell) -> None:
    """Two servers connected in the shared shell for each test (disconnected after it)."""
    session = session_of(undo_each_test)
    session.connect("alpha", _server("alpha", ["get_user", "get_order", "put_user"]))
    session.connect("beta", _server("beta", ["get_stock", "delete_stock"]))


def names(table: Any) -> list[tuple[str, str]]:
    return [(row[0], row[1]) for row in table.rows]


def test_a_pattern_after_the_server_filters_its_tools(ip: InteractiveShell) -> None:
    table = ip.run_line_magic("mcp", "tools alpha get_*")
    assert names(table) == [("alpha", "get_user"), ("alpha", "get_order")]
    assert names(ip.run_line_magic("mcp", "tools alpha *USER")) == [("alpha", "get_user"), ("alpha", "put_user")]


def test_a_pattern_alone_filters_every_servers_tools(ip: InteractiveShell) -> None:
    table = ip.run_line_magic("mcp", "tools '*stock'")
    assert names(table) == [("beta", "get_stock"), ("beta", "delete_stock")]
    assert names(ip.run_line_magic("mcp", "tools get_[so]*")) == [("alpha", "get_order"), ("beta", "get_stock")]


def test_a_pattern_that_matches_nothing_says_so(ip: InteractiveShell) -> None:
    table = ip.run_line_magic("mcp", "tools alpha zz*")
    assert table.rows == []
    assert table._repr_mimebundle_()["text/plain"] == "No tools matching 'zz*'."


def test_rows_hold_the_whole_description(ip: InteractiveShell) -> None:
    table = ip.run_line_magic("mcp", "tools beta get_stock")
    assert table.rows[0][3] == "The get_stock tool.\nIt takes x and gives x back."
    bundle = table._repr_mimebundle_()
    assert (
        '<summary title="The get_stock tool.\nIt takes x and gives x back.">The get_stock tool.</summary>'
        in bundle["text/html"]
    )
    lines = bundle["text/plain"].splitlines()
    assert len(lines) == 2 and lines[1].split() == [
        "beta",
        "get_stock",
        "The",
        "get_stock",
        "tool.",
        "…",
        "x:",
        "integer",
    ]
