"""Which text blocks of a tool's result only repeat its structured content (``repeated_blocks``), so it is shown once.

Only a text that says exactly what the structured content says is hidden as a repeat: JSON with a
repeated key, or values that only compare equal in Python, are shown.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["repeated_blocks"]

_SAME_JSON_CHARS = 5_000_000  # longer texts are not parsed to compare with the structured content (shown both ways)


def repeated_blocks(content: list[Any], structured: Any, shown: int | None = None) -> tuple[set[int], bool]:
    """Which content blocks only repeat the structured content, and whether the text alone says all of it.

    The spec advises a tool with structured content to send its JSON as a text block too, and the
    SDK does, in three shapes: one block with the JSON of the whole; for a tool returning a list,
    ``{"result": [...]}`` with one block per item; for a plain value, ``{"result": X}`` with ``X``
    as text. The first two are shown once, as structured content (the blocks' indices come back);
    in the third the text is the value, and the structured view would only wrap it (``True``).

    ``shown``: how many of the blocks the view renders (the rest were cut by its budget); only those
    are compared, so 300,000 blocks cost what the few on the page cost.
    """
    if structured is None:
        return set(), False
    texts = {
        i: b.text
        for i, b in enumerate(content[:shown])
        if getattr(b, "type", None) == "text" and isinstance(getattr(b, "text", None), str)
    }
    wrapped = structured.get("result", _NOTHING) if isinstance(structured, dict) and len(structured) == 1 else _NOTHING
    if wrapped is not _NOTHING and not isinstance(wrapped, (dict, list)):
        only = texts.get(0) if len(content) == 1 else None
        return set(), only is not None and (
            only == wrapped if isinstance(wrapped, str) else _parsed(only) == _canonical(wrapped)
        )
    if (
        isinstance(wrapped, list)
        and wrapped
        and len(texts) == len(content[:shown])
        and len(content) == len(wrapped)
        and all(_parsed(texts[i]) == _canonical(wrapped[i]) for i in texts)
    ):
        return set(texts), False
    parsed = {i: _parsed(text) for i, text in texts.items()}
    if not any(parsed.values()):  # nothing to compare: the structured content is not formatted at all
        return set(), False
    same = {_canonical(structured), _canonical(wrapped)} - {None}
    return {i for i, text in parsed.items() if text in same}, False


_NOTHING = object()


def _canonical(value: Any) -> str | None:
    """``value`` as one JSON text (keys sorted), so that ``true``, ``1`` and ``1.0`` stay three values; ``None`` if it is no JSON."""
    if value is _NOTHING:
        return None
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key repeats")  # JSON that says one thing to a reader and another to a parser
    return dict(pairs)


def _parsed(text: str) -> str | None:
    """The canonical JSON (``_canonical``) of a text holding JSON with no repeated key, else ``None``.

    Only a text that says exactly what the structured content says is hidden as a repeat: a text
    whose object repeats a key (``{"action": "delete", "action": "list"}``) or whose values only
    compare equal in Python (``true`` and ``1``) is shown.
    """
    if len(text) > _SAME_JSON_CHARS:
        return None
    try:
        return _canonical(json.loads(text, object_pairs_hook=_no_repeated_keys))
    except (ValueError, RecursionError):
        return None
