"""What a cell shows as its value: a flow's report or an SDK result's rendering (the shell's display hooks).

``mcp_notebook`` registers ``display_flow`` and ``display_result`` on the shell by name, so a
``Flow`` or an SDK result left as a cell's value shows rendered, once (``reported``).

The rendering itself lives by job: ``style`` (the CSS, badges, notes), ``text_budget`` (what a view
may still show), ``structured_view`` (JSON as tables and trees), ``media`` (images, audio, blobs),
``repeats`` (text that only repeats structured content), ``result_view`` (content blocks and SDK
results), ``flow_report`` (a flow's report and trace) and ``table`` (listings). Their public names
stay importable from here for the magics, ``mapping`` and the tests that import them so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.text import content_text, esc
from .app_widget import WIDGET_VIEW_MIME
from .flow_report import FlowReport, TraceView, log_text, shown_state, task_line, tool_error
from .media import safe_mime
from .result_view import ResultView, render_content
from .structured_view import CELL_CHARS, MAX_DEPTH, OPEN_DEPTH, TABLE_COLUMNS, TABLE_ROWS, StructuredView
from .style import OUTPUT_CSS, STYLE, VALUE_STYLE, badge, note_html
from .table import Table

if TYPE_CHECKING:
    from ..flows.flow import Flow

__all__ = [
    "CELL_CHARS",
    "MAX_DEPTH",
    "OPEN_DEPTH",
    "OUTPUT_CSS",
    "STYLE",
    "TABLE_COLUMNS",
    "TABLE_ROWS",
    "VALUE_STYLE",
    "WIDGET_VIEW_MIME",
    "FlowReport",
    "ResultView",
    "StructuredView",
    "Table",
    "TraceView",
    "badge",
    "content_text",
    "display_flow",
    "display_result",
    "esc",
    "log_text",
    "note_html",
    "render_content",
    "reported",
    "safe_mime",
    "shown_state",
    "task_line",
    "tool_error",
]


def display_flow(flow: Flow) -> None:
    """Show a flow: its live view if it has one on screen, else its settled report."""
    from IPython.display import display

    if flow.shown:
        return  # already in its cell (live view or settled report); don't show it twice
    display(FlowReport(flow))


_reported: list[tuple[Any, int | None]] = []  # the result the running cell's report shows, with that cell's count


def reported(result: Any) -> Any:
    """Mark ``result`` as shown by its flow's report in the running cell, and return it.

    A ``%mcp call`` cell's value is its result (``_``, ``Out[n]``), as any expression's is; the
    cell already shows the flow's report, so the displayhook showing that value shows nothing more.
    """
    from .listing import _execution_count

    _reported[:] = [(result, _execution_count())]
    return result


def display_result(result: Any) -> None:
    """Show an SDK result (tool, prompt, resource) as its rendered ``ResultView``, not the model's repr.

    Registered on the shell (``mcp_notebook._show_flows``); skipped once for the value its own cell's
    report has just shown (``reported``): displayed again later (``r`` in another cell), it shows.
    """
    from IPython.display import display

    from .listing import _execution_count

    shown = _reported[:]
    _reported.clear()  # skipped at most once, as a listing is
    if shown and shown[0][0] is result and shown[0][1] == _execution_count():
        return
    display(ResultView(result))
