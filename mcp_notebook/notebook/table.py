"""A listing as a small table with a plain-text twin (``Table``: servers, tools, prompts, flows, log lines).

Long cells fold to their first line (the rest on hover or expand), many rows sit in a bounded
scroll area, and every cell is escaped and bounded; ``rows`` keeps every value whole.
"""

from __future__ import annotations

from typing import Any

from ..core.text import clip as _clip
from ..core.text import esc, plain_text
from .listing import ShownOnce
from .style import STYLE, note_html
from .table_rows import TableRows

__all__ = ["Table"]

_SCROLL_ROWS = 20
"""A table of more rows than this sits in a bounded scroll area, its row count said under it."""
_FOLD_CHARS = 80
"""A table cell longer than this (or of several lines) shows its first line; the rest on hover (title) or expand."""
_CELL_CHARS = 2_000
"""At most this much of one table cell reaches the page (a server's 10 MB description stays in ``rows``)."""


class Table(ShownOnce, TableRows):
    """A small table with a plain-text twin (servers, tools, prompts, flows)."""

    def __init__(
        self,
        columns: list[str],
        rows: list[list[Any]],
        title: str = "",
        empty: str = "nothing to show",
        notes: list[str] | None = None,
        wrap: bool = False,
    ) -> None:
        self.columns, self.rows, self.title, self.empty = columns, rows, title, empty
        self.notes = list(notes or [])  # whole lines under the table (never clipped)
        self.wrap = wrap  # the last column is shown whole: folded in plain text, pre-wrapped in HTML (log messages)

    def shown_columns(self) -> list[int]:
        """The columns worth a reader's eye: a column empty in every row is left out (``rows`` keeps it)."""
        keep = [i for i in range(len(self.columns)) if any(i < len(r) and str(r[i]).strip() for r in self.rows)]
        return keep or list(range(len(self.columns)))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        if not self.rows:
            return {
                "text/plain": plain_text(self.empty),
                "text/html": f'<div class="mcpnb"><i>{esc(self.empty)}</i></div>',
            }
        keep = self.shown_columns()
        columns = [self.columns[i] for i in keep]
        rows = [[row[i] if i < len(row) else "" for i in keep] for row in self.rows]
        last = len(columns) - 1
        wrap = self.wrap and keep[-1] == len(self.columns) - 1  # the wrapped column is shown
        cells = [  # one line a row (spelled out before they are measured); the wrapped column is folded below
            [plain_text(str(v) if wrap and i == last else _first_line(str(v))) for i, v in enumerate(row)]
            for row in rows
        ]
        widths = [max(len(str(c)), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
        widths = [min(w, 60) for w in widths]
        lines = ([self.title] if self.title else []) + [
            "  ".join(str(c).ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()
        ]
        for row in cells:
            if not wrap or len(row) <= last:
                lines.append("  ".join(_clip(v, w).ljust(w) for v, w in zip(row, widths, strict=False)).rstrip())
                continue
            lead = "  ".join(_clip(v, w).ljust(w) for v, w in zip(row[:last], widths, strict=False))
            indent = " " * (len(lead) + 2)
            folded = _fold(row[last], widths[last])
            lines.append(f"{lead}  {folded[0]}".rstrip())
            lines.extend(f"{indent}{part}".rstrip() for part in folded[1:])
        count = f"{len(self.rows):,} rows" if len(self.rows) > _SCROLL_ROWS else ""
        if count:
            lines.append(f"({count})")
        head = "".join(f"<th style='text-align:left'>{esc(c)}</th>" for c in columns)
        whole = "<td style='text-align:left;white-space:pre-wrap;word-break:break-word'>"
        body = "".join(
            "<tr>"
            + "".join(
                f"{whole}{esc(v)}</td>" if wrap and i == last else f"<td style='text-align:left'>{_cell_html(v)}</td>"
                for i, v in enumerate(row)
            )
            + "</tr>"
            for row in rows
        )
        table = f"<table><tr>{head}</tr>{body}</table>"
        if count:  # a bounded area; its bound inline too, as JupyterLab's sanitizer keeps it (see ``pre_html``)
            table = f'<div class="scroll" style="max-height:32em;overflow-y:auto">{table}</div>'
        title = f'<div class="hdr">{esc(self.title)}</div>' if self.title else ""
        notes = "".join(note_html(n) for n in ([count] if count else []) + self.notes)
        return {
            "text/plain": plain_text("\n".join(lines + self.notes)),
            "text/html": STYLE + f'<div class="mcpnb">{title}{table}{notes}</div>',
        }


def _first_line(text: str) -> str:
    """A plain-text cell: its first line, ``…`` saying there is more (the HTML folds it; ``rows`` keep it whole)."""
    first, more, _ = text.strip().partition("\n")
    return f"{first} …" if more else first


def _cell_html(value: Any) -> str:
    """One table cell: short text as it is; long or several lines folded to its first line, the rest on hover or expand.

    JupyterLab right-aligns table cells: ``text-align:left`` is inline as well as in ``OUTPUT_CSS``.
    A cell is bounded (``_CELL_CHARS``): the page gets no megabytes of one server's description.
    """
    text = str(value)
    if len(text) <= _FOLD_CHARS and "\n" not in text:
        return esc(text)
    first = text.strip().split("\n", 1)[0]
    first = first if len(first) <= _FOLD_CHARS else first[: _FOLD_CHARS - 1] + "…"
    shown = (
        text if len(text) <= _CELL_CHARS else text[:_CELL_CHARS] + f" [… {len(text) - _CELL_CHARS:,} more characters]"
    )
    hover = text if len(text) <= 500 else text[:500] + "…"
    return (
        f'<details class="fold"><summary title="{esc(hover)}">{esc(first)}</summary><div>{esc(shown)}</div></details>'
    )


def _fold(text: str, width: int) -> list[str]:
    """Text as lines of at most ``width`` characters (at spaces where it can), nothing dropped."""
    lines: list[str] = []
    for line in text.splitlines() or [""]:
        while len(line) > width:
            cut = line.rfind(" ", 1, width + 1)
            cut = cut if cut > 0 else width
            lines.append(line[:cut].rstrip())
            line = line[cut:].lstrip(" ")
        lines.append(line)
    return lines
