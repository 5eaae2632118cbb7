"""Wire-level checks of the MCP Apps servers the suite uses: ``tests/support/app_servers.py`` and two official examples.

No mcp_notebook code: the raw SDK client (``mcp.Client``) advertises the Apps extension the way
a host does (``advertise("io.modelcontextprotocol/ui", {"mimeTypes": [...]})``) and reads what
the servers put on the wire: ``_meta.ui`` on tools, ``text/html;profile=mcp-app`` resources with
their ``_meta.ui``, and tool results. The SDK server runs in process, over stdio and over HTTP
(a subprocess); the npm examples ``server-basic-vanillajs`` and ``server-basic-preact`` run over
stdio on the Node 22 of ``.peers/npm`` (installed on first use). What the Apps' pages do in a
browser is for the browser tests; here the inlined view bundle is at least run as a module in
Node, so a page cannot ship a bundle that does not parse or does not expose ``App``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.extension import advertise

from tests.peers import servers
from tests.support import app_servers as apps

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

UI = apps.EXTENSION_ID
MIME = apps.APP_MIME_TYPE
Transport = Literal["inprocess", "stdio", "http"]
TRANSPORTS: tuple[Transport, ...] = ("inprocess", "stdio", "http")
NPM_EXAMPLES = {"vanillajs": servers.basic_vanillajs, "preact": servers.basic_preact}
"""Both serve the tool ``get-time`` and its App ``ui://get-time/mcp-app.html``; only vanillajs adds structuredContent."""
GET_TIME_URI = "ui://get-time/mcp-app.html"
EMPTY_CSP: dict[str, list[str]] = {
    "connectDomains": [],
    "resourceDomains": [],
    "frameDomains": [],
    "baseUriDomains": [],
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", autouse=True)
def npm_peers() -> None:
    """The npm peers (the ext-apps bundle the SDK server inlines, the examples, Node 22), installed on first use."""
    servers.ensure_installed([servers.NPM_STAMP])


@pytest.fixture(scope="module")
def http_url(npm_peers: None) -> Iterator[str]:
    with apps.running_app_server() as url:
        yield url


def apps_client(server: Any, **options: Any) -> Client:
    """A client that advertises MCP Apps support (the HTML MIME type), as a host does."""
    return Client(server, extensions=[advertise(UI, {"mimeTypes": [MIME]})], **options)


@asynccontextmanager
async def connected(transport: Transport, http_url: str, **options: Any) -> AsyncIterator[Client]:
    """A client of a fresh SDK Apps server (for HTTP: the module's server, reset first)."""
    server: Any
    if transport == "inprocess":
        server = apps.make_server()
    elif transport == "stdio":
        command = apps.stdio_command()
        server = StdioServerParameters(command=command[0], args=command[1:])
    else:
        httpx2.post(apps.reset_url(http_url), timeout=10).raise_for_status()
        server = http_url
    async with apps_client(server, **options) as client:
        yield client


def texts(result: types.CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, types.TextContent))


def ui_meta(tool: types.Tool) -> dict[str, Any]:
    meta = tool.meta or {}
    ui = meta.get("ui")
    assert isinstance(ui, dict), f"{tool.name} has no _meta.ui: {meta}"
    return ui


async def read_ui(client: Client, uri: str) -> types.TextResourceContents:
    result = await client.read_resource(uri)
    assert len(result.contents) == 1
    content = result.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert content.uri == uri
    assert content.mime_type == MIME
    return content


def report_over_http(url: str) -> dict[str, Any]:
    response = httpx2.get(apps.report_url(url), timeout=10)
    response.raise_for_status()
    data: dict[str, Any] = response.json()
    return data


