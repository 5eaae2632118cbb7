"""nbval over the tutorials: a waiting flow's record in a cell's output is compared by its text line only.

Headless runs keep a waiting flow's record in the output of its cell (``notebook/output_records.py``):
the record itself holds this run's sealed request state, signature and time, so nbval compares the
``text/plain`` line beside it (sanitized like every flow id) and skips the record, as it skips widget
model ids.
"""

from __future__ import annotations

from typing import Any

from mcp_notebook.flows.record import OUTPUT_MIME


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        parent = getattr(item, "parent", None)
        skip = getattr(parent, "skip_compare", None)
        if isinstance(skip, tuple) and OUTPUT_MIME not in skip:
            parent.skip_compare = (*skip, OUTPUT_MIME)
