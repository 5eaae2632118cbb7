"""``%%mcp server NAME``: the server the cell defines becomes connection NAME (re-run to reload)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ...core.text import plain_text
from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "server",
        "%%mcp server NAME: run the cell and connect the MCPServer (or low-level Server) it defines as NAME; re-run to reload.",
    )
    p.add_argument("name")
    p.add_argument("--var", help="the variable holding the server, when the cell defines several")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    ns, _ = magic.parsers["server"].parse(words)
    if cell is None:
        raise UsageError("%%mcp server is a cell magic: write the server's code in the cell below the magic line")
    told, rows = magic.session.define_server(ns.name, cell, ns.var)
    if not rows:
        print(plain_text("\n".join(told)))
        return None
    from ...notebook.display import Table

    return Table(["change", "kind", "name"], rows, title=told[0], notes=told[1:])
