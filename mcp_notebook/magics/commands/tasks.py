"""``%mcp tasks [SERVER]``: the tasks this notebook follows or saved, and the server's own list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "tasks",
        "List tasks: the ones this notebook follows or saved, and the server's own list where it offers one (2025-11-25 servers).",
    )
    p.add_argument("server", nargs="?", help="a connection name (default: every connected server)")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...notebook.display import Table

    ns, _ = magic.parsers["tasks"].parse(words)
    rows = magic.session.saved.task_rows(ns.server)
    columns = ["flow", "server", "tool", "status", "message", "created", "ttl", "where"]
    return Table(
        columns,
        rows,
        title="tasks (task ids stay on this machine; unknown ones show a fingerprint)",
        empty="No tasks. Start one with %mcp call SERVER.TOOL ... --task.",
    )
