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

anywidget is optional (``pip install 'mcp-notebook[app-widget]'``): its JupyterLab extension runs the
front-end code of any anywidget model restored from a notebook's saved widget state as the notebook
opens, trusted or not (our labextension, where it is in the page, takes such models out of a notebook
that is not trusted first: ``labextension/src/widget_guard.ts``), so installing it is the user's
choice. Without it ``widget_for`` gives ``None`` and the report stays text (and ``OUTPUT_MIME``), as
before.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .apps import AppHost, LiveApp

__all__ = ["WIDGET_VIEW_MIME", "app_widget_class", "widget_for"]

WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
"""The MIME type of a widget's view in an output (``FlowReport`` puts the App's widget there)."""
STATIC = Path(__file__).parent / "static"


@cache
def app_widget_class() -> type | None:
    """``AppWidget``, an ``anywidget.AnyWidget``; ``None`` where anywidget is not installed."""
    try:
        import anywidget
    except ImportError:
        return None
    from traitlets import Dict, Unicode

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

    AppWidget.__module__ = __name__
    AppWidget.__qualname__ = "AppWidget"
    return AppWidget


def widget_for(host: AppHost, app: LiveApp, text: str) -> Any:
    """The App's widget, made once (a report's bundle is built more than once); ``None`` without anywidget."""
    if app.widget is None:
        widget_class = app_widget_class()
        if widget_class is None:
            return None
        app.widget = widget_class(host, app, text)
    return app.widget
