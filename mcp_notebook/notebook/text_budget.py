"""What one view may still show (``Budget``), and text cut to it: plain, escaped, boxed, as JSON.

Every part of one result's rendering (its blocks, structured views and media) draws on one
character budget and one byte budget from the flow's ``Limits`` (``%config
MCPMagics.max_result_chars`` and ``max_inline_bytes``). The budget is passed from part to part;
what it cut is said in the view's closing notes, with how to get the whole value, which always
stays on the flow (``flow.result()``, ``-o VAR``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..core.limits import Limits
from ..core.text import esc

__all__ = ["WHOLE", "WHOLE_TIMES", "Budget", "bounded_json", "bounded_text", "cut_note", "json_text", "pre_html"]

_BOX_LINES, _BOX_CHARS = 40, 4_000
"""A text result longer than this sits in a bounded, scrollable box headed by its size."""
_BLOCK_COST = 64  # budget characters every rendered block costs (its markup), so countless tiny blocks stay bounded
WHOLE_TIMES = 5
"""A text cut to ``max_result_chars`` is also kept whole, escaped and folded ("show all N lines"), when the escaped
texts folded so in one view come to at most this many times ``max_result_chars`` (and never more than
``max_inline_bytes``, the most one output embeds): 500,000 characters by default, so a notebook file grows by at
most that much, and the plain text stays cut. A longer text stays in the kernel (``WHOLE``)."""
WHOLE = "the whole value stays on the flow: flow.result() (or -o VAR on the magic) gives the full SDK result"


class Budget:
    """What is left to show of one view: characters of text, bytes of embedded media."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.chars = self.limits.max_result_chars
        self.inline = self.limits.max_inline_bytes
        self.cut = 0  # characters not shown
        self.skipped = 0  # blocks, messages or items not shown at all
        self.media_cut = 0  # embedded bytes not shown
        self.whole = min(WHOLE_TIMES * self.limits.max_result_chars, self.limits.max_inline_bytes)
        """Escaped characters still free for the whole copies of cut texts (``pre_html``)."""
        self.unsized = False  # a value was cut before it was formatted whole: ``cut`` is then a lower bound

    @property
    def exhausted(self) -> bool:
        return self.chars <= 0

    def block(self) -> None:
        self.chars -= _BLOCK_COST

    def text(self, value: str) -> tuple[str, int]:
        """The part of ``value`` that fits, and how many characters were cut."""
        room = max(self.chars, 0)
        if len(value) <= room:
            self.chars -= len(value)
            return value, 0
        cut = len(value) - room
        self.chars = 0
        self.cut += cut
        return value[:room], cut

    def media(self, size: int) -> bool:
        if size > self.inline:
            self.media_cut += size
            return False
        self.inline -= size
        return True

    def notes(self) -> list[str]:
        """The closing remarks of a view that was cut (empty when nothing was)."""
        out = []
        if self.cut or self.skipped:
            least = "at least " if self.unsized else ""
            what = [f"{least}{self.cut:,} more characters"] if self.cut else []
            what += [f"{self.skipped:,} more part{'s' if self.skipped != 1 else ''}"] if self.skipped else []
            out.append(
                f"[output cut at {self.limits.max_result_chars:,} characters: {' and '.join(what)} not shown; {WHOLE}; "
                "%config MCPMagics.max_result_chars = N shows more]"
            )
        if self.media_cut:
            out.append(
                f"[{self.media_cut:,} bytes of images, audio or files not embedded (over {self.limits.max_inline_bytes:,} bytes); "
                f"{WHOLE}; %config MCPMagics.max_inline_bytes = N embeds more]"
            )
        return out


def cut_note(cut: int, at_least: bool = False) -> str:
    return f"[… {'at least ' if at_least else ''}{cut:,} more characters not shown]"


def bounded_text(value: str, budget: Budget) -> tuple[str, str]:
    """Bounded text as (plain, the escaped HTML inside a ``<pre>``)."""
    shown, cut = budget.text(value)
    if not cut:
        return shown, esc(shown)
    return f"{shown}\n{cut_note(cut)}", f"{esc(shown)}\n<i>{esc(cut_note(cut))}</i>"


