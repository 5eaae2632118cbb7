"""``MapProgress``: one progress bar for a whole map (rows done, failed, retried, rate), with a Stop button.

Redrawn at most every ``REFRESH`` seconds from the loop, whatever the number of rows; a Stop click
stops starting rows (those running finish). Shown only where a kernel has a page to show it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from typing import TYPE_CHECKING, Any

from ..core.threads import KernelLoop

if TYPE_CHECKING:
    pass

__all__ = ["REFRESH", "MapProgress"]


REFRESH = 0.1  # seconds between redraws of the progress bar


# ---------------------------------------------------------------------- the progress bar (kernel thread)
class MapProgress:
    """One ``IntProgress`` and a label for a whole map, drawn only on the kernel thread.

    Rows settle on the session's loop (``step``). A redraw crosses to the kernel with
    ``KernelLoop.to_kernel``, at most every ``REFRESH`` seconds. While ``map`` blocks the kernel
    thread waiting for its rows (a plain call in a cell), the kernel's loop cannot run that
    crossing until the cell ends, so the waiting thread draws itself: ``wait`` sleeps on an event
    that each due redraw sets (no polling) and redraws on the kernel thread, in the cell.
    """

    def __init__(self, total: int, label: str, below: Any = None) -> None:
        import ipywidgets as widgets
        from IPython.display import display

        self.total, self.label = total, label
        self.done = self.failed = 0
        self.note = ""
        self.started = time.monotonic()
        self.main = KernelLoop()
        self.bar = widgets.IntProgress(
            value=0, min=0, max=max(total, 1), description="", bar_style="info", layout=widgets.Layout(width="220px")
        )
        self.text = widgets.Label(value=self._line())
        self.box = widgets.HBox([self.bar, self.text])
        self.box.add_class("mcp-notebook-map")
        shown = self.box if below is None else widgets.VBox([self.box, below])
        self._lock = threading.Lock()
        self._scheduled = False
        self._last = 0.0
        self._wake = threading.Event()
        self._waiting = False  # the kernel thread is inside ``wait``: it draws, the kernel loop cannot
        display(shown)

    @classmethod
    def in_kernel(cls, total: int, label: str, below: Any = None) -> MapProgress | None:
        """A bar shown in the running cell, or ``None`` outside a kernel (scripts, plain IPython): nothing to draw on."""
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - IPython is a dependency
            return None
        shell = get_ipython()
        if (
            shell is None
            or getattr(shell, "kernel", None) is None
            or threading.current_thread() is not threading.main_thread()
        ):
            return None
        return cls(total, label, below)

    def _line(self) -> str:
        failed = f", {self.failed} failed" if self.failed else ""
        note = f" · {self.note}" if self.note else ""
        return f"{self.label}: {self.done} of {self.total}{failed} ({time.monotonic() - self.started:.1f} s){note}"

    def set_note(self, note: str) -> None:
        """A word after the count (kernel thread): ``map_async`` says when the rows wait for an answer."""
        self.note = note
        self.draw()

    # ------------------------------------------------------------------ any thread
    def step(self, ok: bool, count: int = 1, failed: int | None = None) -> None:
        """``count`` rows settled (``failed`` of them failed; by default all or none, by ``ok``); redraw when due."""
        with self._lock:
            self.done += count
            self.failed += (0 if ok else count) if failed is None else failed
            if self._scheduled:
                return
            self._scheduled = True
            wait = max(0.0, self._last + REFRESH - time.monotonic())
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None and wait > 0:
            loop.call_later(wait, self._due)
        else:
            self._due()

    def _due(self) -> None:
        with self._lock:
            self._scheduled = False
            self._last = time.monotonic()
            waiting = self._waiting
        if waiting:
            self._wake.set()
        else:
            self.main.to_kernel(self.draw)

    # ------------------------------------------------------------------ kernel thread
    def draw(self) -> None:
        with self._lock:
            done, failed, line = self.done, self.failed, self._line()
        self.bar.value = done
        self.text.value = line
        if done >= self.total:
            self.bar.bar_style = "danger" if failed else "success"

    def wait(self, future: concurrent.futures.Future[Any]) -> Any:
        """``future.result()``, redrawing the bar on this (the kernel's) thread while it waits."""
        future.add_done_callback(lambda _f: self._wake.set())
        with self._lock:
            self._waiting = True
        try:
            while True:
                self._wake.clear()  # cleared before looking: a set after this wakes the wait below
                if future.done():
                    break
                self.draw()
                self._wake.wait()
        finally:
            with self._lock:
                self._waiting = False
            self.draw()
        return future.result()
