"""Servers defined in the notebook: ``%%mcp server NAME`` (hot reload) and ``%mcp serve`` (HTTP).

A server author writes an ``MCPServer`` in a cell and talks to it from the next one. Re-running the
cell replaces the connection without a kernel restart and says what changed; a cell that fails
leaves the previous server in place. ``%mcp serve`` puts the same object on streamable HTTP in a
background thread so any MCP client (another notebook, MCP Inspector, a script) can use it, and
keeps serving the newest version after a reload.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .errors import FlowError

__all__ = ["Inventory", "Prototypes", "ServedServer", "find_new_server", "inventory_diff"]

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


@dataclass
class Inventory:
    """What a server offers, with a fingerprint per item so changes show up in the diff."""

    items: dict[str, str] = field(default_factory=dict)  # "tool provision" -> fingerprint

    @classmethod
    async def of(cls, conn: Any) -> Inventory:
        inv = cls()
        caps = conn.live.session.server_capabilities
        tools = await conn.tools(refresh=True)
        for name, tool in tools.items():
            inv.items[f"tool {name}"] = _fingerprint(tool)
        if caps is None or getattr(caps, "prompts", None) is not None:
            for prompt in await _safe(conn.list_all("prompts")):
                inv.items[f"prompt {prompt.name}"] = _fingerprint(prompt)
        if caps is None or getattr(caps, "resources", None) is not None:
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
    if first:
        return f"Server {name!r} is connected in-process: " + (", ".join(diff["added"]) or "it offers nothing yet") + "."
    parts = [f"{kind}: {', '.join(items)}" for kind, items in diff.items() if items]
    return f"Reloaded {name!r}. " + ("; ".join(parts) if parts else "Nothing changed.")


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


class ServedServer:
    """A notebook-defined server on streamable HTTP, in a uvicorn thread of its own."""

    def __init__(self, name: str, obj: Any, host: str, port: int, keys_env: str | None) -> None:
        self.name, self.host, self.port, self.keys_env = name, host, port or _free_port(host), keys_env
        self.obj = obj
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"

    def start(self, obj: Any | None = None) -> None:
        import uvicorn

        if obj is not None:
            self.obj = obj
        if self.keys_env:
            _apply_keys(self.obj, self.keys_env)
        app = self.obj.streamable_http_app(host=self.host) if _accepts_host(self.obj) else self.obj.streamable_http_app()
        config = uvicorn.Config(app, host=self.host, port=self.port, log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        server.install_signal_handlers = lambda: None  # type: ignore[method-assign]  # not the main thread
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
        """Serve a reloaded version on the same port."""
        self.stop()
        self.start(obj)


def _accepts_host(obj: Any) -> bool:
    import inspect

    try:
        return "host" in inspect.signature(obj.streamable_http_app).parameters
    except (TypeError, ValueError):
        return False


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

    def serve(self, name: str, host: str = "127.0.0.1", port: int = 0, keys_env: str | None = None) -> ServedServer:
        if name not in self.objects:
            raise FlowError(f"no notebook server named {name!r}: define it first with %%mcp server {name}")
        if name in self.served:
            self.served[name].stop()
        served = ServedServer(name, self.objects[name], host, port, keys_env)
        served.start()
        self.served[name] = served
        return served

    def stop(self, name: str) -> None:
        try:
            served = self.served.pop(name)
        except KeyError:
            raise FlowError(f"{name!r} is not being served (see %mcp servers)") from None
        served.stop()

    def stop_all(self) -> None:
        for name in list(self.served):
            self.stop(name)
