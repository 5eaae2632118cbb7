"""The one place work crosses between the kernel's thread and a session's background loop.

Three crossings, each written once:

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
import contextvars
import sys
import threading
import traceback
from collections.abc import Callable, Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")

__all__ = ["KernelLoop", "Reply", "ReplyAlreadySet", "to_loop"]


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
        self._value: Any = None
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]] = []

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
        return self._value

    async def get(self) -> T:
        """Wait on the running loop until the value is given."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._event.is_set():
                return self._value
            future: asyncio.Future[Any] = loop.create_future()
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
