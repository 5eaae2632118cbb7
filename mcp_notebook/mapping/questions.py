"""The questions the rows of one map ask, answered in one form in the map's cell, once for all when told to.

A map of 1,000 rows of a tool that asks "which region?" would otherwise need 1,000 answers. Every
row's flow of an interactive map (``mapping.map_async`` in an awaiting cell) shares one
``MapQuestions`` as its answerer's ``flows.ui.FlowUI``:

* presets (``answers=``) answer first, as in a headless map (a preset that does not fit, or a
  link to open, goes to the form);
* else a question already answered "for every remaining row" is answered the same way at once;
* else the row waits its turn and the map's cell shows the question in the usual form, with the
  row's arguments (secrets masked), how many rows wait on the same question, and a checkbox
  "Use this answer for every remaining row that asks this". One form at a time.

"The same question" is the same tool asking for the same fields with the same schema. The
message is left out on purpose: a server usually puts the row's own values in it ("Where should
db42 go?"). URL-mode questions (each row its own link) are never answered for others.

Everything else is headless (``ui.HeadlessUI``): a map does not review each row's sampling.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..core.text import esc
from ..core.threads import KernelLoop, Reply
from ..errors import FlowError
from ..flows.ui import HeadlessUI

if TYPE_CHECKING:
    from ..flows.flow import Flow
    from ..forms.model import Answers, Question

__all__ = ["MapQuestions", "same_question"]

ARGS_CHARS = 160  # characters of the asking row's arguments shown above its form

Signature = tuple[str, ...]


def same_question(questions: list[Question]) -> Signature | None:
    """What makes two rows' questions "the same": each request's schema; ``None`` for a URL-mode request (never shared)."""
    parts = []
    for question in questions:
        if question.is_url or question.form is None:
            return None
        schema = question.params.requested_schema  # a form's params (a URL-mode question returned above)
        parts.append(json.dumps(schema, sort_keys=True, default=str))
    return tuple(parts)


class MapQuestions(HeadlessUI):
    """The answerer UI every row of one interactive map shares (see the module docstring).

    ``ask`` runs on the session's loop; the form is drawn on the kernel's loop (``KernelLoop``)
    into ``area``, a box of the map's progress display. The kernel handles the form's clicks
    while the cell awaits the map (ipykernel 7.4 and later), so nothing here blocks.
    """

    def __init__(self, schema: Mapping[str, Any], label: str, stop: Callable[[], None]) -> None:
        """Made on the kernel's thread, in the map's cell: ``widget`` goes below the map's progress bar.

        ``stop`` stops the map (its Stop button): a cell that awaits cannot be interrupted at once
        (ipykernel 7.4), and a map waiting on a form nobody will answer must still end.
        """
        import ipywidgets as w

        self.area = w.VBox([])
        self.note = w.HTML("")
        self.stop_button = w.Button(
            description="Stop",
            icon="stop",
            tooltip="Stop the map: no further row is called, rows in flight are cancelled",
        )
        self.stop_button.add_class("mcp-map-stop")
        self.stop_button.on_click(lambda _b: self._stop(stop))
        self.widget = w.VBox([self.stop_button, self.area, self.note])
        self.schema = schema
        self.label = label
        self.main = KernelLoop()
        self.for_all: dict[Signature, list[Any]] = {}  # answers the user gave for every remaining row, per question
        self.waiting: dict[Signature | None, int] = {}
        self.asked = 0  # forms shown
        self._notes: list[str] = []  # what was answered for all, one line per question (kernel's loop)
        self.on_waiting: Callable[[str], None] | None = (
            None  # told (kernel's loop) when rows wait for the form, and when not
        )
        self._turn: asyncio.Lock | None = None  # made on the loop that asks

    async def ask(self, flow: Flow, questions: list[Question], answers: Answers) -> dict[str, Any]:
        try:
            return await super().ask(flow, questions, answers)  # the presets, as a headless map
        except FlowError:
            pass  # no preset, one that does not fit, or a link to open: the form asks (prefilled), as a cell's form does
        signature = same_question(questions)
        again = self._answered_for_all(signature, questions)
        if again is not None:
            return again
        if self._turn is None:
            self._turn = asyncio.Lock()
        self.waiting[signature] = self.waiting.get(signature, 0) + 1
        showing = False
        try:
            async with self._turn:
                self.waiting[signature] -= 1
                again = self._answered_for_all(signature, questions)  # answered for all while this row waited
                if again is not None:
                    return again
                reply: Reply[tuple[dict[str, Any], bool]] = Reply()
                self.asked += 1
                showing = True
                self.main.to_kernel(
                    self._show,
                    flow,
                    questions,
                    answers,
                    self.waiting.get(signature, 0),
                    signature is not None,
                    reply.offer,
                )
                results, for_all = await reply
        except BaseException:
            if showing:  # this row's form goes (a row still waiting its turn leaves the shown one alone)
                self.main.to_kernel(self._clear)
            raise
        if for_all and signature is not None:
            self.for_all[signature] = kept = [results[q.key] for q in questions]
            self.main.to_kernel(self._note_for_all, kept)
        return results

    def _answered_for_all(self, signature: Signature | None, questions: list[Question]) -> dict[str, Any] | None:
        """The answers given for every remaining row that asks this (the same schemas, so the same answers fit)."""
        kept = self.for_all.get(signature) if signature is not None else None
        if kept is None:
            return None
        return {q.key: r for q, r in zip(questions, kept, strict=True)}

    # ------------------------------------------------------------------ kernel's loop
    def _show(
        self,
        flow: Flow,
        questions: list[Question],
        answers: Answers,
        others: int,
        shareable: bool,
        deliver: Callable[[tuple[dict[str, Any], bool]], bool],
    ) -> None:
        import ipywidgets as w

        from ..forms.widgets import ElicitationPanel, in_send_order
        from .frames import row_text

        shown = row_text(flow.arguments, self.schema, ARGS_CHARS)
        waiting = f" ({others} more row{'s' if others != 1 else ''} waiting on the same question)" if others else ""
        header = w.HTML(
            f'<div class="mcpnb"><b>{esc(self.label)}</b> asks, for the row with {esc(shown) or "no arguments"}{esc(waiting)}:</div>'
        )
        check = w.Checkbox(
            value=False,
            description="Use this answer for every remaining row that asks this",
            indent=False,
            disabled=not shareable,
            layout=w.Layout(width="auto"),
        )
        check.add_class("mcp-map-for-all")
        if not shareable:
            check.description = "Each row is asked this on its own (a link to open)"

        def done(results: dict[str, Any]) -> None:
            check.disabled = True
            self.main.to_kernel(
                self._clear
            )  # queued before the answer goes: the next row's form is drawn after this clearing
            deliver((results, bool(check.value)))

        panel = ElicitationPanel(flow.conn.name, questions, answers, done)
        in_send_order(check)  # with the panel's own widgets: ticked, then Accept, handled in that order
        box = w.VBox([header, panel.widget, check])
        box.add_class("mcp-map-question")
        box.add_class("mcp-notebook-form")  # the labextension marks it stale when its kernel restarts
        self.area.children = (box,)
        if self.on_waiting is not None:
            self.on_waiting("waiting for your answer")

    def _note_for_all(self, kept: list[Any]) -> None:
        answered = "; ".join(
            r.action + (f" ({', '.join(sorted(r.content))})" if r.content else "") for r in kept
        )  # field names, never values
        self._notes.append(f"Answered for every remaining row that asks the same: {answered}"[:400])
        self.note.value = (
            '<div class="mcpnb mcp-map-for-all-note">'
            + "".join(f"<div><small>{esc(n)}</small></div>" for n in self._notes)
            + "</div>"
        )

    def _stop(self, stop: Callable[[], None]) -> None:
        self.stop_button.disabled = True
        self.stop_button.description = "Stopping…"
        stop()

    def finished(self) -> None:
        """The map ended (kernel's thread): no Stop, no form left."""
        self.stop_button.layout.display = "none"
        self._clear()

    def _clear(self) -> None:
        if self.on_waiting is not None:
            self.on_waiting("")
        old = self.area.children
        self.area.children = ()
        for child in old:
            child.close()
