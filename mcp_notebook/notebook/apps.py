"""MCP Apps (``io.modelcontextprotocol/ui``) in cell outputs: the kernel's half.

A tool may carry an interactive UI: ``_meta.ui.resourceUri`` names a ``ui://`` resource whose HTML
(``text/html;profile=mcp-app``) a host renders in a sandboxed frame; the UI talks to the host over
``postMessage`` and may call its own server's tools back. Here:

* every connection advertises the extension with the one MIME type rendered (``wire.apps_ext``, which
  also reads a tool's App and visibility and checks a resource's CSP and permissions);
* a finished ``tools/call`` of such a tool becomes a ``LiveApp`` (``AppHost.register``): the flow's
  report then carries ``OUTPUT_MIME`` (the app id, server, tool, URI, the call's non-secret
  arguments and its result), next to the plain-text fallback that nbconvert, nbval or a viewer
  without the extension shows. The HTML itself is never put in the notebook: the page asks for it;
* the labextension's renderer (``labextension/src/apps/``) sends ``app_*`` messages on the
  ``mcp_notebook`` comm (``AppHost.handle``): ``app_open`` (the HTML, the checked CSP domains and
  permissions), ``app_activate`` (a reopened notebook's App, made live again on the user's click,
  never silently; the saved tool input and result reach the App only when the output's ``sig``
  says this user's kernel wrote it), ``app_request`` (the App's ``tools/call`` / ``resources/read``, run on the
  connection of the server that owns the App and on no other; only tools whose visibility includes
  ``app``; a question those calls raise is a form in the App's cell), ``app_notify`` (messages and
  model-context updates, kept on the ``LiveApp``);
* re-running the ``%%mcp server`` cell of a server sends ``app_reload``: its Apps reload in place;
* where no page runs the extension (VS Code, Colab, JupyterLab without it), the report also carries
  an ``app_widget.AppWidget``: the same renderer, shipped with the widget, its messages answered here.
* a page reloaded on the same kernel opens each live App with the latest call the App made of its
  own tool (``AppHost.keep_current``), so it does not go back to the output's first, older result.

The output's data is signed like a saved flow record (``trust.RecordSigner``: an HMAC with the
Jupyter notary's secret of the user), because a notebook can come from anyone: an output someone
else wrote, or edited, could otherwise hand a forged ``tool_input`` / ``tool_result`` (an amount, an
account) to the user's real App, whose buttons call the user's real server. Such an output still
activates, but its App gets no saved data, and the page says why (``saved_data: "unsigned"``).

Everything from the server (HTML, CSP domains, permissions) is bounded and checked here; the page
re-checks the domains and builds the CSP (``labextension/README.md``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import secrets
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.text import mcp_line
from ..errors import FlowError
from ..flows.ui import HeadlessUI
from ..wire.apps_ext import APP_MIME, checked_csp, checked_permissions, ui_of, visibility_of

if TYPE_CHECKING:
    from ..core.threads import KernelLoop
    from ..flows.flow import Flow
    from ..forms.model import Answers, Question
    from ..session.session import Session
    from ..wire.connection import Connection

__all__ = ["OUTPUT_MIME", "AppCallUI", "AppHost", "LiveApp"]

OUTPUT_MIME = "application/vnd.mcp-notebook.app+json"
MAX_HTML_CHARS = 5_000_000  # an App's page; larger ones are refused (the page would carry it over the comm)
MAX_RESULT_BYTES = 200_000  # a tool result kept in the output for the App (larger: the App gets none on reopen)
MAX_KEPT = 100  # messages an App sent that are kept on its LiveApp
APPS_KEPT = 200
"""Live Apps a session keeps (``AppHost.apps``), the newest: each holds its call's arguments and result (up to
``MAX_RESULT_BYTES``), and a notebook that calls an App's tool in a loop must not grow the kernel. Each App is
a page in a frame of its own: far fewer than two hundred are in use at once. An older one still shown answers
its frame's calls with a "not live" error; reopened, its output is as any of a reopened notebook (its text and
an Activate App button, which makes it live again)."""
APP_ID = re.compile(r"^[0-9a-f]{16}$")


@dataclass
class LiveApp:
    """One App shown in an output of this kernel."""

    id: str
    server: str  # the connection's name: the only server its calls reach
    tool: str
    uri: str
    tool_input: dict[str, Any]
    tool_result: dict[str, Any] | None
    main: KernelLoop | None = None  # the cell it was shown in (forms its calls raise go there)
    messages: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=MAX_KEPT))
    model_context: Any = None
    calls: int = 0
    sig: str | None = None  # trust.RecordSigner's signature of ``body()``, set when the kernel shows the App
    current_input: dict[str, Any] | None = None  # the App's latest call of its own tool (see ``AppHost.keep_current``)
    current_result: dict[str, Any] | None = None
    by_widget: bool = False  # no page with the extension when it was shown: its report also carries ``AppWidget``
    widget: Any = None  # that widget, once made (``app_widget.widget_for``)

    def body(self) -> dict[str, Any]:
        """What the output's signature covers: every field of the output's data but ``sig``."""
        return {
            "v": 1,
            "app": self.id,
            "server": self.server,
            "tool": self.tool,
            "uri": self.uri,
            "tool_input": self.tool_input,
            "tool_result": self.tool_result,
        }

    def payload(self) -> dict[str, Any]:
        """The output's ``OUTPUT_MIME`` data (no HTML: the page asks for it), with ``sig`` once signed."""
        return {**self.body(), "sig": self.sig} if self.sig else self.body()


