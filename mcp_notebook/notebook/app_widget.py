"""An MCP App as a widget, for front ends where the labextension does not run (``AppWidget``).

VS Code, Colab, and JupyterLab or Notebook 7 without our extension render ipywidgets but not the
``OUTPUT_MIME`` output of ``apps.py``. There an App's report also carries this widget, whose front
end (``static/app_widget.js``, built from ``labextension/src/widget/app_widget.ts``) travels with
the widget model (``anywidget``), so no extension has to be installed. The front end is the
labextension's own App view (the sandboxed frames, the guard, the checked CSP, the link rule), so
those rules are written once; its ``app_*`` messages come here as the widget's custom messages and
are answered by the same ``AppHost.handle`` (the App's tools on its own server only, app-visible
tools only). The output keeps its text and ``OUTPUT_MIME`` beside the widget: a page with the
extension prefers ``OUTPUT_MIME`` (its renderer ranks first), a viewer without widgets shows the text.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
from traitlets import Dict, Unicode

from .display import WIDGET_VIEW_MIME

if TYPE_CHECKING:
    from .apps import AppHost, LiveApp

__all__ = ["WIDGET_VIEW_MIME", "AppWidget", "widget_for"]

STATIC = Path(__file__).parent / "static"


class AppWidget(anywidget.AnyWidget):
    """One App output's widget: the output's signed data and its text; messages go to the ``AppHost``."""

    _esm = STATIC / "app_widget.js"
    _css = STATIC / "app_widget.css"
    data = Dict(help="the App output's data (apps.OUTPUT_MIME): app id, server, tool, URI, input, result, sig").tag(
        sync=True
    )
    text = Unicode("", help="the tool's text result, shown under the App and when it does not start").tag(sync=True)

    def __init__(self, host: AppHost, app: LiveApp, text: str) -> None:
        super().__init__(data=app.payload(), text=text)
        self._host = host
        self.on_msg(self._on_page)

    def _on_page(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """An ``app_*`` message of the widget's front end (the kernel thread): answered as the comm's are."""
        if isinstance(content, dict) and str(content.get("op", "")).startswith("app_"):
            self._host.handle(content, self._reply)

    def _reply(self, message: dict[str, Any]) -> None:
        """Send an answer (any thread: ipykernel's iopub socket takes messages from any thread, as ``Frontend`` does)."""
        try:
            self.send(message)
        except Exception:  # noqa: BLE001 - a closed widget: its App is gone with it
            pass


def widget_for(host: AppHost, app: LiveApp, text: str) -> AppWidget:
    """The App's widget, made once (a report's bundle is built more than once: the cell, a page's hand-over)."""
    if app.widget is None:
        app.widget = AppWidget(host, app, text)
    widget: AppWidget = app.widget
    return widget
