"""A bound result reads well: ``r = %mcp call ...`` binds the SDK's result as a thin subclass of it.

The value a flow line binds (``x = %mcp call``, ``-o VAR``, the cell's ``_``) is the SDK's own object for
code that uses it (``r.content``, ``r.structured_content``, ``model_dump``, ``isinstance(r,
mcp.types.CallToolResult)``), but its repr was the pydantic model's: a screenful of
``meta=... content=[TextContent(...)]`` wherever a person printed it, listed it or looked at it in a
debugger. ``readable`` gives a copy of it whose class is a subclass named as the SDK's, with the same
fields and no new ones, whose ``repr`` / ``str`` is one short line of what the report shows
(``CallToolResult: 5``), control characters spelled out. Shown as a cell's value it goes through
the shell's formatter for the SDK types (``display.display_result``: the rendered, escaped result),
as the SDK object does. It compares equal to the SDK object with the same content.
"""

from __future__ import annotations

import copy
from typing import Any

from mcp.types import CallToolResult as _CallToolResult
from mcp.types import GetPromptResult as _GetPromptResult
from mcp.types import ReadResourceResult as _ReadResourceResult

from ..core.limits import Limits
from ..core.text import one_line, plain_text

__all__ = ["REPR_CHARS", "CallToolResult", "GetPromptResult", "ReadResourceResult", "readable"]

REPR_CHARS = 100
"""Characters of the result's first line in its repr."""

_LOOKED_AT = Limits(max_result_chars=REPR_CHARS * 4, max_inline_bytes=0)  # a repr renders no more than this


class _Readable:
    """The short repr of a result, and equality as the SDK model's (pydantic compares classes too)."""

    __slots__ = ()

    def __repr__(self) -> str:
        from .result_view import ResultView

        plain, _ = ResultView(self, _LOOKED_AT).parts()
        first = one_line(plain[0], REPR_CHARS) if plain else ""
        name = type(self).__name__
        return plain_text(f"{name}: {first}" if first else f"{name} (empty)")

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        sdk = type(self).__mro__[2]  # the SDK class this one thinly wraps
        if not isinstance(other, sdk):
            return NotImplemented
        return bool(
            self.__dict__ == other.__dict__
            and getattr(self, "__pydantic_extra__", None) == getattr(other, "__pydantic_extra__", None)
        )

    __hash__ = None  # type: ignore[assignment]  # as the SDK model's: mutable, not hashable


class CallToolResult(_Readable, _CallToolResult):
    """The SDK's ``CallToolResult``, with a short repr."""

    __slots__ = ()


class GetPromptResult(_Readable, _GetPromptResult):
    """The SDK's ``GetPromptResult``, with a short repr."""

    __slots__ = ()


class ReadResourceResult(_Readable, _ReadResourceResult):
    """The SDK's ``ReadResourceResult``, with a short repr."""

    __slots__ = ()


_READABLE: dict[type, type] = {
    _CallToolResult: CallToolResult,
    _GetPromptResult: GetPromptResult,
    _ReadResourceResult: ReadResourceResult,
}


def readable(result: Any) -> Any:
    """``result`` as its readable subclass (a shallow copy: the flow keeps its own object); anything else as it is."""
    kind = _READABLE.get(type(result))
    if kind is None:
        return result
    shown = copy.copy(result)
    shown.__class__ = kind
    return shown
