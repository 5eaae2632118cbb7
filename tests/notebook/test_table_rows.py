"""A listing iterates as its rows' records, so ``pandas.DataFrame(x)`` reads it (issue 37, item 1)."""

from __future__ import annotations

import pandas as pd

from mcp_notebook.notebook.table import Table


def test_a_listing_is_its_records_and_keeps_columns_and_rows() -> None:
    listing = Table(["server", "tool", "parameters"], [["demo", "add", "a: integer"], ["demo", "echo", ""]])
    assert list(listing) == [
        {"server": "demo", "tool": "add", "parameters": "a: integer"},
        {"server": "demo", "tool": "echo", "parameters": ""},
    ]
    df = pd.DataFrame(listing)
    assert list(df.columns) == listing.columns and df.values.tolist() == listing.rows
    assert listing.columns == ["server", "tool", "parameters"] and len(listing.rows) == 2


def test_an_empty_listing_is_an_empty_frame() -> None:
    assert pd.DataFrame(Table(["server"], [], empty="No servers.")).empty
