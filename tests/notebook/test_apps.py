"""MCP Apps, the kernel's half (``mcp_notebook/apps.py``), in a real kernel whose page is played by the test.

The page's part (the labextension's renderer) is played with the exact comm messages it sends:
``app_open``, ``app_activate``, ``app_request``, ``app_notify``; the browser test
(``browser/test_apps.py``) does the same in JupyterLab. The server is defined in a cell with
``%%mcp server`` and ``mcp.server.apps.Apps``, as a server author would prototype it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.server.apps import Apps, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer

from mcp_notebook.magics.listings import listing_rows
from mcp_notebook.notebook.apps import OUTPUT_MIME
from mcp_notebook.notebook.views import NotebookViews
from mcp_notebook.session.session import CallOptions, Session
from mcp_notebook.wire.apps_ext import checked_csp

from ..kernel.test_resume import FakeLab, run
from ..support.kernel_harness import Kernel

pytestmark = pytest.mark.timeout(180)

SERVER = """
from typing import Annotated
from pydantic import BaseModel, Field
from mcp.server.apps import Apps, ResourceCsp, ResourcePermissions, client_supports_apps
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve

apps = Apps()
state = {"count": 0}

class Name(BaseModel):
    name: str = Field(description="Your name")

async def ask_name() -> Elicit[Name]:
    return Elicit("Who is counting?", Name)

@apps.tool(resource_uri="ui://counter/app.html", description="Show the counter")
def counter(ctx: Context) -> str:
    return f"count is {state['count']} (apps: {'yes' if client_supports_apps(ctx) else 'no'})"

@apps.tool(resource_uri="ui://counter/app.html", visibility=["app"], description="Add one")
def increment() -> str:
    state["count"] += 1
    return f"count is {state['count']}"

@apps.tool(resource_uri="ui://counter/app.html", visibility=["model"], description="Reset (the model only)")
def reset() -> str:
    state["count"] = 0
    return "reset"

@apps.tool(resource_uri="ui://counter/app.html", visibility=["app"], description="Sign the count")
def sign(who: Annotated[Name, Resolve(ask_name)]) -> str:
    return f"signed by {who.name} at {state['count']}"

apps.add_html_resource(
    "ui://counter/app.html", "<button id='inc'>+1</button><span id='count'></span>" + VERSION,
    csp=ResourceCsp(connect_domains=["https://api.example.com", "javascript:alert(1)", "https://x.example; script-src *"],
                    resource_domains=["https://cdn.example.com"]),
    permissions=ResourcePermissions(clipboard_write={}), prefers_border=True,
)
counter_server = MCPServer("counter", extensions=[apps])
"""

OTHER = """
from mcp.server.mcpserver import MCPServer
other_server = MCPServer("other")

@other_server.tool()
def secret() -> str:
    return "the other server's secret"
"""


class Page(FakeLab):
    """The labextension's part: answers hello/saves like ``FakeLab``, and speaks the ``app_*`` messages."""

    def __init__(self, kernel: Kernel) -> None:
        super().__init__(kernel)
        self.req = 0

    def _handle(self, data: dict[str, Any]) -> None:
        if str(data.get("op", "")).startswith("app_"):
            self.received.append(data)
            return
        super()._handle(data)

    def send(self, op: str, app: str, **fields: Any) -> int:
        self.req += 1
        assert self.comm_id is not None
        self.k._comm_msg(self.comm_id, {"op": op, "app": app, "req": self.req, **fields})
        return self.req

    def ask(self, op: str, app: str, **fields: Any) -> dict[str, Any]:
        """Send and wait for the kernel's reply with that ``req``."""
        req = self.send(op, app, **fields)
        found: dict[str, Any] = self.wait(
            lambda: [d for d in self.received if d.get("req") == req], f"the reply to {op}"
        )[0]
        return found


def app_output(k: Kernel, cell: str) -> dict[str, Any]:
    bundles = [
        m["content"]["data"]
        for m in k.for_cell(cell)
        if m["msg_type"] in ("display_data", "update_display_data") and OUTPUT_MIME in m["content"]["data"]
    ]
    assert bundles, "the call's report carries the App"
    data: dict[str, Any] = bundles[-1]
    return data


