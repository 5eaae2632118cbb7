"""Size limits on what a server sends: how much of a result is shown, how big a form may get.

A server decides how large its results and questions are; the notebook decides how much of
that it renders. Without bounds a 50 MB text result becomes a 100 MB cell output, a form with a
thousand fields freezes the kernel thread for seconds while its widgets are built, and a schema
nested hundreds of levels deep makes recursive code (and ``jsonschema``) raise RecursionError.

``Limits`` is immutable: the magics' settings (``%config MCPMagics.max_result_chars`` ...) build
a new one as each flow starts (``SessionSettings.limits``), each flow keeps the one it started with, and the display and the form
model read it from there. Nothing here is process-wide state.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Limits", "schema_size"]


@dataclass(frozen=True)
class Limits:
    """The bounds one flow renders with (see the ``MCPMagics`` settings of the same names)."""

    max_result_chars: int = 100_000
    """Characters of a result's text (text blocks, structured content, resource text, logs, trace) shown."""
    max_inline_bytes: int = 5_000_000
    """Decoded bytes of images, audio and downloadable blobs one result embeds in the page."""
    max_schema_depth: int = 32
    """Deepest nesting of an elicitation schema the client walks or checks."""
    max_form_fields: int = 200
    """Most fields (each tick box of a multi-select counting as one) a form renders as widgets."""


def _children(node: Any) -> Iterator[Any]:
    if isinstance(node, dict):
        return iter(node.values())
    if isinstance(node, list):
        return iter(node)
    return iter(())


def schema_size(schema: Any, max_depth: int) -> tuple[int, int]:
    """``(depth, values)`` of a JSON value (every dict, list and leaf counts), walked without recursion.

    Stops descending below ``max_depth + 1`` (the depth is then reported as ``max_depth + 1``),
    so the walk holds at most that many iterators; it costs about 0.15 s per million values,
    far less than parsing them did.
    """
    deepest = 0
    nodes = 0
    end = object()
    stack: list[tuple[Iterator[Any], int]] = [(iter((schema,)), 1)]  # at most max_depth + 1 iterators
    while stack:
        children, depth = stack[-1]
        node = next(children, end)
        if node is end:
            stack.pop()
            continue
        nodes += 1
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= max_depth:
                stack.append((_children(node), depth + 1))
    return deepest, nodes
