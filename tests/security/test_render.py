"""Security finding 1: server-controlled values must never become markup in the notebook's HTML.

A tool result whose image ``data`` was ``AAAA" onerror="..." x="A`` used to be pasted into
``<img src="...">`` as is, so the browser ran the server's script. These tests send that exact
payload (and friends) from a real in-process MCP server through a real flow, render the result
the way a cell shows it (``FlowReport``), parse the HTML with ``html.parser`` and check every
tag and attribute: no ``on*`` handler, no ``<script>``, the image's ``src`` is exactly the
strict re-encoding of the decoded bytes, SVG is a download rather than an inline image, a bad
MIME type or bad base64 is a one-line note, and the rest of the result still renders.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest
from mcp.server import Server
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ListToolsResult,
    ResourceLink,
    TextContent,
    Tool,
)

from mcp_notebook.forms.model import Answers
from mcp_notebook.notebook.display import FlowReport, ResultView, Table, TraceView, badge, render_content
from mcp_notebook.session.session import Session

PAYLOAD = 'AAAA" onerror="window.__pwned=1" x="A'  # the finding's image data, verbatim but for the script
SCRIPT = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
PNG_B64 = base64.b64encode(PNG).decode()
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x80>\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00"
WAV_B64 = base64.b64encode(WAV).decode()
SVG_B64 = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=1"/>').decode()


# ---------------------------------------------------------------------- an HTML inspector
class Tags(HTMLParser):
    """Every start tag of a document with its attributes, as the browser's tokenizer sees them."""

    def __init__(self, document: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(document)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def assert_inert(document: str) -> Tags:
    """No event handler attribute, no script, no SVG, no javascript: URL anywhere."""
    tags = Tags(document)
    handlers = [(tag, name) for tag, attrs in tags.tags for name in attrs if name.lower().startswith("on")]
    assert handlers == []
    assert [tag for tag, _ in tags.tags if tag in ("script", "svg", "iframe", "object", "embed")] == []
    for _tag, attrs in tags.tags:
        for name in ("src", "href"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith("javascript:"), value
            assert not value.startswith("data:image/svg"), value
    return tags


# ---------------------------------------------------------------------- a server that returns what a test asks for
def _block(spec: dict[str, Any]) -> Any:
    kind = spec["kind"]
    if kind == "text":
        return TextContent(type="text", text=spec["text"])
    if kind == "image":
        return ImageContent(type="image", data=spec["data"], mime_type=spec["mime"])
    if kind == "audio":
        return AudioContent(type="audio", data=spec["data"], mime_type=spec["mime"])
    if kind == "blob":
        return EmbeddedResource(
            type="resource", resource=BlobResourceContents(uri=spec["uri"], blob=spec["data"], mime_type=spec["mime"])
        )
    return ResourceLink(
        type="resource_link",
        name=spec["name"],
        title=spec.get("title"),
        uri=spec["uri"],
        description=spec.get("description"),
    )


async def _list_tools(ctx: Any, params: Any) -> ListToolsResult:
    return ListToolsResult(tools=[Tool(name="content", input_schema={"type": "object"})])


async def _call_tool(ctx: Any, params: Any) -> CallToolResult:
    args = params.arguments or {}
    return CallToolResult(content=[_block(b) for b in args["blocks"]], structured_content=args.get("structured"))


CONTENT = Server("content", on_list_tools=_list_tools, on_call_tool=_call_tool)


@pytest.fixture(scope="module")
def hub() -> Iterator[Session]:
    h = Session()
    h.connect("content", CONTENT)
    yield h
    h.close()


def shown(hub: Session, *blocks: dict[str, Any], structured: Any = None) -> tuple[Any, dict[str, str]]:
    """Call the server for ``blocks``; the flow and what its cell shows (``FlowReport`` with the trace)."""
    args: dict[str, Any] = {"blocks": list(blocks)}
    if structured is not None:
        args["structured"] = structured
    flow = hub.start("tools/call", hub.registry.get("content"), "content", args, answers=Answers(), save=False)
    flow.result(timeout=30)
    return flow, FlowReport(flow, trace=True)._repr_mimebundle_()


# ---------------------------------------------------------------------- the finding
@pytest.mark.parametrize(
    ("block", "note"),
    [
        (
            {"kind": "image", "data": PAYLOAD, "mime": "image/png"},
            "[image: invalid base64 data from the server; not shown]",
        ),
        (
            {"kind": "audio", "data": PAYLOAD, "mime": "audio/wav"},
            "[audio: invalid base64 data from the server; not shown]",
        ),
        (
            {"kind": "blob", "data": PAYLOAD, "mime": "application/pdf", "uri": "demo://report.pdf"},
            "[resource: invalid base64 data from the server; not shown]",
        ),
    ],
    ids=["image", "audio", "blob"],
)
def test_finding_payload_is_a_note_never_an_attribute(hub: Session, block: dict[str, Any], note: str) -> None:
    flow, bundle = shown(hub, block, {"kind": "text", "text": "after the bad block"})
    sent = flow.result().content[0]
    assert (getattr(sent, "data", None) or sent.resource.blob) == PAYLOAD  # the SDK result keeps what the server sent
    tags = assert_inert(bundle["text/html"])
    assert tags.named("img") == [] and tags.named("audio") == [] and tags.named("a") == []
    result_only = FlowReport(flow)._repr_mimebundle_()["text/html"]  # (the trace shows the arguments, escaped)
    assert "onerror" not in result_only  # not even as text: a bad payload is not echoed
    assert note in bundle["text/html"] and note in bundle["text/plain"]
    assert "after the bad block" in bundle["text/plain"] and "<pre>after the bad block</pre>" in bundle["text/html"]


def test_valid_image_src_is_the_strict_reencoding(hub: Session) -> None:
    wrapped = "\n".join(
        PNG_B64[i : i + 16] for i in range(0, len(PNG_B64), 16)
    )  # line breaks between base64 characters
    _, bundle = shown(hub, {"kind": "image", "data": wrapped, "mime": "IMAGE/PNG"})
    tags = assert_inert(bundle["text/html"])
    (img,) = tags.named("img")
    assert img["src"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert bundle["text/plain"].splitlines()[0] == f"[image image/png, {len(PNG)} bytes]"


def test_valid_audio_plays_inline(hub: Session) -> None:
    _, bundle = shown(hub, {"kind": "audio", "data": WAV_B64, "mime": "audio/wav"})
    (audio,) = assert_inert(bundle["text/html"]).named("audio")
    assert audio["src"] == "data:audio/wav;base64," + WAV_B64 and "controls" in audio


def test_svg_image_is_a_download_not_an_img(hub: Session) -> None:
    _, bundle = shown(hub, {"kind": "image", "data": SVG_B64, "mime": "image/svg+xml"})
    tags = assert_inert(bundle["text/html"])
    assert tags.named("img") == []
    (link,) = tags.named("a")
    assert link["href"] == "data:application/octet-stream;base64," + SVG_B64
    assert link["download"] == "image"


@pytest.mark.parametrize("mime", ['image/png" onload="x', "image/png onload=x", "text/html", "image/", "<b>/png", ""])
def test_bad_mime_type_is_a_note(hub: Session, mime: str) -> None:
    _, bundle = shown(hub, {"kind": "image", "data": PNG_B64, "mime": mime}, {"kind": "text", "text": "still here"})
    tags = assert_inert(bundle["text/html"])
    assert tags.named("img") == []
    if mime == "text/html":  # a valid type, just not an image one: offered as a download of opaque bytes
        (link,) = tags.named("a")
        assert link["href"] == "data:application/octet-stream;base64," + PNG_B64
    else:
        assert "[image: invalid MIME type from the server; not shown]" in bundle["text/plain"]
        assert tags.named("a") == []
    assert "still here" in bundle["text/plain"]


def test_one_bad_and_one_good_block_render_the_good_one(hub: Session) -> None:
    flow, bundle = shown(
        hub,
        {"kind": "image", "data": PAYLOAD, "mime": "image/png"},
        {"kind": "image", "data": PNG_B64, "mime": "image/png"},
        structured={"answer": SCRIPT},
    )
    tags = assert_inert(bundle["text/html"])
    assert [img["src"] for img in tags.named("img")] == ["data:image/png;base64," + PNG_B64]
    assert "[image: invalid base64 data from the server; not shown]" in bundle["text/plain"]
    assert "structured content" in bundle["text/html"]
    assert (
        f"<b>answer</b>: <code>{html.escape(json.dumps(SCRIPT, ensure_ascii=False))}</code>" in bundle["text/html"]
    )  # the tree's leaf, escaped
    assert flow.result().structured_content == {"answer": SCRIPT}


def test_blob_download_name_is_sanitized(hub: Session) -> None:
    uri = "demo://files/%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E report.pdf"
    _, bundle = shown(hub, {"kind": "blob", "data": PNG_B64, "mime": "application/pdf", "uri": uri})
    (link,) = assert_inert(bundle["text/html"]).named("a")
    assert link["href"] == "data:application/octet-stream;base64," + PNG_B64
    name = link["download"] or ""
    assert name and set(name) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def test_every_other_server_string_is_escaped(hub: Session) -> None:
    """Text, links (title, URI, description), structured keys, the trace: all text, never markup."""
    flow, bundle = shown(
        hub,
        {"kind": "text", "text": SCRIPT},
        {
            "kind": "link",
            "name": SCRIPT,
            "title": SCRIPT,
            "uri": "https://example.com/?q=%22%3E%3Cscript%3E",
            "description": SCRIPT,
        },
        structured={SCRIPT: [SCRIPT, {"nested": SCRIPT}]},
    )
    tags = assert_inert(bundle["text/html"])
    assert {tag for tag, _ in tags.tags} <= {
        "style",
        "div",
        "span",
        "b",
        "pre",
        "details",
        "summary",
        "code",
        "table",
        "tr",
        "th",
        "td",
        "small",
        "i",
    }
    assert bundle["text/plain"].count(SCRIPT) >= 2  # plain text keeps the server's words as they are
    assert_inert(TraceView(flow)._repr_mimebundle_()["text/html"])


def test_render_content_never_raises() -> None:
    class Odd:
        type = '<img src=x onerror="window.__pwned=1">'

        def model_dump(self, **_: Any) -> Any:
            raise RuntimeError("boom")

    plain, rich = render_content(Odd())
    assert plain == "[content: a content block this client cannot show; not shown]"
    assert_inert(rich)
    deep: Any = "leaf"
    for _ in range(5000):
        deep = [deep]
    plain, rich = ResultView(
        CallToolResult(content=[TextContent(type="text", text="ok")], structured_content={"d": deep})
    ).parts()
    assert plain[0] == "ok" and "too deeply nested to show" in "".join(rich)


def test_tables_badges_and_reports_escape_their_cells() -> None:
    table = Table(["name", SCRIPT], [[SCRIPT, SCRIPT]], title=SCRIPT)._repr_mimebundle_()
    assert_inert(table["text/html"])
    assert table["text/html"].count("&lt;script&gt;") == 4
    assert_inert(badge('running" onmouseover="window.__pwned=1'))
