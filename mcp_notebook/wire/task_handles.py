"""Where a call's task is kept, without the protocol: ``TaskOptions`` (what ``--task`` asks), ``TaskHandles`` and
``TaskRef`` (what a saved record says of its task: everything but the task id, which ``TaskHandles`` keeps).

Apart from ``tasks.py`` so the session can hold them from ``%load_ext`` on without importing the
``mcp`` SDK (which ``tasks.py`` builds its wire models on).
"""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

from ..core.private_table import PrivateTable, data_file

__all__ = ["TASK_STATUSES", "TaskHandles", "TaskOptions", "TaskRef", "describe_identity"]


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
        super().__init__(path or partial(data_file, "tasks.json"))  # the folder found on first use

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
    url = identity.get("url")
    if isinstance(url, str):
        return url
    command = identity.get("command")
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        text = f"{shlex.join(command)} in folder {identity.get('cwd')}"
        env = identity.get("env")
        if isinstance(env, list) and env:
            text += f" with environment variables {', '.join(str(e) for e in env)}"
        return text
    return str(identity.get("in_process") or "an unrecorded target")


TASK_STATUSES = ("working", "input_required", "completed", "failed", "cancelled")


@dataclass
class TaskRef:
    """A saved flow's ``task`` entry: the non-secret facts of a call running as a task.

    The task id is a bearer-like handle and never enters a notebook: it waits in the user's
    ``tasks.TaskHandles`` under ``ref``. The rest says what a reader of ``%mcp flows`` needs: the
    generation, when the task was created, its time to live, the suggested poll interval, the last
    status seen, and (2026) the keys of the input requests already answered.
    """

    ref: str
    generation: Literal["2025", "2026"]
    created: str | None = None
    ttl_ms: int | None = None
    poll_ms: int | None = None
    status: str = "working"
    answered: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ref": self.ref, "generation": self.generation, "status": self.status}
        for key in ("created", "ttl_ms", "poll_ms"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.answered:
            out["answered"] = list(self.answered)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskRef:
        """The typed entry of a record ``check_task_ref`` accepted (odd optional values are dropped)."""

        def count(value: Any) -> int | None:
            return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53 else None

        created = data.get("created")
        return cls(
            ref=str(data["ref"]),
            generation="2025" if data.get("generation") == "2025" else "2026",
            created=created[:64] if isinstance(created, str) else None,
            ttl_ms=count(data.get("ttl_ms")),
            poll_ms=count(data.get("poll_ms")),
            status=str(data["status"]) if data.get("status") in TASK_STATUSES else "working",
            answered=[k for k in data.get("answered") or [] if isinstance(k, str)][:100],
        )

    def seen(self, status: Any) -> TaskRef:
        """This entry after the server reported ``status`` (a ``tasks.TaskStatus``)."""
        ttl = status.ttl_ms if status.ttl_ms is not None else self.ttl_ms
        return replace(
            self,
            status=status.status,
            ttl_ms=ttl,
            poll_ms=status.poll_ms or self.poll_ms,
            created=self.created or status.created_at,
        )
