"""What a Dask worker keeps for ``mapping.map``: its own sessions and connections, on a ``WorkerPlugin``.

A map over a Dask collection runs each partition on a worker, which calls the server through a
connection of its own (streamable HTTP; a token only by the name of an environment variable of the
worker). ``Connections`` is registered by every map (idempotent: the first registration on a worker
stays), so a worker opens one connection per server on first use, reuses it for later partitions
and maps, and closes it at its teardown. Imported only where Dask is used (``distributed`` is an
optional dependency); kept in its own module so the class pickles by reference.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from distributed import WorkerPlugin

if TYPE_CHECKING:
    from ..wire.connection import Connection
    from .map import _Remote

__all__ = ["Connections"]


class Connections(WorkerPlugin):
    """One session and connection per (connection name, URL, token variable, protocol), on the worker that owns this plugin."""

    idempotent = True

    def __init__(self) -> None:
        self.sessions: dict[tuple[str, str, str | None, str], tuple[Any, Connection]] = {}
        self.lock: threading.Lock | None = None  # made on the worker (a lock does not pickle)

    def setup(self, worker: Any) -> None:
        self.lock = threading.Lock()

    def get(self, remote: _Remote) -> tuple[Any, Connection]:
        """The session and connection for ``remote``, opened on first use (the token from this process's environment)."""
        assert self.lock is not None, "the plugin runs on a worker"
        with self.lock:
            key = (remote.name, remote.url, remote.bearer_env, remote.protocol)
            entry = self.sessions.get(key)
            if entry is None or not entry[1].is_open:
                from ..session.session import Session

                session = entry[0] if entry is not None else Session()  # one session per server: its connection takes the kernel's name
                conn = session.connect(remote.name, remote.url, bearer_env=remote.bearer_env, protocol=remote.protocol, sign_in=False)
                entry = self.sessions[key] = (session, conn)
            return entry

    def teardown(self, worker: Any) -> None:
        if self.lock is None:
            return
        with self.lock:
            sessions, self.sessions = [s for s, _ in self.sessions.values()], {}
        for session in sessions:
            session.close()
