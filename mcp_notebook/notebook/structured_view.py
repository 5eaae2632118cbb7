"""Structured content (a JSON value) as HTML a person reads: ``StructuredView`` and ``json_block``.

Arrays of objects become tables, objects trees folded by depth; every key and value is escaped and
the whole is bounded (rows, columns, depth, characters). ``json_block`` pairs the view with the
value's indented JSON as the plain-text twin, spent from the result's ``Budget``.
"""

from __future__ import annotations

from typing import Any

from ..core.text import esc
from .style import VALUE_STYLE, note_html
from .text_budget import WHOLE, Budget, bounded_json, bounded_text, cut_note, json_text

__all__ = ["CELL_CHARS", "MAX_DEPTH", "OPEN_DEPTH", "TABLE_COLUMNS", "TABLE_ROWS", "StructuredView", "json_block"]


def json_block(
    value: Any, budget: Budget, summary: str = "structured content", room: int | None = None
) -> tuple[str, str]:
    """A JSON value: its indented JSON as plain text; in HTML a table or a tree folded by depth (``StructuredView``).

    ``room``: the characters the HTML view may use, when not what is left of ``budget`` (a text
    block that only repeated this value spent the budget for the plain text, not for the page).
    """
    made = bounded_json(value, max(budget.chars, 0))  # no further than the budget: a huge value is not formatted whole
    if made is None:
        note = f"[{summary}: too deeply nested to show; {WHOLE}]"
        return note, note_html(note)
    room = max(budget.chars if room is None else room, 0)
    text, whole = made
    if whole:
        plain, _ = bounded_text(
            text, budget
        )  # the plain twin spends the budget (and says what was cut); the HTML gets the same room
    else:  # cut before it was formatted whole: how much more there is was not measured
        shown, cut = budget.text(text)
        budget.unsized = True
        plain = f"{shown}\n{cut_note(cut, at_least=True)}"
    inner = StructuredView(room).html(value)
    return plain, f'{VALUE_STYLE}<details open class="json"><summary>{esc(summary)}</summary>{inner}</details>'


TABLE_ROWS = 200
"""Most rows of an array of objects shown as a table (the rest are counted)."""
TABLE_COLUMNS = 24
"""Most columns of such a table (keys in order of first appearance)."""
CELL_CHARS = 200
"""Most characters of one table cell, key, or nested value shown on one line."""
OPEN_DEPTH = 2
"""Objects and arrays nested less deep than this are shown unfolded; deeper ones start folded."""
MAX_DEPTH = 16
"""Below this depth a value is shown as one line of JSON, cut to ``CELL_CHARS``."""
_NODE_COST = 24  # room every shown key, item or cell costs (its markup), so a million tiny items stay bounded
_INLINE_LIST = 120  # an array of plain values this short in JSON is shown on one line


