"""``%mcp skills [SERVER]``: the skills servers offer, listed; no file is read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "skills",
        "List the skills a server offers (the skills extension, SEP-2640): names, descriptions, files. Reads no file.",
    )
    p.add_argument("server", nargs="?", help="a connection name (default: every connected server)")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    """``%mcp skills [SERVER]``: what ``skills/list`` says, one row per skill; no file is read."""
    from ...notebook.display import Table
    from ..listings import skill_rows

    ns, _ = magic.parsers["skills"].parse(words)
    columns = ["server", "skill", "description", "files", "bytes"]
    return Table(columns, skill_rows(magic.session, ns.server), empty="No skills.")