class AppCallUI(HeadlessUI):
    """The ``FlowUI`` of a call an App made: no view; a question is a form in the App's cell."""

    interactive = True

    def __init__(self, app: LiveApp) -> None:
        self.app = app

    async def ask(self, flow: Flow, questions: list[Question], answers: Answers) -> dict[str, Any]:
        from IPython.display import display

        from ..core.threads import Reply
        from ..forms.widgets import ElicitationPanel

        main = self.app.main
        if main is None or main.loop is None:
            raise FlowError(
                f"{flow.conn.name} asks a question for the App's call of {flow.name}, and this App was activated outside a cell; "
                "run the tool again from a cell to answer there",
                kind="unanswered",
            )
        reply: Reply[dict[str, Any]] = Reply()

        def deliver(results: dict[str, Any]) -> None:
            reply.offer(results)

        def show() -> None:
            panel = ElicitationPanel(flow.conn.name, questions, answers, deliver)
            panel.widget.add_class("mcp-notebook-form")
            display(panel.widget)

        main.call(show)
        return await reply


class AppHost:
    """The live Apps of one session, and the kernel's answers to the page's ``app_*`` messages."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.apps: dict[str, LiveApp] = {}
        self._lock = threading.Lock()

    def get(self, app_id: str) -> LiveApp | None:
        with self._lock:
            return self.apps.get(app_id)

    # ------------------------------------------------------------------ from flows (loop thread)
    async def register(self, flow: Flow, main: KernelLoop | None) -> LiveApp | None:
        """A finished ``tools/call`` whose tool has an App: its ``LiveApp`` (``None`` for any other)."""
        if flow.method != "tools/call" or flow.value is None or getattr(flow.value, "is_error", False):
            return None
        tools = flow.conn.cached_tools
        if tools is None or flow.name not in tools:
            try:
                tools = await flow.conn.tools()
            except Exception:  # noqa: BLE001 - no listing, no App: the result stands
                return None
        tool = tools.get(flow.name)
        ui = ui_of(tool)
        if ui is None:
            return None
        result = flow.value.model_dump(by_alias=True, mode="json", exclude_none=True)
        if len(json.dumps(result, default=str)) > MAX_RESULT_BYTES:
            result = None
        secret = flow.secret_arguments
        app = LiveApp(
            secrets.token_hex(8),
            flow.conn.name,
            flow.name,
            ui[0],
            {k: v for k, v in flow.arguments.items() if k not in secret},
            result,
            main,
        )
        signer = self.session.store.signer
        # The first use reads Jupyter's secret (a file, or nbformat's import to make one): not on the kernel's loop.
        app.sig = (
            signer.signature(app.body()) if signer.ready else await asyncio.to_thread(signer.signature, app.body())
        )
        app.by_widget = self.session.frontend.status != "connected"
        self._keep(app)
        return app

    def _keep(self, app: LiveApp) -> None:
        """``app`` as the newest live App, forgetting the oldest past ``APPS_KEPT``."""
        with self._lock:
            self.apps.pop(app.id, None)
            self.apps[app.id] = app
            while len(self.apps) > APPS_KEPT:
                del self.apps[next(iter(self.apps))]

    # ------------------------------------------------------------------ from the page (comm thread)
    def handle(self, data: dict[str, Any], reply: Callable[[dict[str, Any]], None]) -> None:
        """One ``app_*`` message of the page; replies go through ``reply`` (any thread)."""
        op, app_id, req = data.get("op"), data.get("app"), data.get("req")
        if not isinstance(app_id, str) or not APP_ID.match(app_id):
            return
        if op == "app_notify":
            self._notify(app_id, data)
            return
        if not isinstance(req, int) or isinstance(req, bool):
            return
        base = {"app": app_id, "req": req}
        work = {"app_open": self._open, "app_activate": self._activate, "app_request": self._request}.get(str(op))
        if work is None:
            return

        async def run() -> None:
            try:
                answer = await work(app_id, data)
            except Exception as exc:  # noqa: BLE001 - the page gets a plain error, the kernel goes on
                answer = _failure(str(op), exc)
            reply({**answer, **base})

        self.session.runtime.call_soon(lambda: asyncio.ensure_future(run()))

    def _notify(self, app_id: str, data: dict[str, Any]) -> None:
        app = self.get(app_id)
        method, params = data.get("method"), data.get("params")
        if app is None or not isinstance(method, str):
            return
        if method == "ui/update-model-context":
            app.model_context = params
        elif method in ("ui/message", "notifications/message"):
            app.messages.append({"method": method, "params": params})

    async def _open(self, app_id: str, data: dict[str, Any]) -> dict[str, Any]:
        app = self.get(app_id)
        if app is None:
            raise FlowError(
                "this kernel does not know that App (the notebook was reopened, the kernel restarted, "
                f"or more than {APPS_KEPT} Apps were shown since)",
                kind="not_live",
            )
        return {"op": "app_resource", **await self._resource(app)}

    async def _activate(self, app_id: str, data: dict[str, Any]) -> dict[str, Any]:
        """A reopened notebook's App, on the user's click: live again if its server is connected here and still offers it.

        The saved ``tool_input`` and ``tool_result`` go to the App only when the output's ``sig``
        verifies with this user's key; otherwise the App starts with none (``saved_data: "unsigned"``).
        """
        server, tool, uri = data.get("server"), data.get("tool"), data.get("uri")
        if not all(isinstance(v, str) for v in (server, tool, uri)):
            raise FlowError("the App's output names no server, tool and URI", kind="failed")
        assert isinstance(server, str) and isinstance(tool, str) and isinstance(uri, str)
        registry = self.session.registry
        if server not in registry:
            raise FlowError(
                f"the App's server {server!r} is not connected in this kernel: "
                f"connect it ({mcp_line('%mcp', 'connect', server, '...')}) and click again",
                kind="failed",
            )
        conn = registry.get(server)
        tools = await conn.tools(refresh=True)
        ui = ui_of(tools.get(tool))
        if ui is None or ui[0] != uri:
            raise FlowError(
                f"{server} no longer offers that App ({tool} has {ui[0] if ui else 'no App'})", kind="failed"
            )
        given_input, given_result = data.get("tool_input"), data.get("tool_result")
        saved = LiveApp(
            app_id,
            server,
            tool,
            uri,
            given_input if isinstance(given_input, dict) else {},
            given_result if isinstance(given_result, dict) else None,
        )
        signed = await self._signed_by_user(saved.body(), data.get("sig"))
        app = saved if signed else LiveApp(app_id, server, tool, uri, {}, None)
        app.sig = data.get("sig") if signed else None
        self._keep(app)
        return {"op": "app_resource", **await self._resource(app), "saved_data": "used" if signed else "unsigned"}

    async def _signed_by_user(self, body: dict[str, Any], sig: Any) -> bool:
        """Whether ``sig`` is this user's signature of an App output's ``body`` (see the module docstring)."""
        if not isinstance(sig, str):
            return False
        signer = self.session.store.signer
        record = {**body, "sig": sig}
        return signer.verify(record) if signer.ready else await asyncio.to_thread(signer.verify, record)

    async def _resource(self, app: LiveApp) -> dict[str, Any]:
        """The App's page and its declared CSP domains and permissions, checked."""
        from mcp.types import BlobResourceContents

        conn = self._connection(app)
        result = await conn.live.read_resource(app.uri)
        contents = list(result.contents)
        if not contents:
            raise FlowError(f"{app.server} returned no content for {app.uri}", kind="failed")
        content = contents[0]
        mime = content.mime_type or ""
        if not mime.startswith("text/html"):
            raise FlowError(
                f"{app.server} returned {mime or 'no MIME type'} for {app.uri}, not an App page ({APP_MIME})",
                kind="failed",
            )
        if isinstance(content, BlobResourceContents):
            html = base64.b64decode(content.blob).decode("utf-8", errors="replace")
        else:
            html = content.text
        if not isinstance(html, str):
            raise FlowError(f"{app.server} returned no HTML for {app.uri}", kind="failed")
        if len(html) > MAX_HTML_CHARS:
            raise FlowError(
                f"{app.server}'s App page is {len(html):,} characters, over the limit of {MAX_HTML_CHARS:,}",
                kind="failed",
            )
        meta = content.meta
        found = meta.get("ui") if isinstance(meta, dict) else None
        ui: dict[str, Any] = found if isinstance(found, dict) else {}
        return {
            "html": html,
            "csp": checked_csp(ui.get("csp")),
            "permissions": checked_permissions(ui.get("permissions")),
            "prefers_border": ui.get("prefersBorder") is True,
            "tool_input": app.tool_input if app.current_input is None else app.current_input,
            "tool_result": app.tool_result if app.current_result is None else app.current_result,
        }

    def _connection(self, app: LiveApp) -> Connection:
        registry = self.session.registry
        if app.server not in registry:
            raise FlowError(f"the App's server {app.server!r} is no longer connected", kind="failed")
        return registry.get(app.server)

    async def _request(self, app_id: str, data: dict[str, Any]) -> dict[str, Any]:
        """A ``tools/call`` or ``resources/read`` of the App, on its own server only."""
        app = self.get(app_id)
        if app is None:
            raise FlowError("this App is not live in this kernel", code=-32600, kind="not_live")
        method, params = data.get("method"), data.get("params")
        params = params if isinstance(params, dict) else {}
        conn = self._connection(app)
        app.calls += 1
        if method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str):
                raise FlowError("resources/read needs a uri", code=-32602)
            result = await conn.live.read_resource(uri)
            return {"op": "app_reply", "result": result.model_dump(by_alias=True, mode="json", exclude_none=True)}
        if method != "tools/call":
            raise FlowError(f"an App may not send {str(method)[:60]!r} through this host", code=-32601)
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str):
            raise FlowError("tools/call needs a tool name", code=-32602)
        tools = await conn.tools()
        if name not in tools:
            tools = await conn.tools(refresh=True)
        tool = tools.get(name)
        if tool is None:
            raise FlowError(
                f"{app.server} has no tool {name[:100]!r}; an App reaches only its own server's tools", code=-32602
            )
        seen = visibility_of(tool)  # with or without an App of its own
        if seen is not None and "app" not in seen:
            raise FlowError(
                f"{app.server}'s tool {name!r} is not visible to Apps (its visibility: {', '.join(seen) or 'none'})",
                code=-32602,
            )
        flow = self.session.start(
            "tools/call",
            conn,
            name,
            dict(arguments) if isinstance(arguments, dict) else {},
            ui=AppCallUI(app),
            save=False,
        )
        value = await flow
        result = value.model_dump(by_alias=True, mode="json", exclude_none=True)
        if name == app.tool:
            self.keep_current(app, flow, result)
        return {"op": "app_reply", "result": result}

    @staticmethod
    def keep_current(app: LiveApp, flow: Flow, result: dict[str, Any]) -> None:
        """The App called its own tool (e.g. a "refresh" button): what a page reloaded on this kernel hands the App.

        Without this, reloading the page (same kernel) would start the App with the output's first
        result, older than what it showed (basic-vanillajs' "Get Server Time" went back to the time of
        the cell's call). Only this kernel's ``LiveApp`` changes: the output's data, its signature and
        its text stay those of the cell's call (what a reopened notebook activates with). An error
        result, or one over ``MAX_RESULT_BYTES``, leaves the last good one.
        """
        if result.get("isError") is True or len(json.dumps(result, default=str)) > MAX_RESULT_BYTES:
            return
        secret = flow.secret_arguments
        app.current_input = {k: v for k, v in flow.arguments.items() if k not in secret}
        app.current_result = result

    # ------------------------------------------------------------------ a server redefined in a cell (kernel thread)
    def reload(self, server: str) -> bool:
        """Tell the page that ``server`` changed: its Apps ask for their pages again. Whether any is live."""
        with self._lock:
            live = any(app.server == server for app in self.apps.values())
        if live:
            self.session.frontend.send_app({"op": "app_reload", "server": server})
            with self._lock:
                widgets = [app.widget for app in self.apps.values() if app.server == server and app.widget is not None]
            for widget in widgets:
                widget._reply({"op": "app_reload", "server": server})
        return live


def _failure(op: str, exc: BaseException) -> dict[str, Any]:
    """What the page is told when an ``app_*`` message failed: a JSON-RPC error for the App's own requests."""
    from ..errors import describe_exception

    if isinstance(exc, FlowError):
        text, code, kind = str(exc), exc.code, exc.kind
    else:
        text, code, _ = describe_exception(exc)
        kind = None
    if op == "app_request":
        return {"op": "app_reply", "error": {"code": code or -32603, "message": text[:2000]}}
    return {"op": "app_error", "kind": "not_live" if kind == "not_live" else "failed", "message": text[:2000]}
