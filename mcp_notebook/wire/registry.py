"""``Registry``: a session's named connections (``%mcp connect NAME``), opened and closed on its runtime loop.

A name opened again keeps the old connection until the new one works; roots changes are told to
every 2025 server that was offered roots (bounded: a server that blocks the notification is not
waited for).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from ..core.threads import Runtime
from ..errors import FlowError
from .connection import ROOTS_NOTIFY_TIMEOUT, Connection
from .roots import Roots
from .target import Target

__all__ = ["Registry"]


class Registry:
    """The named connections of one session, all on that session's runtime."""

    def __init__(self, runtime: Runtime | None = None, roots: Roots | None = None) -> None:
        self.runtime = runtime if runtime is not None else Runtime()
        self.roots = roots if roots is not None else Roots()  # what every connection answers roots/list with
        self._connections: dict[str, Connection] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._connections

    def __iter__(self) -> Iterator[Connection]:
        return iter(list(self._connections.values()))

    def __len__(self) -> int:
        return len(self._connections)

    def get(self, name: str | None) -> Connection:
        """The connection called ``name``; with ``None``, the only one open."""
        if name is None:
            if len(self._connections) == 1:
                return next(iter(self._connections.values()))
            if not self._connections:
                raise FlowError("No MCP server is connected.", kind="not_connected")
            names = sorted(self._connections)
            raise FlowError(
                f"Several servers are connected ({', '.join(names)}); say which: SERVER.TOOL",
                kind="several_connected",
                details={"names": names},
            )
        try:
            return self._connections[name]
        except KeyError:
            known = ", ".join(sorted(self._connections)) or "none"
            raise FlowError(
                f"No connection named {name!r} (connected: {known}).", kind="unknown_connection", server=name
            ) from None

    def connect(self, name: str, target: Target, **options: Any) -> Connection:
        """Open (or re-open) connection ``name``; the old one is closed only after the new one works.

        The administrator's policy (``core.policy``) is asked by ``Connection.open``, where every open goes
        (a reconnect's too): a refused target starts nothing, and the old connection stays.
        """
        conn = Connection(name, target, runtime=self.runtime, roots=self.roots, **options)
        runtime = self.runtime
        runtime.run(conn.open())
        old = self._connections.get(name)
        self._connections[name] = conn
        if old is not None:
            runtime.run(old.close())
        return conn

    def disconnect(self, name: str) -> None:
        conn = self.get(name)
        del self._connections[name]
        self.runtime.run(conn.close())

    def disconnect_all(self) -> None:
        """Close every connection (``%unload_ext``); one that fails to close does not keep the others open."""
        for name in list(self._connections):
            try:
                self.disconnect(name)
            except Exception:  # noqa: BLE001, S112 - closing must go on; close() already bounds and cancels
                continue

    def not_offered_roots(self) -> list[str]:
        """The open connections that declared no roots (opened before any was added): only connecting again offers them."""
        return [c.name for c in self._connections.values() if c.is_open and not c.offers_roots]

    def roots_changed(self) -> list[str]:
        """Tell every open 2025-generation server that was offered roots that they changed; returns the names told."""
        conns = [c for c in self._connections.values() if c.is_open and c.is_legacy and c.offers_roots]
        if not conns:
            return []

        async def tell_all() -> list[str]:
            told = await asyncio.gather(*(c.send_roots_changed() for c in conns), return_exceptions=True)
            return [c.name for c, ok in zip(conns, told, strict=True) if ok is True]

        try:
            return self.runtime.run(tell_all(), timeout=ROOTS_NOTIFY_TIMEOUT)
        except TimeoutError:
            return []
