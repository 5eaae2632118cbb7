"""Hostile results against the readable views of issue 21 item 4: tables, folded trees, markdown.

A real low-level server sends what each test asks for (structured content of any shape, a
``text/markdown`` resource of any text); the report a cell shows is parsed the way a browser
tokenizes it. What must hold: nothing the server wrote becomes markup or a live link, and every
view stays within its bounds (rows, columns, depth, characters, time) however large the value.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.server import Server
from mcp.types import CallToolResult, ListToolsResult, ReadResourceResult, TextContent, TextResourceContents, Tool

from mcp_notebook.core.limits import Limits
from mcp_notebook.forms.model import Answers
from mcp_notebook.notebook.display import (
    CELL_CHARS,
    MAX_DEPTH,
    TABLE_COLUMNS,
    TABLE_ROWS,
    FlowReport,
    ResultView,
    StructuredView,
)
from mcp_notebook.notebook.safe_markdown import render_markdown
from mcp_notebook.session.session import Session, SessionSettings

from .test_render import SCRIPT, Tags, assert_inert

ONERROR = '<img src=x onerror="window.__pwned=1">'
# what a server's markdown may turn into: nothing that runs, loads or navigates by itself
MARKDOWN_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "code", "pre", "a", "ul", "ol", "li", "blockquote", "hr", "br", "del", "s",
                 "table", "thead", "tbody", "tr", "th", "td"}  # fmt: skip


# ---------------------------------------------------------------------- a server that sends what a test builds
VALUES: dict[str, Any] = {}  # name -> structured content, set by a test before it calls the tool of that name
MARKDOWN: dict[str, str] = {}  # uri -> markdown text
TEXTS: dict[str, str] = {}  # name -> the text block sent beside the structured content (default: its JSON)


async def _list_tools(ctx: Any, params: Any) -> ListToolsResult:
    return ListToolsResult(tools=[Tool(name=name, input_schema={"type": "object"}) for name in VALUES])


async def _call_tool(ctx: Any, params: Any) -> CallToolResult:
    value = VALUES[params.name]
    return CallToolResult(
        content=[TextContent(type="text", text=TEXTS.get(params.name, json.dumps(value)))], structured_content=value
    )


async def _read_resource(ctx: Any, params: Any) -> ReadResourceResult:
    uri = str(params.uri)
    return ReadResourceResult(contents=[TextResourceContents(uri=uri, mime_type="text/markdown", text=MARKDOWN[uri])])


SERVER = Server("values", on_list_tools=_list_tools, on_call_tool=_call_tool, on_read_resource=_read_resource)


@pytest.fixture(scope="module")
def hub() -> Iterator[Session]:
    h = Session()
    h.connect("values", SERVER)
    yield h
    h.close()


def report(hub: Session, name: str, value: Any) -> dict[str, str]:
    VALUES[name] = value
    flow = hub.start("tools/call", hub.registry.get("values"), name, {}, answers=Answers(), save=False)
    flow.result(timeout=60)
    assert flow.value.structured_content == value  # the whole value stays on the flow
    return FlowReport(flow)._repr_mimebundle_()


def read(hub: Session, uri: str, text: str) -> dict[str, str]:
    MARKDOWN[uri] = text
    flow = hub.start("resources/read", hub.registry.get("values"), uri, {}, answers=Answers(), save=False)
    flow.result(timeout=60)
    return FlowReport(flow)._repr_mimebundle_()


def body(html: str) -> str:
    return re.sub(r"<style>.*?</style>", "", html, flags=re.S)


def text_of(html: str) -> str:
    """What a person reads: the document's text, entities decoded."""

    class Text(Tags):
        def __init__(self, document: str) -> None:
            self.parts: list[str] = []
            super().__init__(document)

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    return "".join(Text(html).parts)


# ---------------------------------------------------------------------- a text hidden as a "repeat"
@pytest.mark.parametrize(
    ("text", "structured"),
    [
        ('{"action": "delete /home", "action": "list", "ok": true}', {"action": "list", "ok": True}),
        ('{"ok": true}', {"ok": 1}),
        ('{"n": 1.0}', {"n": 1}),
    ],
    ids=["repeated-key", "true-is-not-1", "float-is-not-int"],
)
def test_a_text_that_says_something_else_is_never_hidden_as_a_repeat(
    hub: Session, text: str, structured: dict[str, Any]
) -> None:
    """The text a model reads and the structured content a person sees must not differ unseen."""
    TEXTS["spoof"] = text
    try:
        bundle = report(hub, "spoof", structured)
    finally:
        del TEXTS["spoof"]
    shown = text_of(body(bundle["text/html"]))
    assert text in shown and bundle["text/plain"].startswith(text)


