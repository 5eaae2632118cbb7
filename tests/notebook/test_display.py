"""Issue 21 item 4: results read as results.

A real in-process server (the SDK's ``MCPServer``, so its results have the shapes servers really
send: structured content with its JSON as text, a list as one text block per item, a plain value
wrapped as ``{"result": X}``), real flows on a real ``Session``, and the report a cell shows
(``FlowReport``), read with an HTML parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from mcp_notebook.forms.model import Answers
from mcp_notebook.notebook.flow_report import FlowReport, shown_state
from mcp_notebook.notebook.structured_view import OPEN_DEPTH
from mcp_notebook.session.session import Session

from ..security.test_render import Tags, assert_inert

shelf = MCPServer("shelf")
RECORDS = [
    {"name": "<b>pear</b>", "kilos": 2, "organic": True},
    {"name": "plum", "origin": {"country": "FR"}, "kilos": 0.5},
]
README = """# Shelf notes

Fruit *in season*, with a [price list](https://example.org/prices "prices") and `code`.

| fruit | kilos |
|---|---|
| pear | 2 |
"""


@shelf.tool()
def records() -> list[dict[str, Any]]:
    """A list of records: the SDK sends one text block per record and ``{"result": [...]}``."""
    return RECORDS


@shelf.tool()
def price() -> dict[str, float]:
    """An object: its JSON as text, and the same object as structured content."""
    return {"price": 0.5}


@shelf.tool()
def nested() -> dict[str, Any]:
    return {"top": {"middle": {"bottom": {"leaf": 1}}}, "flat": [1, 2, 3]}


@shelf.tool()
def count() -> int:
    """A plain value: the text ``7`` and ``{"result": 7}``."""
    return 7


@shelf.tool()
def broken() -> str:
    raise ToolError("the shelf is <b>empty</b>")


@shelf.resource("shelf://readme", mime_type="text/markdown")
def readme() -> str:
    return README


@shelf.resource("shelf://plain", mime_type="text/plain")
def plain() -> str:
    return "# not a heading: plain text"


@pytest.fixture(scope="module")
def hub() -> Iterator[Session]:
    h = Session()
    h.connect("shelf", shelf)
    yield h
    h.close()


def report(hub: Session, method: str, name: str) -> tuple[Any, dict[str, str]]:
    flow = hub.start(method, hub.registry.get("shelf"), name, {}, answers=Answers(), save=False)
    flow.result(timeout=30)
    return flow, FlowReport(flow)._repr_mimebundle_()


def body(html: str) -> str:
    """The report's HTML without its ``<style>`` blocks."""
    return re.sub(r"<style>.*?</style>", "", html, flags=re.S)


def test_an_array_of_objects_is_a_table_shown_once(hub: Session) -> None:
    flow, bundle = report(hub, "tools/call", "records")
    html = body(bundle["text/html"])
    tags = assert_inert(html)
    assert len(tags.named("table")) == 1 and tags.named("pre") == []  # the per-record text blocks are not shown again
    head = re.search(r'<table class="records"><tr>(.*?)</tr>', html)
    assert head is not None and re.findall(r"<th>(.*?)</th>", head.group(1)) == ["name", "kilos", "organic", "origin"]
    rows = re.findall(r"<tr>(<td>.*?)</tr>", html)
    assert rows == [
        "<td>&lt;b&gt;pear&lt;/b&gt;</td><td>2</td><td>true</td><td></td>",
        "<td>plum</td><td>0.5</td><td></td><td><code>{&quot;country&quot;: &quot;FR&quot;}</code></td>",
    ]
    assert "<b>pear</b>" not in html  # the server's markup stays text
    assert (
        bundle["text/plain"]
        == '{\n  "name": "<b>pear</b>",\n  "kilos": 2,\n  "organic": true\n}\n{\n  "name": "plum",\n  "origin": {\n    "country": "FR"\n  },\n  "kilos": 0.5\n}'
    )
    assert flow.value.structured_content == {"result": RECORDS}


def test_text_that_is_the_json_of_the_structured_content_is_shown_once(hub: Session) -> None:
    _, bundle = report(hub, "tools/call", "price")
    html = body(bundle["text/html"])
    assert Tags(html).named("pre") == []
    assert html.count("0.5") == 1 and "<b>price</b>: <code>0.5</code>" in html
    assert bundle["text/plain"] == '{\n  "price": 0.5\n}'  # the plain text is the tool's own text


def test_a_wrapped_plain_value_is_its_text(hub: Session) -> None:
    _, bundle = report(hub, "tools/call", "count")
    html = body(bundle["text/html"])
    assert "<pre>7</pre>" in html and "structured content" not in html and html.count(">7<") == 1
    assert bundle["text/plain"] == "7"


def test_objects_fold_by_depth(hub: Session) -> None:
    _, bundle = report(hub, "tools/call", "nested")
    html = body(bundle["text/html"])
    folds = re.findall(r"<details( open)?><summary><b>(\w+)</b> <span class=\"note\">(.*?)</span>", html)
    assert folds == [(" open", "top", "{1 key}"), ("", "middle", "{1 key}"), ("", "bottom", "{1 key}")]
    assert OPEN_DEPTH == 2  # the first level under the root is open, deeper levels start folded
    assert "<b>flat</b>: <code>[1, 2, 3]</code>" in html  # a short list of plain values stays on one line
    assert "<b>leaf</b>: <code>1</code>" in html


def test_an_is_error_result_is_an_error(hub: Session) -> None:
    flow, bundle = report(hub, "tools/call", "broken")
    assert (
        flow.state.value == "done" and flow.error is None and flow.value.is_error
    )  # the exchange ended: nothing to resume
    assert shown_state(flow) == "error"
    html = body(bundle["text/html"])
    assert '<span class="badge error">error</span>' in html and ">done<" not in html
    assert '<div class="err"><b>Tool error</b>' in html and "the shelf is &lt;b&gt;empty&lt;/b&gt;" in html
    assert bundle["text/plain"] == "Tool error: Error executing tool broken: the shelf is <b>empty</b>"


def test_a_markdown_resource_renders_as_markdown(hub: Session) -> None:
    _, bundle = report(hub, "resources/read", "shelf://readme")
    html = body(bundle["text/html"])
    tags = assert_inert(html)
    assert "<h1>Shelf notes</h1>" in html and "<em>in season</em>" in html and "<code>code</code>" in html
    assert [a["href"] for a in tags.named("a")] == ["https://example.org/prices"]
    (link,) = tags.named("a")
    assert (
        link["rel"] == "noopener noreferrer nofollow"
        and link["target"] == "_blank"
        and link["title"] == "https://example.org/prices"
    )
    assert "<td>pear</td>" in html  # a GFM table
    assert bundle["text/plain"] == README  # the plain twin is the markdown as sent


def test_other_text_resources_stay_preformatted(hub: Session) -> None:
    _, bundle = report(hub, "resources/read", "shelf://plain")
    html = body(bundle["text/html"])
    assert "<pre># not a heading: plain text</pre>" in html and "<h1>" not in html


def _notebook_imports() -> dict[str, set[str]]:
    """Each module of ``mcp_notebook.notebook`` -> the sibling modules it imports, function-local and type-only ones included."""
    import ast
    from pathlib import Path

    import mcp_notebook.notebook as package

    graph: dict[str, set[str]] = {}
    for path in Path(package.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        graph[path.stem] = {
            node.module.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        }
    return graph


def test_the_rendering_modules_import_each_other_in_one_direction() -> None:
    """No import cycle among the notebook modules, not even one hidden in a function (display <-> app_widget was one)."""
    graph = _notebook_imports()
    assert graph["app_widget"] <= {"apps"} and "display" not in graph["app_widget"]
    cycles = []
    for start in graph:
        stack = [(start, [start])]
        while stack:
            module, path = stack.pop()
            for nxt in graph.get(module, ()):
                if nxt == start:
                    cycles.append(path)
                elif nxt not in path:
                    stack.append((nxt, [*path, nxt]))
    assert cycles == []
