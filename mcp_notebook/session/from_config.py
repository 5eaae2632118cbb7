"""``%mcp connect --from-config``: the servers of the user's MCP configs, listed and connected through a session.

Reading the files is ``wire.configs`` (and ``wire.config_trust``: which files may be read, which
project entries are approved); this is what a session does with them: the table's rows (with each
entry's status against the session's connections), connecting the entries asked for, and asking
before a project entry runs: interactive, through the notebook side's ``Views.confirm_project_server``
(the entry shown whole), headless, refused with the flag that approves it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.text import Flag, mcp_line, plain_text
from ..wire.configs import (
    _CONNECTION_NAME,
    ConfigError,
    ConfigFile,
    ServerEntry,
    find_configs,
    read_config,
    user_config_paths,
)

if TYPE_CHECKING:
    from ..wire.config_trust import ProjectApprovals
    from ..wire.connection import Connection
    from .session import Session

__all__ = ["COLUMNS", "config_rows", "connect_from_config"]

COLUMNS = ["name", "kind", "from file", "transport", "target", "status"]
"""The columns of ``config_rows`` (and of the table ``connect_from_config`` returns rows for)."""


def _status(entry: ServerEntry, session: Session | None, shadowed_by: ServerEntry | None, approved: bool) -> str:
    """connected / not connected / why it cannot connect / whether it waits for approval, as of now."""
    if session is not None and entry.connection_name in session.registry and shadowed_by is None:
        conn = session.registry.get(entry.connection_name)
        if _same_target(entry, conn):
            return "connected" if conn.is_open else f"{conn.state}{': ' + conn.dead if conn.dead else ''}"
        return f"not connected: the name {entry.connection_name!r} is taken by another server"
    if entry.problem:
        return f"cannot connect: {entry.problem}"
    if entry.disabled:
        return "disabled in its file"
    if shadowed_by is not None:
        if shadowed_by.scope == "user" and entry.scope == "project":
            return f"shadowed by user entry: {shadowed_by.name!r} of {_shown_path(shadowed_by.file)} keeps the name"
        return f"not used: {entry.name!r} from {shadowed_by.file} comes first"
    missing = entry.missing()
    needs = " (needs " + ", ".join(missing) + ", not set)" if missing else ""
    if entry.scope == "project" and not approved:
        return "needs approval (project file)" + needs
    if entry.scope == "project":
        return "approved; not connected" + needs
    return "not connected: needs " + ", ".join(missing) + " (not set)" if missing else "not connected"


def _same_target(entry: ServerEntry, conn: Connection) -> bool:
    """Whether an open connection is this entry's server (command line or URL; no secret is compared)."""
    if entry.problem or entry.check():
        return False
    try:
        target, _ = entry.target()
    except ConfigError:
        return False
    if entry.transport == "stdio":
        return conn.target.kind == "stdio" and list(conn.target.command) == target
    return conn.target.kind == "http" and conn.target.url == target


def _pick(files: list[ConfigFile]) -> tuple[dict[str, ServerEntry], dict[int, ServerEntry]]:
    """The entry used for each connection name (the first found), and for each other one the entry that shadows it."""
    first: dict[str, ServerEntry] = {}
    shadowed: dict[int, ServerEntry] = {}
    for f in files:
        for entry in f.servers:
            winner = first.setdefault(entry.connection_name, entry)
            if winner is not entry:
                shadowed[id(entry)] = winner
    return first, shadowed