def test_an_app_in_a_kernel(tmp_path: Path) -> None:
    k = Kernel(cwd=str(tmp_path), env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")})
    page = Page(k)
    try:
        run(k, "%load_ext mcp_notebook", "cell-load")
        page.wait(lambda: page.ops("hello"), "hello")
        run(k, "VERSION = 'v1'")
        run(k, "%%mcp server counter\n" + SERVER, "cell-server")
        run(k, "%%mcp server other\n" + OTHER, "cell-other")

        cell = run(k, "%mcp call counter.counter --wait", "cell-call", interactive=True)
        bundle = app_output(k, cell)
        data = bundle[OUTPUT_MIME]
        assert "count is 0 (apps: yes)" in bundle["text/plain"]  # the fallback; and the server saw the Apps extension
        assert (data["v"], data["server"], data["tool"], data["uri"], data["tool_input"]) == (
            1,
            "counter",
            "counter",
            "ui://counter/app.html",
            {},
        )
        assert data["tool_result"]["content"][0]["text"] == "count is 0 (apps: yes)" and "html" not in data
        app = data["app"]

        opened = page.ask("app_open", app)
        assert (
            opened["op"] == "app_resource"
            and opened["html"].startswith("<button id='inc'>")
            and opened["html"].endswith("v1")
        )
        assert opened["csp"] == {
            "connectDomains": ["https://api.example.com"],
            "resourceDomains": ["https://cdn.example.com"],
        }  # the rest dropped
        assert opened["permissions"] == {"clipboardWrite": {}} and opened["prefers_border"] is True
        assert opened["tool_result"] == data["tool_result"]

        # the App calls its own server's app-visible tools, through the kernel
        done = page.ask("app_request", app, method="tools/call", params={"name": "increment", "arguments": {}})
        assert done["op"] == "app_reply" and done["result"]["content"][0]["text"] == "count is 1"
        hidden = page.ask("app_request", app, method="tools/call", params={"name": "reset", "arguments": {}})
        assert hidden["error"]["code"] == -32602 and "not visible to Apps" in hidden["error"]["message"]
        foreign = page.ask("app_request", app, method="tools/call", params={"name": "secret", "arguments": {}})
        assert "has no tool 'secret'" in foreign["error"]["message"]  # another server's tool is out of reach
        read = page.ask("app_request", app, method="resources/read", params={"uri": "ui://counter/app.html"})
        assert read["result"]["contents"][0]["mimeType"] == "text/html;profile=mcp-app"
        refused = page.ask("app_request", app, method="sampling/createMessage", params={})
        assert refused["error"]["code"] == -32601
        # the App's own call of its tool is what a reloaded page (same kernel) opens it with, not the output's first result
        mine = page.ask("app_request", app, method="tools/call", params={"name": "counter", "arguments": {}})
        assert mine["result"]["content"][0]["text"] == "count is 1 (apps: yes)"
        reopened = page.ask("app_open", app)
        assert (reopened["tool_input"], reopened["tool_result"]) == ({}, mine["result"]) and reopened[
            "tool_result"
        ] != data["tool_result"]

        # a question the App's call raises is a form in the App's cell
        before = set(k.comms)
        req = page.send("app_request", app, method="tools/call", params={"name": "sign", "arguments": {}})
        field = k.wait_for(
            lambda: [c for c in k.find_widgets("TextModel") if c not in before], what="the form in the App's cell"
        )[0]
        k.set_value(field, "Ada")
        k.click(
            k.wait_for(
                lambda: [c for c in k.find_widgets("ButtonModel", description="Accept") if c not in before],
                what="Accept",
            )[0]
        )
        signed = page.wait(lambda: [d for d in page.received if d.get("req") == req], "the signed reply")[0]
        assert signed["result"]["content"][0]["text"] == "signed by Ada at 1"
        assert any(
            m["msg_type"] == "comm_open" and m["parent_header"].get("msg_id") == cell for m in k.messages
        )  # shown in that cell

        page.send(
            "app_notify",
            app,
            method="ui/update-model-context",
            params={"content": [{"type": "text", "text": "the user looks at 1"}]},
        )
        page.send(
            "app_notify",
            app,
            method="ui/message",
            params={"role": "user", "content": [{"type": "text", "text": "hello"}]},
        )
        kept = k.text_of_cell(
            run(
                k,
                f"_a = get_ipython().magics_manager.registry['MCPMagics'].session.apps.get('{app}')\nprint(_a.model_context['content'][0]['text'], len(_a.messages))",
            )
        )
        assert "the user looks at 1 1" in kept

        # re-running the server's cell reloads its Apps in place
        run(k, "VERSION = 'v2'")
        told = k.text_of_cell(run(k, "%%mcp server counter\n" + SERVER, "cell-server"))
        assert "Its Apps shown in this notebook reload" in told
        page.wait(lambda: {"op": "app_reload", "server": "counter"} in page.received, "app_reload")
        assert page.ask("app_open", app)["html"].endswith("v2")

        # a reopened notebook's App: unknown here until the user activates it
        unknown = page.ask("app_open", "0123456789abcdef")
        assert (unknown["op"], unknown["kind"]) == ("app_error", "not_live")
        wrong = page.ask(
            "app_activate", "0123456789abcdef", server="counter", tool="counter", uri="ui://elsewhere/x.html"
        )
        assert wrong["op"] == "app_error" and "no longer offers that App" in wrong["message"]
        gone = page.ask(
            "app_activate", "0123456789abcdef", server="nosuch", tool="counter", uri="ui://counter/app.html"
        )
        assert "not connected in this kernel" in gone["message"]
        again = page.ask(
            "app_activate",
            "0123456789abcdef",
            server="counter",
            tool="counter",
            uri="ui://counter/app.html",
            tool_input={},
            tool_result=data["tool_result"],
        )
        assert again["op"] == "app_resource" and again["html"].endswith("v2")
        assert (
            page.ask("app_request", "0123456789abcdef", method="tools/call", params={"name": "increment"})["result"][
                "content"
            ][0]["text"]
            == "count is 1"
        )  # the redefined server counts anew
        # the saved input and result reach the App only from an output this user's kernel signed
        assert again["saved_data"] == "unsigned" and (again["tool_input"], again["tool_result"]) == ({}, None)
        assert data["sig"].startswith("hmac-sha256:")
        saved = {key: value for key, value in data.items() if key not in ("v", "app")}
        forged = page.ask("app_activate", app, **{**saved, "tool_input": {"amount": 9999, "iban": "DE00ATTACKER"}})
        assert forged["saved_data"] == "unsigned" and (forged["tool_input"], forged["tool_result"]) == ({}, None)
        own = page.ask("app_activate", app, **saved)
        assert own["saved_data"] == "used" and (own["tool_input"], own["tool_result"]) == ({}, data["tool_result"])
        count = len(page.received)
        page.send("app_open", "not-an-id")  # ids are 16 hex characters: anything else is dropped unanswered
        run(k, "pass")
        page.poll()
        assert len(page.received) == count
    finally:
        k.close()


def test_without_the_extension_the_text_is_the_output(tmp_path: Path) -> None:
    """nbclient, nbval, a viewer: no page answers the comm, so no App output, only the report's text."""
    k = Kernel(cwd=str(tmp_path), env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")})
    try:
        run(k, "%load_ext mcp_notebook")
        run(k, "VERSION = 'v1'")
        run(k, "%%mcp server counter\n" + SERVER)
        cell = run(k, "%mcp call counter.counter")
        shown = [m["content"]["data"] for m in k.for_cell(cell) if m["msg_type"] == "display_data"]
        assert shown and all(OUTPUT_MIME not in d for d in shown)
        assert "count is 0 (apps: yes)" in k.text_of_cell(cell)
        # Run All in JupyterLab: the page has not answered hello yet, but the cell comes from a front end that allows stdin
        cell = run(k, "%mcp call counter.counter --wait", interactive=True)
        assert app_output(k, cell)[OUTPUT_MIME]["tool"] == "counter"
    finally:
        k.close()


def test_without_the_extension_a_person_s_front_end_gets_the_app_as_a_widget(tmp_path: Path) -> None:
    """VS Code, Colab, JupyterLab without the extension: the hello goes unanswered, the cell allows stdin.

    The report carries the App three ways: its text, ``OUTPUT_MIME`` (a page with the extension ranks
    it first) and the ``AppWidget`` view; the widget's ``app_*`` messages (as its front end sends them,
    ``model.send``) are answered by the same ``AppHost``: the App's own app-visible tools only.
    """
    from mcp_notebook.notebook.app_widget import WIDGET_VIEW_MIME

    k = Kernel(cwd=str(tmp_path), env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")})
    try:
        run(k, "%load_ext mcp_notebook\n%config MCPMagics.page_wait = 0.2")  # no page will answer: don't wait long
        page = "get_ipython().magics_manager.registry['MCPMagics'].session.frontend"
        assert "False" in k.text_of_cell(run(k, f"{page}.wait_for_page()"))  # the wait for the hello's answer ran out
        run(k, "VERSION = 'v1'")
        run(k, "%%mcp server counter\n" + SERVER, "cell-server")
        run(k, "%%mcp server other\n" + OTHER, "cell-other")
        cell = run(k, "%mcp call counter.counter --wait", "cell-call", interactive=True)
        bundle = app_output(k, cell)
        view = bundle[WIDGET_VIEW_MIME]
        assert "count is 0 (apps: yes)" in bundle["text/plain"] and bundle[OUTPUT_MIME]["tool"] == "counter"
        state = k.comms[view["model_id"]]
        assert state["_anywidget_id"].endswith("AppWidget") and state["data"] == bundle[OUTPUT_MIME]
        assert (
            state["text"] == bundle["text/plain"] and "render" in state["_esm"] and ".mcp-notebook-app" in state["_css"]
        )
        app, widget = bundle[OUTPUT_MIME]["app"], view["model_id"]

        def ask(req: int, op: str, **fields: Any) -> dict[str, Any]:
            k._comm_msg(widget, {"method": "custom", "content": {"op": op, "app": app, "req": req, **fields}})

            def reply() -> dict[str, Any] | None:
                k.pump()
                for m in k.messages:
                    data = m["content"].get("data", {}) if m["msg_type"] == "comm_msg" else {}
                    if m["content"].get("comm_id") == widget and data.get("method") == "custom":
                        if data["content"].get("req") == req:
                            found: dict[str, Any] = data["content"]
                            return found
                return None

            answer: dict[str, Any] = k.wait_for(reply, what=f"the widget's reply to {op}")
            return answer

        opened = ask(1, "app_open")
        assert opened["op"] == "app_resource" and opened["html"].endswith("v1")
        assert opened["csp"]["connectDomains"] == ["https://api.example.com"]  # checked as for the extension
        done = ask(2, "app_request", method="tools/call", params={"name": "increment", "arguments": {}})
        assert done["result"]["content"][0]["text"] == "count is 1"
        hidden = ask(3, "app_request", method="tools/call", params={"name": "reset", "arguments": {}})
        assert hidden["error"]["code"] == -32602 and "not visible to Apps" in hidden["error"]["message"]
        foreign = ask(4, "app_request", method="tools/call", params={"name": "secret", "arguments": {}})
        assert "has no tool 'secret'" in foreign["error"]["message"]
        refused = ask(5, "app_request", method="sampling/createMessage", params={})
        assert refused["error"]["code"] == -32601
        # a headless run (no stdin) still shows no App at all
        plain = run(k, "%mcp call counter.counter")
        shown = [m["content"]["data"] for m in k.for_cell(plain) if m["msg_type"] == "display_data"]
        assert shown and all(OUTPUT_MIME not in d and WIDGET_VIEW_MIME not in d for d in shown)
    finally:
        k.close()


def test_checked_csp_keeps_plain_origins_only() -> None:
    hostile = {
        "connectDomains": [
            "https://api.example.com",
            "http://evil.example",
            "https://a.example 'unsafe-eval'",
            "data:",
            "*",
            "https://b.example/path",
        ],
        "resourceDomains": [
            "https://cdn.example.com:8443",
            "http://localhost:3000",
            "ws://127.0.0.1:9",
            "https://*.example.org",
        ],
        "frameDomains": "https://not-a-list.example",
        "unknownKey": ["https://x.example"],
    }
    assert checked_csp(hostile) == {
        "connectDomains": ["https://api.example.com"],
        "resourceDomains": [
            "https://cdn.example.com:8443",
            "http://localhost:3000",
            "ws://127.0.0.1:9",
            "https://*.example.org",
        ],
    }
    assert (
        checked_csp(None) == {}
        and checked_csp({"connectDomains": ["https://x.example"] * 100})["connectDomains"] == ["https://x.example"] * 32
    )


def test_without_a_kernel_the_result_is_plain_and_the_server_sees_the_extension() -> None:
    apps = Apps()

    @apps.tool(resource_uri="ui://clock/app.html")
    def clock(ctx: Context) -> str:
        return "apps: yes" if client_supports_apps(ctx) else "apps: no"

    apps.add_html_resource("ui://clock/app.html", "<p>clock</p>")
    session = Session(views=NotebookViews())  # the notebook side: panels, the Apps host
    try:
        conn = session.connect("clock", MCPServer("clock", extensions=[apps]))
        flow = session.call("tools/call", conn, "clock", {}, CallOptions(), interactive=False, cell_id=None)
        assert flow is not None and flow.result(timeout=30).content[0].text == "apps: yes"
        assert flow.app is None  # no kernel, no page: the text is the output
        from mcp_notebook.notebook.flow_report import FlowReport

        bundle = FlowReport(flow)._repr_mimebundle_()
        assert OUTPUT_MIME not in bundle and "apps: yes" in json.dumps(bundle)
    finally:
        session.close()


def test_tools_for_apps_only_are_marked_in_the_listing_even_without_an_app() -> None:
    """``%mcp tools``: a tool whose visibility leaves out the model says so, with or without a ``resourceUri``."""
    server = MCPServer("helpers")

    @server.tool(meta={"ui": {"visibility": ["app"]}}, description="Save a draft (called by the editor App)")
    def save_draft(text: str) -> str:
        return "saved"

    @server.tool(meta={"ui": {"visibility": ["model", "app"]}}, description="Count words")
    def count(text: str) -> int:
        return len(text.split())

    @server.tool(description="Plain")
    def plain() -> str:
        return "plain"

    apps = Apps()

    @apps.tool(resource_uri="ui://editor/app.html", visibility=["app"], description="Open the editor")
    def editor() -> str:
        return "editor"

    apps.add_html_resource("ui://editor/app.html", "<p>editor</p>")
    session = Session(views=NotebookViews())  # the notebook side: panels, the Apps host
    try:
        session.connect("helpers", server)
        session.connect("editor", MCPServer("editor", extensions=[apps]))
        described = {row[1]: row[3] for row in listing_rows(session, "tools")}
        assert described == {
            "save_draft": "Save a draft (called by the editor App) [for Apps only]",
            "count": "Count words",
            "plain": "Plain",
            "editor": "Open the editor [App ui://editor/app.html (for Apps only)]",
        }
    finally:
        session.close()


def test_without_anywidget_installed_no_widget_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """anywidget is an optional extra (its lab extension runs saved widget state's code): absent, the report stays text."""
    import sys

    from mcp_notebook.notebook import app_widget
    from mcp_notebook.notebook.apps import LiveApp

    monkeypatch.setitem(sys.modules, "anywidget", None)  # `import anywidget` raises ImportError
    app_widget.app_widget_class.cache_clear()
    try:
        app = LiveApp("0123456789abcdef", "counter", "counter", "ui://counter/app.html", {}, None)
        assert app_widget.app_widget_class() is None
        assert app_widget.widget_for(None, app, "count is 0") is None  # type: ignore[arg-type]
        assert app.widget is None
    finally:
        app_widget.app_widget_class.cache_clear()


def test_a_session_keeps_its_newest_live_apps_and_an_older_one_reads_as_not_live() -> None:
    """A tool with an App called in a loop: the host keeps the last ``APPS_KEPT`` Apps; an older one is as after a restart."""
    from mcp_notebook.errors import FlowError
    from mcp_notebook.notebook.apps import APPS_KEPT

    apps = Apps()

    @apps.tool(resource_uri="ui://clock/app.html")
    def clock() -> str:
        return "tick"

    apps.add_html_resource("ui://clock/app.html", "<p>clock</p>")
    session = Session(views=NotebookViews())
    try:
        conn = session.connect("clock", MCPServer("clock", extensions=[apps]))
        host = session.apps
        assert host is not None
        shown = []
        for _ in range(APPS_KEPT + 3):
            flow = session.start("tools/call", conn, "clock", {}, save=False)
            flow.result(timeout=30)
            app = session.runtime.run(host.register(flow, None))  # what a flow shown with the extension does
            shown.append(app.id)
        assert len(host.apps) == APPS_KEPT and list(host.apps) == shown[3:]
        assert host.get(shown[0]) is None and host.get(shown[-1]) is not None
        with pytest.raises(FlowError) as gone:
            session.runtime.run(host._open(shown[0], {}))
        assert gone.value.kind == "not_live"
        assert str(gone.value) == (
            "this kernel does not know that App (the notebook was reopened, the kernel restarted, "
            f"or more than {APPS_KEPT} Apps were shown since)"
        )
        opened = session.runtime.run(host._open(shown[-1], {}))
        assert opened["op"] == "app_resource" and opened["html"] == "<p>clock</p>"
    finally:
        session.close()
