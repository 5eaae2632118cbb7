"""Tab completion from a hostile server: what it names is typed into the cell, so it is bounded and checked.

A schema with 5,000 enum values, values with line breaks or control characters, and absurdly long
ones: the menu offers at most ``MAX_ITEMS`` printable values of at most ``MAX_TEXT`` characters, and
the rest never reaches the cell.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from mcp_notebook.completion import MAX_ITEMS, MAX_TEXT, McpCompleter, shown_items
from mcp_notebook.session import Session

pytestmark = pytest.mark.timeout(60)

VALUES = ["ok", "line\nbreak", "bell\x07", "x" * 5000, *(f"v{i:04d}" for i in range(5000))]


def hostile() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("evil")

    @server.tool()
    def pick(choice: Annotated[str, Field(json_schema_extra={"enum": VALUES})]) -> str:
        return choice

    return server


@pytest.fixture
def session() -> Iterator[Session]:
    s = Session()
    s.connect("evil", hostile())
    yield s
    s.close()


def test_a_flood_of_odd_values_is_bounded(session: Session) -> None:
    found = McpCompleter(session).complete("%mcp call evil.pick choice=")
    assert found is not None and len(found.items) > MAX_ITEMS  # everything the schema says, before the check
    items = shown_items(found.items)
    texts = [text for text, _ in items]
    assert len(items) == MAX_ITEMS and texts[0] == "ok" and texts[1] == "v0000"
    assert all(len(t) <= MAX_TEXT and t.isprintable() for t in texts)
    assert not any("\n" in t or "\x07" in t for t in texts)
