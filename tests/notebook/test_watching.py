"""Live resources in a real kernel, both generations, real servers (in-process, through the SDK's own transports).

A 2026-07-28 ``MCPServer`` whose tool changes a resource and publishes ``ResourceUpdated`` to
``subscriptions/listen`` subscribers, and a 2025 low-level ``Server`` (connected with
``--protocol legacy``) that records ``resources/subscribe`` / ``unsubscribe`` and sends
``notifications/resources/updated`` to a subscribed session. The watch cell's output must change in
place (``update_display_data`` with its display id, the new text), ``--into`` must hold the latest
``ReadResourceResult``, ``unwatch`` must stop the updates, a second watch of a URI must replace the first,
a closed connection must be said in the output, and a 2026-07-28 server without subscriptions must be
refused with a clear error; a 2025 server that does not declare ``resources.subscribe`` but announces
changes anyway (as mcp-server-sqlite does) is watched without a subscribe request, and the output says so.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from ..support.kernel_harness import Kernel

pytestmark = pytest.mark.timeout(240)

SETUP = """
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, MCPServer

notes = {"a": "first a", "b": "first b", "q": "quiet"}
server_log = []  # what the 2025 server was asked, in order

modern = MCPServer("modern-notes")

@modern.resource("note://a")
def note_a() -> str:
    return notes["a"]

@modern.resource("note://c")
def note_c() -> str:
    return "c is <b>" + notes["a"] + "</b>"

@modern.tool()
async def set_a(text: str, ctx: Context) -> str:
    notes["a"] = text
    await ctx.notify_resource_updated("note://a")
    await ctx.notify_resource_updated("note://c")
    return "set"

quiet = MCPServer("quiet-notes", subscriptions=False)  # serves no subscriptions/listen

@quiet.resource("note://q")
def note_q() -> str:
    return notes["q"]

subscribed = set()

async def list_resources(ctx, params):
    return types.ListResourcesResult(resources=[types.Resource(uri="note://b", name="b")])

async def read_resource(ctx, params):
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=params.uri, text=notes["b"], mime_type="text/plain")])

async def subscribe(ctx, params):
    server_log.append(("subscribe", params.uri))
    subscribed.add(params.uri)
    return types.EmptyResult()

async def unsubscribe(ctx, params):
    server_log.append(("unsubscribe", params.uri))
    subscribed.discard(params.uri)
    return types.EmptyResult()

async def list_tools(ctx, params):
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    return types.ListToolsResult(tools=[types.Tool(name="set_b", input_schema=schema)])

async def call_tool(ctx, params):
    notes["b"] = params.arguments["text"]
    if "note://b" in subscribed:
        await ctx.session.send_resource_updated("note://b")
    return types.CallToolResult(content=[types.TextContent(type="text", text="set")])

old = Server(
    "old-notes", on_list_resources=list_resources, on_read_resource=read_resource,
    on_subscribe_resource=subscribe, on_unsubscribe_resource=unsubscribe,
    on_list_tools=list_tools, on_call_tool=call_tool,
)
old_quiet = Server("old-quiet", on_list_resources=list_resources, on_read_resource=read_resource)  # no resources/subscribe

class Undeclared(Server):
    # like mcp-server-sqlite: resources.subscribe not declared, changes announced anyway;
    # it serves resources/subscribe only to record one arriving (the client must send none)

    def get_capabilities(self, *args, **kwargs):
        capabilities = super().get_capabilities(*args, **kwargs)
        capabilities.resources.subscribe = False
        return capabilities

async def call_tool_announcing(ctx, params):
    notes["b"] = params.arguments["text"]
    server_log.append(("call", params.arguments["text"]))
    await ctx.session.send_resource_updated("note://b")  # told whether or not anyone subscribed
    return types.CallToolResult(content=[types.TextContent(type="text", text="set")])

old_loud = Undeclared(
    "old-loud", on_list_resources=list_resources, on_read_resource=read_resource,
    on_subscribe_resource=subscribe, on_unsubscribe_resource=unsubscribe,
    on_list_tools=list_tools, on_call_tool=call_tool_announcing,
)

