"""Connect from the MCP server configs users already have (Claude Code, VS Code, Claude Desktop, jupyter-mcp-manager).

A user who set servers up for another client should not have to retype them: ``find_configs``
reads the user-level files (Claude Desktop, VS Code's user ``mcp.json``, jupyter-mcp-manager's
config files and JupyterLab settings), then the project files (``.mcp.json``, ``.vscode/mcp.json``)
of the notebook's folder and its parents up to the project root. Each server becomes a
``ServerEntry`` that knows what ``Session.connect`` needs.

Trust: a project file came with its folder (a clone, an archive), so its entries are untrusted
input, used only once the user approved them as shown, for the file's bytes as they are; the
user's own entries keep their names against a project's; the search never climbs above the
project root or home, and files others can write are ignored (``config_trust``).

Secrets: configs name variables (``${env:TOKEN}``, ``${TOKEN}``, ``$TOKEN``) so that the files
hold no values. Those references are resolved only at connect time, and header and environment
values go to ``Session.connect(headers=..., env=...)``, which keeps them in memory (a saved
record names them, never their values). ``Authorization: Bearer ${VAR}`` becomes ``bearer_env``,
so a resume can read the token again without asking. The command line and the URL *are* saved
with flows and shown by ``%mcp servers``, so a reference there is resolved only when its name
does not look like a secret; otherwise the entry says why it cannot connect. Listings show
variable names and mask literal values.

Problems are kept per file and per entry: bad JSON makes its file unusable, a bad entry only
itself, and every message names the file and the entry.

Why this module is long: one job, four file formats (each with its own shape, variables and
transports); what a session does with the entries is ``session/from_config.py``, which files may
be read at all is ``config_trust.py``, and the variables a value names (and how it is shown masked)
``config_values.py``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..core.policy import current_policy
from ..core.redact import MASK
from ..core.urls import consent_url
from .config_trust import file_problem, search_folders
from .config_values import (
    ConfigError,
    Reference,
    bearer_variable,
    expand,
    looks_secret,
    masked_args,
    masked_url,
    references,
    shown_value,
)

if TYPE_CHECKING:
    from .connection import Connection

__all__ = [
    "ConfigError",
    "ConfigFile",
    "Connects",
    "ServerEntry",
    "find_configs",
    "read_config",
]

Kind = Literal["claude-code", "vscode", "claude-desktop", "jupyter-mcp-manager", "mcpServers"]
Scope = Literal[
    "user", "project"
]  # a user-level file (user_config_paths) is the user's own; any other file came with a folder
Transport = Literal["stdio", "http", "sse"]


_CONNECTION_NAME = re.compile(r"[^A-Za-z0-9_-]+")


class Connects(Protocol):
    """What ``ServerEntry.connect`` opens a server with: a session's ``connect`` (``session.Session`` has it).

    Declared here so that this floor names no type of the session floor above it.
    """

    def connect(
        self,
        name: str,
        target: Any,
        *,
        headers: Mapping[str, str] | None = None,
        bearer_env: str | None = None,
        protocol: str = "auto",
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        read_timeout: float | None = None,
        interactive: bool = False,
        expanded_from: Iterable[str] = (),
    ) -> Connection: ...


# ---------------------------------------------------------------------------------------------- entries


@dataclass
class ServerEntry:
    """One server of one config file, as written there (references unresolved).

    ``env`` and ``headers`` hold the file's raw values (references or literals); they are never
    shown or saved. ``problem`` says why it cannot connect (a ``${input:...}``, the old SSE
    transport, a secret in its command line); ``disabled`` that the file turned it off.
    """

    name: str
    transport: Transport
    file: Path
    kind: Kind
    command: list[str] = field(default_factory=list)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict, repr=False)
    env_file: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    base: Path | None = None  # the project folder: relative paths and ${workspaceFolder} (None: user-level file)
    disabled: bool = False
    problem: str | None = None
    scope: Scope = "project"  # "project": used only once approved (config_trust.ProjectApprovals)
    digest: str = ""  # SHA-256 of its file's bytes, as read: what an approval holds for

    @property
    def connection_name(self) -> str:
        """The name it connects as: the config's name, with what ``SERVER.TOOL`` cannot hold replaced by ``_``."""
        return _CONNECTION_NAME.sub("_", self.name).strip("_") or "server"

    @property
    def where(self) -> str:
        """``FILE, server NAME``: what every message about this entry starts with."""
        return f"{self.file}, server {self.name!r}"

    def _fields(self) -> Iterable[tuple[str, str, bool]]:
        """(field, value, saved): every value that may hold references; saved ones end up in records."""
        for i, word in enumerate(self.command):
            yield ("command" if i == 0 else "args"), word, True
        if self.cwd:
            yield "cwd", self.cwd, True
        if self.url:
            yield "url", self.url, True
        if self.env_file:
            yield "envFile", self.env_file, True
        for key, value in self.env.items():
            yield f"env {key}", value, False
        for key, value in self.headers.items():
            yield f"header {key}", value, False

    def variables(self) -> list[Reference]:
        """The environment variables it needs at connect time (those without a default)."""
        out: dict[str, Reference] = {}
        for _, value, saved in self._fields():
            for ref in references(value, bare=not saved):
                if ref.kind == "env" and ref.default is None:
                    out.setdefault(ref.name, ref)
        return list(out.values())

    def missing(self, environ: Mapping[str, str] | None = None) -> list[str]:
        """The variables it needs that are not set now."""
        environ = os.environ if environ is None else environ
        return [ref.name for ref in self.variables() if ref.name not in environ]

    def check(self) -> str | None:
        """Why this entry can never connect as written (found from names alone, no values read)."""
        if refused := current_policy().config_entry_refusal(self.scope, self.transport, self.command, self.url):
            return refused  # the administrator's (core/policy.py): listed as forbidden, never connected
        for where, value, saved in self._fields():
            for ref in references(value, bare=not saved):
                if ref.kind == "input":
                    return (
                        f"uses {ref.text} in {where}: VS Code asks for inputs when it starts a server, which cannot happen here; "
                        f"put the value in an environment variable and write ${{env:NAME}} instead"
                    )
                if ref.kind == "unsupported":
                    return f"uses {ref.text} in {where}: only ${{env:NAME}}, ${{NAME}}, ${{NAME:-default}}, ${{workspaceFolder}} and ${{userHome}} are understood here"
                if saved and ref.kind == "env" and looks_secret(ref.name):
                    return (
                        f"uses {ref.text} in {where}: its value would become part of the {'URL' if where == 'url' else 'command line'}, "
                        f"which is shown and saved with flows; pass it in {'headers' if self.transport != 'stdio' else 'env'} instead"
                    )
        if self.transport == "sse":
            return "uses the old HTTP+SSE transport, which mcp_notebook does not speak (streamable HTTP only)"
        return None

    # ------------------------------------------------------------------ resolving (connect time)
    def _lookup(self, where: str, environ: Mapping[str, str]) -> Callable[[Reference], str]:
        def lookup(ref: Reference) -> str:
            if ref.kind == "builtin":
                workspace = self.base if self.base is not None else Path.cwd()
                return {
                    "workspaceFolder": str(workspace), "cwd": str(workspace), "workspaceFolderBasename": workspace.name,
                    "userHome": str(Path.home()), "pathSeparator": os.sep, "/": os.sep,
                }[ref.name]  # fmt: skip
            if ref.kind == "env":
                if refused := current_policy().env_refusal(ref.name, f"in {where}"):  # never read, never sent
                    raise ConfigError(f"{self.where}: {refused}", file=self.file, server=self.name)
                if ref.name in environ and (ref.default is None or environ[ref.name] != ""):
                    return environ[ref.name]
                if ref.default is not None:
                    return ref.default
                raise ConfigError(
                    f"{self.where}: environment variable {ref.name} is not set (used in {where})",
                    file=self.file,
                    server=self.name,
                    variable=ref.name,
                )
            problem = self.check() or f"cannot resolve {ref.text}"
            raise ConfigError(f"{self.where}: {problem}", file=self.file, server=self.name)

        return lookup

    def resolved(self, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The keyword arguments of ``Session.connect`` (``target`` included), references resolved now.

        Raises:
            ConfigError: the entry cannot connect (``problem``, ``disabled``) or a variable is not set.
        """
        environ = os.environ if environ is None else environ
        problem = self.problem or self.check()
        if problem:
            raise ConfigError(f"{self.where}: {problem}", file=self.file, server=self.name)
        if self.disabled:
            raise ConfigError(f"{self.where}: the file marks it disabled", file=self.file, server=self.name)

        def memory(where: str, value: str) -> str:
            return expand(value, True, self._lookup(where, environ))

        def names(values: Iterable[str]) -> tuple[str, ...]:
            """The variables these values are expanded from: the target keeps them, to ask the policy at each open."""
            return tuple(sorted({r.name for v in values for r in references(v, bare=True) if r.kind == "env"}))

        target, cwd = self.target(environ)
        if isinstance(target, list):
            env: dict[str, str] = {}
            if self.env_file:
                env.update(self._read_env_file(expand(self.env_file, False, self._lookup("envFile", environ))))
            env.update({key: memory(f"env {key}", value) for key, value in self.env.items()})
            return {"target": target, "cwd": cwd, "env": env, "expanded_from": names(self.env.values())}
        headers: dict[str, str] = {}
        bearer_env: str | None = None
        expanded: list[str] = []
        for key, value in self.headers.items():
            variable = bearer_variable(value) if key.lower() == "authorization" else None
            if variable is not None:
                memory(f"header {key}", value)  # says which variable is missing, if it is
                bearer_env = variable  # the target keeps the name and reads the token at each open
            else:
                headers[key] = memory(f"header {key}", value)
                expanded.append(value)
        return {"target": target, "headers": headers, "bearer_env": bearer_env, "expanded_from": names(expanded)}

    def target(self, environ: Mapping[str, str] | None = None) -> tuple[list[str] | str, str | None]:
        """The command line (or URL) and working folder: the parts that are shown and saved, resolved now.

        Only references whose names do not look secret reach here (``check``), so these may be shown.

        Raises:
            ConfigError: a variable it names is not set.
        """
        environ = os.environ if environ is None else environ

        def saved(where: str, value: str) -> str:
            return expand(value, False, self._lookup(where, environ))

        if self.transport != "stdio":
            return saved("url", self.url), None
        command = [saved("command" if i == 0 else "args", w) for i, w in enumerate(self.command)]
        cwd = saved("cwd", self.cwd) if self.cwd else None
        if self.base is not None:
            cwd = str(
                (self.base / cwd) if cwd else self.base
            )  # project servers start in the project, as in Claude Code and VS Code
        if ("/" in command[0] or os.sep in command[0]) and not Path(command[0]).is_absolute():
            command[0] = str(Path(cwd or Path.cwd()) / command[0])
        return command, cwd

    def _read_env_file(self, path_text: str) -> dict[str, str]:
        """VS Code's ``envFile``: ``KEY=VALUE`` lines (``export``, quotes and ``#`` comments allowed)."""
        path = Path(path_text).expanduser()
        if not path.is_absolute():
            path = (self.base if self.base is not None else self.file.parent) / path
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"{self.where}: cannot read its envFile {path}: {exc.strerror or exc}", file=self.file, server=self.name
            ) from None
        out: dict[str, str] = {}
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, eq, value = line.removeprefix("export ").partition("=")
            if not eq:
                continue
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            out[key.strip()] = value
        return out

    def connect(
        self,
        session: Connects,
        name: str | None = None,
        *,
        protocol: str = "auto",
        read_timeout: float | None = None,
        interactive: bool = False,
    ) -> Connection:
        """Open this server as connection ``name`` (default: ``connection_name``) in ``session``.

        Raises:
            ConfigError: the entry cannot connect as written, or a variable it needs is not set.
        """
        options = self.resolved()
        target = options.pop("target")
        return session.connect(
            name or self.connection_name,
            target,
            protocol=protocol,
            read_timeout=read_timeout,
            interactive=interactive,
            **options,
        )

    # ------------------------------------------------------------------ showing
    def shown_target(self) -> str:
        """The target as written, with literal secrets masked: variables by name, values never."""
        if self.transport == "stdio":
            words = masked_args(self.command)
            text = "-- " + " ".join(
                w if w == MASK or w.endswith("=" + MASK) else shlex.quote(w) for w in words
            )  # the mask unquoted
            extras = [f"cwd {self.cwd}"] if self.cwd else []
            if self.env_file:
                extras.append(f"envFile {self.env_file}")
            if self.env:
                extras.append("env " + ", ".join(f"{k}={shown_value(v)}" for k, v in self.env.items()))
            return text + (f"  [{'; '.join(extras)}]" if extras else "")
        text = str(consent_url(masked_url(self.url)))  # a row a --trust-project approves: look-alike hosts marked
        if self.headers:
            text += "  [headers " + ", ".join(f"{k}: {shown_value(v)}" for k, v in self.headers.items()) + "]"
        return text


