"""``%mcp forget ID | --all``: drop saved flows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser("forget", "Forget a saved flow: %mcp forget ID | --all")
    p.add_argument("id", nargs="?")
    p.add_argument("--all", action="store_true")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    ns, _ = magic.parsers["forget"].parse(words)
    magic.session.saved.forget(ns.id, everything=ns.all)
    print("Forgot every saved flow." if ns.all else f"Forgot flow {ns.id}.")