# ---------------------------------------------------------------------- tables
def test_markup_in_table_keys_and_values_stays_text(hub: Session) -> None:
    rows = [{SCRIPT: ONERROR, "name": SCRIPT, "nested": {ONERROR: [SCRIPT]}, '"><b>k': '"><b>v'} for _ in range(3)]
    bundle = report(hub, "table", {"rows": rows})
    html = body(bundle["text/html"])
    tags = assert_inert(html)
    assert len(tags.named("table")) == 1 and tags.named("img") == []
    assert [
        t
        for t, _ in tags.tags
        if t not in {"div", "span", "b", "details", "summary", "table", "tr", "th", "td", "code"}
    ] == []
    head = [text_of(cell) for cell in re.findall(r"<th>(.*?)</th>", html)]
    assert head == [SCRIPT, "name", "nested", '"><b>k']  # the keys, as text
    cells = [text_of(cell) for cell in re.findall(r"<td>(.*?)</td>", html)]
    assert cells[:2] == [ONERROR, SCRIPT] and cells[3] == '"><b>v' and len(cells) == 3 * 4
    shown = text_of(html)
    assert '{"<img src=x onerror=\\"window.__pwned=1\\">": ["<script>' in shown  # a nested value: compact JSON, as text


def test_a_huge_array_of_objects_is_bounded(hub: Session) -> None:
    rows = [{"i": i, "name": f"row {i}", "payload": "<b>x</b>" * 20} for i in range(20_000)]
    started = time.process_time()  # CPU seconds: another process's load does not count
    bundle = report(hub, "huge", {"rows": rows})
    html = body(bundle["text/html"])
    assert time.process_time() - started < 30
    assert len(re.findall(r"<tr><td>", html)) == TABLE_ROWS
    assert f"[{TABLE_ROWS} of 20,000 rows shown;" in text_of(html)
    assert len(bundle["text/html"]) < 2 * Limits().max_result_chars + 10_000
    assert_inert(html)


def test_many_columns_and_long_cells_are_bounded() -> None:
    wide = [{f"<k{i}>": "v" * 10_000 for i in range(500)}]
    html = StructuredView(100_000).html(wide)
    assert len(re.findall(r"<th>", html)) == TABLE_COLUMNS
    assert f"the first {TABLE_COLUMNS} columns shown" in text_of(html)
    assert "&lt;k0&gt;" in html and "<k0>" not in html
    longest = max(len(cell) for cell in re.findall(r"<td>(.*?)</td>", html))
    assert longest <= CELL_CHARS  # each cell cut, with "…"
    assert len(html) < 20_000


def test_a_budget_bounds_a_tree_of_many_keys() -> None:
    value = {f"<key {i}>": {"v": i, "s": SCRIPT} for i in range(100_000)}
    started = time.process_time()  # CPU seconds: another process's load does not count
    html = StructuredView(20_000).html(value)
    assert time.process_time() - started < 10
    assert len(html) < 20 * 20_000  # markup around what the budget allowed, escaped
    assert re.search(r"\[[\d,]+ more items not shown;", text_of(html))
    assert_inert(html)
    small = ResultView(
        CallToolResult(content=[], structured_content=value), Limits(max_result_chars=2_000)
    )._repr_mimebundle_()
    assert len(small["text/html"]) < 40_000 and "more characters not shown" in small["text/plain"]


# ---------------------------------------------------------------------- depth
def test_deep_nesting_from_a_server_is_folded_then_cut(hub: Session) -> None:
    value: Any = {"leaf": SCRIPT}
    for level in range(200):
        value = {f"level{level}": value}
    bundle = report(hub, "deep", value)
    html = body(bundle["text/html"])
    assert html.count("<details") == 1 + MAX_DEPTH  # the outer fold, then one per level shown
    assert html.count("<details open>") == 1  # only the first level under the root starts open
    assert_inert(html)
    deepest = f'<b>level{200 - MAX_DEPTH}</b> <span class="note">{{1 key}}</span></summary><code>{{&quot;level{199 - MAX_DEPTH}&quot;: '
    assert deepest in html  # below MAX_DEPTH: one line of JSON, cut


def test_nesting_too_deep_for_json_is_a_note_not_an_exception() -> None:
    value: Any = []
    for _ in range(100_000):
        value = [value]
    result = CallToolResult(content=[], structured_content={"deep": value})
    bundle = ResultView(result)._repr_mimebundle_()  # never RecursionError
    assert "too deeply nested to show" in bundle["text/plain"]
    html = StructuredView(10_000).html({"deep": value})
    assert "too deeply nested to show" in text_of(html)


