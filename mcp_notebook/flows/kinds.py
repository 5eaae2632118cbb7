"""The words a flow is told in: its ``Method``, its ``FlowState``, a ``Round`` of its trace, its ``Progress``.

Apart from ``flow.py`` so the parts of a flow (``task_follow``, ``trace``) and its readers can name
them without importing the state machine itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

__all__ = ["STATE_ONLY_BACKOFF", "FlowState", "Method", "Progress", "Round"]


Method = Literal["tools/call", "prompts/get", "resources/read"]


STATE_ONLY_BACKOFF = (0.05, 0.25)  # first and largest pause for rounds that only carry state


class FlowState(str, Enum):  # noqa: UP042 - a StrEnum would change str()/format() of a state (public on Flow) from 'FlowState.DONE' to 'done'
    RUNNING = "running"
    WAITING = "waiting"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass
class Round:
    """One request/response exchange of a flow, for the trace and the saved record."""

    number: int
    direction: Literal["client->server", "server->client"] = "client->server"
    sent: Any = field(default_factory=dict)  # a dict, or a thunk building it
    received: Any = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    ended: float | None = None
    answered: Any = None  # a 2025 back-channel question's answer, as sent (flows/replay.py reads it; never traced)


@dataclass
class Progress:
    progress: float = 0
    total: float | None = None
    message: str | None = None
