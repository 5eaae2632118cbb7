"""The one background event loop that owns every MCP connection.

Why a thread of our own: a magic runs synchronously on the kernel's main thread *inside* the
kernel's running loop, so it can neither ``asyncio.run()`` nor block that loop while a widget is
waiting for a click. A private loop in a daemon thread behaves the same in ipykernel 6/7,
terminal IPython, nbclient and plain scripts. Every crossing from the caller's thread is a single
``run_coroutine_threadsafe`` hop (see DESIGN.md, "The runtime").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["Runtime", "get_runtime"]


class Runtime:
    """A daemon thread running one asyncio loop, started lazily and shared by all connections."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The running background loop (started on first use)."""
        loop = self._loop
        if loop is None or not loop.is_running():
            loop = self._start()
        return loop

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is not None and self._loop.is_running():
                return self._loop
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            thread = threading.Thread(target=run, name="mcp-notebook-loop", daemon=True)
            thread.start()
            ready.wait()
            self._loop, self._thread = loop, thread
            return loop

    def in_loop_thread(self) -> bool:
        """True when called from the background loop's own thread."""
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; the one cheap hop every call makes."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and block the calling thread until it finishes."""
        if self.in_loop_thread():
            coro.close()
            raise RuntimeError("Runtime.run() called from the MCP loop thread would deadlock")
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"gave up after {timeout} s") from None

    def call_soon(self, fn: Any, *args: Any) -> None:
        """Hand work to the loop from any thread (widget callbacks may run on subshell threads)."""
        self.loop.call_soon_threadsafe(fn, *args)

    def stop(self) -> None:
        """Stop the loop (tests and interpreter shutdown); a later use starts a fresh one."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(timeout=5)


_runtime = Runtime()


def get_runtime() -> Runtime:
    """The process-wide runtime."""
    return _runtime
