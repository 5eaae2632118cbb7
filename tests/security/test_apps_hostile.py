"""MCP Apps from a hostile server, and App messages from a hostile page or notebook (the kernel's half).

The server controls the App's page (size, MIME type), its CSP declarations and its tool results; the
page's messages (``app_*``) may come from a notebook someone else wrote. The kernel bounds and checks
all of it: the browser test (``browser/test_apps``) shows the frame's sandbox holding.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from mcp.server.apps import Apps
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import TextResource

from mcp_notebook.flows.trust import RecordSigner
from mcp_notebook.magics.listings import listing_rows
from mcp_notebook.notebook.apps import MAX_HTML_CHARS, OUTPUT_MIME
from mcp_notebook.notebook.display import FlowReport
from mcp_notebook.notebook.views import NotebookViews
from mcp_notebook.session.session import CallOptions, Session

from ..support.waiting import wait_until

pytestmark = pytest.mark.timeout(120)


def hostile_apps() -> MCPServer[Any]:
    apps = Apps()

    @apps.tool(resource_uri="ui://big/app.html")
    def big() -> str:
        return "big page"

    @apps.tool(resource_uri="ui://huge-result/app.html")
    def huge_result() -> str:
        return "x" * 300_000

    @apps.tool(resource_uri="ui://huge-result/app.html")
    def pay(amount: int) -> str:
        return f"paid {amount}"

    apps.add_html_resource("ui://big/app.html", "<p>" + "x" * MAX_HTML_CHARS + "</p>")
    apps.add_html_resource("ui://huge-result/app.html", "<p>ok</p>")
    server: MCPServer[Any] = MCPServer("hostile-apps", extensions=[apps])

    def plain() -> str:
        return "not html"

    def login(user: str, api_key: str) -> str:
        return f"hello {user}"

    for fn in (plain, login):  # bound by hand: Apps() itself would refuse a page that is not HTML
        server.add_tool(fn, meta={"ui": {"resourceUri": "ui://plain/app.html"}})

    def model_only() -> str:
        return "the model's alone"

    server.add_tool(model_only, meta={"ui": {"visibility": ["model"]}})  # no App of its own: Apps still may not call it
    visibilities: dict[str, Any] = {
        "vis_not_a_list": "app",
        "vis_markup": ["<img src=x onerror=alert(1)>", "app", "<b>model</b>", "app"],
        "vis_huge": ["<script>alert(1)</script>"] * 100_000
        + ["model"],  # read only so far: the trailing "model" is not reached
        "vis_odd_items": [["model"], {"model": 1}, None, 5, "app"],
    }
    for name, visibility in visibilities.items():
        server.add_tool(plain, name=name, description="<i>helper</i>", meta={"ui": {"visibility": visibility}})
    server.add_resource(
        TextResource(uri="ui://plain/app.html", name="plain", mime_type="text/plain", text="#!/bin/sh\nrm -rf /")
    )  # past the SDK's check
    return server


@pytest.fixture
def session_views() -> NotebookViews:
    return NotebookViews()  # the notebook side: panels, the Apps host


@pytest.fixture
def session_servers() -> dict[str, Any]:
    return {"evil": hostile_apps()}


@pytest.fixture(autouse=True)
def as_in_jupyterlab(session: Session) -> None:
    session.store.signer = RecordSigner(b"this user's notary secret")  # never the real user's key
    session.frontend.status = "connected"  # as if JupyterLab's extension answered: calls from this thread register Apps


def app_of(session: Session, tool: str, **arguments: Any) -> Any:
    flow = session.call(
        "tools/call", session.registry.get("evil"), tool, arguments, CallOptions(), interactive=False, cell_id=None
    )
    assert flow is not None
    flow.result(timeout=30)
    assert flow.app is not None
    return flow


def ask(session: Session, data: dict[str, Any]) -> dict[str, Any]:
    replies: list[dict[str, Any]] = []
    session.apps.handle(data, replies.append)
    wait_until(lambda: replies, "a reply")
    return replies[0]


def test_a_page_over_the_limit_is_refused(session: Session) -> None:
    flow = app_of(session, "big")
    reply = ask(session, {"op": "app_open", "app": flow.app.id, "req": 1})
    assert (reply["op"], reply["kind"], reply["req"]) == ("app_error", "failed", 1)
    assert f"over the limit of {MAX_HTML_CHARS:,}" in reply["message"] and "html" not in reply


def test_a_resource_that_is_not_a_page_is_refused(session: Session) -> None:
    flow = app_of(session, "plain")
    reply = ask(session, {"op": "app_open", "app": flow.app.id, "req": 2})
    assert reply["op"] == "app_error" and "returned text/plain" in reply["message"] and "rm -rf" not in reply["message"]


def test_a_huge_result_is_not_copied_into_the_output(session: Session) -> None:
    flow = app_of(session, "huge_result")
    payload: Any = FlowReport(flow)._repr_mimebundle_()[OUTPUT_MIME]
    assert payload["tool_result"] is None  # the notebook stays small; the live App still gets nothing it should not
    assert len(str(payload)) < 1000


def test_secret_arguments_never_reach_the_output(session: Session) -> None:
    flow = app_of(session, "login", user="ada", api_key="sk-live-123456")
    payload: Any = FlowReport(flow)._repr_mimebundle_()[OUTPUT_MIME]
    assert payload["tool_input"] == {"user": "ada"} and "sk-live" not in str(payload)


def test_messages_a_page_cannot_send(session: Session) -> None:
    flow = app_of(session, "huge_result")
    app = flow.app.id
    bad = [
        {"op": "app_open", "app": "../../etc/passwd", "req": 1},  # not an id: dropped
        {"op": "app_open", "app": app, "req": True},  # not a number: dropped
        {"op": "app_shell", "app": app, "req": 3},  # no such op: dropped
    ]
    replies: list[dict[str, Any]] = []
    for data in bad:
        session.apps.handle(data, replies.append)
    time.sleep(0.3)
    assert replies == []
    odd = ask(session, {"op": "app_request", "app": app, "req": 4, "method": "tools/call", "params": "not an object"})
    assert odd["error"]["code"] == -32602 and "needs a tool name" in odd["error"]["message"]
    notify = {"op": "app_notify", "app": app, "method": "ui/message", "params": {"role": "user", "content": "x" * 10}}
    for _ in range(500):
        session.apps.handle(notify, replies.append)
    assert len(flow.app.messages) == 100  # bounded, newest kept


@pytest.mark.parametrize("signed_by", [None, b"another user's notary secret"])
def test_a_planted_app_output_activates_without_its_saved_data(session: Session, signed_by: bytes | None) -> None:
    """A received notebook's App output (unsigned, or signed with another key) must not feed its forged
    input and result to the user's real App, whose buttons call the user's real server."""
    flow = app_of(session, "huge_result")
    body = {
        **flow.app.body(),
        "tool_input": {"amount": 9999, "iban": "DE00ATTACKER"},
        "tool_result": {"content": [{"type": "text", "text": "pay 9999"}]},
    }
    planted = RecordSigner(signed_by).sign(body) if signed_by else body
    reply = ask(session, {"op": "app_activate", "req": 5, **planted})
    assert (reply["op"], reply["saved_data"]) == ("app_resource", "unsigned")
    assert (reply["tool_input"], reply["tool_result"]) == ({}, None)
    live = session.apps.get(flow.app.id)
    assert live is not None and (live.tool_input, live.tool_result, live.sig) == ({}, None, None)


def test_the_users_own_app_output_activates_with_its_saved_data(session: Session) -> None:
    flow = app_of(session, "pay", amount=5)
    payload: Any = FlowReport(flow)._repr_mimebundle_()[OUTPUT_MIME]
    assert payload["sig"] == session.store.signer.signature(flow.app.body())
    reply = ask(session, {"op": "app_activate", "req": 6, **payload})
    assert (reply["op"], reply["saved_data"], reply["tool_input"]) == ("app_resource", "used", {"amount": 5})
    assert reply["tool_result"]["content"][0]["text"] == "paid 5"


def test_a_tools_visibility_is_read_as_known_words_and_shown_as_text(session: Session) -> None:
    """``_meta.ui.visibility`` is server text: only "model" and "app" are read, from a bounded prefix of a list."""
    from mcp_notebook.notebook.display import Table
    from mcp_notebook.wire.apps_ext import visibility_of

    started = time.monotonic()
    rows = {row[1]: row for row in listing_rows(session, "tools", "evil")}
    tools = session.runtime.run(session.registry.get("evil").tools())
    assert {
        name: visibility_of(tools[name])
        for name in ("vis_not_a_list", "vis_markup", "vis_huge", "vis_odd_items", "model_only")
    } == {
        "vis_not_a_list": None,  # says nothing: model and Apps, as by default
        "vis_markup": ["app"],
        "vis_huge": [],
        "vis_odd_items": ["app"],
        "model_only": ["model"],
    }
    assert rows["vis_not_a_list"][3] == "<i>helper</i>"
    assert rows["vis_markup"][3] == "<i>helper</i> [for Apps only]"
    assert rows["vis_huge"][3] == "<i>helper</i> [hidden from the model and from Apps]"
    assert rows["vis_odd_items"][3] == "<i>helper</i> [for Apps only]"
    assert rows["model_only"][3] == ""
    html = Table(["server", "tool", "title", "description", "parameters"], list(rows.values()))._repr_mimebundle_()[
        "text/html"
    ]
    assert (
        "<img" not in html
        and "<script" not in html
        and "<i>" not in html
        and "&lt;i&gt;helper&lt;/i&gt; [for Apps only]" in html
    )
    assert time.monotonic() - started < 10


def test_an_app_cannot_call_a_tool_kept_from_apps_without_an_app_of_its_own(session: Session) -> None:
    flow = app_of(session, "huge_result")
    refused = ask(
        session,
        {
            "op": "app_request",
            "app": flow.app.id,
            "req": 1,
            "method": "tools/call",
            "params": {"name": "model_only", "arguments": {}},
        },
    )
    assert refused["error"]["code"] == -32602
    assert refused["error"]["message"] == "evil's tool 'model_only' is not visible to Apps (its visibility: model)"
    allowed = ask(
        session,
        {
            "op": "app_request",
            "app": flow.app.id,
            "req": 2,
            "method": "tools/call",
            "params": {"name": "vis_markup", "arguments": {}},
        },
    )
    assert allowed["result"]["content"][0]["text"] == "not html"
