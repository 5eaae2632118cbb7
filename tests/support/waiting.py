"""``wait_until``: wait for a condition instead of sleeping a guessed time (tests that drive no browser).

A fixed sleep is either too short on a busy machine (two cores shared by a whole suite) or wasted
time on a quiet one; polling the condition ends as soon as it holds and fails naming what never came.
A sleep stays where time itself is what a test is about: a token or task that must expire, a server
slow on purpose, or a grace period before asserting that nothing arrived.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T], what: str = "the condition", timeout: float = 30.0, every: float = 0.02
) -> T:
    """Poll ``condition`` every ``every`` s until it returns something true (returned); after ``timeout`` s fail
    with an ``AssertionError`` naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)
