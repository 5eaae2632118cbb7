"""A waiting flow's record in the output of its cell: the store backend every front end saves.

JupyterLab and Notebook 7 with the labextension keep records in the notebook's metadata
(``frontend.py``). VS Code, Colab, papermill / nbclient and JupyterLab without the extension do not
load it, but every one of them writes a cell's outputs to disk. There, the record of a waiting flow
is a display in the cell that started the flow (or resumed it), ``{OUTPUT_MIME: record, "text/plain":
what it waits for and how to continue}``, with a display id of its own, updated in place round by
round (``update_display_data``) and emptied when the flow ends or is forgotten. Rules (README,
"What is saved"):

* Only where the extension does not answer: with it, the metadata is the store and nothing is
  written twice (a placeholder made before the page answered is emptied when it does).
* A flow that ends away from the output holding its record (resumed from a file, in another cell,
  or in a new kernel) cannot reach that output (display ids are not saved in the file): a *void*
  ``{"v": 1, "ended": ID, "at": TIME}`` is shown where it ended, and a reader drops every record of
  that id written at or before ``at`` (``flows.record.parse_outputs``).
* "Clear outputs" of a cell drops its saved flow from the file (the kernel keeps it while it runs);
  a copied cell carries the same record, read once; records are bounded as metadata records are
  (``max_record_bytes``).

When outputs can be placed: an interactive call gets its (empty) output when it starts, on the kernel
thread, so later updates reach it by display id from any thread and after the cell. A headless call
(nbclient, papermill, nbval) blocks its cell until the flow ends, so its record is shown then, by
``settle`` on the kernel thread, in the cell's own output (the executed notebook keeps it).
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from ..core.text import mcp_line, one_line, plain_text
from ..core.threads import KernelLoop
from ..core.urls import visible
from ..flows.record import OUTPUT_MIME, RECORD_VERSION, SavedFlow, questions
from ..flows.store import Store

__all__ = ["OutputRecords"]

Shown = Literal["nothing", "placeholder", "record", "empty", "void"]

SLOTS_KEPT = 1_000
"""Flows whose output is remembered (the oldest go first: 10,000 calls in a row keep the kernel's memory flat)."""


@dataclass
class _Slot:
    """One flow's output: where it is (the cell's context) and what it shows."""

    flow_id: str
    kernel: KernelLoop
    interactive: bool
    from_file: bool  # resumed from a record read from a file: its end leaves a void
    now: bool  # started where outputs are the store (not waiting for the page's answer)
    display_id: str = field(default_factory=lambda: f"mcp-record-{uuid.uuid4().hex}")
    shown: Shown = "nothing"
    sig: str | None = None  # the signature of the record shown (the same record is not shown twice)
    had_record: bool = False  # the store held its record once: its absence now means the flow is over


class OutputRecords:
    """The records of this kernel's flows, written into their cells' outputs (the notebook side of ``Frontend``)."""

    def __init__(self, store: Store, file_ids: set[str]) -> None:
        self.store = store
        self._slots: OrderedDict[str, _Slot] = OrderedDict()
        self._lock = threading.Lock()
        self.active = True  # False once the extension answered: its metadata is the store
        self.file_ids = (
            file_ids  # records taken from a file (the page's set): a flow ending away from them leaves a void
        )
        self.written = 0  # outputs shown or updated (tests)

    # ------------------------------------------------------------------ kernel thread
    def begin(self, flow_id: str, interactive: bool, placeholder: bool, now: bool) -> None:
        """A flow starts in the running cell: remember the cell; an interactive one gets its output now.

        ``now``: the cell's front end will not answer for the extension (a headless client), so its
        record is written without waiting for the page's answer.
        """
        slot = _Slot(flow_id, KernelLoop(), interactive, from_file=flow_id in self.file_ids, now=now)
        with self._lock:
            old = self._slots.pop(flow_id, None)
            self._keep(slot)
        if old is not None and old.shown == "record":
            self._show(old, self._empty())  # the record moves with the flow to this cell
        if interactive and placeholder and self.active:
            self._show(slot, self._empty(), now="placeholder")

    def settle(self, flow_id: str) -> None:
        """A headless flow ended its cell: write what it leaves (its record, or a void) there, now."""
        with self._lock:
            slot = self._slots.get(flow_id)
        if slot is not None:
            self._sync(slot)

    def forgotten_here(self, flow_id: str) -> None:
        """``%mcp flows forget`` of a record read from a file: void it in this cell (kernel thread)."""
        with self._lock:
            slot = self._slots.get(flow_id)
        if slot is None:
            slot = _Slot(flow_id, KernelLoop(), interactive=False, from_file=True, now=True)
            with self._lock:
                self._keep(slot)
        self._sync(slot)

    def _keep(self, slot: _Slot) -> None:
        """Remember ``slot`` as the newest (under the lock), forgetting the oldest past ``SLOTS_KEPT``."""
        self._slots[slot.flow_id] = slot
        while len(self._slots) > SLOTS_KEPT:
            self._slots.popitem(last=False)

    # ------------------------------------------------------------------ any thread
    def writes_now(self, flow_id: str) -> bool:
        """Whether the flow started where outputs are the store (see ``begin``)."""
        with self._lock:
            slot = self._slots.get(flow_id)
        return slot is not None and slot.now and self.active

    def changed(self, flow_id: str) -> None:
        """The store saved or deleted ``flow_id``: bring its output up to date (in its cell's context)."""
        with self._lock:
            slot = self._slots.get(flow_id)
        if slot is None or not (self.active or slot.from_file):
            return
        if slot.interactive:
            slot.kernel.to_kernel(self._sync, slot)
        # headless: the cell is blocked until the flow ends; ``settle`` writes it there

    def flush(self) -> None:
        """The page turned out to have no extension (or stayed silent): write every flow's output now."""
        with self._lock:
            slots = list(self._slots.values())
        for slot in slots:
            if slot.interactive:
                slot.kernel.to_kernel(self._sync, slot)

    def withdraw(self) -> None:
        """The extension answered after all: its metadata is the store; empty what was shown here (in this session)."""
        self.active = False
        with self._lock:
            slots = list(self._slots.values())
        for slot in slots:
            if slot.shown in ("record", "placeholder"):
                slot.kernel.to_kernel(self._show, slot, self._empty())

    # ------------------------------------------------------------------ writing
    def _sync(self, slot: _Slot) -> None:
        """Show what the store says of the slot's flow now: its record, nothing, or a void (kernel thread)."""
        record = self.store.get(slot.flow_id)
        if record is not None:
            slot.had_record = True
            if self.active and not (slot.shown == "record" and slot.sig == record.get("sig")):
                slot.sig = record.get("sig")
                self._show(slot, self._record_bundle(record), now="record")
            return
        if slot.from_file and slot.shown != "void":
            self._show(slot, self._void_bundle(slot.flow_id), now="void")
        elif slot.shown == "record":
            self._show(slot, self._empty(), now="empty")
        if not (slot.had_record or slot.from_file):
            return  # not saved yet (its first round is still on its way)
        with self._lock:  # the flow is over: nothing of it is written again
            if self._slots.get(slot.flow_id) is slot:
                del self._slots[slot.flow_id]

    def _show(self, slot: _Slot, bundle: dict[str, Any], now: Shown = "empty") -> None:
        from IPython.display import display, update_display

        if slot.shown == "nothing":
            display(bundle, raw=True, display_id=slot.display_id)
        else:
            update_display(bundle, raw=True, display_id=slot.display_id)
        slot.shown = now
        self.written += 1

    @staticmethod
    def _empty() -> dict[str, Any]:
        return {"text/plain": ""}

    @staticmethod
    def _record_bundle(record: dict[str, Any]) -> dict[str, Any]:
        saved = SavedFlow.from_dict(record)
        asked = questions(record)
        what = visible(one_line(asked[0], 120)) if asked else "a task's result"
        more = f" (and {len(asked) - 1} more)" if len(asked) > 1 else ""
        line = (
            f"mcp-notebook: flow {saved.id} ({visible(one_line(saved.label, 80))}) waits for input, round {saved.round}: "
            f"{what}{more}\n"
            f"Its record is saved in this output (not in the notebook's metadata: the mcp-notebook extension is not "
            f"active here). Keep this output and save the notebook; to continue, in any kernel of this notebook run:\n"
            f"    {mcp_line('%mcp', 'resume', saved.id)}"  # a received notebook's id: encoded for the line's grammar
        )
        return {"text/plain": plain_text(line), OUTPUT_MIME: record}

    @staticmethod
    def _void_bundle(flow_id: str) -> dict[str, Any]:
        at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        line = f"mcp-notebook: flow {flow_id} ended here, so any record of it saved earlier in this notebook no longer counts."
        return {"text/plain": plain_text(line), OUTPUT_MIME: {"v": RECORD_VERSION, "ended": flow_id, "at": at}}
