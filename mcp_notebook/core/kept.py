"""``Kept``: the newest entries of a list that would otherwise grow with every call or round.

A kernel runs for days and a notebook makes thousands of calls; a server may ask, log or poll as
often as it likes within one call. Whatever keeps an entry per call or per round (a flow's trace,
notes and server log, a live view's log lines, a session's notes) keeps only its newest entries,
and says how many it let go where a person reads it ("3 earlier rounds dropped"). Each user names
its bound as a constant next to it, with why that size.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, SupportsIndex, TypeVar

__all__ = ["Kept"]

T = TypeVar("T")


class Kept(list[T]):
    """A list that keeps its newest ``limit`` entries; ``dropped`` counts the older ones it let go.

    Still a list (it compares equal to one, slices and shows as one), so its readers need not
    change. Entries arrive through ``append``, ``extend``, ``+=`` or ``insert``; the oldest go
    first. Assigning a slice (``kept[:] = items``) is list's own and not bounded: nothing here does.
    """

    __slots__ = ("dropped", "limit")

    def __init__(self, limit: int, items: Iterable[T] = ()) -> None:
        if limit < 1:
            raise ValueError(f"a Kept list keeps at least one entry, not {limit}")
        self.limit = limit
        self.dropped = 0
        if items:  # a flow makes four empty ones per call: no loop for them
            self.extend(items)

    def append(self, item: T) -> None:
        if len(self) >= self.limit:
            over = len(self) - self.limit + 1
            del self[:over]
            self.dropped += over
        super().append(item)

    def extend(self, items: Iterable[T]) -> None:
        for item in items:
            self.append(item)

    def insert(self, index: SupportsIndex, item: T) -> None:
        super().insert(index, item)
        over = len(self) - self.limit
        if over > 0:
            del self[:over]
            self.dropped += over

    def __iadd__(self, items: Iterable[T]) -> Kept[T]:  # type: ignore[override,misc]  # list's returns Self
        self.extend(items)
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with its bound and count (list's own way fills the items before ``limit`` exists)."""
        return (Kept, (self.limit, list(self)), {"dropped": self.dropped})

    def __setstate__(self, state: dict[str, int]) -> None:
        self.dropped = state["dropped"]

    @property
    def seen(self) -> int:
        """Every entry ever added: the kept ones and the dropped ones."""
        return len(self) + self.dropped

    def marker(self, what: str) -> str | None:
        """``"N earlier WHAT dropped (the last LIMIT kept)"``, or ``None`` when nothing was dropped."""
        if not self.dropped:
            return None
        return f"{self.dropped:,} earlier {what} dropped (the last {self.limit:,} kept)"
