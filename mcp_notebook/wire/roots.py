"""Roots: the folders a server may work in, answered for ``roots/list`` in both generations.

**Nothing is offered until the user adds a root.** Declaring the ``roots`` capability is not
neutral: MCP's filesystem server and server-pdf, started with folders on their command line,
replace those folders with the client's roots as soon as a client declares the capability (even
with an empty list, server-pdf's folders are cleared), so a default root silently took away the
folders a user started them with. Until ``%mcp roots add`` a connection declares no roots and
a server keeps its own configuration; this is also where the spec points (roots are deprecated
from 2026-07-28, SEP-2577: "passing directories or files via tool parameters, resource URIs, or
server configuration"), and how MCP Inspector behaves (roots configured per server, none by default).

Whether a connection declares roots is fixed when it opens (the SDK builds its capabilities then):
a connection opened while the list was empty is not offered roots added later; connecting it again
does. ``add`` takes a path relative to the notebook's folder (``__session__`` when the kernel knows
the notebook's path, else the working directory, which is where Jupyter starts a notebook's
kernel), so ``add .`` offers the notebook's folder; ``remove`` and ``reset`` take roots away.

2026-07-28 servers ask for roots inside each request's ``input_requests``, so they always see the
current list. 2025 servers may cache the list; when it changes the ones that were offered roots are
sent ``notifications/roots/list_changed`` (see ``wire.registry.Registry.roots_changed``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.types import ListRootsResult

__all__ = ["RootEntry", "Roots"]

NOTEBOOK_FOLDER = "notebook folder"


@dataclass
class RootEntry:
    path: Path
    name: str | None = None

    @property
    def uri(self) -> str:
        return self.path.resolve().as_uri()


@dataclass
class Roots:
    """The roots the user added; empty (the default) means none are offered, nor the capability declared."""

    entries: list[RootEntry] = field(default_factory=list)
    session_path: str | None = None

    @property
    def offered(self) -> bool:
        """Whether a connection opened now declares roots (the user added at least one)."""
        return bool(self.entries)

    def notebook_folder(self) -> RootEntry:
        """The notebook's folder: the parent of an absolute ``__session__``, else the working directory.

        A relative ``__session__`` is relative to the Jupyter server's root, not to the kernel, whose
        working directory already is the notebook's folder.
        """
        session = Path(self.session_path) if self.session_path else None
        base = session.parent if session is not None and session.is_absolute() else Path(os.getcwd())
        return RootEntry(base.resolve(), NOTEBOOK_FOLDER)

    def effective(self) -> list[RootEntry]:
        return list(self.entries)

    def add(self, path: str, name: str | None = None) -> RootEntry:
        """Offer one more folder (or file), relative to the notebook's folder; the same path again is renamed.

        Raises:
            FileNotFoundError: when ``path`` does not exist, saying where it was looked for.
        """
        given = Path(path).expanduser()
        entry = RootEntry((self.notebook_folder().path / given).resolve(), name)
        if not entry.path.exists():
            raise FileNotFoundError(
                f"no such folder or file: {path} (looked for {entry.path}); create it first, or give a folder that exists"
            )
        self.entries = [e for e in self.entries if e.path != entry.path] + [entry]
        return entry

    def remove(self, path: str) -> RootEntry:
        """Stop offering ``path``; removing every root leaves an empty list (connections that declared roots get none).

        Raises:
            KeyError: when ``path`` is not a configured root.
        """
        target = (self.notebook_folder().path / Path(path).expanduser()).resolve()
        kept = [e for e in self.entries if e.path != target]
        if len(kept) == len(self.entries):
            raise KeyError(f"{path} is not a root (see %mcp roots list)")
        removed = next(e for e in self.entries if e.path == target)
        self.entries = kept
        return removed

    def reset(self) -> None:
        """Back to the default: no roots."""
        self.entries = []

    def result(self) -> ListRootsResult:
        from mcp.types import ListRootsResult, Root
        from pydantic import FileUrl

        return ListRootsResult(roots=[Root(uri=FileUrl(e.uri), name=e.name) for e in self.entries])
