"""``%mcp watch [SERVER] URI [--into VAR]``: a resource shown live, updated when the server says it changed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..parser import Parser

if TYPE_CHECKING:
    from ...session.views import Watching
    from ..command import Magic

__all__ = ["parser", "run", "watches_of"]


def parser() -> Parser:
    p = Parser(
        "watch",
        "Show a resource and update the output whenever the server says it changed: %mcp watch [SERVER] URI [--into VAR].",
    )
    p.add_argument("first", help="the server's name, or the URI when one server is connected")
    p.add_argument("uri", nargs="?")
    p.add_argument("--into", metavar="VAR", help="keep the latest value (the ReadResourceResult) in variable VAR")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    ns, _ = magic.parsers["watch"].parse(words)
    server, uri = (ns.first, ns.uri) if ns.uri else (None, ns.first)
    if ns.into is not None and not ns.into.isidentifier():
        raise UsageError(f"--into wants a Python variable name, got {ns.into!r}")
    watches_of(magic).watch(server, uri, ns.into, magic.session.namespace)
    return None  # the watch shows itself, updated in place


def watches_of(magic: Magic) -> Watching:
    """The session's watches, as ``%mcp watch`` and ``%mcp unwatch`` both use them."""
    watches = magic.session.watches
    assert watches is not None  # the magics' session is made with the notebook side, which brings them
    return watches
