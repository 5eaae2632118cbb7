"""The administrator's policy: what every notebook of an install may reach, whatever the notebook says.

A hub (or any shared install) puts ``mcp_notebook_policy.json`` in a Jupyter config directory that
is not the user's own: an entry of ``JUPYTER_CONFIG_PATH`` (as a hub's spawner sets it),
``{sys.prefix}/etc/jupyter``, ``/usr/local/etc/jupyter`` or ``/etc/jupyter``. The user's
``~/.jupyter`` and ``JUPYTER_CONFIG_DIR`` never count: a policy the user can write limits nothing.

Every file found applies, and each says only what it limits: a thing is allowed when every file
that has the key allows it (allow-lists intersect, deny-lists add up, the strictest review wins),
so a second file can only narrow the first. ``JUPYTER_CONFIG_PATH`` as the kernel started with it
stays in force even when a cell changes the variable later.

A file that cannot be read, is not JSON or does not match ``SCHEMA`` (an unknown key included: a
misspelt ``alowed_urls`` must not leave URLs open) fails closed: every door this policy governs
refuses, naming the file and what is wrong, until it is fixed.

The doors ask here and raise their own errors: each ``*_refusal`` returns ``None`` (allowed) or the
sentence to show, which says what the policy forbids and names its file. Nothing here reads a
value of an environment variable, starts or connects anything. This guards the product's doors
(``%mcp`` lines, the Python API, received notebooks, config files); it is not a sandbox for code a
person runs in their own kernel, which the spawner's own limits are for (docs/hub.md).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "POLICY_FILE",
    "SCHEMA",
    "Policy",
    "PolicyFile",
    "TargetLike",
    "current_policy",
    "load_policy",
    "policy_dirs",
]

POLICY_FILE = "mcp_notebook_policy.json"
REVIEW_LEVELS = ("remote", "ask")  # weakest first: "ask" reviews every request, "remote" those that leave the machine
DEFAULT_PORTS = {"http": "80", "https": "443"}
OAUTH_ENV_FLAGS = (
    ("client_secret_env", "--client-secret-env"),
    ("private_key_env", "--private-key-env"),
    ("id_token_env", "--id-token-env"),
    ("assertion_env", "--assertion-env"),
)  # a sign-in's options that name an environment variable (auth.sdk_provider.OAuthOptions), and their flags

_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string", "minLength": 1}}
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "mcp-notebook administrator's policy",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "$comment": {"type": "string"},
        "allowed_stdio_commands": {
            **_STRINGS,
            "description": "executables a stdio server may be started with: a name looked up on PATH (or a glob of "
            "names), or an absolute path (or a glob of paths, matched against the path found and its real path)",
        },
        "allowed_urls": {
            **_STRINGS,
            "description": "URL globs SCHEME://HOST[:PORT][/PATH]: HOST and PATH may hold * and ?, PORT may be *; "
            "matched against the URL as a browser reads it (WHATWG, ada-url); no PATH: any path",
        },
        "denied_env": {
            **_STRINGS,
            "description": "environment variable name globs never passed to stdio servers nor read into headers, URLs or command lines",
        },
        "allowed_sampling_providers": {**_STRINGS, "description": "model providers sampling may use (echo, callable, human, openai, anthropic)"},
        "allowed_sampling_hosts": {**_STRINGS, "description": "host globs a hosted model provider may be reached at"},
        "least_review": {"enum": list(REVIEW_LEVELS), "description": "the least review a sampling request gets"},
        "project_configs": {"type": "boolean", "description": "whether a project's .mcp.json and .vscode/mcp.json may be used"},
        "serve": {"type": "boolean", "description": "whether %mcp serve may put a notebook's server on HTTP"},
    },
}  # fmt: skip

_URL_PATTERN = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<host>\[[^\]/]*\]|[^/:?#@\[\]]+)(?::(?P<port>\d{1,5}|\*))?(?P<path>/[^?#]*)?"
)


class TargetLike(Protocol):
    """What ``target_refusal`` reads of a connection target (``wire.target.Target``; core imports nothing above it)."""

    @property
    def kind(self) -> str: ...
    @property
    def command(self) -> list[str]: ...
    @property
    def url(self) -> str: ...
    @property
    def env(self) -> dict[str, str]: ...
    @property
    def bearer_env(self) -> str | None: ...
    @property
    def expanded_from(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class UrlRule:
    """One ``allowed_urls`` entry, split so a ``*`` in the host never runs into the path (``https://a.com*``)."""

    text: str
    scheme: str
    host: str
    port: str | None  # None: the scheme's default port
    path: str | None  # None: any path

    @staticmethod
    def parse(text: str) -> UrlRule:
        found = _URL_PATTERN.fullmatch(text.strip())
        if found is None:
            raise ValueError(f"allowed_urls entry {text!r} is not SCHEME://HOST[:PORT][/PATH]")
        return UrlRule(text, found["scheme"].lower(), found["host"].lower(), found["port"], found["path"] or None)

    def matches(self, parts: Mapping[str, Any]) -> bool:
        scheme = str(parts["protocol"]).rstrip(":")
        hostname = str(parts["hostname"])
        literal = self.host.startswith("[")  # an IPv6 address: its brackets are no glob
        if scheme != self.scheme or not (hostname == self.host if literal else fnmatchcase(hostname, self.host)):
            return False
        port = str(parts["port"]) or DEFAULT_PORTS.get(scheme, "")
        wanted = DEFAULT_PORTS.get(scheme, "") if self.port is None else self.port
        if wanted != "*" and port != wanted:
            return False
        return self.path is None or fnmatchcase(str(parts["pathname"]), self.path)


@dataclass(frozen=True)
class PolicyFile:
    """One policy file as read: its rules (``None``: the key is absent, so it limits nothing there)."""

    path: Path
    stdio_commands: tuple[str, ...] | None = None
    urls: tuple[UrlRule, ...] | None = None
    denied_env: tuple[str, ...] = ()
    sampling_providers: tuple[str, ...] | None = None
    sampling_hosts: tuple[str, ...] | None = None
    least_review: str | None = None
    project_configs: bool = True
    serve: bool = True

    @staticmethod
    def from_data(path: Path, data: Any) -> PolicyFile:
        """Validate ``data`` against ``SCHEMA``; raises ``ValueError`` saying where it is wrong."""
        import jsonschema

        errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(data), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "the top level"
            raise ValueError(f"at {where}: {first.message}")

        def strings(key: str) -> tuple[str, ...] | None:
            return tuple(data[key]) if key in data else None

        return PolicyFile(
            path,
            stdio_commands=strings("allowed_stdio_commands"),
            urls=tuple(UrlRule.parse(u) for u in data["allowed_urls"]) if "allowed_urls" in data else None,
            denied_env=strings("denied_env") or (),
            sampling_providers=strings("allowed_sampling_providers"),
            sampling_hosts=tuple(h.lower() for h in data["allowed_sampling_hosts"])
            if "allowed_sampling_hosts" in data
            else None,
            least_review=data.get("least_review"),
            project_configs=data.get("project_configs", True),
            serve=data.get("serve", True),
        )

    def rows(self) -> list[tuple[str, str]]:
        """(rule, what it says) for ``%mcp policy``."""

        def listed(items: Iterable[str] | None) -> str:
            return "any" if items is None else ", ".join(items) or "none"

        return [
            ("stdio commands allowed", listed(self.stdio_commands)),
            ("URLs allowed", listed(None if self.urls is None else (u.text for u in self.urls))),
            ("environment variables denied", ", ".join(self.denied_env) or "none"),
            ("sampling providers allowed", listed(self.sampling_providers)),
            ("sampling hosts allowed", listed(self.sampling_hosts)),
            ("least review", self.least_review or "as each person sets it"),
            ("project configs", "allowed" if self.project_configs else "forbidden"),
            ("%mcp serve", "allowed" if self.serve else "forbidden"),
        ]


@dataclass(frozen=True)
class Policy:
    """Every policy file in force (none: nothing is limited), or the first broken one (everything refused)."""

    files: tuple[PolicyFile, ...] = ()
    broken: tuple[Path, str] | None = None  # (file, what is wrong with it)
    searched: tuple[Path, ...] = field(default=(), compare=False)

    @property
    def in_force(self) -> bool:
        return bool(self.files) or self.broken is not None

    def _broken(self, what: str) -> str | None:
        if self.broken is None:
            return None
        path, why = self.broken
        return (
            f"the administrator's policy file {path} is not valid ({why}), so {what} is refused until an "
            "administrator fixes it"
        )

    @staticmethod
    def _says(file: PolicyFile, text: str) -> str:
        return f"the administrator's policy ({file.path}) {text}"

    # ------------------------------------------------------------------ stdio, URLs, environment
    def stdio_refusal(self, command: Sequence[str]) -> str | None:
        """Why starting ``command`` (argv) is refused, or ``None``."""
        program = command[0] if command else ""
        broken = self._broken(f"starting {program!r}")
        if broken:
            return broken
        for file in self.files:
            if file.stdio_commands is not None and not _command_allowed(program, file.stdio_commands):
                allowed = ", ".join(file.stdio_commands) or "none"
                return self._says(file, f"allows only these stdio commands: {allowed}; {program!r} is not one of them")
        return None

    def search_path_refusal(self, command: Sequence[str], env: Mapping[str, str]) -> str | None:
        """Why a stdio server's own ``PATH`` is refused, or ``None``.

        The child looks a bare program name up on the ``PATH`` it is given, so ``--env PATH=...`` would let a
        name the policy allows (``python``) start another file of that name. Under a command list, a server
        started by name keeps the kernel's ``PATH``.
        """
        program = command[0] if command else ""
        if "PATH" not in env or "/" in program:
            return None
        for file in self.files:
            if file.stdio_commands is not None:
                return self._says(
                    file,
                    f"allows stdio commands by name only on the kernel's own PATH; --env PATH=... for {program!r} "
                    "is refused (give the program's full path instead, if the policy allows that path)",
                )
        return None

    def url_refusal(self, url: str) -> str | None:
        """Why connecting to ``url`` is refused, or ``None``: matched on the URL as a browser reads it."""
        broken = self._broken(f"connecting to {url}")
        if broken:
            return broken
        limited = [f for f in self.files if f.urls is not None]
        if not limited:
            return None
        import ada_url  # only where a URL is judged: loading the extension stays light

        try:
            parts = ada_url.parse_url(url)
        except ValueError:
            return self._says(limited[0], f"allows only listed URLs, and {url!r} is not a URL a browser would read")
        for file in limited:
            assert file.urls is not None
            if not any(rule.matches(parts) for rule in file.urls):
                allowed = ", ".join(r.text for r in file.urls) or "none"
                return self._says(
                    file,
                    f"allows only these URLs: {allowed}; {parts['href']} (host {parts['hostname']}) is not among them",
                )
        return None

    def env_refusal(self, name: str, use: str) -> str | None:
        """Why environment variable ``name`` may not be used ``use`` (e.g. "in header Authorization"), or ``None``."""
        broken = self._broken(f"reading environment variable {name}")
        if broken:
            return broken
        for file in self.files:
            denied = next((g for g in file.denied_env if fnmatchcase(name, g)), None)
            if denied is not None:
                return self._says(file, f"denies environment variable {name} (rule {denied!r}): it is never used {use}")
        return None

    def target_refusal(self, target: TargetLike) -> str | None:
        """Why connecting to ``target`` is refused, or ``None``: before any process starts or socket opens.

        An in-notebook server is the notebook's own code, which this policy does not govern.
        """
        if target.kind == "stdio":
            refused = self.stdio_refusal(target.command) or self.search_path_refusal(target.command, target.env)
            for name in sorted(target.env):
                refused = refused or self.env_refusal(name, "passed to a stdio server")
            for name in target.expanded_from:  # a config's ${VAR} in env: its value was read at connect
                refused = refused or self.env_refusal(name, "expanded into a stdio server's environment")
            return refused
        if target.kind == "http":
            refused = self.url_refusal(target.url)
            if not refused and target.bearer_env:
                refused = self.env_refusal(target.bearer_env, "read into an Authorization header")
            for name in target.expanded_from:  # a config's ${VAR} in a header: its value was read at connect
                refused = refused or self.env_refusal(name, "expanded into a header")
            return refused or self.oauth_env_refusal(getattr(target, "oauth", None))
        return None

    def oauth_env_refusal(self, oauth: Any) -> str | None:
        """Why a sign-in's named variables (``--client-secret-env`` and the like) may not be read, or ``None``.

        ``oauth`` is ``auth.sdk_provider.OAuthOptions`` or a saved record's ``oauth`` mapping: names only.
        """
        if oauth is None:
            return None
        for key, flag in OAUTH_ENV_FLAGS:
            name = oauth.get(key) if isinstance(oauth, Mapping) else getattr(oauth, key, None)
            if isinstance(name, str) and name and (refused := self.env_refusal(name, f"read for {flag}")):
                return refused
        return None

    # ------------------------------------------------------------------ sampling
    def sampling_refusal(self, provider: str, url: str | None = None) -> str | None:
        """Why a sampling request may not go to ``provider`` (at ``url``, for a hosted one), or ``None``."""
        broken = self._broken(f"sampling with {provider}")
        if broken:
            return broken
        for file in self.files:
            if file.sampling_providers is not None and provider not in file.sampling_providers:
                allowed = ", ".join(file.sampling_providers) or "none"
                return self._says(file, f"allows only these sampling providers: {allowed}; not {provider!r}")
        if url is None:
            return None
        import ada_url

        try:
            host = str(ada_url.parse_url(url)["hostname"]).strip("[]")
        except ValueError:
            host = ""
        for file in self.files:
            if file.sampling_hosts is not None and not any(fnmatchcase(host, g) for g in file.sampling_hosts):
                allowed = ", ".join(file.sampling_hosts) or "none"
                return self._says(file, f"allows sampling only at these hosts: {allowed}; not {host or url!r}")
        return None

    def least_review(self) -> tuple[str, Path] | None:
        """The least review every sampling request gets (``remote`` or ``ask``) and the file that says so."""
        if self.broken is not None:
            return "ask", self.broken[0]
        strictest: tuple[str, Path] | None = None
        for file in self.files:
            if file.least_review is not None and (
                strictest is None or REVIEW_LEVELS.index(file.least_review) > REVIEW_LEVELS.index(strictest[0])
            ):
                strictest = file.least_review, file.path
        return strictest

    # ------------------------------------------------------------------ project configs, serving
    def project_config_refusal(self) -> str | None:
        """Why a project's config files (``.mcp.json``, ``.vscode/mcp.json``) may not be used, or ``None``."""
        broken = self._broken("using a project's config files")
        if broken:
            return broken
        for file in self.files:
            if not file.project_configs:
                return self._says(file, "forbids servers from project config files (.mcp.json, .vscode/mcp.json)")
        return None

    def serve_refusal(self) -> str | None:
        """Why ``%mcp serve`` may not put a notebook's server on HTTP, or ``None``."""
        broken = self._broken("%mcp serve")
        if broken:
            return broken
        for file in self.files:
            if not file.serve:
                return self._says(file, "forbids %mcp serve (serving a notebook's server over HTTP)")
        return None

    def config_entry_refusal(self, scope: str, transport: str, command: Sequence[str], url: str) -> str | None:
        """Why a config file's server entry is forbidden, for its listing: a project one, or its literal command or URL.

        A command or URL still holding ``${...}`` references is judged when it connects.
        """
        if scope == "project" and (refused := self.project_config_refusal()):
            return refused
        if transport == "stdio" and command and "$" not in command[0]:
            return self.stdio_refusal(command)
        if transport != "stdio" and url and "$" not in url:
            return self.url_refusal(url)
        return None

    def saved_server_refusal(self, server: Mapping[str, Any]) -> str | None:
        """Why a saved record's server (``Target.saved()``: names, never values) may not be reconnected, or ``None``."""
        target = server.get("target")
        if not isinstance(target, str) or server.get("in_process"):
            return None
        if target.startswith(("http://", "https://")):
            bearer = server.get("bearer_env")
            refused = self.url_refusal(target)
            if not refused and isinstance(bearer, str):
                refused = self.env_refusal(bearer, "read into an Authorization header")
            oauth = server.get("oauth")
            return refused or self.oauth_env_refusal(oauth if isinstance(oauth, Mapping) else None)
        if target.startswith("--"):
            import shlex

            try:
                command = shlex.split(target[2:])
            except ValueError:
                command = [target[2:]]
            refused = self.stdio_refusal(command)
            for name in server.get("env") or []:
                refused = refused or self.env_refusal(str(name), "passed to a stdio server")
            return refused
        return None

    def rows(self) -> list[tuple[str, str, str]]:
        """(file, rule, what it says): what ``%mcp policy`` shows."""
        if self.broken is not None:
            path, why = self.broken
            return [(str(path), "NOT VALID: everything governed is refused", why)]
        return [(str(f.path), rule, said) for f in self.files for rule, said in f.rows()]


def _command_allowed(program: str, patterns: Iterable[str]) -> bool:
    """Whether the executable ``program`` (argv[0]) is one of ``patterns``.

    A pattern without ``/`` is a name (or a glob of names) looked up on PATH: it matches only a
    ``program`` given as a bare name, so ``./python`` or ``/tmp/x/python`` is not ``python``. A
    pattern with ``/`` is matched against the absolute path the program is found at and its real
    path (symlinks followed), so ``python3`` found as ``/usr/bin/python3`` matches ``/usr/bin/*``.
    """
    if not program:
        return False
    found = shutil.which(program) if "/" not in program else program
    paths = set()
    if found:
        paths = {os.path.abspath(found), os.path.realpath(found)}
    for pattern in patterns:
        if "/" in pattern:
            if any(fnmatchcase(p, pattern) for p in paths):
                return True
        elif "/" not in program and fnmatchcase(program, pattern):
            return True
    return False


# ---------------------------------------------------------------------------------------------- finding
_AT_START = os.environ.get("JUPYTER_CONFIG_PATH", "")  # as the spawner set it: a cell unsetting it lifts nothing


def _user_dirs(environ: Mapping[str, str]) -> set[str]:
    """The user's own config directories, which never hold a policy."""
    own = {os.path.realpath(Path.home() / ".jupyter")}
    if environ.get("JUPYTER_CONFIG_DIR"):
        own.add(os.path.realpath(Path(environ["JUPYTER_CONFIG_DIR"]).expanduser()))
    return own


def policy_dirs(environ: Mapping[str, str] | None = None, at_start: str | None = None) -> list[Path]:
    """The directories searched for ``POLICY_FILE``, in Jupyter's order, the user's own left out."""
    environ = os.environ if environ is None else environ
    at_start = _AT_START if at_start is None else at_start
    listed = [p for text in (environ.get("JUPYTER_CONFIG_PATH", ""), at_start) for p in text.split(os.pathsep) if p]
    candidates = [*listed, os.path.join(sys.prefix, "etc", "jupyter"), "/usr/local/etc/jupyter", "/etc/jupyter"]
    own = _user_dirs(environ)
    out: list[Path] = []
    seen: set[str] = set()
    for text in candidates:
        real = os.path.realpath(Path(text).expanduser())
        if real in own or real in seen:
            continue
        seen.add(real)
        out.append(Path(text).expanduser())
    return out


def load_policy(dirs: Iterable[Path]) -> Policy:
    """The policy of the ``POLICY_FILE`` files in ``dirs``; a file that cannot be used makes it broken."""
    files: list[PolicyFile] = []
    searched = tuple(dirs)
    for folder in searched:
        path = folder / POLICY_FILE
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            return Policy(tuple(files), (path, f"cannot read it: {exc.strerror or exc}"), searched)
        try:
            data = json.loads(raw.decode("utf-8-sig"))
        except ValueError as exc:  # UnicodeDecodeError is one
            return Policy(tuple(files), (path, f"not valid JSON: {exc}"), searched)
        try:
            files.append(PolicyFile.from_data(path, data))
        except ValueError as exc:
            return Policy(tuple(files), (path, str(exc)), searched)
    return Policy(tuple(files), None, searched)


_cache: tuple[tuple[Any, ...], Policy] | None = None


def _stamp(dirs: Sequence[Path]) -> tuple[Any, ...]:
    """What changes when a policy file appears, goes or is rewritten (a stat per directory, no read)."""
    out: list[Any] = []
    for folder in dirs:
        try:
            st = (folder / POLICY_FILE).stat()
        except OSError:
            out.append((str(folder), None))
            continue
        out.append((str(folder), st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


def current_policy() -> Policy:
    """The policy in force now: the files are looked at on every call (a stat each) and read again when changed."""
    global _cache
    dirs = policy_dirs()
    stamp = _stamp(dirs)
    if _cache is None or _cache[0] != stamp:
        _cache = (stamp, load_policy(dirs))
    return _cache[1]
