"""The thread bridge (``mcp_notebook.core.threads``) across real threads and real loops."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_notebook.core.threads import KernelLoop, Reply, ReplyAlreadySet, to_loop

CELL: contextvars.ContextVar[str] = contextvars.ContextVar("CELL", default="none")


class LoopThread:
    """An asyncio loop running in a thread of its own (stands for the runtime loop or the kernel's loop)."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout: float = 5) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture
def loop_thread() -> Iterator[LoopThread]:
    lt = LoopThread("bridge-test-loop")
    yield lt
    if not lt.loop.is_closed():
        lt.close()


# ---------------------------------------------------------------------- to_loop
def test_to_loop_runs_on_the_loop_thread_with_its_arguments(loop_thread: LoopThread) -> None:
    seen: list[tuple[str, int, int]] = []
    done = threading.Event()

    def work(a: int, b: int) -> None:
        seen.append((threading.current_thread().name, a, b))
        done.set()

    to_loop(loop_thread.loop, work, 2, 3)
    assert done.wait(5)
    assert seen == [("bridge-test-loop", 2, 3)]


def test_to_loop_keeps_the_order_of_calls(loop_thread: LoopThread) -> None:
    seen: list[int] = []
    done = threading.Event()
    for i in range(50):
        to_loop(loop_thread.loop, seen.append, i)
    to_loop(loop_thread.loop, done.set)
    assert done.wait(5)
    assert seen == list(range(50))


def test_to_loop_on_a_closed_loop_raises(loop_thread: LoopThread) -> None:
    loop_thread.close()
    with pytest.raises(RuntimeError, match="closed"):
        to_loop(loop_thread.loop, print)


# ---------------------------------------------------------------------- to_kernel
def test_to_kernel_runs_on_the_kernel_loop_in_the_creating_cells_context(loop_thread: LoopThread) -> None:
    """Made on the 'kernel' loop inside a cell's context; called from another thread; runs back there."""

    async def make() -> KernelLoop:
        CELL.set("cell 7")
        return KernelLoop()

    kernel = loop_thread.run(make())
    assert kernel.loop is loop_thread.loop
    CELL.set("caller's context")
    seen: list[tuple[str, str, str]] = []
    done = threading.Event()

    def work(tag: str) -> None:
        seen.append((threading.current_thread().name, CELL.get(), tag))
        done.set()

    other = threading.Thread(target=kernel.to_kernel, args=(work, "x"), name="runtime-like")
    other.start()
    other.join(5)
    assert done.wait(5)
    assert seen == [("bridge-test-loop", "cell 7", "x")]


def test_to_kernel_copies_the_context_per_call(loop_thread: LoopThread) -> None:
    """A callable that sets a variable does not leak it into the next one."""

    async def make() -> KernelLoop:
        CELL.set("cell 1")
        return KernelLoop()

    kernel = loop_thread.run(make())
    seen: list[str] = []
    done = threading.Event()
    kernel.to_kernel(lambda: CELL.set("changed"))
    kernel.to_kernel(lambda: (seen.append(CELL.get()), done.set()))
    assert done.wait(5)
    assert seen == ["cell 1"]


def test_to_kernel_without_a_cell_context_uses_the_callers(loop_thread: LoopThread) -> None:
    async def make() -> KernelLoop:
        CELL.set("cell 2")
        return KernelLoop(cell_context=False)

    kernel = loop_thread.run(make())
    assert kernel.context is None
    seen: list[str] = []
    done = threading.Event()

    def caller() -> None:
        CELL.set("the caller")
        kernel.to_kernel(lambda: (seen.append(CELL.get()), done.set()))

    threading.Thread(target=caller).start()
    assert done.wait(5)
    assert seen == ["the caller"]


def test_to_kernel_without_a_loop_runs_at_once_on_the_calling_thread() -> None:
    kernel = KernelLoop()  # no running loop here, as in a plain script
    assert kernel.loop is None
    seen: list[str] = []
    kernel.to_kernel(lambda: seen.append(threading.current_thread().name))
    assert seen == [threading.current_thread().name]


def test_to_kernel_after_the_loop_closed_runs_at_once(loop_thread: LoopThread) -> None:
    async def make() -> KernelLoop:
        return KernelLoop()

    kernel = loop_thread.run(make())
    loop_thread.close()
    seen: list[int] = []
    kernel.to_kernel(seen.append, 1)
    assert seen == [1]


def test_to_kernel_reports_a_failure_and_keeps_the_loop_alive(
    loop_thread: LoopThread, capfd: pytest.CaptureFixture[str]
) -> None:
    async def make() -> KernelLoop:
        return KernelLoop()

    kernel = loop_thread.run(make())
    done = threading.Event()
    kernel.to_kernel(lambda: 1 / 0)
    kernel.to_kernel(done.set)
    assert done.wait(5)  # the loop went on after the broken callable
    assert "ZeroDivisionError" in capfd.readouterr().err


def test_to_kernel_from_the_kernel_loop_runs_later_but_now_or_soon_runs_now(loop_thread: LoopThread) -> None:
    async def scenario() -> list[str]:
        kernel = KernelLoop()
        order: list[str] = []
        kernel.to_kernel(order.append, "to_kernel")
        kernel.now_or_soon(order.append, "now_or_soon")
        order.append("after both calls")
        await asyncio.sleep(0)
        return order

    assert loop_thread.run(scenario()) == ["now_or_soon", "after both calls", "to_kernel"]


def test_now_or_soon_from_another_thread_goes_to_the_kernel_loop(loop_thread: LoopThread) -> None:
    async def make() -> KernelLoop:
        return KernelLoop()

    kernel = loop_thread.run(make())
    names: list[str] = []
    done = threading.Event()
    kernel.now_or_soon(lambda: (names.append(threading.current_thread().name), done.set()))
    assert done.wait(5)
    assert names == ["bridge-test-loop"]


# ---------------------------------------------------------------------- Reply
def test_reply_set_from_a_thread_wakes_an_await_on_a_loop(loop_thread: LoopThread) -> None:
    reply: Reply[dict[str, int]] = Reply()

    async def waiter() -> tuple[dict[str, int], str]:
        value = await reply
        return value, threading.current_thread().name

    future = asyncio.run_coroutine_threadsafe(waiter(), loop_thread.loop)
    time.sleep(0.05)  # the waiter is parked on the loop
    assert not future.done() and not reply.done
    threading.Thread(target=reply.set, args=({"n": 1},), name="widget-callback").start()
    assert future.result(5) == ({"n": 1}, "bridge-test-loop")
    assert reply.done


def test_reply_set_before_the_waiter_arrives(loop_thread: LoopThread) -> None:
    reply: Reply[str] = Reply()
    setter = threading.Thread(target=reply.set, args=("early",))
    setter.start()
    setter.join(5)
    assert reply.done
    assert loop_thread.run(reply.get()) == "early"
    assert reply.wait(0) == "early"  # a thread gets it at once too


def test_reply_wait_from_a_thread_set_on_a_loop(loop_thread: LoopThread) -> None:
    reply: Reply[int] = Reply()
    loop_thread.loop.call_soon_threadsafe(loop_thread.loop.call_later, 0.05, reply.set, 42)
    started = time.monotonic()
    assert reply.wait(5) == 42
    assert time.monotonic() - started < 2


def test_reply_wakes_every_waiter_on_several_loops_and_threads(loop_thread: LoopThread) -> None:
    other = LoopThread("second-loop")
    try:
        reply: Reply[str] = Reply()
        futures = [asyncio.run_coroutine_threadsafe(reply.get(), lt.loop) for lt in (loop_thread, other, loop_thread)]
        got: list[str] = []
        waiters = [threading.Thread(target=lambda: got.append(reply.wait(5))) for _ in range(3)]
        for t in waiters:
            t.start()
        time.sleep(0.05)
        reply.set("all")
        assert [f.result(5) for f in futures] == ["all", "all", "all"]
        for t in waiters:
            t.join(5)
        assert got == ["all", "all", "all"]
    finally:
        other.close()


def test_reply_set_twice_is_an_error_and_keeps_the_first_value() -> None:
    reply: Reply[int] = Reply()
    reply.set(1)
    with pytest.raises(ReplyAlreadySet, match="already given"):
        reply.set(2)
    assert isinstance(ReplyAlreadySet("x"), RuntimeError)
    assert reply.wait(0) == 1


def test_reply_offer_takes_only_the_first_value_across_racing_threads() -> None:
    reply: Reply[int] = Reply()
    barrier = threading.Barrier(8)
    taken: list[bool] = []

    def click(i: int) -> None:
        barrier.wait()
        taken.append(reply.offer(i))

    threads = [threading.Thread(target=click, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert sorted(taken) == [False] * 7 + [True]
    assert reply.wait(0) in range(8)


def test_reply_wait_times_out() -> None:
    reply: Reply[int] = Reply()
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="no reply within 0.1 s"):
        reply.wait(0.1)
    assert 0.09 <= time.monotonic() - started < 2
    assert not reply.done


def test_reply_await_times_out_with_asyncio_timeout_and_a_late_set_is_harmless(loop_thread: LoopThread) -> None:
    reply: Reply[int] = Reply()

    async def waiter() -> None:
        async with asyncio.timeout(0.05):
            await reply

    with pytest.raises(TimeoutError):
        loop_thread.run(waiter())
    assert reply._waiters == []  # the cancelled wait stopped listening
    reply.set(5)  # nobody waits any more: accepted, nothing breaks
    assert loop_thread.run(reply.get()) == 5
