"""``mcp_notebook.frame`` and ``--frame``'s reading of a result as records (issue 37, item 1)."""

from __future__ import annotations

import pandas as pd
import pytest
from mcp.types import CallToolResult, GetPromptResult, TextContent

from mcp_notebook.mapping import tabular
from mcp_notebook.mapping.tabular import NotTabular, frame, records_of
from mcp_notebook.notebook.display import Table

ROWS = [{"fruit": "apple", "kilos": 10.0}, {"fruit": "plum", "kilos": 0.0, "note": "back on Monday"}]


def result(structured: object = None, text: str = "") -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(result({"result": ROWS}), id="the SDK's wrapping of a list"),
        pytest.param(result({"items": ROWS, "total": 2, "page": {"next": None}}), id="an object holding one list"),
        pytest.param(result(None, text='[{"fruit": "apple", "kilos": 10.0}, {"fruit": "plum", "kilos": 0.0, "note": "back on Monday"}]'), id="a text of JSON"),
        pytest.param(ROWS, id="records"),
        pytest.param({"rows": ROWS}, id="an object"),
    ],
)  # fmt: skip
def test_tabular_values_become_a_frame_of_their_records(value: object) -> None:
    df = frame(value)
    assert list(df.columns) == ["fruit", "kilos", "note"]
    assert df.to_dict(orient="records")[1] == {"fruit": "plum", "kilos": 0.0, "note": "back on Monday"}
    assert df["note"].isna().tolist() == [True, False]


def test_an_empty_list_is_an_empty_frame() -> None:
    assert frame(result({"result": []})).shape == (0, 0)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (result({"result": 5}), "not a table: a number; a table is a list of records (objects)"),
        (result({"a": ROWS, "b": ROWS}), "not a table: an object with keys 'a', 'b'; --frame (and mcp_notebook.frame) "
         "need a list of records or an object holding exactly one, and this object holds 2 such lists"),
        (result({"total": 3}), "not a table: an object with keys 'total'; --frame (and mcp_notebook.frame) need a list "
         "of records or an object holding exactly one, and this object holds 0 such lists"),
        (result({"result": [{"a": 1}, "two", 3]}), "not a table: a list of 3 items whose item 1 is a string; every item must be an object"),
        (result(None, text="hello"), "not a table: a string; a table is a list of records (objects)"),
        (CallToolResult(content=[TextContent(type="text", text="boom")], is_error=True),
         "not a table: the tool answered with an error (isError), which has no rows"),
        (GetPromptResult(messages=[]), "not a table: a GetPromptResult (a prompt or a resource) has no rows; frame a tool's result"),
    ],
)  # fmt: skip
def test_anything_else_is_refused_naming_its_shape(value: object, said: str) -> None:
    with pytest.raises(NotTabular) as refused:
        frame(value)
    assert str(refused.value) == said


def test_keys_that_are_not_text_are_read_as_text_the_first_of_a_clash_kept() -> None:
    records, columns = records_of([{1: "a", "1": "b", None: 2}, {"x": 1}])
    assert columns == ["1", "None", "x"]
    assert records[0] == {"1": "a", "None": 2} and records[1] == {"x": 1}


def test_too_many_columns_or_cells_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tabular, "FRAME_COLUMNS", 3)
    with pytest.raises(
        NotTabular, match=r"^too wide for a frame: the records name more than 3 different keys \(by record 3 of 5\)"
    ):
        records_of([{f"k{i}": i} for i in range(5)])
    monkeypatch.setattr(tabular, "FRAME_CELLS", 10)
    with pytest.raises(NotTabular, match=r"^too large for a frame: 6 records x 2 columns is more than 10 cells"):
        records_of([{"a": i, "b": i} for i in range(6)])


def test_a_listing_keeps_its_columns_also_when_empty() -> None:
    listing = Table(["server", "tool"], [["demo", "add"], ["demo", "echo"]])
    assert frame(listing).to_dict(orient="list") == {"server": ["demo", "demo"], "tool": ["add", "echo"]}
    assert frame(listing).equals(pd.DataFrame(listing))
    empty = frame(Table(["server", "tool"], [], empty="No tools."))
    assert list(empty.columns) == ["server", "tool"] and empty.empty
