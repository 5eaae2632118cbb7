"""``%mcp roots [list | add PATH | remove PATH | reset]``: the folders offered to servers connected after."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ...core.text import mcp_line
from ..parser import Parser, check_choice

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "roots",
        "Roots (file:// folders) offered to servers: %mcp roots [list | add PATH [--name N] | remove PATH | reset]. "
        "Default: none, and servers are not told about roots at all, so a server keeps the folders it was started with "
        "(MCP's filesystem server and server-pdf replace them with the client's roots). A connection declares roots when "
        "it opens: add them before connecting (add . offers the notebook's folder). 2025-generation servers that were "
        "offered roots are told when the list changes; reset offers none again.",
    )
    p.add_argument("action", nargs="?", default="list", metavar="{list,add,remove,reset}")
    p.add_argument("path", nargs="?")
    p.add_argument("--name", help="the name servers see for the root")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...notebook.display import Table

    ns, _ = magic.parsers["roots"].parse(words)
    check_choice("roots", ns.action, ["list", "add", "remove", "reset"])
    if ns.action in ("add", "remove") and not ns.path:
        raise UsageError(f"{mcp_line('%mcp', 'roots', ns.action)} needs a PATH")
    if ns.action not in (None, "list"):
        told = magic.session.change_roots(ns.action, ns.path, ns.name)
        if told:
            print(f"Told {', '.join(told)} that the roots changed (2025-generation servers cache them).")
    roots = magic.session.roots
    rows = [[e.name or "", e.uri] for e in roots.effective()]
    unoffered = magic.session.registry.not_offered_roots() if roots.offered else []
    notes = [
        f"Not offered to {', '.join(unoffered)}: connected before any root was added (a connection declares roots when it opens); "
        "connect again to offer them."
    ] if unoffered else []  # fmt: skip
    table = Table(["name", "uri"], rows, title="roots offered to servers", notes=notes, empty=(
        "No roots are offered (the default): servers keep the folders they were started with. %mcp roots add PATH "
        "offers a folder (add . for the notebook's folder) to servers connected after it."
    ))  # fmt: skip
    table.asked = ns.action in (
        None,
        "list",
    )  # after a change: its confirmation, shown as the cell's last line only
    return table
