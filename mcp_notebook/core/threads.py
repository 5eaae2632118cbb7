"""The one door between the kernel's thread and a session's background loop, and that loop.

**The loop** (``Runtime``). The one background event loop that owns every MCP connection.

Why a thread of our own: a magic runs synchronously on the kernel's main thread *inside* the
kernel's running loop, so it can neither ``asyncio.run()`` nor block that loop while a widget is
waiting for a click. A private loop in a daemon thread behaves the same in ipykernel 6/7,
terminal IPython, nbclient and plain scripts. Every crossing from the caller's thread is a single
hop: ``run_coroutine_threadsafe`` (``run``, ``submit``) or ``to_loop`` (``call_soon``); see
DESIGN.md, "The runtime".

Lifecycle: ``stop()`` (``%unload_ext``) and interpreter exit run the same ``weakref.finalize``
callback: it closes what asked to be closed (open connections, so their owner tasks leave
``async with Client`` cleanly), cancels what is left, stops the loop and joins its thread with a
timeout. A later use starts a fresh loop.

Each ``Session`` owns one ``Runtime``; its connections and flows reach it through the session's
registry and their connection (``conn.runtime``), never through a process-wide one.

**The crossings**, three, each written once:

* ``to_loop(loop, fn, *args)``: from the kernel thread (or a widget callback on a subshell
  thread) onto the session's background loop (``Runtime.call_soon``; ``Flow.start``, ``Flow.cancel``).
* ``KernelLoop.to_kernel(fn, *args)``: from the background loop (or any thread) onto the kernel's
  own loop, in the context of the cell that made the ``KernelLoop``, so late output lands in
  that cell (``LiveView``, review panels, ``ResumeOffer``, ``ConfirmResume``, ``-o VAR``); and
  ``KernelLoop.now_or_soon`` for comm sends (``Frontend``).
* ``Reply``: a value set once from any thread (a button click, a comm reply) and either awaited
  on a loop or waited for with a ``threading.Event`` from a thread. Forms and review panels
  hand their answer to the flow through one.

Nothing here polls: waits end on an event.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")

__all__ = ["KernelLoop", "Reply", "ReplyAlreadySet", "Runtime", "to_loop"]


def to_loop(loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> None:
    """Run ``fn(*args)`` soon on ``loop`` (a session's background loop), from any thread; never waits."""
    loop.call_soon_threadsafe(fn, *args)


class KernelLoop:
    """The kernel's own loop and the context of the cell that was running when this was made.

    Make it on the kernel thread (in a magic). ``to_kernel`` then runs callables there from any
    thread. Without a running loop (a plain script) or once that loop is closed, callables run
    at once on the calling thread. ``cell_context=False`` runs them in whatever context the
    crossing has (comm sends, which belong to no cell).
    """

    def __init__(self, cell_context: bool = True) -> None:
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None
        self.context: contextvars.Context | None = contextvars.copy_context() if cell_context else None

    def to_kernel(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` soon on the kernel's loop (later, even when called from that loop); never waits.

        An exception is printed to the kernel's stderr: a broken view must not kill the kernel's loop.
        """
        loop = self.loop
        if loop is None or loop.is_closed():
            _guarded(fn, *args)
        elif self.context is None:
            loop.call_soon_threadsafe(_guarded, fn, *args)
        else:
            loop.call_soon_threadsafe(_guarded, fn, *args, context=self.context.copy())

    call = to_kernel  # the name views and panels use (``view.main.call``)

    def now_or_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` at once when already on the kernel's loop, else as ``to_kernel`` does."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None and running is self.loop:
            _guarded(fn, *args)
        else:
            self.to_kernel(fn, *args)


def _guarded(fn: Callable[..., Any], *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - a broken view must not kill the kernel's loop
        traceback.print_exc(file=sys.__stderr__)


class ReplyAlreadySet(RuntimeError):
    """A ``Reply`` was given a second value."""


class Reply(Generic[T]):
    """A value given once from any thread; ``await reply`` on a loop, or ``reply.wait(timeout)`` from a thread.

    The value may arrive before anyone waits. ``set`` a second time raises ``ReplyAlreadySet``;
    ``offer`` gives the value only if none was given (for callers that may race, like two clicks).
    A cancelled ``await`` leaves the reply as it was: a later ``set`` is accepted and ignored.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._value: T | None = None  # meaningful once ``_event`` is set
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[T]]] = []

    @property
    def done(self) -> bool:
        return self._event.is_set()

    def set(self, value: T) -> None:
        """Give the value (any thread); wakes every waiter."""
        if not self.offer(value):
            raise ReplyAlreadySet("this reply was already given")

    def offer(self, value: T) -> bool:
        """Give the value unless one was given; returns whether this one was taken."""
        with self._lock:
            if self._event.is_set():
                return False
            self._value = value
            self._event.set()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            try:
                loop.call_soon_threadsafe(_resolve, future, value)
            except RuntimeError:  # that loop closed meanwhile: nobody is left to wake there
                pass
        return True

    def wait(self, timeout: float | None = None) -> T:
        """Block this thread until the value is given; ``TimeoutError`` after ``timeout`` seconds."""
        if not self._event.wait(timeout):
            raise TimeoutError(f"no reply within {timeout} s")
        return cast(T, self._value)

    async def get(self) -> T:
        """Wait on the running loop until the value is given."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._event.is_set():
                return cast(T, self._value)
            future: asyncio.Future[T] = loop.create_future()
            self._waiters.append((loop, future))
        try:
            return await future
        finally:
            if future.cancelled():  # the wait was cancelled: stop listening
                with self._lock:
                    if (loop, future) in self._waiters:
                        self._waiters.remove((loop, future))

    def __await__(self) -> Generator[Any, None, T]:
        return self.get().__await__()


def _resolve(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


STOP_TIMEOUT = 10.0  # seconds for each stage of a stop: closing connections, cancelling the rest, joining the thread

Closer = Callable[[], Coroutine[Any, Any, Any]]


class Runtime:
    """A daemon thread running one asyncio loop, started lazily and shared by a session's connections."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closers: list[Closer] = []  # run on the loop before it stops (see at_stop)
        self._finalizer: weakref.finalize[..., Runtime] | None = None

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
            if self._finalizer is not None:  # a loop that stopped by itself: release it first
                self._finalizer()
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                try:
                    loop.run_forever()
                finally:
                    loop.close()

            thread = threading.Thread(target=run, name="mcp-notebook-loop", daemon=True)
            thread.start()
            ready.wait()
            self._closers = []
            # Not a bound method: the finalizer must not keep the runtime alive. It runs once, from
            # stop() or at interpreter exit, whichever comes first.
            self._finalizer = weakref.finalize(self, _shutdown, loop, thread, self._closers, STOP_TIMEOUT)
            self._loop, self._thread = loop, thread
            return loop

    def at_stop(self, closer: Closer) -> Callable[[], None]:
        """Have ``closer()`` awaited on the loop when it stops; returns a function that cancels this.

        Call it from the loop thread (a connection registers while it opens), so it lands on the
        loop that is running.
        """
        closers = self._closers
        closers.append(closer)

        def forget() -> None:
            if closer in closers:
                closers.remove(closer)

        return forget

    def started(self) -> bool:
        """Whether the loop thread runs (it starts with the first connection or flow)."""
        return self._thread is not None

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
        """Hand work to the loop from any thread (widget callbacks may run on subshell threads); ``core.threads.to_loop``."""
        to_loop(self.loop, fn, *args)

    @property
    def running(self) -> bool:
        """Whether a loop is running now (without starting one)."""
        loop = self._loop
        return loop is not None and loop.is_running()

    def stop(self) -> None:
        """Close connections, stop the loop and join its thread (``%unload_ext``); a later use starts a fresh one."""
        with self._lock:
            finalizer = self._finalizer
            self._loop = self._thread = self._finalizer = None
            self._closers = []
        if finalizer is not None:
            finalizer()


def _shutdown(loop: asyncio.AbstractEventLoop, thread: threading.Thread, closers: list[Closer], timeout: float) -> None:
    """The runtime's finalizer: run the closers, cancel the remaining tasks, stop the loop, join the thread."""
    if thread is threading.current_thread():  # stopped from its own loop: nothing can be waited for here
        loop.call_soon(loop.stop)
        return
    if not loop.is_running():
        return

    async def drain() -> None:
        pending = [asyncio.ensure_future(closer()) for closer in list(closers)]
        closers.clear()
        if pending:
            await asyncio.wait(pending, timeout=timeout)
        rest = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        if rest:
            await asyncio.wait(rest, timeout=timeout)

    try:
        asyncio.run_coroutine_threadsafe(drain(), loop).result(3 * timeout)
    except BaseException:  # noqa: BLE001 - a stop must always go on to stop the loop
        pass
    try:
        loop.call_soon_threadsafe(loop.stop)
    except RuntimeError:  # the loop closed meanwhile
        return
    thread.join(timeout)
