"""Long results in a real report: a cut text opens whole, bounded (issue 37, item 3); a huge value reprs fast (item 4).

A real in-process server (the SDK's ``MCPServer``) on a real ``Session``; what is checked is the
bundle the cell shows (``FlowReport``) and the bound result's repr and rendering.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer

from mcp_notebook.core.limits import Limits
from mcp_notebook.forms.model import Answers
from mcp_notebook.notebook.flow_report import FlowReport
from mcp_notebook.notebook.result_view import ResultView
from mcp_notebook.notebook.results import readable
from mcp_notebook.notebook.text_budget import WHOLE_TIMES
from mcp_notebook.session.session import Session, SessionSettings

from ..security.test_render import assert_inert

ROWS = 300_000
server = MCPServer("long")


def _lines(count: int) -> str:
    return "\n".join(f"line {i} <b>bold</b> <script>window.__pwned=1</script>" for i in range(count))


@server.tool()
def log(count: int) -> str:
    return _lines(count)


@server.tool()
def logs(count: int, times: int) -> list[str]:
    """``times`` texts of ``count`` lines each (the SDK sends one text block per item)."""
    return [_lines(count)] * times


@server.tool()
def rows() -> list[dict[str, Any]]:
    """A list of records: one text block per row, and ``{"result": [...]}``."""
    return [{"id": i, "name": f"row {i}"} for i in range(ROWS)]


@server.tool()
def table() -> dict[str, Any]:
    """An object holding the rows: one text block of its JSON, and the object."""
    return {"rows": [{"id": i, "name": f"row {i}"} for i in range(ROWS)]}


@pytest.fixture(scope="module")
def hub() -> Iterator[Session]:
    h = Session()
    h.connect("long", server)
    yield h
    h.close()


def _run(hub: Session, tool: str, **arguments: Any) -> Any:
    flow = hub.start("tools/call", hub.registry.get("long"), tool, arguments, answers=Answers(), save=False)
    flow.result(timeout=300)
    return flow


def _folds(page: str) -> list[tuple[str, str]]:
    return re.findall(r'<details class="whole"><summary>(.*?)</summary><pre>(.*?)</pre></details>', page, flags=re.S)


def test_a_cut_text_opens_whole_escaped_and_the_plain_text_stays_cut(hub: Session) -> None:
    flow = _run(hub, "log", count=4_000)
    full = flow.result().content[0].text
    assert len(full) > Limits().max_result_chars  # so the box shows its first 100,000 characters only
    bundle = FlowReport(flow)._repr_mimebundle_()
    page = bundle["text/html"]
    assert _folds(page) == [(f"show all 4,000 lines ({len(full):,} characters)", html.escape(full))]
    assert html.unescape(_folds(page)[0][1]) == full  # whole, and every character escaped
    assert "<b>bold" not in page and "<script>window" not in page
    assert_inert(page)
    plain = bundle["text/plain"]
    assert len(plain) < Limits().max_result_chars + 1_000 and full not in plain
    assert f"{len(full) - Limits().max_result_chars:,} more characters not shown" in plain


def test_the_whole_copies_stay_under_the_ceiling(hub: Session) -> None:
    ceiling = WHOLE_TIMES * Limits().max_result_chars
    each = _lines(4_000)
    times = ceiling // len(html.escape(each)) + 2  # more whole copies than the ceiling holds
    flow = _run(hub, "logs", count=4_000, times=times)
    page = FlowReport(flow)._repr_mimebundle_()["text/html"]
    folds = _folds(page)
    assert 1 <= len(folds) == ceiling // len(html.escape(each)) < times
    assert len(page) < ceiling + 5 * Limits().max_result_chars  # the copies, the shown parts (escaped) and the look

    too_long = _run(hub, "log", count=20_000)  # one text over the ceiling: no copy, as before
    assert len(too_long.result().content[0].text) > ceiling
    bundle = FlowReport(too_long)._repr_mimebundle_()
    assert _folds(bundle["text/html"]) == [] and len(bundle["text/html"]) < 2 * Limits().max_result_chars

    small = Session(SessionSettings(max_result_chars=1_000))  # the ceiling follows %config MCPMagics.max_result_chars
    small.connect("long", server)
    try:
        fits = _run(small, "log", count=60)  # 3,229 characters: cut at 1,000, whole under 5,000 escaped (4,669)
        assert len(_folds(FlowReport(fits)._repr_mimebundle_()["text/html"])) == 1
        over = _run(small, "log", count=80)  # 6,229 escaped
        assert _folds(FlowReport(over)._repr_mimebundle_()["text/html"]) == []
    finally:
        small.close()


SLOW = pytest.mark.slow  # 300,000 text blocks take about 20 s to send


@pytest.mark.parametrize("tool", [pytest.param("rows", marks=SLOW), "table"])
def test_a_300k_row_result_reprs_and_renders_fast_and_says_it_was_cut(hub: Session, tool: str) -> None:
    result = readable(_run(hub, tool).result())
    start = time.perf_counter()
    line = repr(result)
    took_repr = time.perf_counter() - start
    assert line.startswith('CallToolResult: { "') and len(line) < 200
    start = time.perf_counter()
    bundle = ResultView(result)._repr_mimebundle_()
    took_view = time.perf_counter() - start
    assert took_repr < 0.5 and took_view < 0.5, (took_repr, took_view)  # 2 to 12 s when the JSON was formatted whole
    assert "[output cut at 100,000 characters:" in bundle["text/plain"]
    assert "more characters" in bundle["text/plain"] and "flow.result()" in bundle["text/plain"]
    if tool == "rows":  # its text blocks only repeat the rows: shown once, as a table that counts them
        assert f"200 of {ROWS:,} rows shown" in bundle["text/html"]
    assert len(bundle["text/html"]) < 2 * Limits().max_result_chars