# ---------------------------------------------------------------------- markdown
HOSTILE_MARKDOWN = f"""# Title {SCRIPT}

<script>window.__pwned=1</script>

<div onclick="window.__pwned=1">raw block</div>

inline {ONERROR} and <a href="javascript:window.__pwned=1">raw link</a>

[js](javascript:window.__pwned=1) [JS](JaVaScRiPt:window.__pwned=1) [ent](&#106;avascript:window.__pwned=1)
[sp]( javascript:window.__pwned=1) [vb](vbscript:msgbox) [data](data:text/html;base64,PHNjcmlwdD4=) [file](file:///etc/passwd)
[rel](/api/contents?x=1) [proto](//evil.example/x) [ctl](java&#x09;script:alert(1))
<javascript:window.__pwned=1> <https://ok.example/auto>

[ref][evil] and [good][ok]

[evil]: javascript:window.__pwned=1

[ok]: https://ok.example/ref "t\\"itle"

![pixel](https://tracker.example/p.png?who=you) ![js](javascript:x)

[quote](https://ok.example/" onmouseover="window.__pwned=1) [q2](https://ok.example/a"onmouseover=x)

```js" onload="window.__pwned=1
{SCRIPT}
```

| {SCRIPT} | b |
|---|---|
| {ONERROR} | [x](javascript:1) |
"""


def test_hostile_markdown_is_inert(hub: Session) -> None:
    bundle = read(hub, "notes://hostile", HOSTILE_MARKDOWN)
    html = body(bundle["text/html"])
    tags = assert_inert(html)
    md = re.search(r'<div class="md">(.*)</div>', html, flags=re.S)
    assert md is not None
    inside = Tags(md.group(1))
    assert {tag for tag, _ in inside.tags} <= MARKDOWN_TAGS
    assert tags.named("img") == [] and tags.named("script") == []
    hrefs = [a["href"] for a in inside.named("a")]
    assert hrefs == [
        "https://ok.example/auto",
        "https://ok.example/ref",
        "https://tracker.example/p.png?who=you",
        "https://ok.example/a%22onmouseover=x",
    ]
    assert all(a["rel"] == "noopener noreferrer nofollow" for a in inside.named("a"))
    assert [a for a in inside.named("a") if set(a) - {"href", "title", "target", "rel"}] == []
    shown = text_of(md.group(1))
    assert (
        "<script>window.__pwned=1</script>" in shown and '<div onclick="window.__pwned=1">raw block</div>' in shown
    )  # raw HTML reads as text
    assert (
        "[js](javascript:window.__pwned=1)" in shown and "[rel](/api/contents?x=1)" in shown
    )  # refused links stay markdown text
    assert "[image: pixel]" in shown  # an image is a link to it, never loaded
    assert bundle["text/plain"] == HOSTILE_MARKDOWN


def test_markdown_that_grows_is_shown_as_escaped_text() -> None:
    long_url = "https://x.example/" + "a" * 2_000
    text = f"[r]: {long_url}\n\n" + "[r] " * 20_000
    html = render_markdown(text)
    assert html.startswith("<pre>") and len(html) < 2 * len(text)  # 40 MB of repeated links refused
    assert "<a " not in html


@pytest.mark.parametrize("form", ["![x]", "[x]"], ids=["images", "links"])
def test_one_long_reference_used_many_times_is_never_rendered(form: str) -> None:
    """About 100 KB of source (within the default budget) that would render to gigabytes: refused from the parse."""
    import tracemalloc

    text = "[x]: http://" + "a" * 60_000 + "\n\n" + form * 10_000
    tracemalloc.start()
    try:
        started = time.process_time()  # CPU seconds: another process's load does not count
        html = render_markdown(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert html.startswith("<pre>") and "<a " not in html
    assert peak < 200 * 1024 * 1024, (
        f"rendering took {peak // 2**20} MB"
    )  # it took 2.3 GB when measured after rendering
    assert time.process_time() - started < 5


@pytest.mark.parametrize(
    "text",
    [
        "[" * 50_000,
        "*a" * 50_000,
        "> " * 10_000 + "deep",
        "- " * 10_000 + "x",
        "<" * 100_000,
        "`" * 50_000,
        "_" * 50_000 + "x",
        "![" * 30_000,
        "\\" * 100_000,
    ],
    ids=["brackets", "emphasis", "quotes", "lists", "angles", "backticks", "underscores", "images", "backslashes"],
)
def test_pathological_markdown_renders_quickly_and_bounded(text: str) -> None:
    started = time.process_time()  # CPU seconds: another process's load does not count
    html = render_markdown(text)
    assert time.process_time() - started < 10
    assert len(html) <= 8 * len(text) + 4096
    assert_inert(html)


def test_a_markdown_resource_is_cut_to_its_budget() -> None:
    text = "# big\n\n" + ("para " + SCRIPT + "\n\n") * 10_000
    small = Session(SessionSettings(max_result_chars=2_000))
    small.connect("values", SERVER)
    try:
        MARKDOWN["notes://big"] = text
        flow = small.start(
            "resources/read", small.registry.get("values"), "notes://big", {}, answers=Answers(), save=False
        )
        flow.result(timeout=60)
        bundle = FlowReport(flow)._repr_mimebundle_()
    finally:
        small.close()
    assert len(bundle["text/html"]) < 20_000
    assert "more characters not shown" in bundle["text/plain"]
    assert_inert(bundle["text/html"])
    assert flow.value.contents[0].text == text  # the whole text stays on the flow
