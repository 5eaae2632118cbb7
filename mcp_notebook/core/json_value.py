"""JSON a person typed, read as JSON is written: no ``NaN``, no ``Infinity``.

Python's ``json`` reads ``NaN``, ``Infinity`` and ``-Infinity`` (which are not JSON) and ``1e999``
(as infinity), and the SDK writes such a float as ``null``: ``a=NaN`` passed every check of ours and
reached the server as ``null``, silently. Every place that reads a JSON value from the person (a
``key=value`` argument, ``--json``, ``--answers``, ``--answer``, a ``%%mcp call`` body, the JSON
editors of a form and of the sampling review) reads it with ``read_json`` (a YAML body is checked
with ``check_finite``), and such a number is refused with what to write instead.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["NotFinite", "check_finite", "read_json"]


class NotFinite(ValueError):
    """A number JSON cannot carry, in a value a person typed; the message says what to write instead."""

    def __init__(self, word: str) -> None:
        self.word = word
        super().__init__(
            f"{word} is not a finite number, and JSON carries only finite ones (the server would get null): "
            f'write a finite number, or null, or "{word}" in double quotes for the text'
        )


def read_json(text: str) -> Any:
    """``json.loads(text)``, refusing a non-finite number anywhere in it with ``NotFinite``.

    Other text that is not JSON raises ``ValueError`` as ``json.loads`` does (``NotFinite`` is one).
    """
    return json.loads(text, parse_constant=_refuse, parse_float=_finite)


def check_finite(value: Any) -> Any:
    """``value`` (read from YAML or handed over as is) when it holds no NaN or infinity, else ``NotFinite``."""
    stack = [value]
    while stack:  # a loop, not recursion: a deeply nested value cannot exhaust the stack
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise NotFinite(str(item))
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return value


def _refuse(word: str) -> Any:
    raise NotFinite(word)


def _finite(word: str) -> float:
    number = float(word)
    if not math.isfinite(number):  # 1e999: a number as typed, too large for a float
        raise NotFinite(word)
    return number
