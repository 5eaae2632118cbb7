"""Showing a saved flow whole, and asking before one the user did not write is resumed.

``RecordReview`` lists everything a resume would do (the command and folder it would run, the
URL and which variable's value it would send as a token, the tool and its arguments), in full and
escaped: it is how ``%mcp flows`` shows records of a received notebook. ``ConfirmResume`` is the
interactive question: the same review, the reasons it needs consent, and Resume / Don't resume.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as w

from .display import STYLE, esc
from .live_view import MainThread
from .trust import describe_record

__all__ = ["ConfirmResume", "RecordReview"]

_WARN = "#b71c1c"


def _label(record: Mapping[str, Any]) -> str:
    server = record["server"]["name"]
    return f"{server}.{record['name']}" if record.get("method") != "resources/read" else f"{server} {record['name']}"


class RecordReview:
    """A saved record, whole: what resuming it would run, reach, send and call."""

    def __init__(self, record: Mapping[str, Any], concerns: list[str] | None = None) -> None:
        self.record = record
        self.concerns = list(concerns or [])
        self.lines = describe_record(record)

    def text(self) -> str:
        head = f"flow {self.record['id']} ({_label(self.record)}):"
        body = [f"  {what}: {value}" for what, value in self.lines]
        why = [f"  ! {c}" for c in self.concerns]
        return "\n".join([head, *why, *body])

    def html(self) -> str:
        rows = "".join(f"<tr><th>{esc(what)}</th><td><code style='word-break:break-all'>{esc(value)}</code></td></tr>" for what, value in self.lines)
        why = "".join(f"<li>{esc(c)}</li>" for c in self.concerns)
        warn = f"<ul style='color:{_WARN};margin:2px 0'>{why}</ul>" if why else ""
        return f'<div class="mcp-record-review"><b>flow {esc(self.record["id"])}</b> ({esc(_label(self.record))}){warn}<table>{rows}</table></div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": STYLE + f'<div class="mcpnb">{self.html()}</div>'}


class ConfirmResume:
    """Resume a saved flow only after the user has read what it will do and said yes.

    ``on_confirm`` runs on the kernel's loop in this cell's context (what it displays lands below);
    an exception it raises is shown here. Nothing runs when the user says no.
    """

    def __init__(self, record: Mapping[str, Any], concerns: list[str], on_confirm: Callable[[], Any]) -> None:
        from IPython.display import display

        self.main = MainThread()
        self.review = RecordReview(record, concerns)
        self.text = w.HTML(
            f'<div class="mcpnb"><div class="hdr" style="color:{_WARN}">⚠ Check this saved flow before it runs.</div>'
            f"{self.review.html()}Resume it as shown?</div>"
        )
        self.yes = w.Button(description="Resume", icon="play", button_style="danger", tooltip="Run exactly what is listed above")
        self.no = w.Button(description="Don't resume", icon="times", tooltip="Leave the saved flow as it is")
        self.yes.on_click(lambda _b: self._choose(True, on_confirm))
        self.no.on_click(lambda _b: self._choose(False, on_confirm))
        self.box = w.VBox([self.text, w.HBox([self.yes, self.no])])
        self.box.add_class("mcp-confirm-resume")
        self.handle = display(self.box, display_id=True)
        self.chosen: bool | None = None

    def _choose(self, yes: bool, action: Callable[[], Any]) -> None:
        if self.chosen is not None:
            return
        self.chosen = yes
        self.yes.disabled = self.no.disabled = True
        self.main.call(self._run, yes, action)

    def _run(self, yes: bool, action: Callable[[], Any]) -> None:
        record = self.review.record
        said = f"Resuming flow {record['id']} as reviewed." if yes else f"Did not resume flow {record['id']}; it stays saved."
        summary = {"text/plain": said, "text/html": f'<div class="mcpnb">{esc(said)}</div>'}
        self.handle.update(summary, raw=True)
        for child in (self.box, self.text, self.yes, self.no):
            child.close()
        if not yes:
            return
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - shown in the cell, not lost in the kernel log
            text = str(exc) or type(exc).__name__
            self.handle.update(
                {"text/plain": f"{said}\nError: {text}", "text/html": summary["text/html"] + f'<div class="mcpnb"><div class="err">{esc(text)}</div></div>'},
                raw=True,
            )
