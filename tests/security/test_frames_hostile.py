"""A hostile server's structured content against ``--frame``, ``mcp_notebook.frame`` and the bound result (issue 37).

What a cell shows of a frame or a bound result is the server's text: in a real kernel, the frame
pandas shows and the result shown again later (its ``text/html``) carry script, an ``onerror``
image and a terminal escape as text only, and the short repr spells the escape out. Odd shapes are
bounded before pandas sees them: records with a key each (a frame of rows x keys cells), a
million records, keys that are not text, values nested deep.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcp_notebook.mapping.tabular import FRAME_COLUMNS, NotTabular, frame, records_of

from ..support.kernel_harness import Kernel
from .test_render import SCRIPT, assert_inert

ESCAPE = "\x1b[2J\x1b]52;c;cHduZWQ=\x07"  # clear the screen, write the clipboard
SERVER = f"""
import json
from mcp.server import Server
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool

SCRIPT, ESCAPE = {SCRIPT!r}, {ESCAPE!r}
deep = "bottom"
for level in range(60):
    deep = {{"d": deep}}
VALUES = {{
    "rows": {{"items": [{{SCRIPT: SCRIPT + ESCAPE, "deep": deep}}, {{"plain": "x"}}], "total": 2}},
    "wide": {{"result": [{{f"k{{i}}": i}} for i in range(5_000)]}},
}}

async def _list(ctx, params):
    return ListToolsResult(tools=[Tool(name=n, input_schema={{"type": "object"}}) for n in VALUES])

async def _call(ctx, params):
    value = VALUES[params.name]
    return CallToolResult(content=[TextContent(type="text", text=SCRIPT + ESCAPE)], structured_content=value)

hostile = Server("hostile", on_list_tools=_list, on_call_tool=_call)
"""


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return f"%load_ext mcp_notebook\n{SERVER}\n%mcp connect h hostile"


def _data(kernel: Kernel, cell: str) -> list[dict[str, Any]]:
    return [m["content"]["data"] for m in kernel.for_cell(cell) if m["msg_type"] in ("display_data", "execute_result")]


def _printed(kernel: Kernel, cell: str) -> str:
    return "".join(m["content"]["text"] for m in kernel.for_cell(cell) if m["msg_type"] == "stream")


def test_a_frame_of_hostile_records_shows_their_text_only(kernel: Kernel) -> None:
    cell = kernel.execute("%mcp call h.rows --frame")
    (frame_html,) = [d["text/html"] for d in _data(kernel, cell) if "dataframe" in d.get("text/html", "")]
    assert_inert(frame_html)
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in frame_html and "\x1b" not in frame_html
    probe = kernel.execute("df = _\nprint(list(df.columns) == [SCRIPT, 'deep', 'plain'], df.shape, df.deep[0] == deep)")
    assert _printed(kernel, probe) == "True (2, 3) True\n"  # the nested value is one cell, as it came


def test_a_bound_hostile_result_shows_inert_and_its_repr_spells_escapes_out(kernel: Kernel) -> None:
    cell = kernel.execute("r = %mcp call h.rows\nprint(repr(r))")
    printed = _printed(kernel, cell)
    assert "\x1b" not in printed and "\x07" not in printed
    assert printed.startswith("CallToolResult: ") and "\\u001b[2J" in printed
    shown = kernel.execute("r")
    (data,) = _data(kernel, shown)
    assert_inert(data["text/html"])
    assert "\x1b" not in data["text/plain"] and "\\u001b[2J" in data["text/plain"]


def test_records_with_a_key_each_are_refused_before_pandas(kernel: Kernel) -> None:
    cell = kernel.execute("%mcp call h.wide --frame")
    said = "".join(m["content"]["text"] for m in kernel.for_cell(cell) if m["msg_type"] == "stream")
    assert (
        f"UsageError: h.wide's result is too wide for a frame: the records name more than {FRAME_COLUMNS:,} different "
        f"keys (by record {FRAME_COLUMNS:,} of 5,000)" in said
    )


def test_a_million_records_are_bounded_work() -> None:
    many_keys = [{f"k{i}": i} for i in range(1_000_000)]
    started = time.monotonic()
    with pytest.raises(NotTabular, match="too wide for a frame"):
        records_of(many_keys)
    # refused at the first key past the bound, not after a million (with room for a loaded machine)
    assert time.monotonic() - started < 2.5
    rows = [{"a": i, "b": str(i)} for i in range(1_000_000)]
    started = time.monotonic()
    df = frame({"result": rows})
    assert df.shape == (1_000_000, 2) and time.monotonic() - started < 20


def test_keys_that_are_not_text_and_deep_values_stay_data() -> None:
    deep: Any = "bottom"
    for _ in range(5_000):  # deeper than the recursion limit: nothing here recurses into a value
        deep = {"d": deep}
    df = frame([{1: deep, (2, 3): "tuple key", "<b>": "x"}])
    assert list(df.columns) == ["1", "(2, 3)", "<b>"] and df.iloc[0, 0] is deep