# ------------------------------------------------------------------------------------------ the SDK Apps server
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_tools_carry_their_app_and_visibility(transport: Transport, http_url: str) -> None:
    async with connected(transport, http_url) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {
            "counter",
            "increment",
            "probe",
            "report",
            "leak",
            "last_report",
            apps.ONE_LINE_TOOL,
            apps.BROKEN_TOOL,
            apps.SILENT_TOOL,
        }
        for name, uri in (
            (apps.ONE_LINE_TOOL, apps.ONE_LINE_URI),
            (apps.BROKEN_TOOL, apps.BROKEN_URI),
            (apps.SILENT_TOOL, apps.SILENT_URI),
        ):
            assert ui_meta(tools[name]) == {"resourceUri": uri, "visibility": ["model", "app"]}
        assert ui_meta(tools["leak"]) == {"resourceUri": apps.LEAK_URI, "visibility": ["model", "app"]}
        assert ui_meta(tools["counter"]) == {"resourceUri": apps.COUNTER_URI, "visibility": ["model", "app"]}
        assert ui_meta(tools["increment"]) == {"resourceUri": apps.COUNTER_URI, "visibility": ["app"]}
        assert ui_meta(tools["probe"]) == {"resourceUri": apps.PROBE_URI, "visibility": ["model", "app"]}
        assert ui_meta(tools["report"]) == {"resourceUri": apps.PROBE_URI, "visibility": ["app"]}
        assert "ui" not in (tools["last_report"].meta or {})
        assert set(tools["report"].input_schema["properties"]) == {"outcomes", "details", "done"}
        assert tools["report"].input_schema["required"] == ["outcomes"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_ui_resources_are_app_html_with_a_closed_csp(transport: Transport, http_url: str) -> None:
    async with connected(transport, http_url) as client:
        listed = {str(resource.uri): resource for resource in (await client.list_resources()).resources}
        assert {apps.COUNTER_URI, apps.PROBE_URI} <= set(listed)
        assert listed[apps.COUNTER_URI].mime_type == MIME
        pages: dict[str, str] = {}
        for uri in (apps.COUNTER_URI, apps.PROBE_URI):
            content = await read_ui(client, uri)
            assert content.meta == {"ui": {"csp": EMPTY_CSP, "prefersBorder": True}}
            pages[uri] = content.text
        bundle = apps.view_bundle()
        for html in pages.values():
            assert html.startswith("<!doctype html>")
            assert html.count('<script type="module">') == 2
            assert bundle in html  # the ext-apps view bundle, inlined whole
            assert html.index(bundle) < html.index("const { App } = globalThis.__mcpExtApps;")
            assert (
                "<script src" not in html
                and "http://" not in html.replace(bundle, "")
                and "https://" not in html.replace(bundle, "")
            )
        assert 'id="count"' in pages[apps.COUNTER_URI] and 'id="inc"' in pages[apps.COUNTER_URI]
        assert 'name: "increment"' in pages[apps.COUNTER_URI]
        probe = pages[apps.PROBE_URI]
        assert 'id="outcomes"' in probe and 'name: "report"' in probe and '"other_server_tool"' in probe
        assert all(f'"{name}"' in probe for name in apps.PROBES if name != f"tools/call {apps.OTHER_SERVER_TOOL}")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_counter_and_increment(transport: Transport, http_url: str) -> None:
    async with connected(transport, http_url) as client:
        shown = await client.call_tool("counter", {})
        assert not shown.is_error
        assert texts(shown) == "count is 0" and shown.structured_content == {"count": 0}
        for expected in (1, 2, 3):
            result = await client.call_tool("increment", {})
            assert not result.is_error
            assert texts(result) == f"count is {expected}" and result.structured_content == {"count": expected}
        again = await client.call_tool("counter", {})
        assert texts(again) == "count is 3" and again.structured_content == {"count": 3}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_report_is_kept_and_read_back(transport: Transport, http_url: str) -> None:
    """What the probe App sends (``report``) comes back from ``last_report`` (and ``GET /test/report``)."""
    outcomes = {name: "blocked: SecurityError" for name in apps.PROBES}
    async with connected(transport, http_url) as client:
        empty = await client.call_tool("last_report", {})
        assert empty.structured_content == {"report": None, "reports": 0}
        assert json.loads(texts(empty)) == {"report": None, "reports": 0}
        first = await client.call_tool("report", {"outcomes": {**outcomes, "top.location=": "pending"}, "done": False})
        assert texts(first) == "report 1 stored (done: False)"
        await client.call_tool(
            "report", {"outcomes": outcomes, "details": {"parent.document": "Blocked a frame"}, "done": True}
        )
        expected = {
            "report": {"outcomes": outcomes, "details": {"parent.document": "Blocked a frame"}, "done": True},
            "reports": 2,
        }
        kept = await client.call_tool("last_report", {})
        assert kept.structured_content == expected and json.loads(texts(kept)) == expected
        if transport == "http":
            assert report_over_http(http_url) == expected
        started = await client.call_tool("probe", {})
        assert "last_report" in texts(started)
        assert (await client.call_tool("last_report", {})).structured_content == {"report": None, "reports": 2}
        if transport == "http":
            assert report_over_http(http_url) == {"report": None, "reports": 2}
            httpx2.post(apps.reset_url(http_url), timeout=10).raise_for_status()
            assert report_over_http(http_url) == {"report": None, "reports": 0}
            assert (await client.call_tool("counter", {})).structured_content == {"count": 0}


async def test_report_rejects_a_malformed_report() -> None:
    async with connected("inprocess", "") as client:
        result = await client.call_tool("report", {"outcomes": "everything is fine"})
        assert result.is_error
        assert (await client.call_tool("last_report", {})).structured_content == {"report": None, "reports": 0}


@pytest.mark.parametrize("transport", ("stdio", "http"))
async def test_the_extension_is_advertised_on_2026(transport: Transport, http_url: str) -> None:
    async with connected(transport, http_url) as client:
        assert client.protocol_version == "2026-07-28"
        extensions = client.server_capabilities.extensions or {}
        assert UI in extensions


@pytest.mark.parametrize("transport", ("stdio", "http"))
async def test_apps_over_the_2025_handshake(transport: Transport, http_url: str) -> None:
    async with connected(transport, http_url, mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert ui_meta(tools["increment"]) == {"resourceUri": apps.COUNTER_URI, "visibility": ["app"]}
        content = await read_ui(client, apps.COUNTER_URI)
        assert content.meta == {"ui": {"csp": EMPTY_CSP, "prefersBorder": True}}
        result = await client.call_tool("increment", {})
        assert result.structured_content == {"count": 1}


def test_inlined_bundle_runs_as_a_module_and_exposes_app() -> None:
    """The rewritten bundle (its ``export{...}`` turned into ``globalThis.__mcpExtApps``) runs in Node 22."""
    script = apps.view_bundle() + (
        # in a block, as the pages run it in a module of their own: apart from the bundle's minified names
        "{ const m = globalThis.__mcpExtApps;"
        " console.log(JSON.stringify({app: typeof m.App, transport: typeof m.PostMessageTransport, version: m.LATEST_PROTOCOL_VERSION, frozen: Object.isFrozen(m)})); }"
    )
    done = subprocess.run(
        [str(servers.NODE), "--input-type=module", "-"], input=script, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "app": "function",
        "transport": "function",
        "version": "2026-01-26",
        "frozen": True,
    }


def test_a_missing_bundle_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(apps.PeersMissing, match="make peers-deps"):
        apps.view_bundle(tmp_path / "app-with-deps.js")


# ------------------------------------------------------------------------------------------ the official npm examples
@pytest.mark.parametrize("example", sorted(NPM_EXAMPLES))
async def test_npm_example_get_time_app(example: str) -> None:
    command = NPM_EXAMPLES[example]()
    assert (
        command[0] == str(servers.NODE)
        and command[1].endswith(f"server-basic-{example}/dist/index.js")
        and command[2:] == ["--stdio"]
    )
    async with apps_client(StdioServerParameters(command=command[0], args=command[1:])) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "get-time" in tools
        ui_tools = [tool for tool in tools.values() if tool.meta and "ui" in tool.meta]
        assert [tool.name for tool in ui_tools] == ["get-time"]
        assert ui_meta(tools["get-time"])["resourceUri"] == GET_TIME_URI

        content = await read_ui(client, GET_TIME_URI)
        html = content.text
        assert html.lstrip().lower().startswith("<!doctype html>") and "</html>" in html.lower()
        assert "<script" in html and len(html) > 10_000  # the view and ext-apps, bundled into one page

        result = await client.call_tool("get-time", {})
        assert not result.is_error
        time = texts(result)
        assert datetime.fromisoformat(time.replace("Z", "+00:00")).tzinfo is not None
        if example == "vanillajs":  # declares an outputSchema and answers structuredContent too
            assert (
                tools["get-time"].output_schema is not None and "time" in tools["get-time"].output_schema["properties"]
            )
            assert result.structured_content == {"time": time}
        else:  # the preact example (2.0.3) answers the text only
            assert tools["get-time"].output_schema is None
            assert result.structured_content is None
