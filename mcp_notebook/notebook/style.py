"""The look of every output of ours: its CSS (``OUTPUT_CSS``, ``STYLE``, ``VALUE_STYLE``), state badges and notes.

Every rendering module of the notebook side (results, reports, tables, live areas, consent) puts
``STYLE`` in front of its HTML and draws states and remarks with ``badge`` and ``note_html``, so
the look is written once, here.
"""

from __future__ import annotations

from ..core.text import esc

__all__ = ["OUTPUT_CSS", "STYLE", "VALUE_STYLE", "badge", "note_html"]

OUTPUT_CSS = (
    ".mcpnb{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;color:var(--jp-content-font-color1,inherit)}"
    ".mcpnb .hdr{color:var(--jp-ui-font-color2,#616161);margin-bottom:4px}"
    ".mcpnb .err{border-left:4px solid var(--jp-error-color1,#d32f2f);"
    "background:color-mix(in srgb,var(--jp-error-color1,#d32f2f) 10%,transparent);padding:4px 8px;white-space:pre-wrap}"
    ".mcpnb .note{color:var(--jp-ui-font-color2,#616161);font-style:italic}"
    ".mcpnb pre{margin:2px 0;white-space:pre-wrap}.mcpnb table{border-collapse:collapse}"
    ".mcpnb td,.mcpnb th{padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid var(--jp-border-color2,#e0e0e0)}"
    ".mcpnb .badge{display:inline-block;border-radius:8px;padding:0 6px;font-size:11px;color:var(--jp-ui-font-color1,#000);"
    "border:1px solid var(--mcpnb-state,var(--jp-border-color1,#bdbdbd));"
    "background:color-mix(in srgb,var(--mcpnb-state,var(--jp-border-color1,#bdbdbd)) 25%,var(--jp-layout-color1,#fff))}"
    ".mcpnb .badge.running{--mcpnb-state:var(--jp-brand-color1,#1976d2)}"
    ".mcpnb .badge.waiting{--mcpnb-state:var(--jp-warn-color1,#f57c00)}"
    ".mcpnb .badge.done{--mcpnb-state:var(--jp-success-color1,#388e3c)}"
    ".mcpnb .badge.failed,.mcpnb .badge.error{--mcpnb-state:var(--jp-error-color1,#d32f2f)}"
    ".mcpnb .badge.cancelled{--mcpnb-state:var(--jp-border-color1,#bdbdbd)}"
    ".mcpnb .to-server{color:var(--jp-content-link-color,#0d47a1)}.mcpnb .to-client{color:var(--jp-mirror-editor-string-color,#ba2121)}"
    ".mcpnb .scroll{max-height:32em;overflow-y:auto}"
    ".mcpnb .scroll th{position:sticky;top:0;background:var(--jp-layout-color1,#fff)}"
    ".mcpnb details.fold>summary{cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;max-width:48em}"
    ".mcpnb details.fold[open]>summary{white-space:normal}"
    ".mcpnb details.fold>div{white-space:pre-wrap;overflow-wrap:anywhere;max-width:60em}"
    ".mcpnb pre.box{max-height:30em;overflow:auto;resize:vertical;border:1px solid var(--jp-border-color2,#e0e0e0);padding:4px}"
)
"""The look of every output of ours, from JupyterLab's CSS variables only (so Light, Dark and any theme read well).

The same rules are in the labextension (``labextension/style/output.css``, kept equal by a test): a notebook
reopened untrusted loses an output's ``<style>`` to JupyterLab's sanitizer but keeps its classes, so the
extension's copy still styles it; ``STYLE`` serves front ends without the extension (VS Code, nbviewer).
A state badge is the state's colour mixed into the page's background, with the page's text colour on it:
white text on a fixed orange failed WCAG AA in Light, and the page's text on a pale fixed tint failed in Dark."""
STYLE = f"<style>{OUTPUT_CSS}</style>"
VALUE_STYLE = (
    "<style>.mcpnb .tree{padding-left:1em}.mcpnb .tree code{white-space:pre-wrap;word-break:break-word}"
    ".mcpnb details.json>summary{color:var(--jp-ui-font-color2,#616161)}.mcpnb .md{max-width:60em}.mcpnb .md table{margin:4px 0}</style>"
)
"""The look of structured content and markdown, added only to outputs that show them (``STYLE`` stays as every saved output has it)."""
_STATES = frozenset({"running", "waiting", "done", "failed", "error", "cancelled"})


def badge(state: str) -> str:
    """A state's badge: its colour comes from a class (``OUTPUT_CSS``), so it follows the theme."""
    kind = f" {state}" if state in _STATES else ""
    return f'<span class="badge{kind}">{esc(state)}</span>'


def note_html(text: str) -> str:
    return f'<div class="note">{esc(text)}</div>'
