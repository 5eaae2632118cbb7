"""``%mcp tools`` / ``prompts`` / ``resources [SERVER] [PATTERN]``: what servers offer, one row each.

One module for the three: one parser and one handler, the kind their only difference (the rows
are ``listings.listing_rows``'s). The registry's entry passes each its kind (``Command.args``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ...core.text import mcp_line
from ..listings import listing_rows
from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]

_GLOB = re.compile(r"[*?\[]")
_LISTINGS = {  # %mcp tools / prompts / resources: their columns
    "tools": ["server", "tool", "title", "description", "parameters"],
    "prompts": ["server", "prompt", "title", "description", "arguments"],
    "resources": ["server", "uri", "name", "mime type", "description"],
}


def parser(kind: str) -> Parser:
    p = Parser(
        kind,
        f"List the {kind} of a server (default: every connected server); PATTERN keeps the names it matches "
        f"(a glob, any case: {mcp_line('%mcp', kind, 'SERVER', 'get_*')}, or {mcp_line('%mcp', kind, 'get_*')} "
        "over every server).",
    )
    p.add_argument("server", nargs="?")
    p.add_argument("pattern", nargs="?", help="a glob on the name (* ? [...]), any case")
    return p


def run(kind: str, magic: Magic, words: list[str], cell: str | None) -> Any:
    """``%mcp tools`` / ``prompts`` / ``resources``."""
    from ...notebook.display import Table

    ns, _ = magic.parsers[kind].parse(words)
    server, pattern = ns.server, ns.pattern
    if pattern is None and server is not None and server not in magic.session.registry and _GLOB.search(server):
        server, pattern = None, server  # %mcp tools 'get_*': a glob over every server, not a server's name
    rows = listing_rows(magic.session, kind, server, pattern)
    empty = f"No {kind} matching {pattern!r}." if pattern is not None else f"No {kind}."
    return Table(_LISTINGS[kind], rows, empty=empty)
