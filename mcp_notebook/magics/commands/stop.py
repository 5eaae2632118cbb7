"""``%mcp stop NAME``: stop serving a notebook-defined server over HTTP."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser("stop", "Stop serving NAME over HTTP (the in-process connection stays).")
    p.add_argument("name")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    ns, _ = magic.parsers["stop"].parse(words)
    magic.session.prototypes.stop(ns.name)
    print(f"Stopped serving {ns.name!r}.")
