"""Where a call's task is kept, without the protocol: ``TaskOptions`` (what ``--task`` asks) and ``TaskHandles``.

Apart from ``tasks.py`` so the session can hold them from ``%load_ext`` on without importing the
``mcp`` SDK (which ``tasks.py`` builds its wire models on).
"""

from __future__ import annotations

import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.private_table import PrivateTable, data_file

__all__ = ["TaskHandles", "TaskOptions", "describe_identity"]


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

    @staticmethod
    def belongs_to(entry: dict[str, Any], identity: dict[str, Any]) -> bool:
        """Whether the handle in ``entry`` may be sent to the target whose ``Target.identity()`` is ``identity``.

        The whole target must match (a stdio server's command, arguments, folder and environment
        names). A handle kept before identities were recorded matches only an HTTP server at the
        same URL: its stdio server (which died with that kernel) cannot be told apart from another.
        """
        kept = entry.get("identity")
        if isinstance(kept, dict):
            return kept == identity
        return set(identity) == {"url"} and entry.get("target") == identity["url"]


def describe_identity(identity: Any) -> str:
    """A ``Target.identity()`` (or a kept one) in words, for an error that says why a handle stays home."""
    if isinstance(identity, str):
        return identity  # a handle kept before identities were: its target's ``describe()``
    if not isinstance(identity, dict):
        return "an unrecorded target"
    if isinstance(identity.get("url"), str):
        return identity["url"]
    command = identity.get("command")
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        text = f"{shlex.join(command)} in folder {identity.get('cwd')}"
        env = identity.get("env")
        if isinstance(env, list) and env:
            text += f" with environment variables {', '.join(str(e) for e in env)}"
        return text
    return str(identity.get("in_process") or "an unrecorded target")
