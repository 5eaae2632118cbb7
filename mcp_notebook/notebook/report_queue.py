"""Live areas and settled reports kept for the pages that have not shown them yet (``ReportQueue``).

A flow's settled report reaches the page twice: as the ``update_display_data`` of its live area,
which only the page that ran the cell can place (a display id is not saved, so a reloaded or
second page drops it), and as ``{"op": "report", "cell_id", "display_id", "output"}`` on this comm,
which the extension writes over the output carrying that display id in its metadata (nothing when
it is already the report). The kernel keeps each report until a page answers ``shown``, and sends
it again with every ``restore``, so a page that reloads just as the flow ends still gets it. The
live area goes the same way when it is made (``{"op": "display", ...}``) and is kept until its
report replaces it: a page that has no output with that display id adds it to the cell.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

__all__ = ["REPORTS_KEPT", "ReportQueue"]

REPORTS_KEPT = 20
"""Settled reports kept until a page says it shows them (the oldest go first)."""


class ReportQueue:
    """Display id -> the ``report`` or ``display`` message a page still needs (any thread)."""

    def __init__(self) -> None:
        self._reports: OrderedDict[str, dict[str, Any]] = (
            OrderedDict()
        )  # display id -> report message, until a page shows it
        self._reports_lock = threading.Lock()

    def report(self, cell_id: str | None, display_id: str, output: dict[str, Any]) -> dict[str, Any]:
        """Keep a flow's settled report (``Frontend.send_report``); the message to send."""
        message: dict[str, Any] = {"op": "report", "cell_id": cell_id, "display_id": display_id, "output": output}
        with self._reports_lock:
            live = self._reports.get(display_id)
            if (
                live is not None and "writer" in live
            ):  # the page that showed the live area may add it; others replace only
                message["writer"] = live["writer"]
            self._reports[display_id] = message
            self._trim()
        return message

    def live(
        self, cell_id: str | None, display_id: str, output: dict[str, Any], client: str | None
    ) -> dict[str, Any] | None:
        """Keep a flow's live area (``Frontend.send_live``); the message to send, or ``None`` over a known report."""
        message: dict[str, Any] = {"op": "display", "cell_id": cell_id, "display_id": display_id, "output": output}
        if client is not None:
            message["writer"] = {"client": client}
        with self._reports_lock:
            if display_id in self._reports:
                return None
            self._reports[display_id] = message
            self._trim()
        return message

    def answered(self, display_id: str, client: str) -> None:
        """The page of ``client`` answered the flow's form: it adds the live area from now on."""
        with self._reports_lock:
            live = self._reports.get(display_id)
            if live is not None:
                live["writer"] = {"client": client}

    def shown(self, display_id: str) -> None:
        """A page says it shows ``display_id``'s report: no page needs it again."""
        with self._reports_lock:
            kept = self._reports.get(display_id)
            if kept is not None and kept["op"] == "report":  # a page has it: no page needs it again
                del self._reports[display_id]

    def messages(self) -> list[dict[str, Any]]:
        """Every kept message, oldest first (sent again with a ``restore``)."""
        with self._reports_lock:
            return list(self._reports.values())

    def _trim(self) -> None:
        while len(self._reports) > REPORTS_KEPT:
            self._reports.popitem(last=False)

    def pending(self) -> list[str]:
        """Display ids of live areas not settled yet and of reports no page has said it shows (tests, ``restore``)."""
        with self._reports_lock:
            return list(self._reports)
