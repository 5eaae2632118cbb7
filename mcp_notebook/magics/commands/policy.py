"""``%mcp policy``: the administrator's policy in force (``core/policy.py``), rule by rule, and the file each comes from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    return Parser(
        "policy",
        "The administrator's policy in force: what stdio commands, URLs, environment variables, sampling providers and "
        "hosts, review, project configs and %mcp serve every notebook of this install is held to, and the file each "
        "rule comes from (mcp_notebook_policy.json in a Jupyter config folder that is not yours). Nothing in a notebook "
        "lifts it.",
    )


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...core.policy import POLICY_FILE, current_policy
    from ...notebook.display import Table

    magic.parsers["policy"].parse(words)
    policy = current_policy()
    searched = ", ".join(str(folder) for folder in policy.searched)
    files = list(dict.fromkeys(row[0] for row in policy.rows()))  # in the order they apply
    return Table(
        ["file", "rule", "in force"],
        [[str(files.index(path) + 1), rule, said] for path, rule, said in policy.rows()],
        title="the administrator's policy (every file applies; a thing is allowed only when each file allows it)",
        empty=f"No administrator's policy: no {POLICY_FILE} in {searched}. Nothing is limited beyond your own settings.",
        notes=[f"file {i}: {path}" for i, path in enumerate(files, 1)],
        wrap=True,
    )