# ---------------------------------------------------------------------------------------------- files


@dataclass
class ConfigFile:
    """One config file: its servers, and what was wrong with it (bad JSON, bad entries).

    ``broken`` maps the name of each entry that could not be read to why, so asking for it by
    name says what is wrong rather than "not found".
    """

    path: Path
    kind: Kind
    servers: list[ServerEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    broken: dict[str, str] = field(default_factory=dict)
    scope: Scope = "project"
    digest: str = ""  # SHA-256 of the bytes read
    ignored: str | None = None  # why it was not read at all (another user's, or writable by others)


def _parse_jsonc(text: str) -> Any:
    """JSON with comments and trailing commas (VS Code's mcp.json, JupyterLab settings), read with ``json5``.

    JSON5 is a superset of that dialect (it also takes single quotes and bare keys, which no
    client writes and which cost nothing to accept).
    """
    import json5

    return json5.loads(text)


def _json_error(exc: ValueError) -> str:
    """A ``json5`` error as "line L, column C: what" (its own text reads ``<string>:L what at column C``)."""
    import re

    found = re.search(r":(\d+) (.*?) at column (\d+)", str(exc))
    return f"line {found[1]}, column {found[3]}: {found[2]}" if found else str(exc)


def _kind_of(path: Path, data: Any) -> Kind:
    """Which client's format a file is in, from its name and then its shape."""
    name = path.name
    if name == ".mcp.json":
        return "claude-code"
    if name == "claude_desktop_config.json":
        return "claude-desktop"
    if name in ("mcp_servers.json", "mcp_settings.json") or name.endswith(".jupyterlab-settings"):
        return "jupyter-mcp-manager"
    if isinstance(data, dict):
        if isinstance(data.get("servers"), dict):
            return "vscode"
        if isinstance(data.get("mcp_servers"), list) or isinstance(data.get("mcpSettings"), dict):
            return "jupyter-mcp-manager"
    if name == "mcp.json" and path.parent.name == ".vscode":
        return "vscode"
    return "mcpServers"


def read_config(path: Path, kind: Kind | None = None, base: Path | None = None, scope: Scope = "project") -> ConfigFile:
    """Read one config file. Never raises for its content: what is wrong goes to ``problems``.

    ``base`` is the project folder it belongs to (``None``: a user-level file); ``kind`` is
    guessed from the name and shape when not given; ``scope`` says whether it is one of the user's
    own files. The owner and mode are checked on the open file (``config_trust.file_problem``) and
    the digest is of the very bytes parsed, so what is approved is what was read.
    """
    try:
        with path.open("rb") as handle:
            unsafe = file_problem(os.fstat(handle.fileno()))
            raw = b"" if unsafe else handle.read()
    except OSError as exc:
        return ConfigFile(
            path, kind or "mcpServers", problems=[f"{path}: cannot read it: {exc.strerror or exc}"], scope=scope
        )
    if unsafe:
        return ConfigFile(path, kind or _kind_of(path, None), scope=scope, ignored=unsafe)
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8-sig")
        data = _parse_jsonc(text) if text.strip() else {}
    except ValueError as exc:  # UnicodeDecodeError is one
        return ConfigFile(
            path,
            kind or _kind_of(path, None),
            problems=[f"{path}: not valid JSON ({_json_error(exc)})"],
            scope=scope,
            digest=digest,
        )
    kind = kind or _kind_of(path, data)
    config = ConfigFile(path, kind, scope=scope, digest=digest)
    if not isinstance(data, dict):
        config.problems.append(f"{path}: expected a JSON object at the top, found {_type_name(data)}")
        return config
    if kind == "jupyter-mcp-manager":
        _read_manager(config, data, base)
    elif kind == "vscode":
        _read_named(config, data, "servers", base)
    else:
        _read_named(config, data, "mcpServers", base)
    return config


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number"
    )


