"""Roots: the folders a server may work in, answered for ``roots/list`` in both generations.

The default is the notebook's own folder (``__session__`` when the kernel knows the notebook's
path, else the working directory), which is what a user means by "here".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["RootEntry", "Roots"]


@dataclass
class RootEntry:
    path: Path
    name: str | None = None

    @property
    def uri(self) -> str:
        return self.path.resolve().as_uri()


@dataclass
class Roots:
    """The configured roots; empty means "the notebook's folder"."""

    entries: list[RootEntry] = field(default_factory=list)
    session_path: str | None = None

    def effective(self) -> list[RootEntry]:
        if self.entries:
            return list(self.entries)
        base = Path(self.session_path).parent if self.session_path else Path(os.getcwd())
        return [RootEntry(base, "notebook folder")]

    def add(self, path: str, name: str | None = None) -> RootEntry:
        entry = RootEntry(Path(path).expanduser().resolve(), name)
        if not entry.path.exists():
            raise FileNotFoundError(f"no such folder or file: {entry.path}")
        self.entries = [e for e in self.entries if e.path != entry.path] + [entry]
        return entry

    def remove(self, path: str) -> None:
        target = Path(path).expanduser().resolve()
        before = len(self.entries)
        self.entries = [e for e in self.entries if e.path != target]
        if len(self.entries) == before:
            raise KeyError(f"{target} is not a configured root")

    def result(self) -> Any:
        from mcp.types import ListRootsResult, Root

        return ListRootsResult(roots=[Root(uri=e.uri, name=e.name) for e in self.effective()])
