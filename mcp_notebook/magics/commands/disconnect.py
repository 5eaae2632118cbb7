"""``%mcp disconnect NAME``: close a connection."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser("disconnect", "Close connection NAME.")
    p.add_argument("name")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    ns, _ = magic.parsers["disconnect"].parse(words)
    magic.session.registry.disconnect(ns.name)
    print(f"Disconnected {ns.name!r}.")