def _shown_path(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def config_rows(
    files: list[ConfigFile], session: Session | None = None, approvals: ProjectApprovals | None = None
) -> list[list[Any]]:
    """The table rows (``COLUMNS``): one per server, and one per problem of a file or entry.

    Targets show variable names and masked literals, never a resolved or literal secret. A project
    entry's status says whether it is approved (``approvals``; none given: none is).
    """
    _, shadowed = _pick(files)
    rows: list[list[Any]] = []
    for f in files:
        shown = _shown_path(f.path)
        if f.ignored:
            rows.append(["", f.kind, shown, "", "", f"ignored: unsafe file ({f.ignored})"])
        for entry in f.servers:
            name = entry.name if entry.connection_name == entry.name else f"{entry.name} (as {entry.connection_name})"
            approved = approvals is not None and approvals.approved(entry.file, entry.digest, entry.name)
            rows.append(
                [
                    name,
                    f.kind,
                    shown,
                    entry.transport,
                    entry.shown_target(),
                    _status(entry, session, shadowed.get(id(entry)), approved),
                ]
            )
        for broken, why in f.broken.items():
            rows.append([broken, f.kind, shown, "", "", f"bad entry: {why}"])
        if not f.servers and not f.broken:
            for problem in f.problems:
                rows.append(["", f.kind, shown, "", "", "unreadable: " + problem.removeprefix(f"{f.path}: ")])
    return rows


def _connect_one(session: Session, entry: ServerEntry, interactive: bool) -> str:
    """Connect one entry unless it already is; the note that says how it went (a failure never raises)."""
    name = entry.connection_name
    if (
        name in session.registry
        and session.registry.get(name).is_open
        and _same_target(entry, session.registry.get(name))
    ):
        return f"{name} is already connected to that server."
    try:
        conn = entry.connect(session, interactive=interactive)
    except Exception as exc:  # noqa: BLE001 - each server's failure is reported, the others still connect
        return f"{name} failed: {exc}"
    state = "connected" if conn.is_open else f"waiting ({conn.state})"
    return f"{name}: {state} from {_shown_path(entry.file)} ({entry.transport})."


def _user_entries() -> dict[str, ServerEntry]:
    """The user-level entries by connection name (the first wins), for naming clashes when a PATH was given."""
    files = [read_config(p, k, None, "user") for p, k in user_config_paths() if p.is_file()]
    return _pick(files)[0]


def connect_from_config(
    session: Session, path: str | None, names: list[str], all_: bool, *,
    interactive: bool = False, trust_project: bool = False, panels: list[Any] | None = None,
) -> tuple[list[list[Any]], list[str]]:  # fmt: skip
    """What ``%mcp connect --from-config [PATH] [NAME ...] [--all] [--trust-project]`` shows: table rows and notes.

    Without names and without ``all_`` it only lists. ``path`` (a file or a folder) limits the
    search to it; without one the user-level files are read, then the notebook's folder and its
    parents up to the project root (``find_configs``). Servers already connected to the same
    target are left as they are. One server failing does not stop the others: each outcome is a note.

    A project entry (any file that is not one of the user's own) connects only once approved for
    its file's current bytes (``config_trust.ProjectApprovals``): ``trust_project`` approves the
    entries asked for as they are now; otherwise, ``interactive``, a panel shows the entry whole
    and asks (``panels`` receives each panel shown), and headless it is refused with a one-line
    note naming the flag. ``all_`` connects the approved entries and lists the others.

    Raises:
        ConfigError: ``path`` does not exist.
    """
    from ..wire.config_trust import APPROVE_FLAG, ProjectApprovals, noted_once

    start = session.roots.notebook_folder().path
    files = find_configs(start, [Path(path)] if path else None)
    approvals = ProjectApprovals()
    notes: list[str] = [
        f"Ignored {_shown_path(f.path)}: {f.ignored}, so anyone could have written it; if it is yours, make it yours alone (chown, chmod go-w)."
        for f in files if f.ignored and noted_once(f.path, f.ignored)
    ]  # fmt: skip
    if not files:
        where = path or f"the user-level config files, or {_shown_path(start)} and its parents up to the project root"
        return [], [f"No MCP config files found in {where}."]
    first, shadowed = _pick(files)
    users = _user_entries() if path else {n: e for n, e in first.items() if e.scope == "user"}
    broken = {name: (f, why) for f in files for name, why in f.broken.items()}
    wanted: list[ServerEntry | str] = []  # in the order asked: an entry to connect, or a note on a name that has none
    if all_:
        for e in first.values():
            wanted.append(
                f"Skipped {e.name}: {e.problem or 'disabled in its file'} ({_shown_path(e.file)})."
                if e.problem or e.disabled
                else e
            )
    for name in names:
        entry = (
            first.get(name)
            or first.get(_CONNECTION_NAME.sub("_", name).strip("_"))
            or next((e for f in files for e in f.servers if e.name == name), None)
        )
        if entry is not None:
            if entry not in wanted:
                wanted.append(entry)
        elif name in broken:
            f, why = broken[name]
            wanted.append(f"{name} failed: its entry in {_shown_path(f.path)} is bad: {why}.")
        else:
            known = ", ".join(sorted(e.name for e in first.values())) or "none"
            wanted.append(f"{name} failed: no server of that name in the configs found (found: {known}).")
    again = ["%mcp", "connect", Flag("--from-config"), *([path] if path else [])]  # words, for mcp_line to encode
    for item in wanted:
        if isinstance(item, str):
            notes.append(item)
            continue
        entry = item
        name = entry.connection_name
        clash = users.get(name) if entry.scope == "project" else None
        if entry.scope == "project" and not approvals.approved(entry.file, entry.digest, entry.name):
            if trust_project and (names or all_):
                approvals.approve(entry.file, entry.digest, entry.name)
                if clash is not None:
                    notes.append(
                        f"{name}: the project entry of {_shown_path(entry.file)} connects as {name!r}, the name of your own server in {_shown_path(clash.file)} ({APPROVE_FLAG})."
                    )
            elif all_ and entry not in (first.get(n) for n in names):
                notes.append(
                    f"Not connected {name}: a project entry of {_shown_path(entry.file)} you have not approved; {mcp_line(*again, name)} shows it and asks."
                )
                continue
            elif interactive:
                _ask_approval(session, entry, clash, approvals, panels)
                notes.append(f"{name}: waiting for your approval: the panel above shows all it would run or send.")
                continue
            else:
                notes.append(f"{name} refused: {_shown_path(entry.file)} is a project file and this entry is not approved as it is now; "
                             f"if you trust what its row shows, run {mcp_line(*again, name, APPROVE_FLAG)}")  # fmt: skip
                continue
        notes.append(_connect_one(session, entry, interactive))
        for other in (
            e for e in _shadowed_by(files, shadowed, entry) if entry.scope == "user" and e.scope == "project"
        ):
            notes.append(f"{name}: your entry in {_shown_path(entry.file)} was used; {_shown_path(other.file)} also has a server {other.name!r}, not used "
                         f"(a project entry never takes the name of yours; {mcp_line('%mcp', 'connect', Flag('--from-config'), str(other.file), name)} asks first).")  # fmt: skip
    if not names and not all_:
        usable = [e for e in first.values() if not e.problem and not e.disabled]
        waiting = [e for e in usable if e.scope == "project" and not approvals.approved(e.file, e.digest, e.name)]
        ask = (
            f" ({len(waiting)} from project files need your approval first: naming one shows it whole and asks)"
            if waiting
            else ""
        )
        notes.append(
            f"Found {len(usable)} server(s) that can connect in {len(files)} file(s){ask}; name them, or ask for all, to connect."
        )
    return config_rows(files, session, approvals), notes


def _shadowed_by(files: list[ConfigFile], shadowed: dict[int, ServerEntry], winner: ServerEntry) -> list[ServerEntry]:
    """The entries ``winner`` keeps the name from."""
    return [e for f in files for e in f.servers if shadowed.get(id(e)) is winner]


def _ask_approval(
    session: Session,
    entry: ServerEntry,
    clash: ServerEntry | None,
    approvals: ProjectApprovals,
    panels: list[Any] | None,
) -> None:
    """Show ``entry`` whole in the cell; on Approve, record the approval for the bytes read and connect exactly that entry."""
    from ..wire.config_trust import describe_entry

    concerns = [
        f"{_shown_path(entry.file)} came with this folder (a project file), not from your own MCP configs: anyone who wrote the folder wrote it."
    ]
    if clash is not None:
        concerns.append(f"{entry.connection_name!r} is also the name of your own server in {_shown_path(clash.file)} "
                        f"({clash.shown_target()}); approving connects this project's entry under that name instead.")  # fmt: skip

    def approved() -> None:
        approvals.approve(entry.file, entry.digest, entry.name)
        print(plain_text(_connect_one(session, entry, True)))  # a server's error text: spelled out for a terminal

    panel = session.views.confirm_project_server(entry.connection_name, describe_entry(entry), concerns, approved)
    if panels is not None:
        panels.append(panel)