def pre_html(full: str, inner: str, cut: int = 0, budget: Budget | None = None) -> str:
    """Escaped text ``inner`` (what was shown of ``full``) in a ``<pre>``; a long one in a bounded, scrollable box.

    The box is headed by the text's size, so a reader knows how much there is before scrolling. Its
    bound is inline as well as in ``OUTPUT_CSS`` (JupyterLab's sanitizer keeps ``max-height`` and
    ``overflow``), so a reopened, untrusted notebook keeps it. The whole text never goes into the
    output beyond ``WHOLE_TIMES``: a cut text, when ``budget`` still has room for its escaped whole,
    follows the box folded as "show all N lines" (a ``<details>``, closed), so it opens whole in the page.
    """
    lines = full.count("\n") + 1
    whole = _whole_html(full, lines, budget) if cut and budget is not None else ""
    if lines <= _BOX_LINES and len(full) <= _BOX_CHARS:
        return f"<pre>{inner}</pre>{whole}"
    size = f"{lines:,} lines · {len(full):,} characters"
    if cut:
        size += f", the first {len(full) - cut:,} shown"
    return (
        f'<div class="hdr">{esc(size)} (scroll inside the box)</div>'
        f'<pre class="box" style="max-height:30em;overflow:auto">{inner}</pre>{whole}'
    )


def _whole_html(full: str, lines: int, budget: Budget) -> str:
    """The whole of a cut text, escaped, in a closed ``<details>``; empty when it would pass the budget's ``whole``."""
    if len(full) > budget.whole:
        return ""
    inner = esc(full)
    if len(inner) > budget.whole:
        return ""
    budget.whole -= len(inner)
    return (
        f'<details class="whole"><summary>show all {lines:,} line{"s" if lines != 1 else ""} ({len(full):,} characters)</summary>'
        f"<pre>{inner}</pre></details>"
    )


def bounded_json(value: Any, most: int, indent: int | None = 2) -> tuple[str, bool] | None:
    """The JSON of ``value`` as ``json_text`` makes it, made only until it is longer than ``most``: (text, whole?).

    The encoder's chunks are made lazily, so a 300,000-row value costs what its shown start costs
    (formatting it whole first took seconds for a few characters of a repr). ``None`` as ``json_text``,
    and for a value nested deeper than ``_DEEPEST`` levels within what is made (and ``_DEEPEST`` values
    beyond it), which ``json_text`` could not format whole: it is said to be too deep, not shown as brackets.
    """
    if _deeper_than(value, _DEEPEST, most + _DEEPEST):
        return None
    made: list[str] = []
    size = 0
    try:
        for chunk in json.JSONEncoder(indent=indent, ensure_ascii=False, default=str).iterencode(value):
            made.append(chunk)
            size += len(chunk)
            if size > most:
                return "".join(made), False
    except (RecursionError, ValueError, TypeError):
        return None
    return "".join(made), True


_DEEPEST = 500  # levels of nesting a shown JSON value may have (the json module's own recursion stops near 1,000)


def _deeper_than(value: Any, deepest: int, nodes: int) -> bool:
    """Whether ``value`` nests deeper than ``deepest`` within its first ``nodes`` values, in the encoder's order.

    Walked without recursion, and never further than ``nodes`` values: each value costs at least a
    character of JSON, so these cover what a text of ``nodes`` characters shows.
    """
    stack: list[Iterator[Any]] = [iter((value,))]
    while stack and nodes > 0:
        node = next(stack[-1], _END)
        if node is _END:
            stack.pop()
            continue
        nodes -= 1
        if isinstance(node, dict):
            stack.append(iter(node.values()))
        elif isinstance(node, (list, tuple)):
            stack.append(iter(node))
        if len(stack) > deepest:
            return True
    return False


_END = object()


def json_text(value: Any, indent: int | None = 2) -> str | None:
    try:
        return json.dumps(value, indent=indent, ensure_ascii=False, default=str)
    except (RecursionError, ValueError, TypeError):
        return None