%load_ext mcp_notebook
from mcp_notebook.notebook.watching import Watches
w = Watches(get_ipython().magics_manager.registry["MCPMagics"].session)
"""


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return SETUP  # each test has a fresh kernel (``fresh_kernel``): its watches and saved state its own


def shown(k: Kernel, cell: str) -> tuple[str, str]:
    """The display id and text of the watch a cell showed."""
    found = k.wait_for(
        lambda: [
            m
            for m in k.for_cell(cell)
            if m["msg_type"] == "display_data" and m["content"].get("transient", {}).get("display_id")
        ],
        what="the watch's display",
    )
    content = found[-1]["content"]
    return content["transient"]["display_id"], content["data"]["text/plain"]


def updates(k: Kernel, display_id: str) -> list[dict[str, Any]]:
    """Every ``update_display_data`` of that display id so far (its data bundles), oldest first."""
    return [
        m["content"]["data"]
        for m in k.messages
        if m["msg_type"] == "update_display_data" and m["content"].get("transient", {}).get("display_id") == display_id
    ]


def updated_to(k: Kernel, cell: str, display_id: str, text: str) -> dict[str, Any]:
    """Wait for the watch cell's output to be updated (in that cell, same display id) to show ``text``."""

    def found() -> list[dict[str, Any]]:
        return [
            m["content"]["data"]
            for m in k.for_cell(cell)
            if m["msg_type"] == "update_display_data"
            and m["content"]["transient"]["display_id"] == display_id
            and text in m["content"]["data"]["text/plain"]
        ]

    result: dict[str, Any] = k.wait_for(found, what=f"the watch output updated to {text!r}")[-1]
    return result


def printed(k: Kernel, code: str) -> str:
    cell = k.execute(code)
    return "".join(m["content"]["text"] for m in k.for_cell(cell) if m["msg_type"] == "stream")


def quiet_for(k: Kernel, display_id: str, text: str, seconds: float = 1.5) -> None:
    """Nothing showing ``text`` reaches that display for ``seconds`` (the server did change meanwhile)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        k.pump(0.1)
    assert not [u for u in updates(k, display_id) if text in u["text/plain"]], (
        f"the stopped watch still showed {text!r}"
    )


@pytest.mark.parametrize(
    ("connect", "server", "uri", "tool"),
    [
        ("%mcp connect modern modern", "modern", "note://a", "set_a"),
        ("%mcp connect old old --protocol legacy", "old", "note://b", "set_b"),
    ],
    ids=["2026-07-28", "2025-11-25"],
)
def test_watch_updates_in_place_into_variable_and_unwatch(
    fresh_kernel: Kernel, connect: str, server: str, uri: str, tool: str
) -> None:
    k = fresh_kernel
    k.execute(connect)
    legacy = server == "old"
    assert printed(k, f"print(w.session.registry.get({server!r}).is_legacy)").strip() == str(legacy)

    cell = k.execute(f"watch = w.watch({server!r}, {uri!r}, 'latest', globals())")
    display_id, text = shown(k, cell)
    assert text.splitlines()[0] == f"Watching {uri} on {server}"
    assert "first" in text
    assert (
        printed(k, "print(type(latest).__name__, latest.contents[0].text)").strip()
        == f"ReadResourceResult first {uri[-1]}"
    )
    rows = eval(printed(k, "print(w.list())"))
    assert [row[:3] for row in rows] == [(server, uri, 0)] and len(rows[0][3]) == len("12:34:56")

    k.execute(f"%mcp call {server}.{tool} text=second")
    data = updated_to(k, cell, display_id, "second")
    assert data["text/plain"].splitlines()[0] == f"Watching {uri} on {server}"
    assert "1 update" in data["text/html"]
    assert printed(k, "print(latest.contents[0].text)").strip() == "second"

    k.execute(f"%mcp call {server}.{tool} text=third")
    updated_to(k, cell, display_id, "third")
    assert printed(k, "print(latest.contents[0].text, w.list()[0][2])").strip() == "third 2"

    assert printed(k, f"print(w.unwatch({server!r}, {uri!r}))").strip() == f"['{server} {uri}']"
    stopped = updated_to(k, cell, display_id, "Stopped watching")
    assert stopped["text/plain"].splitlines()[0] == f"Stopped watching {uri} on {server}: %mcp unwatch"
    assert "third" in stopped["text/plain"]  # the last value stays shown
    assert printed(k, "print(w.list(), watch.active)").strip() == "[] False"

    k.execute(f"%mcp call {server}.{tool} text=fourth")
    quiet_for(k, display_id, "fourth")
    assert printed(k, "print(latest.contents[0].text, notes)").startswith("third")
    if legacy:
        assert printed(k, "print(server_log)").strip() == "[('subscribe', 'note://b'), ('unsubscribe', 'note://b')]"


def test_several_watches_a_second_watch_replaces_the_first_and_a_closed_connection_is_said(
    fresh_kernel: Kernel,
) -> None:
    k = fresh_kernel
    k.execute("%mcp connect modern modern")
    k.execute("%mcp connect old old --protocol legacy")

    first = k.execute("w.watch('modern', 'note://a', None, globals())")
    first_id, _ = shown(k, first)
    other = k.execute("w.watch('old', 'note://b', 'b_now', globals())")
    other_id, _ = shown(k, other)
    html = k.execute("w.watch('modern', 'note://c', None, globals())")
    html_id, html_text = shown(k, html)
    assert "c is <b>first a</b>" in html_text  # the text twin is the server's text
    html_bundle = [m for m in k.for_cell(html) if m["msg_type"] == "display_data"][-1]["content"]["data"]["text/html"]
    assert (
        "c is &lt;b&gt;first a&lt;/b&gt;" in html_bundle and "<b>first a</b>" not in html_bundle
    )  # escaped in the page

    # a second watch of note://a replaces the first: the first says so, and only the second follows changes
    second = k.execute("w.watch('modern', 'note://a', None, globals())")
    second_id, _ = shown(k, second)
    assert second_id != first_id
    replaced = updated_to(k, first, first_id, "Stopped watching")
    assert (
        replaced["text/plain"].splitlines()[0]
        == "Stopped watching note://a on modern: replaced by a newer watch of the same resource"
    )
    assert sorted(row[:3] for row in eval(printed(k, "print(w.list())"))) == [
        ("modern", "note://a", 0),
        ("modern", "note://c", 0),
        ("old", "note://b", 0),
    ]

    k.execute("%mcp call modern.set_a text=changed")
    updated_to(k, second, second_id, "changed")
    updated_to(k, html, html_id, "c is <b>changed</b>")
    quiet_for(k, first_id, "changed", seconds=0.5)
    k.execute("%mcp call old.set_b text=also")
    updated_to(k, other, other_id, "also")
    assert printed(k, "print(b_now.contents[0].text)").strip() == "also"

    # the connection closes: the watches on it say so and end; the other one goes on
    k.execute("%mcp disconnect modern")
    for cell, display_id in ((second, second_id), (html, html_id)):
        gone = updated_to(k, cell, display_id, "Stopped watching")
        assert "connection 'modern' closed" in gone["text/plain"].splitlines()[0]
    assert eval(printed(k, "print([row[:2] for row in w.list()])")) == [("old", "note://b")]

    # the session stops (%unload_ext, as when the kernel stops): the last watch says so
    k.execute("%unload_ext mcp_notebook")
    ended = updated_to(k, other, other_id, "Stopped watching")
    assert "the MCP session stopped" in ended["text/plain"] or "connection 'old' closed" in ended["text/plain"]
    assert printed(k, "print(w.list())").strip() == "[]"


@pytest.mark.parametrize(
    ("connect", "server", "uri", "how"),
    [("%mcp connect quiet quiet", "quiet", "note://q", "subscriptions/listen")],
    ids=["2026-07-28"],  # a 2025 server is watched anyway (below)
)
def test_a_server_without_subscriptions_is_refused_clearly(
    fresh_kernel: Kernel, connect: str, server: str, uri: str, how: str
) -> None:
    k = fresh_kernel
    k.execute(connect)
    out = printed(
        k,
        f"""
