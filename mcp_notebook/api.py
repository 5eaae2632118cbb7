"""The Python API behind the magics: connect, call, prompt, read (usable from scripts too).

One ``Hub`` per process holds the connections, the saved-flow store, the model router and the
roots. The magics parse text and delegate here; scripts and users who prefer code call
``mcp_notebook.connect(...)`` / ``mcp_notebook.call(...)`` directly.
"""

from __future__ import annotations

import importlib
import shlex
from dataclasses import dataclass, field
from typing import Any, Mapping

from .answering import Answerer, FormUI
from .connections import Connection, Registry, Target, registry
from .errors import FlowError
from .flows import Flow, FlowObserver, Method
from .form_model import Answers
from .limits import Limits
from .prototype import Prototypes, ServedServer
from .roots import Roots
from .runtime import get_runtime
from .sampling import ModelRouter
from .store import Store
from .trust import target_of

__all__ = ["Hub", "call", "connect", "get_hub", "parse_target", "prompt", "read"]


@dataclass
class Hub:
    """Everything the kernel's MCP client knows, in one place."""

    registry: Registry = field(default_factory=lambda: registry)
    store: Store = field(default_factory=Store)
    router: ModelRouter = field(default_factory=ModelRouter)
    roots: Roots = field(default_factory=Roots)
    prototypes: Prototypes = field(default_factory=Prototypes)
    max_rounds: int = 10
    flow_timeout: float | None = None
    log_level: str | None = "info"
    limits: Limits = field(default_factory=Limits)  # size bounds each new flow renders with
    last_flow: Flow | None = None

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
    ) -> Connection:
        """Open connection ``name`` to a URL, a command (list or ``-- cmd``), ``module:attr`` or a server object."""
        if protocol not in ("auto", "legacy", "2026-07-28"):
            raise FlowError(f"--protocol must be auto, legacy or 2026-07-28, not {protocol!r}")
        resolved = parse_target(target, namespace=namespace)
        if resolved.kind == "http":
            resolved.headers = dict(headers or {})
            resolved.bearer_env = bearer_env
            if self.prototypes.token_for(resolved.url) is not None:  # our own %mcp serve: its token, in memory only
                resolved.served_token = lambda url=resolved.url: self.prototypes.token_for(url)
        elif headers or bearer_env:
            raise FlowError("--header and --bearer-env only apply to HTTP URLs")
        if resolved.kind == "stdio":
            resolved.cwd, resolved.env = cwd, dict(env or {})
        elif cwd or env:
            raise FlowError("--cwd and --env only apply to stdio commands (after --)")
        return self.registry.connect(
            name, resolved, protocol=protocol, log_level=self.log_level, read_timeout=read_timeout  # type: ignore[arg-type]
        )

    def resolve(self, qualified: str) -> tuple[Connection, str]:
        """``server.tool`` or ``tool`` (when one connection is open) -> (connection, name)."""
        server, dot, rest = qualified.partition(".")
        if dot and server in self.registry:
            return self.registry.get(server), rest
        if dot and len(self.registry) > 1:
            return self.registry.get(server), rest  # explains: no connection by that name
        return self.registry.get(None), qualified

    def start(
        self,
        method: Method,
        conn: Connection,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        answers: Answers | None = None,
        ui: FormUI | None = None,
        view: FlowObserver | None = None,
        timeout: float | None = None,
        save: bool = True,
        cell_id: str | None = None,
        max_rounds: int | None = None,
        **resume: Any,
    ) -> Flow:
        """Create and start a flow; returns at once."""
        answerer = Answerer(answers=answers or Answers(), router=self.router, root_list=self.roots, ui=ui)
        flow = Flow(
            conn,
            method,
            name,
            arguments,
            answerer=answerer,
            view=view,
            max_rounds=max_rounds or self.max_rounds,
            limits=self.limits,
            timeout=timeout if timeout is not None else self.flow_timeout,
            store=self.store,
            save=save,
            cell_id=cell_id,
            **resume,
        )
        self.last_flow = flow
        return flow.start()

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

    def reconnect(self, record: dict[str, Any]) -> Connection:
        """The connection a saved flow talks to: open by its name, else reconnected from its saved target.

        Says plainly what the user must supply again when the record cannot (an in-notebook server,
        header or environment values, which are never saved).
        """
        server = record["server"]
        name, flow_id = server["name"], record["id"]
        target = server.get("target") if isinstance(server.get("target"), str) else ""
        registry = self.registry
        if name in registry:
            conn = registry.get(name)
            if conn.is_open:
                return conn
            reconnected = registry.connect(name, conn.target, protocol=conn.protocol, log_level=conn.log_level, read_timeout=conn.read_timeout)
            print(f"Reconnected {name!r} to {reconnected.target.describe()} to resume flow {flow_id}.")
            return reconnected
        kind = Target.kind_of_saved(server)
        again = f"then %mcp resume {flow_id}"
        if kind == "inproc":
            raise FlowError(
                f"Flow {flow_id} talked to {target or name!r}, a server defined inside the notebook's previous "
                f"kernel, and it is not defined in this one. Define the server again (run its cell, or "
                f"%mcp connect {name} ...), {again}."
            )
        if kind == "http" and server.get("headers"):
            names = ", ".join(server["headers"])
            raise FlowError(
                f"Flow {flow_id} reached {target} with HTTP headers ({names}) whose values are never saved. "
                f"Connect again with %mcp connect {name} {target} --header NAME:VALUE ..., {again}."
            )
        if kind == "stdio" and server.get("env"):
            names = ", ".join(server["env"])
            raise FlowError(
                f"Flow {flow_id} started its server with environment variables ({names}) whose values are never saved. "
                f"Connect again with %mcp connect {name} --env NAME=VALUE ... -- COMMAND, {again}."
            )
        if kind == "http":
            how: Any = target
            options: dict[str, Any] = {"bearer_env": server.get("bearer_env")}
        else:
            how = target  # "-- COMMAND ARGS", exactly what %mcp connect takes
            options = {"cwd": server.get("cwd")}
        error: FlowError | None = None
        try:
            conn = self.connect(name, how, **options)
        except FlowError as exc:
            error = FlowError(f"{exc}\nFlow {flow_id} stays saved; {again} once the server is reachable.", code=exc.code, data=exc.data)
        if error is not None:
            raise error
        print(f"Reconnected {name!r} to {conn.target.describe()} to resume flow {flow_id}.")
        return conn

    async def tool_schema(self, conn: Connection, tool: str) -> dict[str, Any]:
        """The input schema of ``tool``, with a clear error naming the tools when it is unknown."""
        tools = await conn.tools()
        if tool not in tools:
            tools = await conn.tools(refresh=True)
        if tool not in tools:
            known = ", ".join(sorted(tools)) or "none"
            raise FlowError(f"{conn.name} has no tool {tool!r}. Tools: {known}")
        return tools[tool].input_schema or {}

    def tool_schema_sync(self, conn: Connection, tool: str) -> dict[str, Any]:
        """From the connection's cache when it has the tool: no crossing to the loop on a hot path."""
        cached = conn.cached_tools
        if cached is not None and tool in cached:
            return cached[tool].input_schema or {}
        return get_runtime().run(self.tool_schema(conn, tool))


