"""What a connection talks to: ``Target`` (an in-process server object, a stdio command, or a streamable HTTP
URL) and ``parse_target``, which reads what a user wrote (``%mcp connect NAME TARGET`` or Python).

What may be saved in a notebook (``Target.saved()``, ``describe()``) never includes header values,
tokens or environment values: only their names.
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..errors import FlowError

if TYPE_CHECKING:
    from ..auth.sdk_provider import OAuthOptions

__all__ = ["Target", "parse_target"]


@dataclass
class Target:
    """What a connection talks to. ``obj`` / ``headers`` / ``env`` never leave the kernel."""

    kind: Literal["inproc", "stdio", "http"]
    obj: Any = None
    command: list[str] = field(default_factory=list)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    bearer_env: str | None = None
    label: str = ""
    # () -> token of a server this kernel itself serves at ``url`` (``%mcp serve``), read at every
    # open so a re-served server's new token is used; kept out of ``headers``, so never saved or listed.
    served_token: Any = field(default=None, repr=False, compare=False)
    oauth: OAuthOptions | None = None  # signs in with OAuth on a 401 (HTTP without an Authorization of its own)
    signed_in: bool = False  # a sign-in completed on it: saved records say so (never the token)
    # The environment variables a config file's ``${VAR}`` in ``headers`` or ``env`` was expanded from at
    # connect: the values above keep no trace of them, so each open asks the policy about these names
    # again (a variable denied since is never re-sent). Names only; never saved, listed or traced.
    expanded_from: tuple[str, ...] = ()

    def describe(self) -> str:
        """A secret-free, human-readable form, also what saved flows record."""
        if self.kind == "http":
            return self.url
        if self.kind == "stdio":
            return shlex.join(self.command)
        return self.label or f"<in-process {type(self.obj).__name__}>"

    def identity(self) -> dict[str, Any]:
        """The whole target, secret-free: what a kept task handle is matched against before it is sent.

        ``describe`` is only the command line of a stdio server; the same command started in another
        folder, or with other environment variables, is another server (``python server.py`` in
        another folder is another program), so the handle is not its to see. Environment *names*
        only: values are never kept. A stdio target without a folder runs in the kernel's.
        """
        if self.kind == "http":
            return {"url": self.url}
        if self.kind == "stdio":
            return {
                "command": list(self.command),
                "cwd": os.path.realpath(self.cwd or os.getcwd()),
                "env": sorted(self.env),
            }
        return {"in_process": self.describe()}

    def saved(self) -> dict[str, Any]:
        """The reconnectable, secret-free part of a saved record's ``server`` entry.

        ``target`` is what one would type after ``%mcp connect NAME`` (a URL, ``-- COMMAND ARGS``,
        or the in-notebook object's name), as DESIGN.md shows it; header and environment *names*
        ride beside it so a resume can say what to supply again. Values never do.
        """
        if self.kind == "http":
            out: dict[str, Any] = {"target": self.url}
            if self.headers:
                out["headers"] = sorted(self.headers)  # names only, never values
            if self.bearer_env:
                out["bearer_env"] = self.bearer_env  # the variable's name, not its value
            if self.oauth is not None and (self.signed_in or self.oauth != type(self.oauth)()):
                out["oauth"] = (
                    self.oauth.saved()
                )  # that it signs in and with which client: names, never tokens or secrets
            return out
        if self.kind == "stdio":
            out = {"target": "-- " + shlex.join(self.command)}
            if self.cwd:
                out["cwd"] = self.cwd
            if self.env:
                out["env"] = sorted(self.env)
            return out
        return {"target": self.describe(), "in_process": True}

    @staticmethod
    def kind_of_saved(server: dict[str, Any]) -> str:
        """``http``, ``stdio`` or ``inproc`` for a saved ``server`` entry (see ``saved``)."""
        target = server.get("target")
        if not isinstance(target, str) or server.get("in_process"):
            return "inproc"
        if target.startswith(("http://", "https://")):
            return "http"
        return "stdio" if target.startswith("--") else "inproc"


def parse_target(target: Any, namespace: Mapping[str, Any] | None = None) -> Target:
    """A connection target from what the user wrote (or passed from Python)."""
    if isinstance(target, (list, tuple)):
        return _stdio(list(target))
    from ..prototype import ServedServer  # what %mcp serve returns (prototype imports nothing of the floors)

    if isinstance(target, ServedServer):  # what %mcp serve returns: its URL
        return Target(kind="http", url=target.url)
    if not isinstance(target, str):
        return _inproc(target, label=f"<in-process {type(target).__name__}>")
    text = target.strip()
    if text.startswith(("http://", "https://")):
        return Target(kind="http", url=text)
    if text.startswith("--"):
        return _stdio(shlex.split(text[2:]))
    if namespace is not None and text in namespace:
        return _inproc(namespace[text], label=text)
    module, colon, attr = text.partition(":")
    if not_a_module := _url_like(text):
        raise FlowError(not_a_module, kind="bad_input")
    if colon and module and attr:
        try:
            obj: Any = importlib.import_module(module)
        except ImportError as exc:
            if getattr(exc, "name", None) == module:  # the module itself is missing: its name once, not three times
                raise FlowError(f"no module named {module!r} (in {text!r}, read as module:attr)") from None
            raise FlowError(f"cannot import {module!r} for target {text!r}: {exc}") from None
        for part in attr.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise FlowError(f"{module} has no attribute {attr!r}") from None
        return _inproc(obj, label=text)
    raise FlowError(
        f"don't know how to connect to {text!r}: give an http(s) URL, a server object in the notebook, "
        "module:attr, or -- COMMAND ARGS for a stdio server"
    )


_SCHEME_TYPO = re.compile(r"(?i)(https?)[:/]+(?=[^:/])")  # http//host, https:/host, http:host
_HOST_PORT = re.compile(r"[A-Za-z0-9][\w.-]*:\d{1,5}(/.*)?")  # localhost:8000, 127.0.0.1:8000/mcp
_DOTTED_HOST = re.compile(r"[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+/.*")  # example.com/mcp


def _url_like(text: str) -> str | None:
    """Why ``text`` is no target when it looks like a mistyped URL (``http//host/mcp``, ``localhost:8000/mcp``).

    Such a text used to be read as ``module:attr`` and failed as "No module named 'http//127'". A
    module's name has no ``/`` and an attribute's is no number, so these are read as addresses,
    with the URL meant when it can be told.
    """
    scheme = _SCHEME_TYPO.match(text)
    rest = text[scheme.end() :] if scheme else ""
    if scheme and ("/" in text or _HOST_PORT.fullmatch(rest)):
        meant: str | None = f"{scheme[1].lower()}://{rest}"
    elif _HOST_PORT.fullmatch(text) or _DOTTED_HOST.fullmatch(text):
        meant = f"http://{text}"
    elif "/" in text:
        meant = None
    else:
        return None
    said = f"{text!r} is not a URL: a URL starts with http:// or https://"
    if meant is not None:
        return f"{said}. Did you mean {meant}?"
    return f"{said}; a stdio server's command goes after -- (-- COMMAND ARGS)."


def _stdio(command: list[str]) -> Target:
    if not command:
        raise FlowError("no command after --: write %mcp connect NAME -- COMMAND ARGS")
    if shutil.which(command[0]) is None:
        raise FlowError(f"command not found: {command[0]!r}. Check the spelling, or give the full path.")
    return Target(kind="stdio", command=command)


def _inproc(obj: Any, label: str) -> Target:
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    if not isinstance(obj, (MCPServer, Server)):
        raise FlowError(f"{label} is a {type(obj).__name__}, not an MCPServer or low-level Server")
    return Target(kind="inproc", obj=obj, label=label)
