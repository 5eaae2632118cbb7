"""Roots: the folders a server may work in, answered for ``roots/list`` in both generations.

Until the user changes anything, the list is the notebook's own folder (``__session__`` when the
kernel knows the notebook's path, else the working directory, which is where Jupyter starts a
notebook's kernel): what a user means by "here". ``add`` and ``remove`` start from that default,
so adding a data folder keeps the notebook's folder; ``reset`` goes back to it.

2026-07-28 servers ask for roots inside each request's ``input_requests``, so they always see the
current list. 2025 servers may cache the list; when it changes they are sent
``notifications/roots/list_changed`` (see ``Registry.roots_changed`` in connections.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RootEntry", "Roots"]

DEFAULT_NAME = "notebook folder"


@dataclass
class RootEntry:
    path: Path
    name: str | None = None

    @property
    def uri(self) -> str:
        return self.path.resolve().as_uri()


@dataclass
class Roots:
    """The configured roots; ``entries is None`` means "just the notebook's folder"."""

    entries: list[RootEntry] | None = None
    session_path: str | None = None

    @property
    def is_default(self) -> bool:
        return self.entries is None

    def default(self) -> RootEntry:
        """The notebook's folder: the parent of an absolute ``__session__``, else the working directory.

        A relative ``__session__`` is relative to the Jupyter server's root, not to the kernel, whose
        working directory already is the notebook's folder.
        """
        session = Path(self.session_path) if self.session_path else None
        base = session.parent if session is not None and session.is_absolute() else Path(os.getcwd())
        return RootEntry(base.resolve(), DEFAULT_NAME)

    def effective(self) -> list[RootEntry]:
        return [self.default()] if self.entries is None else list(self.entries)

    def add(self, path: str, name: str | None = None) -> RootEntry:
        """Offer one more folder (or file); an existing entry for the same path is renamed.

        Raises:
            FileNotFoundError: when ``path`` does not exist.
        """
        entry = RootEntry(Path(path).expanduser().resolve(), name)
        if not entry.path.exists():
            raise FileNotFoundError(f"no such folder or file: {path}")
        current = self.effective()
        self.entries = [e for e in current if e.path != entry.path] + [entry]
        return entry

    def remove(self, path: str) -> RootEntry:
        """Stop offering ``path``; removing every root leaves an empty list (offer nothing).

        Raises:
            KeyError: when ``path`` is not a configured root.
        """
        target = Path(path).expanduser().resolve()
        current = self.effective()
        kept = [e for e in current if e.path != target]
        if len(kept) == len(current):
            raise KeyError(f"{path} is not a root (see %mcp roots list)")
        self.entries = kept
        return next(e for e in current if e.path == target)

    def reset(self) -> None:
        """Back to the default: the notebook's folder only."""
        self.entries = None

    def result(self) -> Any:
        from mcp.types import ListRootsResult, Root
        from pydantic import FileUrl

        return ListRootsResult(roots=[Root(uri=FileUrl(e.uri), name=e.name) for e in self.effective()])
