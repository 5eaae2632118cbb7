"""Where a call's task is kept, without the protocol: ``TaskOptions`` (what ``--task`` asks) and ``TaskHandles``.

Apart from ``tasks.py`` so the session can hold them from ``%load_ext`` on without importing the
``mcp`` SDK (which ``tasks.py`` builds its wire models on).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .private_table import PrivateTable, data_file

__all__ = ["TaskHandles", "TaskOptions"]


@dataclass(frozen=True)
class TaskOptions:
    """How a call asks for a task: ``requested`` (``--task``), and the ttl to ask a 2025 server for."""

    requested: bool = False
    ttl_ms: int | None = None


class TaskHandles(PrivateTable):
    """Task ids by ``ref``, with where they belong (server, tool, notebook, cell), in ``tasks.json`` (0600).

    Kept like a token: only this user on this machine can pick a task up again; the notebook's
    record carries the ref, which is worthless elsewhere.
    """

    def __init__(self, path: Path | None = None) -> None:
        super().__init__(path or data_file("tasks.json"))

    def keep(self, task_id: str, **where: Any) -> str:
        """Store ``task_id`` with facts about it; returns the new ref."""
        ref = secrets.token_urlsafe(12)
        self.update(ref, task_id=task_id, **{k: v for k, v in where.items() if v is not None})
        return ref

    def task_id(self, ref: str) -> str | None:
        found = self.get(ref).get("task_id")
        return found if isinstance(found, str) else None
