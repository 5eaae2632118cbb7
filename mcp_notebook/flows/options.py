"""What a flow is told once, as it is made: ``FlowOptions``, and the ``AppHost`` that may show its App.

``Session.make_flow`` reads the settings and the session's parts once and builds one frozen
``FlowOptions``; the flow keeps it whole (``Flow.options``) and nobody sets anything on a flow
after it is made. Frozen because a flow's settings are the ones it started with: a ``%config``
while it runs changes the next flow, never this one.

``AppHost`` and ``ShownApp`` are what a flow asks of the notebook side's MCP Apps host
(``notebook.apps.AppHost``, ``LiveApp``), as protocols: the notebook is a floor above, so the
flow names the shape it needs and the host satisfies it structurally.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..core.limits import Limits
from .ui import FlowUI, HeadlessUI

if TYPE_CHECKING:
    from ..core.threads import KernelLoop
    from ..wire.task_handles import TaskHandles, TaskOptions
    from .answering import Answerer
    from .flow import Flow
    from .store import Store

__all__ = ["AppHost", "FlowOptions", "ShownApp"]


class ShownApp(Protocol):
    """An MCP App a finished call shows in its report (``notebook.apps.LiveApp``)."""

    id: str

    def payload(self) -> dict[str, Any]: ...


class AppHost(Protocol):
    """Who turns a finished ``tools/call`` into the App its report shows (``notebook.apps.AppHost``)."""

    async def register(self, flow: Flow, main: KernelLoop | None) -> ShownApp | None:
        """The App of ``flow``'s tool, shown in the cell of ``main``; ``None`` for a tool without one."""
        ...


@dataclass(frozen=True)
class FlowOptions:
    """Everything a flow is told beside its call (server, method, name, arguments), built once by the session."""

    answerer: Answerer
    """Who answers the server's questions: the form or the presets, the model router, the roots."""
    view: FlowUI = field(default_factory=HeadlessUI)
    """Where the flow shows itself (a cell's ``LiveView``); headless: nowhere."""
    max_rounds: int = 10
    """Rounds of a 2026-07-28 call before it stops (``MCPMagics.max_rounds``)."""
    timeout: float | None = None
    """Seconds the whole flow may take (``--timeout``, else ``MCPMagics.flow_timeout``)."""
    limits: Limits = field(default_factory=Limits)
    """How much of its results and questions is rendered."""
    store: Store | None = None
    """Where a waiting round's record goes (the session's store); ``None``: nowhere."""
    save: bool = True
    """Whether a waiting round is saved at all (``--no-save``: not)."""
    cell_id: str | None = None
    """The cell the flow runs for: its record is that cell's."""
    notebook: str | None = None
    """The notebook's path, kept beside a task's handle."""
    prepare: Callable[[], Awaitable[dict[str, Any]]] | None = None
    """Makes the arguments on the loop, first thing, when they need the tool's schema (see ``Session.call``)."""
    progress: bool = True
    """Whether to ask the server for progress (a map's rows do not: one bar counts rows)."""
    task: TaskOptions | None = None
    """What the call asks of tasks (``--task``, its ttl)."""
    task_handles: TaskHandles | None = None
    """The user's task handles (the session's); ``None``: the default file, opened when a task needs it."""
    apps: AppHost | None = None
    """The host that shows a finished call's App; ``None``: the report stays plain (headless, or not a tool call)."""
    app_main: KernelLoop | None = None
    """The cell a finished call's App shows in (its questions are asked there)."""
