"""``%mcp log [NAME] [-n LINES]``: a connection's log messages and what its stdio server wrote on stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser("log", "Show a connection's log: server log messages and what a stdio server wrote on stderr.")
    p.add_argument("name", nargs="?")
    p.add_argument("-n", "--lines", type=int, default=50, help="how many recent lines (default 50)")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...notebook.display import Table, log_text

    ns, _ = magic.parsers["log"].parse(words)
    conn = magic.session.registry.get(ns.name)
    rows = [[e["level"], e.get("logger") or "", log_text(e["data"])] for e in list(conn.logs)[-ns.lines :]]
    rows += [["stderr", "", line] for line in list(conn.stderr)[-ns.lines :]]
    return Table(
        ["level", "logger", "message"],
        rows,
        title=f"log of {conn.name}",
        empty=f"{conn.name} has logged nothing yet.",
        wrap=True,
    )