class StructuredView:
    """A JSON value as HTML a person reads: arrays of objects as tables, objects as trees folded by depth.

    Every key and value is escaped; the whole costs at most ``chars`` characters of text (plus
    ``_NODE_COST`` per item), tables at most ``TABLE_ROWS`` x ``TABLE_COLUMNS``, and nesting is shown
    to ``MAX_DEPTH`` levels: what is left out is counted where it would have been. Never raises on
    any JSON value (it recurses at most ``MAX_DEPTH`` levels).
    """

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self.hidden = 0  # items, rows or columns not shown

    def html(self, value: Any) -> str:
        body = self._value(value, 0)
        if self.hidden:
            body += note_html(f"[{self.hidden:,} more items not shown; {WHOLE}]")
        return body

    @property
    def _out(self) -> bool:
        return self.chars <= 0

    def _clip(self, text: str, most: int | None = None) -> str:
        """``text`` cut to what is left (and to ``most``), the room spent."""
        room = max(self.chars, 0) if most is None else min(max(self.chars, 0), most)
        shown = text if len(text) <= room else text[: max(room - 1, 0)] + "…"
        self.chars -= len(shown) + _NODE_COST
        return shown

    def _value(self, value: Any, depth: int) -> str:
        if isinstance(value, dict) and value:
            return self._compact(value) if depth >= MAX_DEPTH else self._object(value, depth)
        if isinstance(value, list) and value:
            if depth >= MAX_DEPTH:
                return self._compact(value)
            if all(isinstance(item, dict) for item in value):
                return self._table(value)
            return self._list(value, depth)
        return self._leaf(value)

    def _leaf(self, value: Any) -> str:
        text = json_text(value, indent=None)
        return f"<code>{esc(self._clip(text if text is not None else repr(value)))}</code>"

    def _compact(self, value: Any) -> str:
        made = bounded_json(value, CELL_CHARS, indent=None)  # one line of at most CELL_CHARS: never formatted whole
        if made is None:
            return note_html("[too deeply nested to show]")
        return f"<code>{esc(self._clip(made[0], CELL_CHARS))}</code>"

    def _entries(self, items: list[tuple[str, Any]], total: int, depth: int) -> str:
        rows = []
        for i, (key, value) in enumerate(items):
            if self._out:
                self.hidden += total - i
                break
            name = esc(self._clip(key, CELL_CHARS))
            if isinstance(value, (dict, list)) and value and not self._short(value):
                count = f"{len(value):,} {'key' if isinstance(value, dict) else 'item'}{'s' if len(value) != 1 else ''}"
                shape = f"{{{count}}}" if isinstance(value, dict) else f"[{count}]"
                fold = " open" if depth + 1 < OPEN_DEPTH else ""
                rows.append(
                    f'<details{fold}><summary><b>{name}</b> <span class="note">{shape}</span></summary>{self._value(value, depth + 1)}</details>'
                )
            else:
                rows.append(f"<div><b>{name}</b>: {self._value(value, depth + 1)}</div>")
        return '<div class="tree">' + "".join(rows) + "</div>"

    def _object(self, value: dict[Any, Any], depth: int) -> str:
        return self._entries([(str(k), v) for k, v in value.items()], len(value), depth)

    def _list(self, value: list[Any], depth: int) -> str:
        if self._short(value):
            return self._compact(value)
        shown = min(len(value), TABLE_ROWS)
        self.hidden += len(value) - shown
        return self._entries([(str(i), value[i]) for i in range(shown)], shown, depth)

    @staticmethod
    def _short(value: dict[Any, Any] | list[Any]) -> bool:
        """A list of a few plain values, shown on one line."""
        if (
            not isinstance(value, list)
            or len(value) > _INLINE_LIST // 2
            or any(isinstance(v, (dict, list)) for v in value)
        ):
            return False
        text = json_text(value, indent=None)
        return text is not None and len(text) <= _INLINE_LIST

    def _table(self, rows: list[dict[Any, Any]]) -> str:
        columns: list[str] = []
        seen: set[str] = set()
        more_columns = False
        for row in rows[:TABLE_ROWS]:
            for key in row:
                name = str(key)
                if name in seen:
                    continue
                if len(columns) == TABLE_COLUMNS:
                    more_columns = True
                    break
                seen.add(name)
                columns.append(name)
        head = "".join(f"<th>{esc(self._clip(c, CELL_CHARS))}</th>" for c in columns)
        body = []
        for row in rows[:TABLE_ROWS]:
            if self._out:
                break
            keyed = {str(k): v for k, v in row.items()} if any(not isinstance(k, str) for k in row) else row
            body.append(
                "<tr>" + "".join(f"<td>{self._cell(keyed[c]) if c in keyed else ''}</td>" for c in columns) + "</tr>"
            )
        notes = []
        if len(rows) > len(body):
            notes.append(f"{len(body):,} of {len(rows):,} rows shown")
        if more_columns:
            notes.append(f"the first {TABLE_COLUMNS} columns shown")
        note = note_html("[" + "; ".join(notes) + f"; {WHOLE}]") if notes else ""
        return f'<table class="records"><tr>{head}</tr>{"".join(body)}</table>{note}'

    def _cell(self, value: Any) -> str:
        """A table cell: a string as text, a number, boolean or null as its JSON, a nested value as one line of JSON."""
        if isinstance(value, (dict, list)):
            return self._compact(value)
        text = value if isinstance(value, str) else json_text(value, indent=None)
        return esc(self._clip(text if text is not None else repr(value), CELL_CHARS))