class _BadEntry(Exception):
    """Why one entry cannot be read (becomes a problem of its file)."""


def _strings(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _BadEntry(f"{what} must be a list of strings")
    return list(value)


def _string_map(value: Any, what: str, allow_null: bool = False) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _BadEntry(f"{what} must be an object of strings, not {_type_name(value)}")
    out: dict[str, str] = {}
    for key, item in value.items():
        if item is None and allow_null:
            continue
        if not isinstance(item, str):
            raise _BadEntry(f"{what} {key!r} must be a string, not {_type_name(item)}")
        out[key] = item
    return out


def _named_list(value: Any, what: str) -> dict[str, str]:
    """jupyter-mcp-manager's ``[{"name": ..., "value": ...}]`` lists."""
    if value is None:
        return {}
    if not isinstance(value, list):
        raise _BadEntry(f"{what} must be a list of {{name, value}} objects")
    out: dict[str, str] = {}
    for item in value:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("name"), str)
            or not isinstance(item.get("value"), str)
        ):
            raise _BadEntry(f"{what} must be a list of {{name, value}} objects with string values")
        out[item["name"]] = item["value"]
    return out


def _optional_string(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise _BadEntry(f"{key} must be a string, not {_type_name(value)}")
    return value


_TYPES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}


def _entry(config: ConfigFile, name: str, raw: Any, base: Path | None, manager: bool = False) -> ServerEntry:
    """One server entry of any format (``manager``: jupyter-mcp-manager's lists of name/value pairs)."""
    if not isinstance(raw, dict):
        raise _BadEntry(f"expected an object, found {_type_name(raw)}")
    kind_text = raw.get("type")
    if kind_text is not None and kind_text not in _TYPES:
        raise _BadEntry(f"unknown type {kind_text!r} (stdio, http, streamable-http or sse)")
    command, url = _optional_string(raw, "command"), _optional_string(raw, "url")
    if kind_text is None and not command and not url:
        raise _BadEntry("needs a command (stdio) or a url (HTTP)")
    transport: Transport = _TYPES[kind_text] if kind_text is not None else ("stdio" if command else "http")
    disabled = raw.get("disabled") is True
    entry = ServerEntry(
        name,
        transport,
        config.path,
        config.kind,
        base=base,
        disabled=disabled,
        scope=config.scope,
        digest=config.digest,
    )
    if transport == "stdio":
        if not command:
            raise _BadEntry("a stdio server needs a command")
        entry.command = [command, *_strings(raw.get("args"), "args")]
        entry.cwd = _optional_string(raw, "cwd")
        entry.env = (
            _named_list(raw.get("env"), "env")
            if manager
            else _string_map(raw.get("env"), "env", allow_null=config.kind == "vscode")
        )
        entry.env_file = _optional_string(raw, "envFile") if config.kind == "vscode" else None
    else:
        if not url:
            raise _BadEntry(f"an {'SSE' if transport == 'sse' else 'HTTP'} server needs a url")
        entry.url = url
        entry.headers = (
            _named_list(raw.get("headers"), "headers") if manager else _string_map(raw.get("headers"), "headers")
        )
        if not url.startswith(("http://", "https://")) and not url.startswith("${"):
            raise _BadEntry(f"url must be an http(s) URL, not {masked_url(url)!r}")
    entry.problem = entry.check()
    return entry


