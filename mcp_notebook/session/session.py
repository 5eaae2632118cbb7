"""``Session``: everything one MCP client knows, and the whole life of its flows.

A session owns the connections (``Registry``, on its own ``Runtime`` loop thread), the saved
records (``Store``, mirrored by its ``Frontend`` comm client), the model router, the roots and
the servers defined in the notebook. It starts flows, offers and resumes saved ones, and forgets
them. ``MCPMagics`` creates and owns one (the ``%mcp`` commands parse text and call it); the plain
Python API (``session.api``) uses the magics' session inside IPython, else a default one.

Settings live in one place only: the traitlets of ``SessionSettings`` (``MCPMagics`` inherits
them, so ``%config MCPMagics.max_rounds = 5`` is the setting itself). The session keeps a
reference and reads them when it needs them: a new flow reads ``max_rounds``, ``flow_timeout``
and the size limits as it starts; the store reads ``max_record_bytes`` at each save. The model
router is the one thing kept in step: ``%config MCPMagics.models`` / ``default_model`` /
``review`` are applied to it as they change, because ``%mcp model add`` adds models that live
only in the router.

Why this module is still long: connecting (targets, headers, OAuth options) and starting flows
(``make_flow``, ``call``) are the session's own; its saved flows are ``saved.py``, its sign-ins
``sign_in.py``, its settings ``settings.py``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypedDict, cast

from ..auth.sdk_provider import OAuthOptions
from ..auth.vault import TokenVault
from ..core.kept import Kept
from ..core.threads import Runtime
from ..errors import FlowError, Note, SessionError
from ..flows.answering import Answerer
from ..flows.flow import Flow, Method
from ..flows.options import FlowOptions
from ..flows.record import SavedFlow
from ..flows.store import Store
from ..flows.ui import FlowUI, HeadlessUI
from ..forms.model import Answers
from ..prototype import Prototypes
from ..sampling.router import ModelRouter
from ..wire.connection import Connection
from ..wire.registry import Registry
from ..wire.roots import Roots
from ..wire.task_handles import TaskHandles, TaskOptions
from .page import Page
from .saved import SavedFlows
from .settings import CallOptions, SessionSettings
from .sign_in import SignIns
from .views import Apps, Choice, NoViews, Views, Watching

if TYPE_CHECKING:
    from ..flows.replay import Replay

__all__ = ["NOTES_KEPT", "CallOptions", "Session", "SessionSettings"]

NOTES_KEPT = 100
"""Notes a session without a ``tell`` keeps (``Session.notes``: plain Python, a Dask worker), the newest.

