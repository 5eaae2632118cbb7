"""Servers defined in the notebook: ``%%mcp server NAME`` (hot reload) and ``%mcp serve`` (HTTP).

A server author writes an ``MCPServer`` in a cell and talks to it from the next one. Re-running the
cell replaces the connection without a kernel restart and says what changed; a cell that fails
leaves the previous server in place. ``%mcp serve`` puts the same object on streamable HTTP in a
background thread so any MCP client (another notebook, MCP Inspector, a script) holding the bearer
token it prints can use it, and keeps serving the newest version (same token) after a reload.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .core.policy import current_policy
from .core.text import mcp_line
from .errors import FlowError

if TYPE_CHECKING:
    from mcp.types import ServerCapabilities

__all__ = ["Inventory", "Prototypes", "ServedServer", "find_new_server", "inventory_diff", "root_logging_kept"]

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
WILDCARD = {"0.0.0.0", "::", ""}


@dataclass
class Inventory:
    """What a server offers, with a fingerprint per item so changes show up in the diff."""

    items: dict[str, str] = field(default_factory=dict)  # "tool provision" -> fingerprint

    @classmethod
    async def of(cls, conn: Any) -> Inventory:
        inv = cls()
        caps: ServerCapabilities | None = conn.live.session.server_capabilities
        tools = await conn.tools(refresh=True)
        for name, tool in tools.items():
            inv.items[f"tool {name}"] = _fingerprint(tool)
        if caps is None or caps.prompts is not None:
            for prompt in await _safe(conn.list_all("prompts")):
                inv.items[f"prompt {prompt.name}"] = _fingerprint(prompt)
        if caps is None or caps.resources is not None:
            for res in await _safe(conn.list_all("resources")):
                inv.items[f"resource {res.uri}"] = _fingerprint(res)
            for tpl in await _safe(conn.list_all("resource_templates")):
                inv.items[f"resource template {tpl.uri_template}"] = _fingerprint(tpl)
        return inv


async def _safe(coro: Any) -> list[Any]:
    try:
        return await coro
    except Exception:  # noqa: BLE001 - a server without prompts/resources answers -32601
        return []


def _fingerprint(item: Any) -> str:
    data = item.model_dump(mode="json", exclude_none=True) if hasattr(item, "model_dump") else repr(item)
    data = {k: v for k, v in data.items() if k != "_meta" and k != "meta"} if isinstance(data, dict) else data
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def inventory_diff(old: Inventory | None, new: Inventory) -> dict[str, list[str]]:
    """Added, removed and changed items between two versions of a server."""
    before = old.items if old is not None else {}
    return {
        "added": sorted(k for k in new.items if k not in before),
        "removed": sorted(k for k in before if k not in new.items),
        "changed": sorted(k for k in new.items if k in before and before[k] != new.items[k]),
    }


def describe_diff(name: str, diff: dict[str, list[str]], first: bool) -> str:
    """The headline of a ``%%mcp server`` cell; the items themselves are ``diff_rows`` (a table, not a run-on line)."""
    if first:
        return f"Server {name!r} is connected in-process" + ("." if diff["added"] else ": it offers nothing yet.")
    return f"Reloaded {name!r}." + ("" if any(diff.values()) else " Nothing changed.")


_KINDS = ("resource template", "resource", "prompt", "tool")


def diff_rows(diff: dict[str, list[str]]) -> list[list[str]]:
    """What changed as rows ``[change, kind, name]`` (``tool add_note`` -> ``tool``, ``add_note``), tools first."""
    rows = []
    for change, items in diff.items():
        for item in items:
            kind = next((k for k in _KINDS if item.startswith(k + " ")), "")
            rows.append([change, kind, item[len(kind) :].strip()])
    order = {k: i for i, k in enumerate(reversed(_KINDS))}
    return sorted(rows, key=lambda r: (list(diff).index(r[0]), order.get(r[1], len(order)), r[2]))


def find_new_server(before: dict[str, int], namespace: dict[str, Any], var: str | None) -> tuple[str, Any]:
    """The server object the cell defined: the one named by ``var``, else the one (re)bound by the cell."""
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    if var is not None:
        if var not in namespace:
            raise FlowError(f"the cell did not define {var!r}")
        obj = namespace[var]
        if not isinstance(obj, (MCPServer, Server)):
            raise FlowError(f"{var} is a {type(obj).__name__}, not an MCPServer or low-level Server")
        return var, obj
    fresh = [
        (k, v)
        for k, v in namespace.items()
        if isinstance(v, (MCPServer, Server)) and not k.startswith("_") and before.get(k) != id(v)
    ]
    if not fresh:
        raise FlowError("the cell defined no MCPServer or low-level Server (name one with --var)")
    if len(fresh) > 1:
        names = ", ".join(k for k, _ in fresh)
        raise FlowError(f"the cell defined several servers ({names}); pick one with --var NAME")
    return fresh[0]


def server_ids(namespace: dict[str, Any]) -> dict[str, int]:
    return {k: id(v) for k, v in namespace.items()}


@contextmanager
def root_logging_kept() -> Iterator[None]:
    """Undo changes to the root logger (level and handlers) made inside, e.g. by ``MCPServer()``'s
    ``logging.basicConfig(level=INFO)``.

    A library must not configure its host's logging: in a kernel that call would print every INFO
    record of every library (one line per HTTP request), and the user's own ``basicConfig`` would
    then do nothing. A CLI that wants logging configures it itself.
    """
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        yield
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers


class ServedServer:
    """A notebook-defined server on streamable HTTP, in a uvicorn thread of its own.

    Every request must carry ``Authorization: Bearer <token>`` (a fresh random ``token``, like
    Jupyter's own), unless ``no_auth`` was asked for on a loopback address. The SDK's Host/Origin
    checks (DNS-rebinding protection) are on for every bind address: see ``allowed_hosts``.
    """

    def __init__(
        self,
        name: str,
        obj: Any,
        host: str,
        port: int,
        keys_env: str | None,
        *,
        no_auth: bool = False,
        allowed_hosts: Sequence[str] = (),
    ) -> None:
        if no_auth and host not in LOOPBACK:
            raise FlowError(
                f"--no-auth is only allowed on a loopback address ({', '.join(sorted(LOOPBACK))}), not {host!r}: "
                "without a token anyone who can reach the port could call the notebook's server"
            )
        self.name, self.host, self.port, self.keys_env = name, host, port or _free_port(host), keys_env
        self.obj = obj
        self.token: str | None = None if no_auth else secrets.token_urlsafe(32)  # kept across restarts
        self.extra_hosts = list(allowed_hosts)
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:  # never the token itself
        auth = "no authentication" if self.token is None else "bearer token in .token"
        return f"<ServedServer {self.name!r} at {self.url} ({auth})>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": repr(self)}

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"

    def allowed_hosts(self) -> list[str]:
        """``Host`` header values accepted: the bind address at its port, plus loopback names for a
        loopback or wildcard bind, plus this machine's names and addresses for a wildcard bind, plus
        ``extra_hosts``. (The SDK turns its checks on only for loopback binds; here they always are.)"""
        names = [self.host] if self.host else []
        if self.host in LOOPBACK or self.host in WILDCARD:
            names += ["127.0.0.1", "localhost", "::1"]
        if self.host in WILDCARD:
            names += _machine_names()
        names += self.extra_hosts
        out: list[str] = []
        for name in names:
            bare = f"[{name}]" if ":" in name and not name.startswith("[") else name
            for value in (f"{bare}:{self.port}", bare) if self.port == 80 else (f"{bare}:{self.port}",):
                if value not in out:
                    out.append(value)
        return out

    def transport_security(self) -> Any:
        from mcp.server.transport_security import TransportSecuritySettings

        hosts = self.allowed_hosts()
        origins = [f"http://{h}" for h in hosts]
        if self.host in LOOPBACK or self.host in WILDCARD:  # the SDK's own loopback default: any local port
            origins += ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )

    def serves(self, url: str) -> bool:
        """Whether ``url`` is this server as the kernel itself reaches it (where its token may go).

        Exact bind host and port only (a wildcard bind also answers on the matching loopback
        literal): ``localhost`` may resolve to ``::1``, where another process could own the port.
        """
        try:
            parts = urlsplit(url)
            port = parts.port or 80
        except ValueError:
            return False
        if parts.scheme != "http" or port != self.port or parts.path.rstrip("/") != "/mcp":
            return False
        own = (
            {self.host.lower()}
            | ({"127.0.0.1"} if self.host == "0.0.0.0" else set())
            | ({"::1"} if self.host == "::" else set())
        )
        return (parts.hostname or "") in own

    def start(self, obj: Any | None = None) -> None:
        if refused := current_policy().serve_refusal():  # the administrator's (core/policy.py): nothing listens
            raise FlowError(f"Not serving {self.name!r}: {refused}.", kind="policy_refused")
        import uvicorn

        if obj is not None:
            self.obj = obj
        if self.keys_env:
            _apply_keys(self.obj, self.keys_env)
        app = self.obj.streamable_http_app(transport_security=self.transport_security())
        if self.token is not None:
            app = BearerTokenGate(app, self.token)
        config = uvicorn.Config(app, host=self.host, port=self.port, log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name=f"mcp-serve-{self.name}", daemon=True)
        thread.start()
        deadline = time.monotonic() + 15
        while not server.started:
            if not thread.is_alive():
                raise FlowError(f"could not serve {self.name!r} on {self.host}:{self.port} (is the port in use?)")
            if time.monotonic() > deadline:
                server.should_exit = True
                raise FlowError(f"serving {self.name!r} did not start within 15 s")
            time.sleep(0.02)
        self._server, self._thread = server, thread

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def restart(self, obj: Any) -> None:
        """Serve a reloaded version on the same port, with the same token."""
        self.stop()
        self.start(obj)


class BearerTokenGate:
    """ASGI middleware: answer 401 unless the request carries ``Authorization: Bearer <token>``.

    Not the SDK's auth: ``MCPServer`` takes ``auth=AuthSettings(issuer_url=..., resource_server_url=...)``
    and a ``TokenVerifier`` at construction (the user's object, already built), advertises OAuth
    (protected-resource metadata, ``resource_metadata`` in the challenge) that a static token
    cannot honour, and guards only the ``/mcp`` route, not ``custom_route``s. One shared secret
    compared in constant time, in front of the whole app, is what Jupyter does for its own server.
    """

    def __init__(self, app: Any, token: str) -> None:
        self.app, self._token = app, token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan
            await self.app(scope, receive, send)
            return
        given = None
        for key, value in scope.get("headers") or ():
            if key.lower() == b"authorization":
                scheme, _, credential = value.decode("latin-1").strip().partition(" ")
                given = credential.strip().encode("latin-1") if scheme.lower() == "bearer" else b""
                break
        if given is not None and hmac.compare_digest(given, self._token):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        challenge = 'Bearer realm="mcp-notebook"' + ("" if given is None else ', error="invalid_token"')
        body = json.dumps(
            {
                "error": "invalid_token",
                "error_description": "This notebook server needs the header Authorization: Bearer <token> (printed by %mcp serve).",
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", challenge.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _machine_names() -> list[str]:
    """This machine's host name, FQDN and the addresses they resolve to (for a wildcard bind)."""
    names: list[str] = []
    try:
        hostname = socket.gethostname()
        names += [hostname, socket.getfqdn()]
        names += [str(info[4][0]) for info in socket.getaddrinfo(hostname, None, proto=socket.IPPROTO_TCP)]
    except OSError:
        pass
    try:  # the address of the default route's interface (a UDP "connect" sends nothing)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.connect(("192.0.2.1", 9))
            names.append(sock.getsockname()[0])
    except OSError:
        pass
    return [n.lower() for n in dict.fromkeys(n.split("%")[0] for n in names if n)]


def _apply_keys(obj: Any, keys_env: str) -> None:
    """Seal request state with shared keys from ``keys_env`` so it survives restarts and workers.

    ``MCPServer`` installs its ``RequestStateBoundary`` at construction; swapping that middleware
    for one with ``RequestStateSecurity(keys=[...])`` is the only way to change the policy of an
    object that already exists.
    """
    from mcp.server.mcpserver import MCPServer, RequestStateBoundary, RequestStateSecurity

    key = os.environ.get(keys_env)
    if not key:
        raise FlowError(f"environment variable {keys_env} is not set (needed by --keys-env)")
    if len(key.encode()) < 32:
        raise FlowError(f"{keys_env} must hold at least 32 bytes to seal request state")
    if not isinstance(obj, MCPServer):
        raise FlowError("--keys-env needs an MCPServer: a low-level Server does not seal its request state")
    middleware = obj._lowlevel_server.middleware
    boundary = RequestStateBoundary(RequestStateSecurity(keys=[key]), default_audience=obj.name)
    for i, item in enumerate(middleware):
        if isinstance(item, RequestStateBoundary):
            middleware[i] = boundary
            return
    middleware.insert(0, boundary)


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class Prototypes:
    """Notebook-defined servers: their last inventory and, when served, the HTTP server."""

    inventories: dict[str, Inventory] = field(default_factory=dict)
    served: dict[str, ServedServer] = field(default_factory=dict)
    objects: dict[str, Any] = field(default_factory=dict)

    def serve(
        self,
        name: str,
        host: str = "127.0.0.1",
        port: int = 0,
        keys_env: str | None = None,
        *,
        no_auth: bool = False,
        allowed_hosts: Sequence[str] = (),
    ) -> ServedServer:
        """Serve ``name`` over HTTP; the returned object's ``token`` is what clients must send."""
        if name not in self.objects:
            raise FlowError(
                f"no notebook server named {name!r}: define it first with {mcp_line('%%mcp', 'server', name)}"
            )
        served = ServedServer(
            name, self.objects[name], host, port, keys_env, no_auth=no_auth, allowed_hosts=allowed_hosts
        )
        if name in self.served:
            self.served[name].stop()
        served.start()
        self.served[name] = served
        return served

    def token_for(self, url: str) -> str | None:
        """The token of the server this kernel serves at ``url`` (None if none, or served without auth)."""
        for served in self.served.values():
            if served.serves(url):
                return served.token
        return None

    def stop(self, name: str) -> None:
        try:
            served = self.served.pop(name)
        except KeyError:
            raise FlowError(f"{name!r} is not being served (see %mcp servers)") from None
        served.stop()

    def stop_all(self) -> None:
        for name in list(self.served):
            self.stop(name)
