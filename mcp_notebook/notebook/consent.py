"""Showing a saved flow or a project's server whole, and asking before what the user did not write runs.

``RecordReview`` lists everything a resume would do (the command and folder it would run, the
URL and which variable's value it would send as a token, the tool and its arguments), in full and
escaped: it is how ``%mcp flows`` shows records of a received notebook. ``ConfirmResume`` is the
interactive question: the same review, the reasons it needs consent, and Resume / Don't resume.
``ConfirmProjectServer`` asks the same way before an entry of a project's config file (``.mcp.json``,
``.vscode/mcp.json``: it came with the folder) is started or sent the user's variables. A URL in
any of them is shown by ``core.urls.consent_url``: the host the client reaches, look-alikes marked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w

from ..core.text import esc, plain_text
from ..core.urls import ShownURL
from ..flows.record import SavedFlow
from ..flows.trust import describe_record, record_text
from .live_view import Choice, ChoicePanel
from .style import STYLE

__all__ = ["ConfirmProjectServer", "ConfirmResume", "RecordReview"]

_WARN = "var(--jp-ui-font-color1,#000);border-left:3px solid var(--jp-error-color1,#d32f2f);padding-left:6px"
"""A warning's look: the page's text colour marked by the theme's error colour (a fixed dark red was unreadable in Dark)."""


def _rows(lines: list[tuple[str, str]]) -> str:
    """A review's (what, value) lines as table rows: a URL as ``core.urls.consent_url`` shows it, the rest as code."""
    return "".join(
        f"<tr><th>{esc(what)}</th><td>"
        + (value.html if isinstance(value, ShownURL) else f"<code style='word-break:break-all'>{esc(value)}</code>")
        + "</td></tr>"
        for what, value in lines
    )


class RecordReview:
    """A saved record, whole: what resuming it would run, reach, send and call."""

    def __init__(self, record: SavedFlow, concerns: list[str] | None = None) -> None:
        self.record = record
        self.concerns = list(concerns or [])
        self.lines = describe_record(record.to_dict())

    def text(self) -> str:
        return record_text(self.record.to_dict(), self.concerns)

    def html(self) -> str:
        rows = _rows(self.lines)
        why = "".join(f"<li>{esc(c)}</li>" for c in self.concerns)
        warn = f"<ul style='color:{_WARN};margin:2px 0'>{why}</ul>" if why else ""
        return f'<div class="mcp-record-review"><b>flow {esc(self.record.id)}</b> ({esc(self.record.label)}){warn}<table>{rows}</table></div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": plain_text(self.text()), "text/html": STYLE + f'<div class="mcpnb">{self.html()}</div>'}


class ConfirmResume(ChoicePanel):
    """Resume a saved flow only after the user has read what it will do and said yes.

    ``on_confirm`` runs on the kernel's loop in this cell's context (what it displays lands below);
    an exception it raises is shown here. Nothing runs when the user says no.
    """

    def __init__(self, record: SavedFlow, concerns: list[str], on_confirm: Callable[[], Any]) -> None:
        self.review = RecordReview(record, concerns)
        text = (
            f'<div class="mcpnb"><div class="hdr" style="color:{_WARN}">⚠ Check this saved flow before it runs.</div>'
            f"{self.review.html()}Resume it as shown?</div>"
        )
        self.yes = w.Button(
            description="Resume", icon="play", button_style="danger", tooltip="Run exactly what is listed above"
        )
        self.no = w.Button(description="Don't resume", icon="times", tooltip="Leave the saved flow as it is")
        super().__init__(text, "mcp-confirm-resume", [
            Choice(self.yes, f"Resuming flow {record.id} as reviewed.", on_confirm),
            Choice(self.no, f"Did not resume flow {record.id}; it stays saved."),
        ])  # fmt: skip


class ConfirmProjectServer(ChoicePanel):
    """Connect a project config's entry only after the user has read all it would do and approved it.

    ``lines`` are ``config_trust.describe_entry``'s (command and folder, URL, header names, the
    variables it reads), ``concerns`` why it asks (whose file it is, a name it shares with one of
    the user's own servers). ``on_approve`` records the approval and connects exactly the entry
    shown; it runs on the kernel's loop in this cell's context. Nothing runs on "Don't connect".
    """

    def __init__(
        self, name: str, lines: list[tuple[str, str]], concerns: list[str], on_approve: Callable[[], Any]
    ) -> None:
        self.lines, self.concerns = lines, list(concerns)
        rows = _rows(lines)
        why = "".join(f"<li>{esc(c)}</li>" for c in self.concerns)
        text = (
            f'<div class="mcpnb"><div class="hdr" style="color:{_WARN}">⚠ Check this project server before it runs.</div>'
            f'<div class="mcp-project-server"><ul style="color:{_WARN};margin:2px 0">{why}</ul><table>{rows}</table></div>'
            f"Approve it as shown and connect {esc(name)!s}? (An edited file asks again.)</div>"
        )
        self.yes = w.Button(
            description="Approve and connect",
            icon="check",
            button_style="danger",
            tooltip="Run or reach exactly what is listed above",
        )
        self.no = w.Button(description="Don't connect", icon="times", tooltip="Start nothing, send nothing")
        super().__init__(text, "mcp-confirm-project-server", [
            Choice(self.yes, f"Approved {name} as shown; connecting.", on_approve),
            Choice(self.no, f"Did not connect {name}: nothing was started or sent."),
        ])  # fmt: skip
