"""Which MCP config files may be read, and which project entries this user approved.

A project's ``.mcp.json`` or ``.vscode/mcp.json`` comes with the folder: a cloned repository, an
unpacked archive, a shared folder. Its entries say which command to start and which URL to send
which variable's value to, so they are untrusted input, like a received notebook's records (Claude
Code asks before it uses a project's servers; VS Code has workspace trust). Three rules follow:

* the search for project files stops at the project root (the nearest folder holding ``.git``,
  else the notebook's own folder) and never climbs above the home folder, so a ``/tmp/.mcp.json``
  or ``/srv/.mcp.json`` that another user can write is never read (``search_folders``);
* a file owned by another user (root excepted: it owns the system's Jupyter config folders) or
  writable by group or others is ignored, whatever its scope (``file_problem``);
* a project entry is used only once the user approved it as shown (``describe_entry``): the
  approval is kept in ``project_configs.json`` (0600) of the user's Jupyter data folder, per file
  path and SHA-256 of the file's bytes, so an edited file asks again (``ProjectApprovals``).
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.private_table import PrivateTable, data_file
from ..core.text import Flag
from ..core.urls import consent_url
from .config_values import ConfigError, shown_value

if TYPE_CHECKING:
    from .configs import ServerEntry

__all__ = ["APPROVE_FLAG", "ProjectApprovals", "describe_entry", "file_problem", "noted_once", "search_folders"]

APPROVE_FLAG = Flag("--trust-project")
"""The flag of ``%mcp connect --from-config`` that approves project entries as they are now (headless)."""

_NOTED: set[tuple[str, str]] = set()


def search_folders(start: Path) -> list[Path]:
    """The folders whose project files are read: ``start`` up to its project root, never above home.

    The project root is the nearest folder holding ``.git`` (a folder, or the file a worktree has),
    looked for from ``start`` up to the home folder (inclusive) or, outside home, up to the
    filesystem root. Without one, only ``start`` itself: a parent that is no project of this user
    (``/tmp``, ``/srv``, a shared drive) is somebody else's.
    """
    home = Path.home().resolve()
    start = start.resolve()
    walked: list[Path] = []
    above_home = set(home.parents)
    for folder in [start, *start.parents]:
        if folder in above_home:
            break  # home's own parents (/home, /) are never searched, nor is a folder that holds home
        walked.append(folder)
        if (folder / ".git").exists():
            return walked
    return [start]


def file_problem(info: os.stat_result, uid: int | None = None) -> str | None:
    """Why a config file with this ``stat`` must not be read, or ``None`` (always ``None`` on Windows).

    ``uid`` is the user's (default: this process's). Root may own it: it owns the system-wide
    Jupyter config folders, and can change anything of this user's anyway. Group-writable is
    fine only for the user's private group (Debian and Ubuntu give each user a group of their own
    name and a umask of 002, so a clone's files are mode 664 there): nobody else is in it.
    """
    if sys.platform == "win32" or not hasattr(os, "getuid"):
        return None
    me = os.getuid() if uid is None else uid
    if info.st_uid not in (me, 0):
        return f"owned by another user (uid {info.st_uid})"
    mode = stat.S_IMODE(info.st_mode)
    if mode & stat.S_IWOTH or (mode & stat.S_IWGRP and not _private_group(info.st_gid, me)):
        return f"writable by group or others (mode {mode:03o})"
    return None


def _private_group(gid: int, uid: int) -> bool:
    """Whether ``gid`` is ``uid``'s own group: its primary group, of its name, with no other members."""
    try:
        import grp
        import pwd

        user = pwd.getpwuid(uid)
        group = grp.getgrgid(gid)
    except (ImportError, KeyError):
        return False
    return user.pw_gid == gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}


def noted_once(path: Path, reason: str) -> bool:
    """Whether this is the first time this process notes ``reason`` for ``path`` (the note is then due)."""
    key = (str(path), reason)
    if key in _NOTED:
        return False
    _NOTED.add(key)
    return True


def describe_entry(entry: ServerEntry) -> list[tuple[str, str]]:
    """Everything using ``entry`` would do, as (what, value) lines, in full: what an approval approves.

    Variables are named, never read (a command-line variable whose value is not set yet is shown
    as written); literal header and environment values are masked (they are the file's secrets,
    and outputs are saved with notebooks). The values are the file's own text: callers escape them;
    the URL is a ``core.urls.ShownURL`` (its host as reached, a look-alike one marked).
    """
    lines: list[tuple[str, str]] = [("server name", entry.name), ("from file", str(entry.file))]
    try:
        target, cwd = entry.target()
    except ConfigError:
        target, cwd = (entry.command if entry.transport == "stdio" else entry.url), entry.cwd
    if entry.transport == "stdio":
        assert isinstance(target, list)
        lines.append(("runs the command", shlex.join(target)))
        lines.append(("in folder", cwd or "(the kernel's working folder)"))
        if entry.env:
            lines.append(
                ("with environment variables", ", ".join(f"{k}={shown_value(v)}" for k, v in entry.env.items()))
            )
        if entry.env_file:
            lines.append(("and the variables of the file", entry.env_file))
    else:
        lines.append(("connects to", consent_url(str(target))))  # the host reached, look-alikes marked
        if entry.headers:
            lines.append(("sends headers", ", ".join(f"{k}: {shown_value(v)}" for k, v in entry.headers.items())))
    names = [ref.name for ref in entry.variables()]
    lines.append(("reads your environment variables", ", ".join(names) if names else "none"))
    return lines


class ProjectApprovals:
    """The project entries this user approved, by file: ``{path: {"sha256": ..., "servers": [names]}}``.

    An approval holds for the file's bytes as they were when it was given: another digest (the
    file was edited, or replaced) finds no approval, and approving then starts a new list.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.table = PrivateTable(path or data_file("project_configs.json"))

    @property
    def path(self) -> Path:
        return self.table.path

    def approved(self, file: Path, digest: str, name: str) -> bool:
        entry = self.table.get(str(file))
        return entry.get("sha256") == digest and name in (entry.get("servers") or [])

    def approve(self, file: Path, digest: str, name: str) -> None:
        entry = self.table.get(str(file))
        names = list(entry.get("servers") or []) if entry.get("sha256") == digest else []
        if name not in names:
            names.append(name)
        self.table.update(str(file), sha256=digest, servers=names)
