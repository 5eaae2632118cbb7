"""``%mcp read [SERVER] URI``: read a resource in this cell."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser, flow_args

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser("read", "Read a resource: %mcp read [SERVER] URI")
    p.add_argument("first")
    p.add_argument("uri", nargs="?")
    flow_args(p)
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    ns, _ = magic.parsers["read"].parse(words)
    server, uri = (ns.first, ns.uri) if ns.uri else (None, ns.first)
    conn = magic.session.registry.get(server)
    return magic.run_flow("resources/read", conn, uri, None, ns)
