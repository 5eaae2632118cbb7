"""``%mcp unwatch [SERVER] [URI]`` / ``--list``: stop watching resources, or list the watches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser
from .watch import watches_of

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "unwatch",
        "Stop watching: %mcp unwatch [SERVER] [URI] (without arguments: every watch); %mcp unwatch --list shows them.",
    )
    p.add_argument("first", nargs="?")
    p.add_argument("uri", nargs="?")
    p.add_argument("--list", action="store_true", help="list the watches instead")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...notebook.display import Table

    ns, _ = magic.parsers["unwatch"].parse(words)
    watches = watches_of(magic)
    if ns.list:
        return Table(
            ["server", "uri", "updates", "since"],
            [list(r) for r in watches.list()],
            title="watched resources",
            empty="Nothing is watched.",
        )
    server, uri = (
        (ns.first, ns.uri) if ns.uri else ((ns.first, None) if ns.first in magic.session.registry else (None, ns.first))
    )
    stopped = watches.unwatch(server, uri)
    print(f"Stopped watching {', '.join(stopped)}." if stopped else "Nothing was being watched there.")
    return None