def _read_named(config: ConfigFile, data: dict[str, Any], key: str, base: Path | None) -> None:
    """``{"mcpServers": {NAME: {...}}}`` (Claude Code, Claude Desktop) or ``{"servers": {...}}`` (VS Code)."""
    servers = data.get(key)
    if servers is None:
        other = "servers" if key == "mcpServers" else "mcpServers"
        if isinstance(data.get(other), dict):
            servers, key = data[other], other  # the other client's key in a file named like this one: still read it
        else:
            config.problems.append(f"{config.path}: no {key!r} object, so no servers")
            return
    if not isinstance(servers, dict):
        config.problems.append(
            f"{config.path}: {key!r} must be an object of servers by name, not {_type_name(servers)}"
        )
        return
    for name, raw in servers.items():
        try:
            config.servers.append(_entry(config, name, raw, base))
        except _BadEntry as exc:
            config.problems.append(f"{config.path}, server {name!r}: {exc}")
            config.broken[name] = str(exc)


def _read_manager(config: ConfigFile, data: dict[str, Any], base: Path | None) -> None:
    """jupyter-mcp-manager: ``{"mcp_servers": [...]}`` (config files) or ``{"mcpSettings": {"mcp_servers": [...]}}`` (JupyterLab settings).

    An item with only ``name`` and ``disabled`` is the manager's overlay that turns off a server
    of another file; ``find_configs`` applies it.
    """
    holder = data.get("mcpSettings", data)
    servers = holder.get("mcp_servers") if isinstance(holder, dict) else None
    if servers is None:
        return  # JupyterLab writes settings files with nothing set: no servers, nothing wrong
    if not isinstance(servers, list):
        config.problems.append(f"{config.path}: 'mcp_servers' must be a list, not {_type_name(servers)}")
        return
    for i, raw in enumerate(servers):
        name = raw.get("name") if isinstance(raw, dict) else None
        label = repr(name) if isinstance(name, str) else f"#{i + 1}"
        try:
            if not isinstance(name, str) or not name:
                raise _BadEntry("needs a name")
            if set(raw) <= {"name", "disabled"}:
                continue  # an overlay, not a server
            config.servers.append(_entry(config, name, raw, base, manager=True))
        except _BadEntry as exc:
            config.problems.append(f"{config.path}, server {label}: {exc}")
            config.broken[name if isinstance(name, str) else label] = str(exc)


