"""A result as a pandas DataFrame: ``%mcp call ... --frame`` and ``mcp_notebook.frame``.

A data scientist's next cell after a call is pandas. ``frame`` reads a result's value as
``frames.result_value`` does (the structured content, ``X`` for a lone ``{"result": X}``, the object or
array a single text block holds as JSON) and makes a DataFrame of it when it is tabular: a list of
records (objects), or an object holding exactly one such list (``{"items": [...], "total": 3}``).
Anything else is refused with a ``NotTabular`` naming the shape it has, so the person sees why at once
instead of a DataFrame of one column of dicts. A listing (``x = %mcp tools``) converts too: its rows
under its columns, also when it has none.

The value is the server's, so the work is bounded before pandas sees it: the records are checked
in one pass (each an object, keys read as text), the columns they name are at most ``FRAME_COLUMNS``
and rows x columns at most ``FRAME_CELLS`` (a million records each with its own key would otherwise
make a frame of 10^12 cells). Nested values stay as they are, one object per cell: nothing here
recurses into them. pandas is imported only here, when a frame is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.text import one_line
from .frames import pandas_module, result_value

__all__ = ["FRAME_CELLS", "FRAME_COLUMNS", "NotTabular", "frame", "records_of", "shape_of"]

FRAME_COLUMNS = 1_000
"""The most columns a frame is made with: the distinct keys of all records together."""

FRAME_CELLS = 25_000_000
"""The most rows x columns a frame is made with (about 200 MB of cell pointers before the values)."""

_NAMED_KEYS = 5  # keys named in an error about an object's shape
_KEY_CHARS = 30


class NotTabular(ValueError):
    """The value is not a list of records (nor an object holding exactly one): the message names its shape."""


def frame(value: Any) -> Any:
    """``value`` as a pandas DataFrame: a tool's result (its tabular structured content), a listing, or records.

    ``value`` may be an SDK ``CallToolResult`` (as ``r = %mcp call ...`` binds it), a listing
    (``x = %mcp tools``: its ``columns`` and ``rows``), or the data itself (a list of dicts, or a dict
    holding one such list). Raises ``NotTabular`` naming the shape when it is not a table.
    """
    pd = pandas_module()
    columns = getattr(value, "columns", None)
    rows = getattr(value, "rows", None)
    if isinstance(columns, list) and isinstance(rows, list):  # a listing (notebook.display.Table)
        return pd.DataFrame([list(row) for row in rows], columns=[str(c) for c in columns])
    records, names = records_of(value)
    return pd.DataFrame.from_records(records, columns=names)


def records_of(value: Any) -> tuple[list[Mapping[str, Any]], list[str]]:
    """The records of ``value`` and the columns they name (first seen first), within the bounds; else ``NotTabular``."""
    data = _data(value)
    found = data
    if isinstance(data, Mapping):
        lists = [(k, v) for k, v in data.items() if _is_records(v)]
        if len(lists) != 1:
            raise NotTabular(
                f"not a table: {shape_of(data)}; --frame (and mcp_notebook.frame) need a list of records or an "
                f"object holding exactly one, and this object holds {_count(len(lists), 'such list')}"
            )
        found = lists[0][1]
    if not isinstance(found, list):
        raise NotTabular(f"not a table: {shape_of(data)}; a table is a list of records (objects)")
    return _columns(found)


def _data(value: Any) -> Any:
    """What a result holds as one value (``frames.result_value``); plain data as it is."""
    if hasattr(value, "content") and hasattr(value, "structured_content"):
        if getattr(value, "is_error", False):
            raise NotTabular("not a table: the tool answered with an error (isError), which has no rows")
        return result_value(value)
    if hasattr(value, "messages") or hasattr(value, "contents"):
        raise NotTabular(
            f"not a table: a {type(value).__name__} (a prompt or a resource) has no rows; frame a tool's result"
        )
    return value


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, Mapping) for item in value)


def _columns(records: list[Any]) -> tuple[list[Mapping[str, Any]], list[str]]:
    """Every key of the records, as text, in the order first seen; records with a key that is not text get text keys."""
    names: dict[str, None] = {}
    out: list[Mapping[str, Any]] = records
    for i, record in enumerate(records):  # one pass: refused at the first item that is no object, or one key too many
        if not isinstance(record, Mapping):
            raise NotTabular(
                f"not a table: {shape_of(records)} whose item {i} is {shape_of(record)}; every item must be an object"
            )
        if all(isinstance(k, str) for k in record):
            names.update(dict.fromkeys(record))
        else:  # JSON keys are text; a Python server's dict may hold others: read as text, the first of a clash kept
            if out is records:
                out = list(records)
            named: dict[str, Any] = {}
            for k, v in record.items():
                named.setdefault(str(k), v)
            out[i] = named
            names.update(dict.fromkeys(named))
        if len(names) > FRAME_COLUMNS:
            raise NotTabular(
                f"too wide for a frame: the records name more than {FRAME_COLUMNS:,} different keys "
                f"(by record {i:,} of {len(records):,}); read the value itself (r.structured_content)"
            )
    if len(records) * max(len(names), 1) > FRAME_CELLS:
        raise NotTabular(
            f"too large for a frame: {len(records):,} records x {len(names):,} columns is more than "
            f"{FRAME_CELLS:,} cells; read the value itself (r.structured_content) and take the part you need"
        )
    return out, list(names)


def shape_of(value: Any) -> str:
    """A value's shape in a few words, for an error: a number, a string, an object with keys ..., a list of N ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        keys = [repr(one_line(str(k), _KEY_CHARS)) for k in list(value)[:_NAMED_KEYS]]
        more = f" and {len(value) - _NAMED_KEYS:,} more" if len(value) > _NAMED_KEYS else ""
        return f"an object with keys {', '.join(keys)}{more}" if keys else "an empty object"
    if isinstance(value, list):
        return f"a list of {_count(len(value), 'item')}"
    return f"a {type(value).__name__}"


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}" if n == 1 else f"{n:,} {what}s"
