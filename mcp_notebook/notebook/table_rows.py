"""A listing is data too: ``x = %mcp tools`` then ``pandas.DataFrame(x)``.

A listing (``notebook.display.Table``) keeps its ``columns`` and ``rows``; this mixin makes it
iterate as its rows' records (``{column: value}``), which is what pandas (and any code that loops over
records) reads: ``pandas.DataFrame(x)`` is a frame of the listing's columns, without this package
importing pandas. An empty listing iterates as nothing, so its frame has no columns;
``mcp_notebook.frame(x)`` keeps them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["TableRows"]


class TableRows:
    """Mixin for an object with ``columns`` and ``rows``: iterating it gives each row as a record."""

    columns: list[str]
    rows: list[list[Any]]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        columns = [str(c) for c in self.columns]
        for row in self.rows:
            yield dict(zip(columns, row, strict=False))
