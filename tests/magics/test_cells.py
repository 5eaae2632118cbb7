"""``%mcp flows`` names a flow's cell by its number and first line, not by the page's UUID (issue 37, item 6)."""

from __future__ import annotations

from mcp_notebook.magics import cells
from mcp_notebook.magics.cells import NOT_RUN_HERE, CellNames


def test_a_cell_is_named_by_its_number_and_first_line() -> None:
    names = CellNames()
    names.note("c1", 12, "\n  \n%mcp call prov.provision name=orders\nprint(1)")
    names.note("c2", None, "")
    assert names.name("c1") == "[12] %mcp call prov.provision name=orders"
    assert names.name("c2") == "[ ]"
    assert names.name("3f2a9c1e-unknown") == NOT_RUN_HERE and names.name(None) == ""
    names.note("c1", 13, "%mcp call prov.provision name=orders and a line much longer than forty characters")
    assert names.name("c1").startswith("[13] %mcp call") and len(names.name("c1")) <= len("[13] ") + cells.LINE_CHARS


def test_only_the_newest_cells_are_kept(monkeypatch: object) -> None:
    names = CellNames()
    for i in range(cells.CELLS_KEPT + 5):
        names.note(f"c{i}", i, "x")
    assert names.name("c0") == NOT_RUN_HERE and names.name(f"c{cells.CELLS_KEPT + 4}") == f"[{cells.CELLS_KEPT + 4}] x"
    assert len(names._names) == cells.CELLS_KEPT
