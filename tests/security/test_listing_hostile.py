"""A hostile server's descriptions and results in the new listing and long-result views (issue 37, items 2 and 3).

A real in-process server whose tool description is markup and 10 MB long, and whose tool returns
10 MB of markup: ``%mcp tools`` folds the description escaped (first line, hover text and expanded
text all escaped, and bounded: the page gets kilobytes, the rows keep all of it), and the call's
report shows the result escaped in a bounded box, its size said, the output within
``max_result_chars`` (a notebook file does not grow by the 10 MB).
"""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.mcpserver import MCPServer

from mcp_notebook.notebook.display import FlowReport

from ..conftest import session_of

pytestmark = pytest.mark.timeout(120)

MARKUP = '<img src=x onerror="alert(1)"><script>alert(2)</script>" title="x'
TEN_MB = 10_000_000


@pytest.fixture(autouse=True)
def evil(undo_each_test: InteractiveShell) -> None:
    """The flooding server, connected in the shared shell for each test (disconnected after it)."""
    server: MCPServer[Any] = MCPServer("evil")

    def flood() -> str:
        return (MARKUP + "\n") * (TEN_MB // (len(MARKUP) + 1))

    server.tool(name="flood", description=MARKUP + " first line\n" + MARKUP * (TEN_MB // len(MARKUP)))(flood)
    session_of(undo_each_test).connect("evil", server)


def test_a_10_mb_markup_description_is_folded_escaped_and_bounded(ip: InteractiveShell) -> None:
    table = ip.run_line_magic("mcp", "tools evil")
    assert len(table.rows[0][3]) > TEN_MB  # the data keeps it whole
    bundle = table._repr_mimebundle_()
    html = bundle["text/html"]
    assert "<img" not in html and "<script" not in html and '" title="x' not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert html.count("<details") == 1 and html.count("<summary") == 1
    assert len(html) < 20_000  # first line, 500 characters of hover, 2,000 expanded: not 10 MB
    assert len(bundle["text/plain"]) < 1_000


def test_a_10_mb_markup_result_sits_escaped_in_a_bounded_box(ip: InteractiveShell) -> None:
    flow = ip.run_line_magic("mcp", "call evil.flood")
    html = FlowReport(flow)._repr_mimebundle_()["text/html"]
    assert "<img" not in html and "<script" not in html
    assert '<pre class="box" style="max-height:30em;overflow:auto">&lt;img' in html
    lines = TEN_MB // (len(MARKUP) + 1)
    assert f"{lines + 1:,} lines · " in html and ", the first 100,000 shown (scroll inside the box)" in html
    assert len(html) < 200_000  # the shown part, escaped: the file does not grow by 10 MB
