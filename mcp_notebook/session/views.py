"""What a ``Session`` asks of the notebook side, as protocols, and ``NoViews``, the side of a run nobody watches.

The session owns the life of flows but draws nothing: it imports no ipywidgets and no IPython
display. Where a person must see or click something (a flow's live area, the consent of a received
flow, Continue / Start over of a re-run cell's waiting flow, a project server's approval, the live
table of a cell's tasks) it asks its ``views``. ``notebook.views.NotebookViews`` draws them in the
cell; the magics hand one to the session they make. A plain-Python or Dask-worker session keeps
``NoViews``: it never needs one, since a headless run asks nobody (a call of it that wants a person
says so plainly).

A side may also bring what shows in cells and talks to the page (``plugged``): the notebook side
sets ``session.apps`` (the MCP Apps host, an ``Apps``) and ``session.watches`` (``%mcp watch``, a
``Watching``) there. Both are the notebook's objects, named here by the shape the session and the
magics use, so no import runs up from this floor. Where the saved records go is the session's
``frontend``, a ``session.page.Page`` (the notebook side plugs in its comm client with ``Session.plug_page``).
"""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import SessionError
from ..flows.options import AppHost
from ..flows.ui import FlowUI

if TYPE_CHECKING:
    from ..core.threads import KernelLoop
    from ..flows.flow import Flow
    from ..flows.record import SavedFlow
    from .session import Session

__all__ = ["Apps", "Choice", "LiveFlowView", "NoViews", "Views", "Watching"]


class Choice(Protocol):
    """A question in a cell answered by one click (``notebook.live_view.ChoicePanel``); a cell awaits ``outcome()``."""

    def outcome(self) -> Awaitable[Any]: ...


class LiveFlowView(FlowUI, Protocol):
    """A flow's live area in its cell: the interactive ``FlowUI`` (its view, and where it asks), and what the session reads of it."""

    main: KernelLoop  # the cell's loop: values are bound, and the flow's App shown, on the kernel thread through it

    def attach(self, flow: Flow) -> None: ...


class Apps(AppHost, Protocol):
    """The MCP Apps host of the notebook side (``notebook.apps.AppHost``): a flow's App, the page's messages, a reload."""

    def handle(self, data: dict[str, Any], reply: Callable[[dict[str, Any]], None]) -> None:
        """An ``app_*`` message of the page, answered through ``reply``."""
        ...

    def reload(self, server: str) -> bool:
        """``server`` was defined again in a cell: its Apps reload. Whether any is live."""
        ...


class Watching(Protocol):
    """The resources watched live in cells (``notebook.watching.Watches``): what ``%mcp watch`` and ``unwatch`` call."""

    def watch(self, server: str | None, uri: str, into: str | None, namespace: dict[str, Any]) -> object:
        """Show ``uri`` in the running cell and keep it current."""
        ...

    def unwatch(self, server: str | None = None, uri: str | None = None) -> builtins.list[str]:
        """Stop the watches of ``server`` / ``uri`` (all without either); what was stopped."""
        ...

    def list(self) -> Sequence[Sequence[Any]]:
        """One row per watch (server, URI, updates, since)."""
        ...


class Views(Protocol):
    """The notebook side's drawings, one method per thing the session needs shown (kernel thread)."""

    def plugged(self, session: Session) -> None:
        """The session this side serves, once, as it is made (the side may set ``apps`` and ``watches`` on it)."""
        ...

    def live_view(self, label: str, trace: bool, start_over: Callable[[], object]) -> LiveFlowView:
        """A new live area for one interactive flow, shown in the running cell; ``start_over`` calls it again fresh
        (offered when the server refuses a saved state)."""
        ...

    def confirm_resume(self, record: SavedFlow, concerns: list[str], confirmed: Callable[[], Any]) -> Choice:
        """Show a saved record whole with why it needs consent: Resume runs ``confirmed``, Don't resume nothing."""
        ...

    def resume_offer(self, record: SavedFlow, resume: Callable[[], Any], start_over: Callable[[], Any]) -> Choice:
        """A re-run cell whose flow waits: Continue runs ``resume``, Start over ``start_over``."""
        ...

    def confirm_project_server(
        self, name: str, lines: list[tuple[str, str]], concerns: list[str], approved: Callable[[], Any]
    ) -> Any:
        """A project config's entry shown whole: Approve and connect runs ``approved``."""
        ...

    def task_board(self, previous: Any, key: Any) -> Any:
        """The live table of the running cell's plain-API tasks (``previous`` when it is this cell's, ``key``)."""
        ...

    def bound(self, value: Any) -> Any:
        """What ``-o VAR`` binds for a flow's result: the value as this side shows values (``x = %mcp call`` binds the same)."""
        ...


def _nobody(what: str) -> SessionError:
    return SessionError(
        f"{what} needs a person at a notebook; this session runs headless (no notebook side)", kind="bad_input"
    )


class NoViews:
    """The side of a session nobody watches (plain Python, a Dask worker): nothing is drawn, nobody is asked."""

    def plugged(self, session: Session) -> None:
        pass

    def live_view(self, label: str, trace: bool, start_over: Callable[[], object]) -> LiveFlowView:
        raise _nobody(f"showing {label} live")

    def confirm_resume(self, record: SavedFlow, concerns: list[str], confirmed: Callable[[], Any]) -> Choice:
        raise _nobody("asking before a received flow resumes")

    def resume_offer(self, record: SavedFlow, resume: Callable[[], Any], start_over: Callable[[], Any]) -> Choice:
        raise _nobody("offering to continue a waiting flow")

    def confirm_project_server(
        self, name: str, lines: list[tuple[str, str]], concerns: list[str], approved: Callable[[], Any]
    ) -> Any:
        raise _nobody(f"approving the project server {name!r}")

    def task_board(self, previous: Any, key: Any) -> Any:
        return None

    def bound(self, value: Any) -> Any:
        return value