def _manager_overlays(path: Path) -> set[str]:
    """Names a JupyterLab settings file of jupyter-mcp-manager turns off (``{"name", "disabled": true}``)."""
    try:
        data = _parse_jsonc(path.read_text(encoding="utf-8-sig"))
        items = data.get("mcpSettings", {}).get("mcp_servers", [])
        return {
            i["name"]
            for i in items
            if isinstance(i, dict) and i.get("disabled") is True and isinstance(i.get("name"), str)
        }
    except (OSError, ValueError, AttributeError):
        return set()


# ---------------------------------------------------------------------------------------------- finding


def _project_files(folder: Path) -> list[tuple[Path, Kind]]:
    return [(folder / ".mcp.json", "claude-code"), (folder / ".vscode" / "mcp.json", "vscode")]


def _app_config_dir() -> Path:
    """The per-user application settings folder (Linux ``~/.config``, macOS ``~/Library/Application Support``, Windows ``%APPDATA%``)."""
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def user_config_paths() -> list[tuple[Path, Kind]]:
    """The user-level files, in the order their servers win a name: Claude Desktop, VS Code, jupyter-mcp-manager."""
    app = _app_config_dir()
    found: list[tuple[Path, Kind]] = [
        (app / "Claude" / "claude_desktop_config.json", "claude-desktop"),
        (app / "Code" / "User" / "mcp.json", "vscode"),
    ]
    try:
        from jupyter_core.paths import jupyter_config_dir, jupyter_config_path
    except ImportError:  # nbformat brings jupyter_core; without it, jupyter-mcp-manager cannot be installed either
        return found
    lab = (
        Path(os.environ.get("JUPYTERLAB_SETTINGS_DIR") or Path(jupyter_config_dir()) / "lab" / "user-settings")
        / "jupyter-mcp-manager"
    )
    # JupyterLab's file for the plugin jupyter-mcp-manager:manager, then the one the manager's own fallback reads
    found += [
        (lab / "manager.jupyterlab-settings", "jupyter-mcp-manager"),
        (lab / "plugin.jupyterlab-settings", "jupyter-mcp-manager"),
    ]
    for folder in jupyter_config_path():
        found += [
            (Path(folder) / "mcp_settings.json", "jupyter-mcp-manager"),
            (Path(folder) / "mcp_servers.json", "jupyter-mcp-manager"),
        ]
    return found


