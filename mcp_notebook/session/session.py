"""``Session``: everything one MCP client knows, and the whole life of its flows.

A session owns the connections (``Registry``, on its own ``Runtime`` loop thread), the saved
records (``Store``, mirrored by its ``Frontend`` comm client), the model router, the roots and
the servers defined in the notebook. It starts flows, offers and resumes saved ones, and forgets
them. ``MCPMagics`` creates and owns one (the ``%mcp`` commands parse text and call it); the plain
Python API (``api.py``) uses the magics' session inside IPython, else a default one.

Settings live in one place only: the traitlets of ``SessionSettings`` (``MCPMagics`` inherits
them, so ``%config MCPMagics.max_rounds = 5`` is the setting itself). The session keeps a
reference and reads them when it needs them: a new flow reads ``max_rounds``, ``flow_timeout``
and the size limits as it starts; the store reads ``max_record_bytes`` at each save. The model
router is the one thing kept in step: ``%config MCPMagics.models`` / ``default_model`` /
``review`` are applied to it as they change, because ``%mcp model add`` adds models that live
only in the router.
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass, field, replace
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from traitlets import Dict, Enum, Float, Int, TraitError, Unicode, observe, validate
from traitlets import Any as TAny
from traitlets.config import Configurable

from ..flows.answering import Answerer
from ..wire.connection import Connection, Registry, Target
from ..errors import FlowError, Note, SessionError, describe_exception
from ..flows.flow import Flow, FlowState, Method
from ..forms.model import Answers
from ..core.limits import Limits
from ..core.text import line_word
from ..prototype import Prototypes
from ..wire.roots import Roots
from ..core.threads import Runtime
from ..sampling.router import ModelRouter
from ..auth.oauth import CALLBACK_PATH, LoopbackCatcher, OAuthOptions, SignIn, SignInRequest, SignInUnavailable, TokenVault, build_provider
from ..flows.store import SavedFlow, Store
from ..wire.task_handles import TaskHandles, TaskOptions
from ..flows.trust import record_text, target_of
from ..flows.ui import FlowUI, HeadlessUI

from .page import Page
from .views import Choice, NoViews, Views

if TYPE_CHECKING:
    from ..notebook.apps import AppHost
    from ..notebook.watching import Watches

__all__ = ["CallOptions", "Session", "SessionSettings"]


class _Started(TypedDict):
    """What ``Session.call`` passes on to ``Session.start`` for both its headless and interactive runs."""

    answers: Answers
    timeout: float | None
    save: bool
    cell_id: str | None
    saved: SavedFlow | None
    prepare: Callable[[], Awaitable[dict[str, Any]]] | None
    task: TaskOptions | None


class SessionSettings(Configurable):
    """The settings of a session, as traitlets (``MCPMagics`` inherits them: ``%config MCPMagics.NAME``)."""

    max_rounds = Int(10, help="Most input-required rounds one flow may take before it stops.").tag(config=True)
    flow_timeout = TAny(None, allow_none=True, help="Default wall-clock limit of a flow in seconds (None: no limit).").tag(config=True)
    connect_timeout = TAny(
        30.0, allow_none=True,
        help="Seconds a connection may take to open (start or reach the server and finish the handshake; None: no limit). "
        "A server that accepts the connection but never answers would otherwise hold the cell forever. A --timeout given "
        "to %mcp connect (the read timeout) bounds the handshake instead.",
    ).tag(config=True)  # fmt: skip
    interactive = TAny(None, allow_none=True, help="True/False forces interactive or headless; None decides per cell (a front end that allows stdin is interactive).").tag(config=True)
    log_level = Enum(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"], "info", allow_none=True, help="Server log messages at or above this level are shown with the flow.").tag(config=True)
    models = Dict(
        {},
        help="Models for sampling by name, e.g. {'gpt': {'provider': 'openai', 'model': 'gpt-4o-mini', 'api_key_env': 'OPENAI_API_KEY', 'cost': 0.3}}; "
        "the settings of %mcp model add (provider, model, base_url, api_key_env, cost, speed, intelligence, timeout, function).",
    ).tag(config=True)
    default_model = Unicode(None, allow_none=True, help="The model that answers when no hint or priority picks another (%mcp model use NAME).").tag(config=True)
    review = Enum(
        ["remote", "ask", "always", "never"], "remote",
        help="Review of sampling in interactive runs: remote (the default: ask when the model is on another machine, i.e. openai or "
        "anthropic not on a loopback address; echo, callable, human and local models answer without review), ask (edit every "
        "request and reply), always (show both, don't wait), never. Headless runs never review.",
    ).tag(config=True)  # fmt: skip
    max_record_bytes = Int(
        1_000_000, min=1024,
        help="Largest saved flow record, in bytes. A waiting flow whose record (mostly the server's request state) is larger "
        "is not saved in the notebook, and a notebook's records over it are ignored: notebooks stay small and a received "
        "notebook cannot make the kernel hold huge values.",
    ).tag(config=True)  # fmt: skip
    max_result_chars = Int(
        100_000, min=100,
        help="Characters of a result shown in the cell (text, structured content, resource text, logs, trace messages); the "
        "rest is cut with a note. A server decides how big its results are: without a bound a 50 MB text becomes a 100 MB "
        "output that slows the browser and bloats the notebook. The whole value stays on the flow (flow.result(), -o VAR).",
    ).tag(config=True)  # fmt: skip
    max_inline_bytes = Int(
        5_000_000, min=0,
        help="Decoded bytes of images, audio and downloadable files one result embeds in the cell (as base64 data URLs); "
        "larger ones become a note. Embedded media are saved in the notebook, so a server must not be able to grow it "
        "without bound. The data stays on the flow (flow.result(), -o VAR).",
    ).tag(config=True)  # fmt: skip
    max_schema_depth = Int(
        32, min=4,
        help="Deepest nesting of a server's elicitation schema the client walks or checks. MCP forms are flat (a few "
        "levels); a deeper schema is shown as a JSON editor that cannot send, so a hostile schema cannot exhaust the "
        "kernel's recursion limit (RecursionError) in the form or in jsonschema.",
    ).tag(config=True)  # fmt: skip
    sign_in_timeout = Float(
        600.0, min=5.0,
        help="Seconds a sign-in (OAuth) may wait for you to finish at the authorization server before the request that "
        "needed it fails. The SDK has no limit of its own: without one a closed tab would hold the call forever.",
    ).tag(config=True)  # fmt: skip
    oauth_client_metadata_url = Unicode(
        None, allow_none=True,
        help="An https URL of this client's OAuth Client ID Metadata Document, used as the client id where the authorization "
        "server supports it (else dynamic registration). Its redirect_uris must include this notebook's callback.",
    ).tag(config=True)  # fmt: skip
    oauth_client_name = Unicode("mcp-notebook", help="The client name shown by authorization servers when you sign in.").tag(config=True)
    max_form_fields = Int(
        200, min=1,
        help="Most fields one elicitation form renders as widgets (each tick box of a multi-select counts as one). "
        "Widgets are built on the kernel thread, about 2 ms a field: a larger form is offered as a JSON editor instead "
        "of freezing the kernel for seconds.",
    ).tag(config=True)  # fmt: skip

    # the router these settings feed (set by the session); models added with %mcp model add live only there
    router: ModelRouter | None = None

    def _namespace(self) -> dict[str, Any] | None:
        shell = getattr(self, "shell", None)
        return shell.user_ns if shell is not None else None

    @validate("models")
    def _check_models(self, proposal: Any) -> Any:
        try:
            ModelRouter.build(proposal["value"], self._namespace())
        except ValueError as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]

    @validate("default_model")
    def _check_default_model(self, proposal: Any) -> Any:
        name = proposal["value"]
        known = self.router.models if self.router is not None else ModelRouter().models
        if name is not None and name not in known and name not in self.models:
            raise TraitError(f"no model named {name!r} (configured: {', '.join(known)})")
        return name

    @property
    def limits(self) -> Limits:
        """The size bounds a new flow renders with (a flow keeps the ``Limits`` it started with).

        Made once and again after a ``%config`` change of one of them: a map starts a flow per row.
        """
        limits = self._limits
        if limits is None:
            limits = self._limits = Limits(
                max_result_chars=self.max_result_chars, max_inline_bytes=self.max_inline_bytes,
                max_schema_depth=self.max_schema_depth, max_form_fields=self.max_form_fields,
            )  # fmt: skip
        return limits

    _limits: Limits | None = None

    @observe("max_result_chars", "max_inline_bytes", "max_schema_depth", "max_form_fields")
    def _limits_changed(self, _change: Any) -> None:
        self._limits = None


@dataclass(frozen=True)
class CallOptions:
    """How one call (or resume) runs: its preset answers and flags (``%mcp call`` / ``resume`` options)."""

    answers: Answers = field(default_factory=Answers)
    timeout: float | None = None
    save: bool = True
    trace: bool = False
    output: str | None = None  # bind the result to this variable of the namespace when done (-o VAR)
    trust: bool = False  # resume a record that needs consent without asking
    task: TaskOptions | None = None  # run as a task (--task, --ttl); a tool that requires one does anyway

    def fresh_answers(self) -> Answers:
        return replace(self.answers, fields=dict(self.answers.fields), raw=dict(self.answers.raw), decline=list(self.answers.decline))


class Session:
    """One MCP client: its connections, saved flows, models, roots and notebook servers; runs flows."""

    def __init__(self, settings: SessionSettings | None = None, *, shell: Any = None, tell: Callable[[str], None] | None = None, views: Views | None = None) -> None:
        self.settings = settings if settings is not None else SessionSettings()
        self.shell = shell
        # Notes for the person (a saved flow reconnected, the one not-saved notice, file warnings). The
        # session never prints: the magics pass ``print``; without them the notes are kept in ``notes``.
        self.notes: list[str] = []
        self.tell: Callable[[str], None] = tell or self.notes.append
        self.runtime = Runtime()
        self.registry = Registry(self.runtime)
        self.store = Store(max_record_bytes=lambda: self.settings.max_record_bytes)
        self.router = ModelRouter()
        self.roots = Roots(session_path=(shell.user_ns.get("__session__") if shell is not None else None) or None)
        self.registry.roots = self.roots  # roots/list is answered from these, in a flow or not
        self.prototypes = Prototypes()
        self.frontend: Page = Page(self.store)  # the notebook side plugs its comm client in (plug_page, at %load_ext)
        self.vault = TokenVault()  # OAuth tokens per resource, in the user's Jupyter data folder (never the notebook)
        self.task_handles = TaskHandles()  # task ids (bearer-like), same folder; records keep only a ref to them
        self.apps: AppHost | None = None  # MCP Apps shown in this kernel's outputs (set by the notebook side)
        self.watches: Watches | None = None  # resources watched live in cells (%mcp watch; set by the notebook side)
        self._catcher: LoopbackCatcher | None = None  # the loopback way back from a sign-in, started on first need
        self._sign_ins: weakref.WeakSet[SignIn] = weakref.WeakSet()  # of open connections, for complete_sign_in
        self.open_browser: Callable[[str], object] | None = None  # without a kernel: how a sign-in page opens (webbrowser.open)
        self.last_flow: Flow | None = None
        self._board: Any = None  # the running cell's TaskBoard (plain-API tasks), made on first use
        self.settings.router = self.router
        self._apply_models()
        self.router.set_review(self.settings.review)
        self.settings.observe(self._sampling_settings_changed, names=["models", "default_model", "review"])
        self.views: Views = views if views is not None else NoViews()  # what draws in cells: headless, nothing
        self.views.plugged(self)

    @property
    def namespace(self) -> dict[str, Any]:
        return self.shell.user_ns if self.shell is not None else {}

    # ------------------------------------------------------------------ settings
    def _apply_models(self) -> None:
        if self.settings.models:
            self.router.configure(ModelRouter.build(self.settings.models, self.namespace))
        name = self.settings.default_model
        if name is not None and name in self.router.models:
            self.router.use(name)

    def _sampling_settings_changed(self, change: Any) -> None:
        if change["name"] == "review":
            self.router.set_review(change["new"])
            return
        if change["name"] == "models":
            self.router.configure(ModelRouter.build(self.settings.models, self.namespace))
        name = self.settings.default_model
        if name is not None and name in self.router.models:
            self.router.use(name)

    # ------------------------------------------------------------------ lifecycle
    def plug_page(self, page: Page) -> Page:
        """Back the store by ``page`` (the notebook side's comm client, at ``%load_ext``) and greet it."""
        self.unplug_page()
        self.store.backend = page
        self.frontend = page
        page.open()
        return page

    def unplug_page(self) -> None:
        """Stop talking to the page; records stay in the store."""
        frontend = self.frontend
        if self.store.backend is frontend:
            self.store.backend = None
        frontend.close()
        self.frontend = Page(self.store)

    def close(self) -> None:
        """Close the comm, stop served prototypes, close every connection, stop the loop (``%unload_ext``)."""
        self.unplug_page()
        self.prototypes.stop_all()
        self.registry.disconnect_all()
        self.runtime.stop()
        if self._catcher is not None:
            self._catcher.close()
            self._catcher = None

    # ------------------------------------------------------------------ connections
    def connect(
        self,
        name: str,
        target: Any,
        *,
        headers: Mapping[str, str] | None = None,
        bearer_env: str | None = None,
        protocol: str = "auto",
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        namespace: Mapping[str, Any] | None = None,
        read_timeout: float | None = None,
        oauth: OAuthOptions | None = None,
        sign_in: bool = True,
        interactive: bool = False,
    ) -> Connection:
        """Open connection ``name`` to a URL, a command (list or ``-- cmd``), ``module:attr`` or a server object.

        An HTTP server that answers 401 gets an OAuth sign-in (``oauth`` picks the client; ``sign_in=False``
        turns it off), unless ``headers`` or ``bearer_env`` give an Authorization already. ``interactive``:
        a person is at this cell, so a sign-in is shown there and this returns at once; the connection
        opens when the sign-in completes.
        """
        from .api import parse_target

        if protocol not in ("auto", "legacy", "2026-07-28"):
            raise SessionError(f"protocol must be auto, legacy or 2026-07-28, not {protocol!r}", kind="bad_input")
        resolved = parse_target(target, namespace=namespace)
        if resolved.kind == "http":
            resolved.headers = dict(headers or {})
            resolved.bearer_env = bearer_env
            if self.prototypes.token_for(resolved.url) is not None:  # our own %mcp serve: its token, in memory only
                resolved.served_token = lambda url=resolved.url: self.prototypes.token_for(url)
            own_authorization = bool(bearer_env) or any(k.lower() == "authorization" for k in resolved.headers) or resolved.served_token is not None
            if sign_in and not own_authorization:
                resolved.oauth = oauth or OAuthOptions()
            elif oauth is not None:
                raise SessionError("OAuth sign-in options cannot be combined with an Authorization header or bearer_env", kind="bad_input")
        elif headers or bearer_env or oauth is not None:
            raise SessionError("headers, bearer_env and sign-in options only apply to HTTP URLs", kind="bad_input")
        if resolved.kind == "stdio":
            resolved.cwd, resolved.env = cwd, dict(env or {})
        elif cwd or env:
            raise SessionError("cwd and env only apply to stdio commands", kind="bad_input")
        limit = read_timeout if read_timeout is not None else self.settings.connect_timeout
        if resolved.oauth is not None:
            self._page_first(interactive)
        return self.registry.connect(
            name, resolved, protocol=protocol, log_level=self.settings.log_level, read_timeout=read_timeout,
            connect_timeout=float(limit) if limit is not None else None,
            sign_in_setup=self._sign_in_setup if resolved.oauth is not None else None, return_on_sign_in=interactive,
        )  # fmt: skip

    # ------------------------------------------------------------------ sign-in (OAuth)
    def _page_first(self, interactive: bool) -> None:
        """Before a connection that may sign in opens: let the page answer the hello first (bounded).

        The redirect URI is chosen when the connection opens (``_sign_in_setup``): the Jupyter
        server's callback when the page reported its base URL, else the kernel's loopback address,
        which a remote kernel's or JupyterHub user's browser cannot reach. In the cell that loaded
        the extension the page has not answered yet; its answer is seen while this (main) thread
        waits (``Frontend.wait_for_page``). Only where a page can answer: an interactive cell whose
        hello is still unanswered; a headless run or a page that answered never waits.
        """
        if interactive:
            self.frontend.wait_for_page()

    def _sign_in_setup(self, conn: Connection) -> tuple[SignIn, Any]:
        """The SDK's OAuth provider for ``conn`` and the ``SignIn`` it asks through (loop thread, at open)."""
        page = getattr(self.frontend, "page_url", None)
        redirect = f"{page}{CALLBACK_PATH}" if page else self._loopback().redirect_uri
        sign_in = SignIn(conn.name, conn.target.url, redirect, lambda request, deliver: self._present_sign_in(conn, request, deliver), float(self.settings.sign_in_timeout))
        sign_in.after_success = lambda: setattr(conn.target, "signed_in", True)  # saved records say it needs sign-in
        self._sign_ins.add(sign_in)
        options = conn.target.oauth or OAuthOptions()
        provider = build_provider(
            conn.target.url, options, self.vault, sign_in, client_name=self.settings.oauth_client_name,
            client_metadata_url=self.settings.oauth_client_metadata_url, on_failure=conn.note_auth_failure,
        )  # fmt: skip
        return sign_in, provider

    def complete_sign_in(self, address: str) -> str:
        """Finish a waiting sign-in with the address the browser was sent back to (paste-back without a panel).

        Returns the connection's name. The answer goes to the sign-in whose state it carries, or to the
        only one waiting (whose check then refuses a foreign state, saying so).
        """
        from ..auth.oauth import parse_redirect

        answer = parse_redirect(address)
        waiting = [s for s in self._sign_ins if s.pending is not None]
        target = next((s for s in waiting if s.pending is not None and s.pending.state == answer["state"]), None)
        if target is None and len(waiting) == 1:
            target = waiting[0]
        if target is None:
            raise SessionError("no sign-in is waiting for that address" if not waiting else "several sign-ins are waiting and that address belongs to none of them", kind="bad_input")
        target.deliver(answer)
        return target.server

    def _loopback(self) -> LoopbackCatcher:
        if self._catcher is None:
            self._catcher = LoopbackCatcher()
        return self._catcher

    def _present_sign_in(self, conn: Connection, request: SignInRequest, deliver: Callable[[dict[str, Any]], None]) -> None:
        """Show a sign-in where a person can act on it, and open every way back (loop thread).

        Where: the cell of an interactive call on that connection; the cell of an interactive
        connect (which returns, showing it); a terminal or script without a kernel (the browser is
        opened and the loopback catcher listens); nowhere in a headless kernel run (an error that
        says to sign in once interactively).
        """
        if conn.state == "connecting" and conn.auth_failure is not None:
            raise conn.auth_failure  # this open's sign-in already failed: the handshake's retry must not ask again, unseen
        flow = next((f for f in conn.flows if not f.finished and f.view.interactive and hasattr(f.view, "show_sign_in")), None)
        kernel = self.shell is not None and getattr(self.shell, "kernel", None) is not None
        connecting_here = conn.return_on_sign_in and conn.state == "connecting"  # the connect cell shows it
        if flow is None and not connecting_here and kernel:
            raise SignInUnavailable("Sign in once from an interactive notebook (JupyterLab or Notebook 7): the token is kept for you, and headless runs reuse it.")
        if self._catcher is not None and request.redirect_uri == self._catcher.redirect_uri:
            self._catcher.await_state(request.state, deliver)
        frontend = self.frontend
        catcher = self._catcher
        relayed = request.redirect_uri and (catcher is None or request.redirect_uri != catcher.redirect_uri)  # the page's callback
        if relayed and frontend.await_oauth(request.state, deliver):
            if conn.sign_in is not None:  # answered, timed out or cancelled: the page stops waiting for it

                def stop_waiting(_error: str | None, state: str = request.state) -> None:
                    frontend.cancel_oauth(state)

                conn.sign_in.on_settled.append(stop_waiting)
        if flow is not None:
            flow.view.show_sign_in(request, conn.sign_in)  # type: ignore[attr-defined]
        elif not kernel and not connecting_here:
            import webbrowser

            at = f" at {request.issuer}" if request.issuer else ""
            self.tell(f"Sign in to {conn.name}{at}: {request.url}")
            (self.open_browser or webbrowser.open)(request.url)
        conn.sign_in_shown()

    def resolve(self, qualified: str) -> tuple[Connection, str]:
        """``server.tool`` or ``tool`` (when one connection is open) -> (connection, name)."""
        server, dot, rest = qualified.partition(".")
        if dot and server in self.registry:
            return self.registry.get(server), rest
        if dot and len(self.registry) > 1:
            return self.registry.get(server), rest  # explains: no connection by that name
        return self.registry.get(None), qualified

    async def tool_schema(self, conn: Connection, tool: str) -> dict[str, Any]:
        """The input schema of ``tool``, with a clear error naming the tools when it is unknown."""
        failure_before = conn.auth_failure
        try:
            tools = await conn.tools()
        except Exception:
            if conn.auth_failure is not None and conn.auth_failure is not failure_before:  # it wanted a sign-in first
                raise conn.sign_in_error(f"{conn.name}: listing its tools failed", FlowError) from None
            raise
        if tool not in tools:
            tools = await conn.tools(refresh=True)
        if tool not in tools:
            prefix, dot, _ = tool.partition(".")
            if dot and prefix not in self.registry:
                self.registry.get(prefix)  # SERVER.TOOL with no such server: say that, naming the connected ones
            known = ", ".join(sorted(tools)) or "none"
            raise FlowError(f"{conn.name} has no tool {tool!r}. Tools: {known}")
        return tools[tool].input_schema or {}

    def tool_schema_sync(self, conn: Connection, tool: str) -> dict[str, Any]:
        """From the connection's cache when it has the tool: no crossing to the loop on a hot path."""
        cached = conn.cached_tools
        if cached is not None and tool in cached:
            return cached[tool].input_schema or {}
        return self.runtime.run(self.tool_schema(conn, tool))

    # ------------------------------------------------------------------ models, roots, servers in the notebook
    def add_model(self, name: str, provider: str, model: str | None = None, **settings: Any) -> None:
        """Add a sampling model (``ModelConfig`` settings); provider ``callable``: ``model`` names a function of the namespace."""
        from ..sampling.router import ModelConfig

        if provider == "callable":
            settings["function"] = self.namespace.get(model or "")
            if not callable(settings["function"]):
                raise SessionError("the callable provider needs the name of a function in the notebook as its model", kind="bad_input")
        settings = {k: v for k, v in settings.items() if v is not None or k != "timeout"}
        with _bad_input():
            self.router.add(ModelConfig(name, provider, model, **settings))

    def use_model(self, name: str) -> None:
        """Answer sampling with ``name`` by default (the ``default_model`` setting follows)."""
        with _bad_input():
            self.router.use(name)
        self.settings.default_model = name

    def remove_model(self, name: str) -> None:
        with _bad_input():
            self.router.remove(name)

    def change_roots(self, action: str, path: str | None = None, name: str | None = None) -> list[str]:
        """``add`` / ``remove`` a folder or ``reset`` to none; returns the 2025 servers (offered roots) told of it."""
        with _bad_input():
            if action == "add":
                self.roots.add(path or "", name)
            elif action == "remove":
                self.roots.remove(path or "")
            else:
                self.roots.reset()
        return self.registry.roots_changed()

    def define_server(self, name: str, code: str, var: str | None = None) -> list[str]:
        """Run ``code`` in the namespace and connect the server it defines as ``name`` (again: hot reload).

        Returns what to tell: the inventory diff, or that the cell failed and the old version runs on.
        """
        from ..prototype import Inventory, describe_diff, find_new_server, inventory_diff, root_logging_kept, server_ids

        if self.shell is None:
            raise SessionError("defining a server from code needs an IPython shell", kind="bad_input")
        protos = self.prototypes
        before = server_ids(self.namespace)
        with root_logging_kept():  # MCPServer() calls logging.basicConfig(level=INFO) on the user's kernel
            result = self.shell.run_cell(code, store_history=False)
        if not result.success:
            return [f"The cell failed{f'; {name!r} still runs the previous version' if name in protos.objects else ''}."]
        var, obj = find_new_server(before, self.namespace, var)
        first = name not in protos.objects
        conn = self.connect(name, obj, namespace={var: obj})
        inventory = self.runtime.run(Inventory.of(conn))
        diff = inventory_diff(protos.inventories.get(name), inventory)
        protos.inventories[name], protos.objects[name] = inventory, obj
        told = [describe_diff(name, diff, first)]
        if self.apps is not None and self.apps.reload(name):
            told.append("Its Apps shown in this notebook reload with the new version.")
        served = protos.served.get(name)
        if served is not None:
            served.restart(obj)
            told.append(f"Still serving {name!r} at {served.url} (now the new version).")
        return told

    # ------------------------------------------------------------------ starting flows
    def start(self, method: Method, conn: Connection, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> Flow:
        """Create and start a flow (see ``make_flow`` for the options); returns at once."""
        return self.make_flow(method, conn, name, arguments, **options).start()

    def make_flow(
        self,
        method: Method,
        conn: Connection,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        answers: Answers | None = None,
        ui: FlowUI | None = None,
        view: FlowUI | None = None,
        timeout: float | None = None,
        save: bool = True,
        cell_id: str | None = None,
        max_rounds: int | None = None,
        saved: SavedFlow | None = None,
        prepare: Callable[[], Awaitable[dict[str, Any]]] | None = None,
        task: TaskOptions | None = None,
    ) -> Flow:
        """Create a flow (going on from ``saved`` when given), not yet started: ``flow.start()``, or ``await flow.run_here()`` on the loop.

        ``prepare``: the arguments are made on the loop once the flow runs (they need the tool's
        schema, which a server that wants a sign-in first gives only after it, shown in the flow's cell).

        Settings are read now: the flow keeps them.
        """
        settings = self.settings
        flow_timeout = float(settings.flow_timeout) if settings.flow_timeout is not None else None
        answerer = Answerer(answers=answers or Answers(), router=self.router, root_list=self.roots, ui=ui if ui is not None else HeadlessUI())
        options: dict[str, Any] = dict(
            answerer=answerer,
            view=view,
            max_rounds=max_rounds or settings.max_rounds,
            limits=settings.limits,
            timeout=timeout if timeout is not None else flow_timeout,
            store=self.store,
            save=save,
            cell_id=cell_id,
            prepare=prepare,
            task=task,
            task_handles=self.task_handles,
        )
        flow = Flow.from_saved(conn, saved, **options) if saved is not None else Flow(conn, method, name, arguments, **options)
        flow.notebook = self.frontend.path
        if method == "tools/call" and self.apps is not None and self._shows_apps():
            from ..core.threads import KernelLoop

            flow.app_host, flow.app_main = self.apps, getattr(view, "main", None) or KernelLoop()
        self.last_flow = flow
        return flow

    def call(
        self,
        method: Method,
        conn: Connection,
        name: str,
        arguments: dict[str, Any] | None,
        options: CallOptions,
        *,
        interactive: bool,
        cell_id: str | None,
        resume: dict[str, Any] | None = None,
        prepare: Callable[[], Awaitable[dict[str, Any]]] | None = None,
    ) -> Flow | Choice | None:
        """Start a flow (or continue the saved ``resume`` record) for a cell; returns at once.

        Interactive: the flow shows itself in a ``LiveView`` in the current output area (returns
        the ``ResumeOffer`` panel when the cell's saved flow is offered instead: its ``outcome()``
        is the flow a click starts). Headless: the caller waits on ``flow.result()`` and shows the report.
        """
        if resume is None and cell_id and options.save:
            waiting = self._saved_for_cell(cell_id, method, conn.name, name)
            if waiting is not None:
                if interactive:
                    return self._offer(waiting, method, conn, name, arguments, options, cell_id)
                self.tell(Note(f"This cell has a saved flow {waiting['id']} waiting for input (round {waiting['round']}); starting a new call.",
                               "saved_flow_waiting", flow_id=waiting["id"], round=waiting["round"]))
        saved = SavedFlow.from_dict(resume) if resume is not None else None
        if saved is not None:
            cell_id = cell_id or saved.cell_id
            if cell_id != saved.cell_id and options.save:
                self.store.save(replace(saved, cell_id=cell_id).to_dict())  # the marker follows the form
        if interactive and options.save:
            self._notice(interactive=True)
        started = _Started(answers=options.fresh_answers(), timeout=options.timeout, save=options.save, cell_id=cell_id, saved=saved, prepare=prepare, task=options.task)
        if not interactive:
            flow = self.start(method, conn, name, arguments, **started)
            flow.shown = True
            return flow
        view = self.views.live_view(f"{conn.name}.{name}", trace=options.trace)
        again = replace(options, output=None)  # same answers, no output variable
        view.start_over = lambda: self.call(method, conn, name, arguments, again, interactive=True, cell_id=cell_id)
        flow = self.start(method, conn, name, arguments, ui=view, view=view, **started)  # the live view is the flow's FlowUI too
        view.attach(flow)
        flow.shown = True
        if options.output:
            self._bind_when_done(flow, options.output, view)
        return flow

    def _shows_apps(self) -> bool:
        """Whether a call started here may show an App: from a cell of a kernel whose page runs the extension.

        Without the extension (nbclient, nbval, nbconvert, a viewer) nobody could render it: the
        report stays plain, and its text is the output. Before the page has answered (Run All right
        after ``%load_ext``), a cell sent by a front end that allows stdin counts as JupyterLab's.
        """
        import threading

        if threading.current_thread() is not threading.main_thread():
            return False
        status = self.frontend.status
        if status == "pending":  # Run All: the page's answer to hello comes after the queued cells; a page that allows stdin is JupyterLab's
            return self._cell_allows_stdin()
        return status == "connected"

    def _cell_allows_stdin(self) -> bool:
        """Whether the running cell came from a front end that allows stdin (JupyterLab, Notebook 7; not nbclient)."""
        return bool(self.cell_request().get("content", {}).get("allow_stdin", False))

    def cell_request(self) -> dict[str, Any]:
        """The execute request of the running cell (ipykernel 6 and 7 spell this differently); ``{}`` outside a kernel."""
        kernel = getattr(self.shell, "kernel", None)
        if kernel is None:
            return {}
        try:
            request = kernel.get_parent("shell") or {}
        except TypeError:
            request = kernel.get_parent() or {}
        return request if isinstance(request, dict) else {}

    def task_board(self) -> Any:
        """The live table of the running cell's plain-API tasks; ``None`` outside a kernel (kernel thread)."""
        if self.shell is None or getattr(self.shell, "kernel", None) is None:
            return None
        self._board = self.views.task_board(self._board, getattr(self.shell, "execution_count", None))
        return self._board

    def _notice(self, interactive: bool) -> None:
        notice = self.frontend.notice(interactive)
        if notice:
            self.tell(notice)

    def kept_notice(self, flow: Flow) -> None:
        """After a headless flow: when its record was kept to be resumed, say where it lives."""
        if self.store.get(flow.id) is not None:
            self._notice(interactive=False)

    def _bind_when_done(self, flow: Flow, var: str, view: Any) -> None:
        """``-o VAR`` for an interactive flow: bind on the kernel thread once the flow ends."""
        namespace = self.namespace

        def bind(_future: Any) -> None:
            if flow.error is None and flow.value is not None:
                view.main.call(namespace.__setitem__, var, flow.value)

        assert flow._future is not None
        flow._future.add_done_callback(bind)

    def save_trace(self, flow: Flow, path: str) -> None:
        """Write ``flow``'s trace (its label, protocol and events) to ``path`` as JSON."""
        import json

        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"flow": flow.label, "protocol": flow.conn.protocol_version, "events": flow.trace()}, fh, indent=2, default=str)

    # ------------------------------------------------------------------ saved flows
    def load_saved(self, from_path: str | None) -> Page:
        """Make sure the saved records are in the store (a file given, or ``__session__``); tell warnings."""
        frontend = self.frontend
        if from_path:
            try:
                frontend.read_file(from_path)
            except OSError as exc:
                raise SessionError(f"cannot read {from_path}: {exc.strerror or exc}", kind="unreadable_file", details={"path": from_path}) from None
        frontend.ensure_loaded()
        for warning in frontend.take_warnings():
            self.tell(f"Warning: {warning}")
        return frontend

    def flows(self, from_path: str | None, *, interactive: bool) -> list[dict[str, Any]]:
        """The saved flows waiting for input (read first: see ``load_saved``)."""
        self.load_saved(from_path)
        records = self.store.all()
        if records:
            self._notice(interactive)
        return records

    def task_rows(self, server: str | None = None) -> list[list[Any]]:
        """``%mcp tasks``: tasks followed here, tasks saved in the notebook, and the server's own list (2025, where offered).

        Rows: flow id, server, tool, status, status message, created, ttl, where. A task id is never
        shown (a bearer-like handle); a task known only from the server's list shows its fingerprint.
        """
        from ..wire.tasks import fingerprint, TaskStatus

        self.load_saved(None)
        conns = [self.registry.get(server)] if server else list(self.registry)
        rows: list[list[Any]] = []
        known: set[str] = set()
        for conn in conns:
            for flow in list(conn.flows):
                if flow.task is not None and not flow.finished:
                    known.add(flow.task.task_id)
                    rows.append([flow.id, conn.name, flow.name, flow.task.status, _line(flow.task.message), flow.task.created_at or "", _ttl(flow.task), "followed here"])
        for record in self.store.all():
            task = record.get("task")
            if not isinstance(task, dict) or (server and record["server"]["name"] != server):
                continue
            if self.live_flow(record["id"]) is not None:
                continue
            task_id = self.task_handles.task_id(str(task.get("ref"))) if self.store.is_trusted(record["id"]) else None
            if task_id is not None:
                known.add(task_id)
            status = TaskStatus(task_id="", status=str(task.get("status")), created_at=task.get("created"), ttl_ms=task.get("ttl_ms"))
            where = "saved: %mcp resume " + line_word(record["id"]) if task_id is not None else "saved, but its handle is not on this machine"  # a record's id: encoded for the line
            rows.append([record["id"], record["server"]["name"], record["name"], status.status, "", status.created_at or "", _ttl(status), where])
        for conn in conns:
            client = conn.task_client
            if client is None or not client.can_list:
                continue
            try:
                listed = self.runtime.run(client.list(), timeout=10)
            except Exception as exc:  # noqa: BLE001 - one server's listing must not hide the rest
                rows.append(["", conn.name, "", "", f"could not list its tasks: {describe_exception(exc)[0][:200]}", "", "", "on the server"])
                continue
            for status in listed:
                if status.task_id not in known:
                    rows.append([fingerprint(status.task_id), conn.name, "", status.status, _line(status.message), status.created_at or "", _ttl(status), "on the server"])
        return rows

    def pick_saved(self, flow_id: str | None, cell_id: str | None) -> dict[str, Any]:
        """The record ``flow_id``, else the only one of this cell, else the only one at all."""
        store = self.store
        if flow_id:
            record = store.get(flow_id)
            if record is None:
                raise self._no_saved_flow(flow_id)
            return record
        candidates = (store.for_cell(cell_id) if cell_id else []) or store.all()
        if not candidates:
            raise SessionError("No flow is waiting for input.", kind="nothing_waiting")
        if len(candidates) > 1:
            ids = [r["id"] for r in candidates]
            raise SessionError(f"several saved flows are waiting ({', '.join(ids)}); say which.", kind="several_waiting", details={"ids": ids})
        return candidates[0]

    def _no_saved_flow(self, flow_id: str) -> SessionError:
        waiting = [r["id"] for r in self.store.all()]
        text = f"no saved flow {flow_id!r} (waiting: {', '.join(waiting) or 'none'})."
        return SessionError(text, kind="no_saved_flow", flow_id=flow_id, details={"ids": waiting})

    def resume(self, record: dict[str, Any], options: CallOptions, *, interactive: bool, cell_id: str | None, wait: bool = False) -> Flow | Choice | None:
        """Continue ``record``: reconnect, re-render its questions here, go on with its saved state.

        ``interactive`` says whether a person can answer here (the consent panel needs one);
        ``wait`` keeps the flow itself headless all the same (``--wait``). Returns the consent
        panel when it was shown instead (its ``outcome()`` is the flow a Resume click starts).
        """
        live = self.live_flow(record["id"])
        if live is not None:
            if live.state is not FlowState.WAITING:
                raise SessionError(f"flow {record['id']} is running in this kernel right now; wait for it, or cancel it first", kind="flow_running", flow_id=record["id"])
            live.cancel(forget=False)  # it continues here; its form elsewhere goes away
            try:
                live.result(timeout=10)
            except Exception:  # noqa: BLE001 - cancelled, as asked
                pass
        concerns = self.resume_concerns(record)
        if concerns and not options.trust:  # a Continue button passes the call's flags
            if interactive:
                return self._confirm_resume(record, concerns, options, cell_id)
            raise consent_needed(record, concerns)
        conn, reconnected = self.reconnect(record, interactive=interactive and not wait)
        if reconnected:
            text = f"Reconnected {conn.name!r} to {conn.target.describe()} to resume flow {record['id']}."
            self.tell(Note(text, "reconnected", flow_id=record["id"], server=conn.name))
        self._notice(interactive)  # resuming changes what is saved; without the extension the file keeps the old record
        return self.call(
            record["method"], conn, record["name"], dict(record.get("arguments") or {}), options,
            interactive=interactive and not wait, cell_id=cell_id, resume=record,
        )  # fmt: skip

    def _confirm_resume(self, record: dict[str, Any], concerns: list[str], options: CallOptions, cell_id: str | None) -> Choice:
        """Show what the record would do and resume only when the user says yes (a cell awaits the panel's outcome)."""
        def confirmed() -> Flow | Choice | None:
            self.store.trust(record["id"])
            return self.resume(record, replace(options, trust=True), interactive=True, cell_id=cell_id)

        return self.views.confirm_resume(record, concerns, confirmed)

    def live_flow(self, flow_id: str) -> Flow | None:
        """A flow of this session with that id that has not finished, if any."""
        for conn in self.registry:
            for flow in list(conn.flows):
                if flow.id == flow_id and not flow.finished:
                    return flow
        return None

    def _saved_for_cell(self, cell_id: str, method: str, server: str, name: str) -> dict[str, Any] | None:
        """A saved flow that this cell started with the same call, still waiting for input."""
        self.frontend.ensure_loaded()
        for record in self.store.for_cell(cell_id):
            if record["method"] == method and record["name"] == name and record["server"]["name"] == server:
                live = self.live_flow(record["id"])
                if live is None or live.state is FlowState.WAITING:
                    return record
        return None

    def _offer(self, record: dict[str, Any], method: Any, conn: Connection, name: str, arguments: Any, options: CallOptions, cell_id: str) -> Choice:
        """Re-running the cell of a waiting flow: offer Continue / Start over (a cell awaits the panel's outcome)."""

        def resume() -> Flow | Choice | None:
            current = self.store.get(record["id"]) or record
            return self.resume(current, options, interactive=True, cell_id=cell_id)

        def start_over() -> Flow | Choice | None:
            live = self.live_flow(record["id"])
            if live is not None:
                live.cancel()
            self.store.delete(record["id"])
            self._drop_task_handle(record)
            return self.call(method, conn, name, arguments, options, interactive=True, cell_id=cell_id)

        return self.views.resume_offer(record, resume, start_over)

    def forget(self, flow_id: str | None = None, *, everything: bool = False) -> None:
        """Forget one saved flow, or all of them (a live one is cancelled)."""
        self.load_saved(None)
        if everything:
            records = self.store.all()
            for gone in self.store.forget_all():
                live = self.live_flow(gone)
                if live is not None:
                    live.cancel()
            for record in records:
                self._drop_task_handle(record)
            self.frontend.delete_all()
            return
        if not flow_id:
            raise SessionError("no flow id given (or forget everything)", kind="flow_id_needed")
        saved = self.store.get(flow_id)
        if saved is None:
            raise self._no_saved_flow(flow_id)
        self.store.delete(flow_id)
        self._drop_task_handle(saved)

    def _drop_task_handle(self, record: Mapping[str, Any]) -> None:
        """A forgotten task record: its handle goes too (the task itself runs on until its ttl)."""
        task = record.get("task")
        if isinstance(task, dict) and isinstance(task.get("ref"), str) and self.store.is_trusted(record["id"]):
            self.task_handles.remove(task["ref"])

    def resume_concerns(self, record: Mapping[str, Any]) -> list[str]:
        """Why resuming ``record`` needs the user's consent first (empty: it may go on by itself).

        A record this user did not write (a received notebook) could run any command, send a token
        anywhere, or call any tool; and a record whose connection name now points elsewhere would
        hand its saved state to another server.
        """
        concerns: list[str] = []
        server = record["server"]
        if not self.store.is_trusted(record["id"]):
            concerns.append(
                "it was not saved by you: it carries no valid signature of yours (mcp-notebook signs the flows it "
                "saves with your Jupyter notebook secret), so it may come from someone else's notebook"
            )
        name = server["name"]
        if name in self.registry:
            saved, current = target_of(server), target_of(self.registry.get(name).target.saved())
            if saved != current:
                where = f"{saved[0]} (folder {saved[1]})" if saved[1] else saved[0]
                now = f"{current[0]} (folder {current[1]})" if current[1] else current[0]
                concerns.append(f"connection {name!r} now points to {now}, but the flow was saved against {where}; its saved state would go there")
        return concerns

    def reconnect(self, record: dict[str, Any], interactive: bool = False) -> tuple[Connection, bool]:
        """The connection a saved flow talks to, and whether it had to be opened again.

        Open by its name, else reconnected from its saved target. Says plainly what the user must
        supply again when the record cannot (an in-notebook server, header or environment values,
        which are never saved).
        """
        server = record["server"]
        name, flow_id = server["name"], record["id"]
        target = server.get("target") if isinstance(server.get("target"), str) else ""
        registry = self.registry
        if name in registry:
            conn = registry.get(name)
            if conn.is_open:
                return conn, False
            if conn.sign_in_setup is not None:
                self._page_first(interactive)
            again = registry.connect(
                name, conn.target, protocol=conn.protocol, log_level=conn.log_level, read_timeout=conn.read_timeout,
                connect_timeout=conn.connect_timeout, sign_in_setup=conn.sign_in_setup, return_on_sign_in=interactive,
            )  # fmt: skip
            return again, True
        kind = Target.kind_of_saved(server)
        refusal = dict(kind="reconnect_needed", flow_id=flow_id, server=name, details={"target": target})
        if kind == "inproc":
            raise FlowError(
                f"Flow {flow_id} talked to {target or name!r}, a server defined inside the notebook's previous "
                f"kernel, and it is not defined in this one. Define the server again and connect it as {name!r} to resume the flow.",
                reason="inproc", **refusal,
            )  # fmt: skip
        if kind == "http" and server.get("headers"):
            refusal["details"]["names"] = list(server["headers"])
            raise FlowError(
                f"Flow {flow_id} reached {target} with HTTP headers ({', '.join(server['headers'])}) whose values are never saved. "
                f"Connect {name!r} again with those headers to resume the flow.",
                reason="headers", **refusal,
            )  # fmt: skip
        if kind == "stdio" and server.get("env"):
            refusal["details"]["names"] = list(server["env"])
            raise FlowError(
                f"Flow {flow_id} started its server with environment variables ({', '.join(server['env'])}) whose values are never saved. "
                f"Connect {name!r} again with those variables to resume the flow.",
                reason="env", **refusal,
            )  # fmt: skip
        if kind == "http":
            how: Any = target
            options: dict[str, Any] = {"bearer_env": server.get("bearer_env"), "interactive": interactive}
            if isinstance(server.get("oauth"), dict):  # the sign-in it used (names only; a foreign record was consented to)
                options["oauth"] = OAuthOptions.from_saved(server["oauth"])
        else:
            how = target  # "-- COMMAND ARGS", exactly what %mcp connect takes
            options = {"cwd": server.get("cwd")}
        error: FlowError | None = None
        try:
            conn = self.connect(name, how, **options)
        except FlowError as exc:
            error = FlowError(
                f"{exc}\nFlow {flow_id} stays saved; it can be resumed once the server is reachable.", code=exc.code, data=exc.data,
                kind="still_saved", flow_id=flow_id, server=name, reason="unreachable", details={"error": exc},
            )  # fmt: skip
        if error is not None:
            raise error
        return conn, True


def _ttl(status: Any) -> str:
    """A task's time to live, and whether it has run out (a ``tasks.TaskStatus``)."""
    if status.ttl_ms is None:
        return "unlimited" if status.created_at else ""
    return f"{status.ttl_ms / 1000:g} s" + (" (expired)" if status.expired() else "")


def _line(text: str | None) -> str:
    return (text or "").strip().split("\n")[0]


@contextlib.contextmanager
def _bad_input() -> Any:
    """``KeyError`` / ``ValueError`` / ``FileNotFoundError`` of the router or the roots as a ``SessionError``."""
    error: SessionError | None = None
    try:
        yield
    except (KeyError, ValueError, FileNotFoundError) as exc:
        error = SessionError(str(exc).strip("'\""), kind="bad_input")
    if error is not None:
        raise error


def consent_needed(record: dict[str, Any], concerns: list[str]) -> SessionError:
    """The headless refusal: why, and everything the flow would do (``CallOptions(trust=True)`` goes on)."""
    flow_id = record["id"]
    text = f"Flow {flow_id} was not resumed: " + "; and ".join(concerns) + ".\n" + record_text(record)
    return SessionError(text, kind="consent_needed", flow_id=flow_id, server=record["server"]["name"], details={"concerns": concerns})