def parse_target(target: Any, namespace: Mapping[str, Any] | None = None) -> Target:
    """A connection target from what the user wrote (or passed from Python)."""
    if isinstance(target, (list, tuple)):
        return _stdio(list(target))
    if isinstance(target, ServedServer):  # what %mcp serve returns: its URL
        return Target(kind="http", url=target.url)
    if not isinstance(target, str):
        return _inproc(target, label=f"<in-process {type(target).__name__}>")
    text = target.strip()
    if text.startswith(("http://", "https://")):
        return Target(kind="http", url=text)
    if text.startswith("--"):
        return _stdio(shlex.split(text[2:]))
    if namespace is not None and text in namespace:
        return _inproc(namespace[text], label=text)
    module, colon, attr = text.partition(":")
    if colon and module and attr:
        try:
            obj: Any = importlib.import_module(module)
        except ImportError as exc:
            raise FlowError(f"cannot import {module!r} for target {text!r}: {exc}") from None
        for part in attr.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise FlowError(f"{module} has no attribute {attr!r}") from None
        return _inproc(obj, label=text)
    raise FlowError(
        f"don't know how to connect to {text!r}: give an http(s) URL, a server object in the notebook, "
        "module:attr, or -- COMMAND ARGS for a stdio server"
    )


def _stdio(command: list[str]) -> Target:
    if not command:
        raise FlowError("no command after --: write %mcp connect NAME -- COMMAND ARGS")
    import shutil

    if shutil.which(command[0]) is None:
        raise FlowError(f"command not found: {command[0]!r}. Check the spelling, or give the full path.")
    return Target(kind="stdio", command=command)


def _inproc(obj: Any, label: str) -> Target:
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    if not isinstance(obj, (MCPServer, Server)):
        raise FlowError(f"{label} is a {type(obj).__name__}, not an MCPServer or low-level Server")
    return Target(kind="inproc", obj=obj, label=label)


_hub: Hub | None = None


def get_hub() -> Hub:
    global _hub
    if _hub is None:
        _hub = Hub()
    return _hub


# ---------------------------------------------------------------------- module-level API
def connect(name: str, target: Any, **options: Any) -> Connection:
    """Open a named connection (see ``Hub.connect``)."""
    return get_hub().connect(name, target, **options)


def _answers(answers: Mapping[str, Any] | None, accept_defaults: bool) -> Answers:
    return Answers(fields=dict(answers or {}), accept_defaults=accept_defaults)


def call(
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    answers: Mapping[str, Any] | None = None,
    accept_defaults: bool = False,
    timeout: float | None = None,
    save: bool = False,
) -> Flow:
    """Call ``[server.]tool`` headless with preset answers; returns the started ``Flow``.

    ``flow.result()`` blocks for the ``CallToolResult``; ``await flow`` waits without blocking.
    """
    hub = get_hub()
    conn, name = hub.resolve(tool)
    return hub.start("tools/call", conn, name, dict(arguments or {}), answers=_answers(answers, accept_defaults), timeout=timeout, save=save)


def prompt(
    name: str, arguments: Mapping[str, Any] | None = None, *, answers: Mapping[str, Any] | None = None, accept_defaults: bool = False
) -> Flow:
    """Get ``[server.]prompt`` (a ``GetPromptResult`` flow)."""
    hub = get_hub()
    conn, short = hub.resolve(name)
    return hub.start("prompts/get", conn, short, dict(arguments or {}), answers=_answers(answers, accept_defaults), save=False)


def read(
    uri: str, server: str | None = None, *, answers: Mapping[str, Any] | None = None, accept_defaults: bool = False
) -> Flow:
    """Read a resource (a ``ReadResourceResult`` flow)."""
    hub = get_hub()
    conn = hub.registry.get(server)
    return hub.start("resources/read", conn, uri, None, answers=_answers(answers, accept_defaults), save=False)