A note is told per event (a saved flow waiting in the cell, a file's warning), so a script that calls
all day would grow the list; a person reads the last ones, and ``notes.dropped`` counts the others."""


class _Started(TypedDict):
    """What ``Session.call`` passes on to ``Session.start`` for both its headless and interactive runs."""

    answers: Answers
    timeout: float | None
    save: bool
    cell_id: str | None
    saved: SavedFlow | None
    prepare: Callable[[], Awaitable[dict[str, Any]]] | None
    task: TaskOptions | None


class Session:
    """One MCP client: its connections, saved flows, models, roots and notebook servers; runs flows."""

    def __init__(
        self,
        settings: SessionSettings | None = None,
        *,
        shell: Any = None,
        tell: Callable[[str], None] | None = None,
        views: Views | None = None,
    ) -> None:
        from ..core.lazy_imports import defer_format_libraries

        defer_format_libraries()  # before anything imports jsonschema: its format libraries wait until a format is checked
        self.settings = settings if settings is not None else SessionSettings()
        self.shell = shell
        # Notes for the person (a saved flow reconnected, the one not-saved notice, file warnings). The
        # session never prints: the magics pass ``print``; without them the notes are kept in ``notes``.
        self.notes: Kept[str] = Kept(NOTES_KEPT)
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
        self.apps: Apps | None = None  # MCP Apps shown in this kernel's outputs (set by the notebook side)
        self.watches: Watching | None = None  # resources watched live in cells (%mcp watch; set by the notebook side)
        self.saved = SavedFlows(self)  # the flows waiting in the notebook: listed, offered, resumed, forgotten
        self.sign_ins = SignIns(self)  # OAuth sign-ins of the connections, and where a person is asked
        self._newest: Flow | None = None  # the flow made last (``last_flow`` may pass over it)
        self._traced: Flow | None = None  # the newest flow before it that had a trace
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
        self.sign_ins.close()

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
        expanded_from: Iterable[str] = (),
    ) -> Connection:
        """Open connection ``name`` to a URL, a command (list or ``-- cmd``), ``module:attr`` or a server object.

        An HTTP server that answers 401 gets an OAuth sign-in (``oauth`` picks the client; ``sign_in=False``
        turns it off), unless ``headers`` or ``bearer_env`` give an Authorization already. ``interactive``:
        a person is at this cell, so a sign-in is shown there and this returns at once; the connection
        opens when the sign-in completes. ``expanded_from``: the environment variables ``headers`` or
        ``env`` values were read from (a config file's ``${VAR}``), asked of the policy again at each open.
        """
        from ..wire.target import parse_target

        if protocol not in ("auto", "legacy", "2026-07-28"):
            raise SessionError(f"protocol must be auto, legacy or 2026-07-28, not {protocol!r}", kind="bad_input")
        resolved = parse_target(target, namespace=namespace)
        resolved.expanded_from = tuple(expanded_from)
        if resolved.kind == "http":
            resolved.headers = dict(headers or {})
            resolved.bearer_env = bearer_env
            if self.prototypes.token_for(resolved.url) is not None:  # our own %mcp serve: its token, in memory only
                resolved.served_token = lambda url=resolved.url: self.prototypes.token_for(url)
            own_authorization = (
                bool(bearer_env)
                or any(k.lower() == "authorization" for k in resolved.headers)
                or resolved.served_token is not None
            )
            if sign_in and not own_authorization:
                resolved.oauth = oauth or OAuthOptions()
            elif oauth is not None:
                raise SessionError(
                    "OAuth sign-in options cannot be combined with an Authorization header or bearer_env",
                    kind="bad_input",
                )
        elif headers or bearer_env or oauth is not None:
            raise SessionError("headers, bearer_env and sign-in options only apply to HTTP URLs", kind="bad_input")
        if resolved.kind == "stdio":
            resolved.cwd, resolved.env = cwd, dict(env or {})
        elif cwd or env:
            raise SessionError("cwd and env only apply to stdio commands", kind="bad_input")
        limit = read_timeout if read_timeout is not None else self.settings.connect_timeout
        if resolved.oauth is not None:
            self.sign_ins.page_first(interactive)
        return self.registry.connect(
            name, resolved, protocol=protocol, log_level=self.settings.log_level, read_timeout=read_timeout,
            connect_timeout=float(limit) if limit is not None else None,
            sign_in_setup=self.sign_ins.setup if resolved.oauth is not None else None, return_on_sign_in=interactive,
        )  # fmt: skip

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
                raise SessionError(
                    "the callable provider needs the name of a function in the notebook as its model", kind="bad_input"
                )
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

    def define_server(self, name: str, code: str, var: str | None = None) -> tuple[list[str], list[list[str]]]:
        """Run ``code`` in the namespace and connect the server it defines as ``name`` (again: hot reload).

        Returns what to tell (a headline, or that the cell failed and the old version runs on) and
        what changed as rows ``[change, kind, name]`` (``prototype.diff_rows``).
        """
        from ..prototype import (
            Inventory,
            describe_diff,
            diff_rows,
            find_new_server,
            inventory_diff,
            root_logging_kept,
            server_ids,
        )

        if self.shell is None:
            raise SessionError("defining a server from code needs an IPython shell", kind="bad_input")
        protos = self.prototypes
        before = server_ids(self.namespace)
        with root_logging_kept():  # MCPServer() calls logging.basicConfig(level=INFO) on the user's kernel
            result = self.shell.run_cell(code, store_history=False)
        if not result.success:
            return [
                f"The cell failed{f'; {name!r} still runs the previous version' if name in protos.objects else ''}."
            ], []
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
        return told, diff_rows(diff)

    # ------------------------------------------------------------------ starting flows
    def start(
        self, method: Method, conn: Connection, name: str, arguments: dict[str, Any] | None = None, **options: Any
    ) -> Flow:
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
        view: FlowUI | None = None,
        ui: FlowUI | None = None,
        timeout: float | None = None,
        save: bool = True,
        cell_id: str | None = None,
        max_rounds: int | None = None,
        saved: SavedFlow | None = None,
        prepare: Callable[[], Awaitable[dict[str, Any]]] | None = None,
        task: TaskOptions | None = None,
        answerer: Answerer | None = None,
        progress: bool = True,
    ) -> Flow:
        """Create a flow (going on from ``saved`` when given), not yet started: ``flow.start()``, or ``await flow.run_here()`` on the loop.

        ``view``: where the flow shows itself (a cell's live view), which asks its questions too;
        ``ui``: who asks them instead (a map's one form for all its rows); neither: headless.
        ``answerer``: who answers its questions, instead of one made of ``answers`` and the ``ui`` (a replay's).
        ``progress=False``: the server is not asked for progress (a map's bar counts rows).

        ``prepare``: the arguments are made on the loop once the flow runs (they need the tool's
        schema, which a server that wants a sign-in first gives only after it, shown in the flow's cell).

        Settings are read now, into the flow's one ``FlowOptions``: the flow keeps them.
        """
        settings = self.settings
        flow_timeout = float(settings.flow_timeout) if settings.flow_timeout is not None else None
        view = view if view is not None else HeadlessUI()
        answerer = answerer or Answerer(
            answers=answers or Answers(), router=self.router, root_list=self.roots, ui=ui if ui is not None else view
        )
        apps = self.apps if method == "tools/call" and self.apps is not None and self._shows_apps() else None
        if apps is not None:
            from ..core.threads import KernelLoop

            # the App shows in this cell: a live area brings its cell's loop (``LiveFlowView.main``); a ``FlowUI``
            # need not have one (a task board, a headless view)
            app_main: KernelLoop | None = getattr(view, "main", None) or KernelLoop()
        else:
            app_main = None
        options = FlowOptions(
            answerer=answerer,
            view=view,
            max_rounds=max_rounds or settings.max_rounds,
            timeout=timeout if timeout is not None else flow_timeout,
            limits=settings.limits,
            store=self.store,
            save=save,
            cell_id=cell_id,
            notebook=self.frontend.path,
            prepare=prepare,
            progress=progress,
            task=task,
            task_handles=self.task_handles,
            apps=apps,
            app_main=app_main,
        )
        flow = (
            Flow.from_saved(conn, saved, options) if saved is not None else Flow(conn, method, name, arguments, options)
        )
        if self._newest is not None and len(self._newest.rounds):
            self._traced = self._newest
        self._newest = flow
        return flow

    @property
    def last_flow(self) -> Flow | None:
        """The flow ``%mcp trace`` shows: the newest, unless it ended before anything crossed the wire.

        A call that never started (a resume refused for a missing answer before it sent anything) has
        an empty trace; showing it would hide the trace the person just saw, of the call it continues.
        """
        newest = self._newest
        if newest is not None and newest.finished and not len(newest.rounds) and self._traced is not None:
            return self._traced
        return newest

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
        resume: SavedFlow | None = None,
        prepare: Callable[[], Awaitable[dict[str, Any]]] | None = None,
    ) -> Flow | Choice | None:
        """Start a flow (or continue the saved ``resume`` record) for a cell; returns at once.

        Interactive: the flow shows itself in a ``LiveView`` in the current output area (returns
        the ``ResumeOffer`` panel when the cell's saved flow is offered instead: its ``outcome()``
        is the flow a click starts). Headless: the caller waits on ``flow.result()`` and shows the report.
        """
        if resume is None and cell_id and options.save:
            waiting = self.saved.for_cell(cell_id, method, conn.name, name)
            if waiting is not None:
                if interactive:
                    self.frontend.begin_flow(waiting.id, cell_id, interactive=True)  # re-running cleared its output
                    return self.saved.offer(waiting, method, conn, name, arguments, options, cell_id)
                self.tell(
                    Note(
                        f"This cell has a saved flow {waiting.id} waiting for input (round {waiting.round}); starting a new call.",
                        "saved_flow_waiting",
                        flow_id=waiting.id,
                        round=waiting.round,
                    )
                )
        saved = resume
        if saved is not None:
            cell_id = cell_id or saved.cell_id
            if cell_id != saved.cell_id and options.save:
                self.store.save(replace(saved, cell_id=cell_id).to_dict())  # the marker follows the form
        if interactive and options.save:
            self.notice(interactive=True)
        started = _Started(
            answers=options.fresh_answers(),
            timeout=options.timeout,
            save=options.save,
            cell_id=cell_id,
            saved=saved,
            prepare=prepare,
            task=options.task,
        )
        if not interactive:
            flow = self.make_flow(method, conn, name, arguments, **started)
            if options.save:
                self.frontend.begin_flow(flow.id, cell_id, interactive=False)  # where its record goes, if it waits
            flow.start()
            flow.shown = True
            return flow
        again = replace(options, output=None)  # same answers, no output variable
        view = self.views.live_view(
            f"{conn.name}.{name}",
            trace=options.trace,
            start_over=lambda: self.call(method, conn, name, arguments, again, interactive=True, cell_id=cell_id),
        )
        flow = self.make_flow(method, conn, name, arguments, view=view, **started)
        if options.save:
            self.frontend.begin_flow(flow.id, cell_id, interactive=True)
        flow.start()
        view.attach(flow)
        flow.shown = True
        if options.output:
            self._bind_when_done(flow, options.output, view)
        return flow

    def _shows_apps(self) -> bool:
        """Whether a call started here may show an App: from a cell of a kernel whose page runs the extension,
        or a person's front end without it (where the App is a widget: ``notebook.app_widget``).

        Headless (nbclient, nbval, papermill) nobody could render it: the report stays plain, and its
        text is the output.
        """
        import threading

        if threading.current_thread() is not threading.main_thread():
            return False
        status = self.frontend.status
        if status == "connected":
            return True
        # Run All: the page's answer to hello comes after the queued cells, and a front end that never
        # answers (VS Code, Colab, JupyterLab without the extension) renders the App as a widget: a
        # cell from a front end that allows stdin is a person's (nbclient and papermill do not)
        return status in ("pending", "silent", "absent") and self._cell_allows_stdin()

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
        self._board = self.views.task_board(self._board, self.shell.execution_count)
        return self._board

    def notice(self, interactive: bool) -> None:
        """Tell the one plain notice, once, that waiting flows will not reach the notebook (no page saves them)."""
        notice = self.frontend.notice(interactive)
        if notice:
            self.tell(notice)

    def kept_notice(self, flow: Flow) -> None:
        """After a headless flow (kernel thread): the page writes what it leaves; when its record was kept, say where.

        A kept record waits (once per kernel, at most ``page_wait`` s) for a page that has not answered
        the hello yet: under Run All its answer comes while the cells still run, and only then is it known
        whether the record went into the notebook's metadata (the extension), into this cell's output
        (a front end without it), or nowhere.
        """
        kept = self.store.get(flow.id) is not None
        if kept and not self.frontend.saves(interactive=False):  # headless (nbclient): outputs, nothing to wait for
            self.frontend.wait_for_page()
        self.frontend.settle(flow.id)
        if kept:
            self.notice(interactive=False)

    def _bind_when_done(self, flow: Flow, var: str, view: Any) -> None:
        """``-o VAR`` for an interactive flow: bind on the kernel thread once the flow ends."""
        namespace = self.namespace

        def bind(ended: Flow) -> None:
            if ended.error is None and ended.value is not None:  # as the notebook side binds values (readable)
                view.main.call(namespace.__setitem__, var, self.views.bound(ended.value))

        flow.when_done(bind)

    def live_flow(self, flow_id: str) -> Flow | None:
        """A flow of this session with that id that has not finished, if any."""
        for conn in self.registry:
            for flow in cast("list[Flow]", list(conn.flows)):  # the calls a connection names as wire.Caller
                if flow.id == flow_id and not flow.finished:
                    return flow
        return None

    def save_trace(self, flow: Flow, path: str, keep_answers: bool = False) -> dict[str, Any]:
        """Write ``flow``'s trace and its recording (``flows/replay.py``) to ``path`` as JSON; returns the recording.

        ``keep_answers``: the recording keeps the answers' values (never a secret-looking field's), so
        a replay needs none given.
        """
        from .replay import save_trace

        return save_trace(flow, path, keep_answers, self.store.signer)

    def replay(
        self,
        path: str,
        server: str | None = None,
        answers: Answers | None = None,
        timeout: float | None = None,
        trust: bool = False,
    ) -> Replay:
        """Call the recorded flow of the trace file ``path`` again, answered as recorded; what changed (``Replay``).

        ``trust``: replay a recording this user did not write (refused, shown whole, without it).
        """
        from .replay import replay

        return replay(self, path, server, answers or Answers(), timeout, trust)


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
