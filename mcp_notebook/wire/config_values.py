"""The variables a server config names, and its values as a listing may show them.

Configs name variables (``${env:TOKEN}``, ``${TOKEN}``, ``$TOKEN``) so that the files hold no
values: ``references`` finds them, ``expand`` resolves them (at connect time only), ``looks_secret``
tells which may not land in a saved command line or URL, and the ``masked_*`` / ``shown_value``
helpers show an entry with variable names and literal values masked. ``ConfigError`` is here,
below both ``configs`` (which reads the files) and ``config_trust`` (which says what an approval
approves), so that neither imports the other to name it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..core.redact import MASK, is_secret_name
from ..errors import SessionError

__all__ = [
    "ConfigError",
    "Reference",
    "bearer_variable",
    "expand",
    "looks_secret",
    "masked_args",
    "masked_url",
    "references",
    "shown_value",
]

# Environment variables whose values are places, not secrets: they may be part of a command line or URL
_PLACE_VARIABLES = frozenset(
    {"HOME", "USERPROFILE", "USER", "USERNAME", "LOGNAME", "PWD", "TMPDIR", "TEMP", "TMP", "APPDATA", "LOCALAPPDATA",
     "PROGRAMDATA", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"}
)  # fmt: skip
# besides redact.is_secret_name: words that mark a variable as a secret when it would land in a saved command line or URL
_SECRET_HINTS = frozenset({"key", "pat", "pass", "jwt", "sas", "cert", "sig", "signature", "hmac", "salt", "dsn"})
_WORDS = re.compile(r"[A-Za-z][a-z]*|[0-9]+")
_VSCODE_BUILTINS = frozenset({"workspaceFolder", "workspaceFolderBasename", "userHome", "pathSeparator", "/", "cwd"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_REFERENCE_OR_BARE = re.compile(r"\$\$|\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


class ConfigError(SessionError):
    """A config that cannot be used as written: bad JSON, a bad entry, a variable that is not set.

    Its message names the file and the entry (never a value); ``details`` has ``file`` (and
    ``variable`` when one is missing). ``kind`` is ``"bad_config"``.
    """

    def __init__(
        self, message: str, *, file: Path | None = None, server: str | None = None, variable: str | None = None
    ) -> None:
        details: dict[str, Any] = {"file": str(file) if file is not None else None}
        if variable is not None:
            details["variable"] = variable
        super().__init__(
            message, kind="bad_config", server=server, reason="missing_variable" if variable else None, details=details
        )


# ---------------------------------------------------------------------------------------------- references


@dataclass(frozen=True)
class Reference:
    """One ``${...}`` / ``$NAME`` in a config value: what it names, never what it stands for."""

    text: str  # as written, e.g. "${env:TOKEN}"
    kind: Literal["env", "input", "builtin", "unsupported"]
    name: str
    default: str | None = None  # ${VAR:-default}


def _reference(inner: str | None, bare: str | None, text: str) -> Reference:
    if bare is not None:
        return Reference(text, "env", bare)
    body = inner or ""
    if body.startswith("env:"):
        return Reference(text, "env", body[4:])
    if body.startswith("input:"):
        return Reference(text, "input", body[6:])
    if body in _VSCODE_BUILTINS:
        return Reference(text, "builtin", body)
    name, sep, default = body.partition(":-")
    if _IDENTIFIER.fullmatch(name):
        return Reference(text, "env", name, default if sep else None)
    return Reference(text, "unsupported", body)


def references(value: str, bare: bool) -> list[Reference]:
    """The references in ``value``. ``bare``: ``$NAME`` counts too (``$$`` is a literal ``$``).

    Bare ``$NAME`` is read only in environment and header values: in a command line a ``$`` is
    usually meant for the shell the command starts, as Claude Code and VS Code leave it.
    """
    found = []
    for m in (_REFERENCE_OR_BARE if bare else _REFERENCE).finditer(value):
        if m.group(0) == "$$":
            continue
        found.append(_reference(m.group(1), m.group(2) if bare else None, m.group(0)))
    return found


def expand(value: str, bare: bool, lookup: Callable[[Reference], str]) -> str:
    """``value`` with each reference replaced by ``lookup(reference)``."""

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        return lookup(_reference(m.group(1), m.group(2) if bare else None, m.group(0)))

    return (_REFERENCE_OR_BARE if bare else _REFERENCE).sub(one, value)


def looks_secret(variable: str) -> bool:
    """Whether a variable's value must stay out of a saved command line or URL."""
    if variable in _PLACE_VARIABLES:
        return False
    return is_secret_name(variable) or any(w.lower() in _SECRET_HINTS for w in _WORDS.findall(variable))


def bearer_variable(value: str) -> str | None:
    """``VAR`` when a header value is exactly ``Bearer ${VAR}`` / ``Bearer ${env:VAR}`` / ``Bearer $VAR``."""
    scheme, _, rest = value.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    refs = references(rest.strip(), bare=True)
    if len(refs) == 1 and refs[0].text == rest.strip() and refs[0].kind == "env" and refs[0].default is None:
        return refs[0].name
    return None


def shown_value(value: str) -> str:
    """A header or env value for a listing: the variables it names, or the mask for a literal."""
    refs = [r.text for r in references(value, bare=True) if r.kind != "builtin"]
    return " ".join(refs) if refs else MASK


def masked_args(words: list[str]) -> list[str]:
    """Command words with the values of secret-named flags (``--token X``, ``--api-key=X``) masked, references kept."""
    out: list[str] = []
    for i, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if eq and flag.startswith("-") and is_secret_name(flag.lstrip("-")) and not _only_references(value):
            out.append(f"{flag}={MASK}")
        elif (
            i > 0
            and words[i - 1].startswith("-")
            and "=" not in words[i - 1]
            and is_secret_name(words[i - 1].lstrip("-"))
            and not _only_references(word)
        ):
            out.append(MASK)
        else:
            out.append(word)
    return out


def _only_references(value: str) -> bool:
    return bool(value) and _REFERENCE.sub("", value) == ""


def masked_url(url: str) -> str:
    """A URL with its password and secret-named query values masked (references kept: they are names)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        name, colon, _password = user.partition(":")
        netloc = f"{name}{':' + MASK if colon else ''}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_name(k) for k, _ in pairs):
            query = urlencode(
                [(k, MASK if is_secret_name(k) and not _only_references(v) else v) for k, v in pairs], safe="${}:"
            )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
