"""``%mcp skill [SERVER.]NAME``: one skill read, verified and shown."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "skill",
        "Load a skill: %mcp skill [SERVER.]NAME reads its files, verifies each against the listed sha256 digest, size and "
        "frontmatter (a file that fails is refused, and nothing further is read) and shows its SKILL.md with its files.",
    )
    p.add_argument("skill", help="[SERVER.]NAME, as %%mcp skills lists it")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    """``%mcp skill [SERVER.]NAME``: the skill read and verified (``wire.skills.load_skill``), shown."""
    from ...notebook.skill_view import SkillView
    from ...wire.skills import load_skill
    from ..listings import find_skill

    ns, _ = magic.parsers["skill"].parse(words)
    conn, skill = find_skill(magic.session, ns.skill)
    return SkillView(magic.session.runtime.run(load_skill(conn, skill)))
