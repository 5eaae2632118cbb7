"""The cells flows started in, named as a person sees them: ``[12] %mcp call prov.provision name=orders``.

A saved flow's record names its cell by the page's cell id, a UUID nobody can find in the notebook;
``%mcp flows`` names the cell by its execution count and first line instead. The kernel learns both
when a flow line runs in a cell (the execute request's ``cellId`` and code); a cell this kernel
never ran (a record from the notebook as it was saved, read by a new kernel) is said to be so. The
names are kept for the newest ``CELLS_KEPT`` cells.
"""

from __future__ import annotations

from collections import OrderedDict

from ..core.text import one_line

__all__ = ["CELLS_KEPT", "LINE_CHARS", "NOT_RUN_HERE", "CellNames"]

CELLS_KEPT = 1_000
LINE_CHARS = 40  # of the cell's first line
NOT_RUN_HERE = "(not run in this kernel)"


class CellNames:
    """Cell id -> ``[N] first line`` of the cells that ran flow lines in this kernel."""

    def __init__(self) -> None:
        self._names: OrderedDict[str, str] = OrderedDict()

    def note(self, cell_id: str, count: int | None, code: str) -> None:
        """The cell ``cell_id`` runs now, as execution ``count``, with ``code``."""
        first = next((line.strip() for line in code.splitlines() if line.strip()), "")
        number = f"[{count}]" if isinstance(count, int) else "[ ]"
        self._names[cell_id] = f"{number} {one_line(first, LINE_CHARS)}".rstrip()
        self._names.move_to_end(cell_id)
        while len(self._names) > CELLS_KEPT:
            self._names.popitem(last=False)

    def name(self, cell_id: str | None) -> str:
        """How ``%mcp flows`` names the cell: ``[N] first line``, ``NOT_RUN_HERE``, or nothing for no cell."""
        if not cell_id:
            return ""
        return self._names.get(cell_id, NOT_RUN_HERE)
