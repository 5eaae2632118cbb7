"""The rows of ``%mcp tools``, ``%mcp prompts``, ``%mcp resources`` and ``%mcp skills``: what each connection offers, one line each.

A listing is the ``%mcp`` face of a session's connections (the parameters described as ``args``
reads them, an App or a visibility noted), so it lives with the magics, not in the session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from .args import describe_parameters

if TYPE_CHECKING:
    from ..session.session import Session
    from ..wire.connection import Connection
    from ..wire.skills import Skill

__all__ = ["declared_arguments", "find_skill", "listing_rows", "skill_rows"]


def listing_rows(session: Session, kind: str, server: str | None = None, pattern: str | None = None) -> list[list[Any]]:
    """Rows of ``tools``, ``prompts`` or ``resources`` (templates too) of ``server``, or of every connection.

    One part failing (a server's malformed template list, a connection gone) never aborts the
    others: what worked is listed, and the failed part is a row saying what went wrong. ``pattern``
    (a glob, any case) keeps the tools and prompts whose name, and the resources whose URI or name,
    it matches; a row saying something of a server (no prompts, a failure) stays. A description is
    whole: the table shows its first line and the rest on hover or expand.
    """
    rows: list[list[Any]] = []
    registry = session.registry
    conns = [registry.get(server)] if server or len(registry) <= 1 else list(registry)

    def part(conn: Connection, what: str, job: Any) -> Any:
        try:
            return session.runtime.run(job)
        except Exception as exc:  # noqa: BLE001 - one part's failure is a row; the other parts are still listed
            from ..errors import describe_exception

            rows.append([conn.name, "", "", "", f"(could not list its {what}: {describe_exception(exc)[0]})"])
            return _FAILED

    for conn in conns:
        if kind == "tools":
            tools = part(conn, "tools", conn.tools(refresh=True))
            rows += [[conn.name, t.name, t.title or "", _described(t.description, _app_note(t)), describe_parameters(t.input_schema)]
                     for t in ({} if tools is _FAILED else tools).values() if _matches(pattern, t.name)]  # fmt: skip
        elif kind == "prompts":
            prompts = part(conn, "prompts", _offered(conn, "prompts"))
            if prompts is _FAILED:
                continue
            if not prompts:
                rows.append([conn.name, "", "", "(this server offers no prompts)", ""])
                continue
            for p in prompts:
                if not _matches(pattern, p.name):
                    continue
                params = (
                    ", ".join(f"{a.name}{' (required)' if a.required else ''}" for a in (p.arguments or []))
                    or "(no arguments)"
                )
                rows.append([conn.name, p.name, p.title or "", _described(p.description), params])
        else:
            resources = part(conn, "resources", _offered(conn, "resources"))
            templates = (
                part(conn, "resource templates", _offered(conn, "resource_templates"))
                if resources is not None
                else None
            )
            if resources is _FAILED:
                resources = []
            if templates is _FAILED:
                templates = []
            elif not resources and not templates:
                rows.append([conn.name, "", "", "", "(this server offers no resources)"])
            rows += [[conn.name, str(r.uri), r.name, r.mime_type or "", _described(r.description)]
                     for r in resources or [] if _matches(pattern, str(r.uri), r.name)]  # fmt: skip
            rows += [[conn.name, r.uri_template, r.name, r.mime_type or "", _described(r.description, " (template)")]
                     for r in templates or [] if _matches(pattern, r.uri_template, r.name)]  # fmt: skip
    return rows


_FAILED = object()
"""What ``part`` returns for a part that failed (its row already says why)."""


def skill_rows(session: Session, server: str | None = None) -> list[list[Any]]:
    """Rows of ``%mcp skills``: each skill's name, description, file count and size; a row per server without skills."""
    from ..errors import describe_exception
    from ..wire.skills import list_skills, offers_skills

    registry = session.registry
    rows: list[list[Any]] = []
    for conn in [registry.get(server)] if server or len(registry) <= 1 else list(registry):
        session.runtime.run(conn.opened())  # the capabilities say whether it offers skills
        if not offers_skills(conn):
            rows.append([conn.name, "", "(this server offers no skills)", "", ""])
            continue
        try:
            skills = session.runtime.run(list_skills(conn))
        except Exception as exc:  # noqa: BLE001 - one server's failure is a row; the others are still listed
            rows.append([conn.name, "", f"(could not list its skills: {describe_exception(exc)[0]})", "", ""])
            continue
        rows += [[conn.name, s.name, _described(s.description), len(s.files), s.size] for s in skills]
        if not skills:
            rows.append([conn.name, "", "(no skills listed)", "", ""])
    return rows


def find_skill(session: Session, spec: str) -> tuple[Connection, Skill]:
    """The connection and listed skill ``[SERVER.]NAME`` names (listed afresh: the entry is what is verified against)."""
    from ..errors import SessionError
    from ..wire.skills import list_skills, offers_skills

    registry = session.registry
    server, _, name = spec.partition(".") if spec.partition(".")[0] in registry else ("", "", spec)
    conns = [registry.get(server or None)] if server or len(registry) <= 1 else list(registry)
    found: list[tuple[Connection, Skill]] = []
    for conn in conns:
        session.runtime.run(conn.opened())
        if offers_skills(conn):
            found += [(conn, s) for s in session.runtime.run(list_skills(conn)) if s.name == name]
    if len(found) == 1:
        return found[0]
    where = f"on {conns[0].name}" if len(conns) == 1 else "on any connected server"
    if not found:
        raise SessionError(f"no skill {name!r} {where}; %mcp skills lists them", kind="bad_input")
    servers = ", ".join(sorted({c.name for c, _ in found}))
    raise SessionError(
        f"{len(found)} skills are named {name!r} ({servers}): say which, as SERVER.{name}", kind="bad_input"
    )


async def _offered(conn: Connection, kind: Literal["prompts", "resources", "resource_templates"]) -> list[Any] | None:
    """Every prompt or resource of ``conn``; ``None`` when the server offers none of that kind.

    Said by its capabilities when it sent them, else by -32601 (method not found) to the listing.
    """
    from mcp import MCPError

    capabilities = conn.live.session.server_capabilities
    if capabilities is not None and (capabilities.prompts or capabilities.resources or capabilities.tools):
        if (capabilities.prompts if kind == "prompts" else capabilities.resources) is None:
            return None
    try:
        return await conn.list_all(kind)
    except MCPError as exc:
        if exc.code == -32601:
            return None
        raise


def _app_note(tool: Any) -> str:
    """What ``%mcp tools`` adds for a tool with an MCP App (its page) or a visibility leaving out the model (who may call it)."""
    from ..wire.apps_ext import ui_of, visibility_note

    ui, only = ui_of(tool), visibility_note(tool)
    if ui is None:
        return f" [{only}]" if only else ""
    return f" [App {ui[0]}{f' ({only})' if only else ''}]"


def _described(text: str | None, note: str = "") -> str:
    """A description whole, ``note`` (an App, a template) after its first line, where a folded cell still shows it."""
    first, _, rest = (text or "").strip().partition("\n")
    return first + note + (f"\n{rest}" if rest else "")


def _matches(pattern: str | None, *names: str | None) -> bool:
    """Whether the glob ``pattern`` (any case) matches one of ``names``; no pattern matches everything."""
    from fnmatch import fnmatchcase

    if pattern is None:
        return True
    return any(name is not None and fnmatchcase(name.casefold(), pattern.casefold()) for name in names)


def declared_arguments(session: Session, conn: Connection, name: str) -> list[Any] | None:
    """The arguments prompt ``name`` of ``conn`` declares, as listed (``None``: not listed, so the server judges).

    Listed afresh for each prompt line (prompts are not cached as tools are). A server that offers
    no listing, or whose listing fails, is left to judge the line itself: nothing is refused for it.
    """
    try:
        prompts = session.runtime.run(_offered(conn, "prompts"))
    except Exception:  # noqa: BLE001 - a listing that fails (a sign-in first, a broken page) checks nothing; the get says
        return None
    found = next((p for p in prompts or [] if p.name == name), None)
    return None if found is None else list(found.arguments or [])