def find_configs(start: Path | None = None, paths: list[Path] | None = None) -> list[ConfigFile]:
    """The config files found, the user's own first (a server name found twice: the first one wins).

    Without ``paths``: the user-level files (``user_config_paths``), then the project files of
    ``start`` (default: the working directory, which is the notebook's folder in a kernel) and its
    parents up to the project root (``config_trust.search_folders``: the nearest ``.git``, never
    above home), nearest first. A user-level server so keeps its name against a project's. With
    ``paths``: only those (a file in any of the formats, or a folder's ``.mcp.json`` and
    ``.vscode/mcp.json``); a given file is the user's own only when it is one of the user-level
    files. Every file not the user's is a project file: its entries wait for approval.

    Raises:
        ConfigError: a given path does not exist.
    """
    user_level = {_key(p) for p, _ in user_config_paths()}
    candidates: list[tuple[Path, Kind | None, Path | None]] = []
    if paths:
        for given in paths:
            path = Path(given).expanduser().resolve()
            if path.is_dir():
                candidates += [(p, k, path) for p, k in _project_files(path)]
                candidates += [
                    (path / n, "jupyter-mcp-manager", path) for n in ("mcp_servers.json", "mcp_settings.json")
                ]
                candidates.append((path / "claude_desktop_config.json", "claude-desktop", None))
            elif path.is_file():
                project = path.parent.parent if path.parent.name == ".vscode" else path.parent
                candidates.append((path, None, project if path.name in (".mcp.json", "mcp.json") else None))
            else:
                raise ConfigError(f"no such file or folder: {given}", file=path)
    else:
        candidates += [(p, k, None) for p, k in user_config_paths()]
        here = (start or Path.cwd()).expanduser().resolve()
        for folder in search_folders(here):
            candidates += [(p, k, folder) for p, k in _project_files(folder)]
    seen: set[Path] = set()
    files: list[ConfigFile] = []
    for file, kind, base in candidates:
        key = _key(file)
        if key in seen or not file.is_file():
            continue
        seen.add(key)
        files.append(read_config(file, kind, base, scope="user" if key in user_level else "project"))
    off = set().union(
        *(
            _manager_overlays(f.path)
            for f in files
            if f.path.name.endswith(".jupyterlab-settings") and f.ignored is None
        )
    )
    for f in files:
        for entry in f.servers:
            if f.kind == "jupyter-mcp-manager" and entry.name in off:
                entry.disabled = True  # the manager's settings overlay turns it off
    return files


def _key(path: Path) -> Path:
    """A file's identity: its resolved path (symlinks followed) when it exists."""
    return path.resolve() if path.exists() else path


# ---------------------------------------------------------------------------------------------- rows and connecting
