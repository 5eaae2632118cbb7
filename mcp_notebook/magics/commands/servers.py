"""``%mcp servers``: the connections, one row each (a dead one says how to connect it again)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..hints import connect_line
from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    return Parser("servers", "List the connected servers.")


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...notebook.display import Table

    magic.parsers["servers"].parse(words)
    served = magic.session.prototypes.served
    rows = [
        [
            c.name,
            c.server_label,
            c.target.kind,
            c.target.describe(),
            c.protocol_version or c.state,
            len(c.flows),
            served[c.name].url if c.name in served else "",
        ]
        for c in magic.session.registry
    ]
    notes = [
        f"{c.name} is dead ({c.dead}): reconnect with {connect_line(c)} again."
        for c in magic.session.registry
        if c.state == "dead"
    ]
    return Table(
        ["name", "server", "kind", "target", "protocol / state", "active flows", "served at"],
        rows,
        empty="No servers connected. Use %mcp connect NAME TARGET.",
        notes=notes,
    )
