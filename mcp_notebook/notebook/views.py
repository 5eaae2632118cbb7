"""``NotebookViews``: the notebook side of a session, everything it draws in cells or says to the page.

A ``session.Session`` draws nothing (``session.views``); the magics make theirs with a
``NotebookViews``, which implements ``session.views.Views`` with this package's widgets: a flow's
``LiveView`` (its settled report and live area also go to the page on the comm), ``ConfirmResume``,
``ResumeOffer``, ``ConfirmProjectServer`` and the cell's ``TaskBoard``. Plugged into its session, it
gives it the MCP Apps host (``session.apps``) and the watches (``session.watches``); ``attach_page``
plugs in the labextension's comm client (``Frontend``) at ``%load_ext``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..flows.record import SavedFlow, age, questions
from .apps import AppHost
from .watching import Watches

if TYPE_CHECKING:
    from ..session.session import Session
    from .frontend import Frontend
    from .live_view import ChoicePanel, LiveView

__all__ = ["NotebookViews", "attach_page"]


class NotebookViews:
    """``session.views.Views`` drawn with ipywidgets in the running cell (kernel thread)."""

    def __init__(self) -> None:
        self.session: Session | None = None

    def plugged(self, session: Session) -> None:
        self.session = session
        session.apps = AppHost(session)  # MCP Apps shown in this kernel's outputs, and the page's messages about them
        session.watches = Watches(session)  # resources watched live in cells (%mcp watch)

    def live_view(self, label: str, trace: bool, start_over: Callable[[], object]) -> LiveView:
        from .live_view import LiveView

        view = LiveView(label, trace=trace, start_over=start_over)
        session = self.session
        if session is not None:  # the page of the moment (%load_ext again replaces it)
            view.on_report = lambda *report: session.frontend.send_report(*report)
            view.on_live = lambda *live: session.frontend.send_live(*live)
            view.on_answered = lambda flow_id, display_id: session.frontend.answered_here(flow_id, display_id)
        return view

    def confirm_resume(self, record: SavedFlow, concerns: list[str], confirmed: Callable[[], Any]) -> ChoicePanel:
        from .consent import ConfirmResume

        return ConfirmResume(record, concerns, confirmed)

    def resume_offer(self, record: SavedFlow, resume: Callable[[], Any], start_over: Callable[[], Any]) -> ChoicePanel:
        from .live_view import ResumeOffer

        return ResumeOffer(record, questions(record.to_dict()), age(record.updated), resume, start_over)

    def confirm_project_server(
        self, name: str, lines: list[tuple[str, str]], concerns: list[str], approved: Callable[[], Any]
    ) -> ChoicePanel:
        from .consent import ConfirmProjectServer

        return ConfirmProjectServer(name, lines, concerns, approved)

    def task_board(self, previous: Any, key: Any) -> Any:
        from .task_board import board_ui

        return board_ui(previous, key)

    def bound(self, value: Any) -> Any:
        """A result as ``x = %mcp call`` binds it: the SDK's object as its readable subclass (``results``)."""
        from .results import readable

        return readable(value)


def attach_page(session: Session) -> Frontend:
    """Back ``session``'s store by the notebook (the labextension's comm) and say hello (``%load_ext``)."""
    from .frontend import Frontend

    frontend = Frontend(session.store, session.shell, page_wait=session.settings.page_wait)
    apps = session.apps
    if apps is not None:
        frontend.on_app = lambda data: apps.handle(data, frontend.send_app)

    def page_wait_changed(change: dict[str, Any]) -> None:  # %config MCPMagics.page_wait, after this hello
        if session.frontend is frontend:
            frontend.set_page_wait(float(change["new"]))

    session.settings.observe(page_wait_changed, names=["page_wait"])
    session.plug_page(frontend)
    return frontend