from mcp_notebook.errors import FlowError
try:
    w.watch({server!r}, {uri!r}, None, globals())
except FlowError as exc:
    print(exc.kind, '|', exc)
""",
    )
    kind, _, message = out.strip().partition(" | ")
    assert kind == "no_subscriptions"
    assert f"server {server!r}" in message and "does not support resource subscriptions" in message and how in message
    assert printed(k, "print(w.list())").strip() == "[]"
    assert not [
        m
        for m in k.messages
        if m["msg_type"] == "display_data" and "Watching" in m["content"]["data"].get("text/plain", "")
    ]
    read = k.execute(f"%mcp read {server} {uri}")  # reading it is still fine
    assert "quiet" in k.text_of_cell(read) or "first b" in k.text_of_cell(read)


def test_a_2025_server_that_does_not_declare_subscribe_is_watched_without_subscribing(fresh_kernel: Kernel) -> None:
    """mcp-server-sqlite's way: no resources.subscribe declared, notifications/resources/updated sent anyway."""
    k = fresh_kernel
    k.execute("%mcp connect loud old_loud --protocol legacy")
    caps = printed(
        k,
        "print(get_ipython().magics_manager.registry['MCPMagics'].session.registry.get('loud').live.session.server_capabilities.resources.subscribe)",
    )
    assert caps.strip() == "False"
    cell = k.execute("%mcp watch loud note://b --into latest")
    display_id, text = shown(k, cell)
    note = (
        "loud does not declare resource subscriptions (no resources.subscribe in its capabilities), so no resources/subscribe "
        "was sent; this shows each change the server announces anyway (notifications/resources/updated)."
    )
    assert text.splitlines()[:3] == ["Watching note://b on loud", note, "first b"]
    k.execute("%mcp call loud.set_b text=second --wait")
    updated = updated_to(k, cell, display_id, "second")
    assert updated["text/plain"].splitlines()[:3] == ["Watching note://b on loud", note, "second"]
    assert printed(k, "print(latest.contents[0].text)").strip() == "second"
    k.execute("%mcp unwatch loud note://b")
    assert (
        printed(k, "print(server_log)").strip() == "[('call', 'second')]"
    )  # no resources/subscribe (nor unsubscribe) reached it
