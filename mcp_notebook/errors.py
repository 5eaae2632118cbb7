"""Turning what goes wrong into sentences a notebook user can act on.

The SDK raises a zoo of things (``MCPError`` with JSON-RPC codes, nested ``ExceptionGroup``s from
anyio task groups, ``httpx2`` connection errors, ``FileNotFoundError`` for stdio commands). IPython
prints a full traceback for anything but exactly ``UsageError`` or an exception with
``_render_traceback_``, and falls back to a raw traceback when an ``ExceptionGroup`` hides in the
context chain. So every user-facing failure becomes a ``FlowError`` raised outside any ``except``
block, carrying a plain explanation.

The errors a user of the package can meet (the first three live here; the others beside the code
that raises them)::

    MCPNotebookError                 rendered without a traceback in IPython
    └── FlowError                    a flow, a connection or a sign-in ended without a result
        ├── ConnectionFailed         opening a connection failed (wire/connection.py)
        ├── MapError                 some rows of a map failed, raised after every row ran (mapping/map.py)
        └── SessionError             a request the session cannot act on (the magics: a UsageError)
            └── ConfigError          a config file that cannot be used as written (wire/configs.py)

What happened is the error's ``kind``, one of ``Kind`` (``Note`` uses the same names); the
``%mcp`` magics give each kind its command, or decide it needs none, in ``magics/hints.py``.
Exceptions that never reach the user as such are not in the tree: the sign-in's ``SignIn*``
(``auth/sign_in.py``, ``auth/sdk_provider.py``, explained as a ``FlowError`` of a ``sign_in_*`` kind) and ``SamplingError``
(``sampling/providers.py``, answered to the server that asked).
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any, Literal

__all__ = [
    "FlowError",
    "Kind",
    "MCPNotebookError",
    "Note",
    "SessionError",
    "describe_exception",
    "explain_code",
    "leaf_exceptions",
]

#: Every ``kind`` a ``FlowError`` (or subclass) and a ``Note`` carry. mypy checks each ``kind=``
#: against it, and ``magics/hints.py`` decides every one (a ``%mcp`` hint or none); a new kind goes
#: here first, and the type check fails until hints.py has its case.
Kind = Literal[
    # a flow that ended without a result
    "cancelled", "failed", "map_failed", "needs_legacy", "no_backchannel", "no_subscriptions", "not_live",
    "replay_changed", "replay_untrusted", "resume_failed", "rounds_exceeded", "still_saved", "tool_error", "unanswered",
    # connections
    "connect_timeout", "connection_closed", "connection_dead", "not_connected", "reconnect_needed", "several_connected", "unknown_connection",
    # sign-in and credentials
    "auth_required", "sign_in_denied", "sign_in_failed", "sign_in_pending", "sign_in_refused", "sign_in_required", "sign_in_timeout", "sign_in_unreachable",
    # tasks
    "task_cancelled", "task_failed", "task_gone", "task_handle_missing", "task_invalid",
    # requests the session cannot act on (mostly SessionError)
    "bad_config", "bad_input", "consent_needed", "flow_id_needed", "flow_running", "no_saved_flow", "nothing_waiting", "several_waiting", "unreadable_file",
    # what a server sent that is refused (a skill's file that fails verification)
    "skill_refused",
    # what the administrator's policy forbids (core/policy.py)
    "policy_refused",
    # notes (Note), not errors
    "reconnected", "saved_flow_waiting",
]  # fmt: skip

#: JSON-RPC and MCP error codes, in words a notebook user understands.
CODE_MEANINGS: dict[int, str] = {
    -32700: "the server could not parse the message (parse error)",
    -32600: "the server rejected the request as invalid",
    -32601: "the server does not offer this method",
    -32602: "the server rejected the parameters",
    -32603: "the server hit an internal error",
    -32000: "the connection to the server closed",
    -32001: "the server did not answer in time",
    -32002: "the resource was not found",
    -32020: "the tool list changed on the server (header mismatch)",
    -32021: "the server needs a client capability this connection did not offer",
    -32022: "the server does not support the requested protocol version",
    -32042: "the server needs you to open a URL first",
    0: "the server reported an error without a code",
}

STATE_REFUSED_HINT = (
    "The server refused the saved request state. Most often the answer reached another worker or "
    "instance that does not share its keys (RequestStateSecurity(keys=[...]) on every one), or the "
    "server restarted with new keys; else the state expired, the arguments changed, or it was altered."
)


class MCPNotebookError(Exception):
    """Base for errors we explain ourselves; rendered without a traceback in IPython."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


class FlowError(MCPNotebookError):
    """A flow (tools/call, prompts/get, resources/read) ended without a result.

    ``code`` is the MCP/JSON-RPC error code when the server sent one.
    ``kind`` names what happened when a caller may act on it (one of ``Kind``: ``"still_saved"``,
    ``"rounds_exceeded"``, ``"connection_dead"``, ``"reconnect_needed"`` ...), with the structured fields
    ``flow_id``, ``server``, ``missing_field``, ``reason`` and ``details`` (a dict of anything else). The
    message says what happened in API terms; the ``%mcp`` magics add their own commands (``magics/hints.py``).
    """

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        data: Any = None,
        kind: Kind | None = None,
        flow_id: str | None = None,
        server: str | None = None,
        missing_field: str | None = None,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.data = data
        self.kind = kind
        self.flow_id = flow_id
        self.server = server
        self.missing_field = missing_field
        self.reason = reason
        self.details: dict[str, Any] = dict(details or {})

    def with_hint(self, hint: str | None, sep: str = "\n") -> FlowError:
        """A copy whose message ends with ``hint`` (fields kept); itself when no hint."""
        if not hint:
            return self
        new = copy.copy(self)
        new.args = (f"{self}{sep}{hint}",)
        new.__context__ = new.__cause__ = None
        return new


class SessionError(FlowError):
    """A request the session cannot act on: no such saved flow, consent needed, a file it cannot read.

    ``kind`` says which (``"no_saved_flow"``, ``"nothing_waiting"``, ``"several_waiting"``,
    ``"flow_id_needed"``, ``"flow_running"``, ``"consent_needed"``, ``"unreadable_file"``,
    ``"bad_input"``; ``"bad_config"`` for a ``ConfigError``). The magics show these as ``UsageError``
    with a ``%mcp`` hint.
    """


class Note(str):
    """A note for the person (``session.tell``): plain text, plus ``kind`` and structured ``fields``."""

    kind: Kind | None
    fields: dict[str, Any]

    def __new__(cls, text: str, kind: Kind | None = None, **fields: Any) -> Note:
        note = super().__new__(cls, text)
        note.kind, note.fields = kind, fields
        return note


def leaf_exceptions(exc: BaseException) -> list[BaseException]:
    """Flatten nested ``BaseExceptionGroup``s into their leaves (the SDK's anyio code nests them)."""
    if isinstance(exc, BaseExceptionGroup):
        leaves: list[BaseException] = []
        for inner in exc.exceptions:
            leaves.extend(leaf_exceptions(inner))
        return leaves
    return [exc]


def explain_code(code: int | None) -> str:
    """Words for an MCP error code ("" when unknown)."""
    if code is None:
        return ""
    return CODE_MEANINGS.get(code, "")


def describe_exception(exc: BaseException) -> tuple[str, int | None, Any]:
    """A one-paragraph explanation of ``exc``, plus its MCP code and data when it has one."""
    from mcp import MCPError  # lazy: keep `%load_ext` cheap

    leaves = leaf_exceptions(exc)
    real = [e for e in leaves if not _is_noise(e)] or leaves
    exc = real[0]
    if isinstance(exc, MCPError):
        code, message, data = exc.code, exc.message, exc.data
        if code == -32602 and "requestState" in (message or ""):
            return f"{message} (MCP error {code}). {STATE_REFUSED_HINT}", code, data
        # our own answers (a failed model, a user's denial) already say who failed; no server gloss
        meaning = "" if (message or "").startswith(("The client", "The user")) else explain_code(code)
        if meaning and _says_no_more(message or "", meaning):  # "Connection closed": the meaning alone, not twice
            message, meaning = meaning[0].upper() + meaning[1:], ""
        text = f"{message} (MCP error {code}{': ' + meaning if meaning else ''})"
        if code == -32021 and isinstance(data, dict) and data.get("requiredCapabilities"):
            text += f"; required: {data['requiredCapabilities']}"
            if "roots" in str(data["requiredCapabilities"]):
                text += " (this client declares roots only on connections opened after a root was added: add one, then connect again)"
        return text, code, data
    name = type(exc).__name__
    if name == "InputRequiredRoundsExceededError":
        return str(exc), None, None
    if name in {"ConnectError", "ConnectTimeout"}:
        return f"could not reach the server ({exc}). Is it running, and is the URL right?", None, None
    if name in {"ReadTimeout", "TimeoutError", "TimeoutException"}:
        return f"the server did not answer in time ({name})", -32001, None
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}", None, None
    if name == "HTTPStatusError":
        response = getattr(exc, "response", None)  # httpx's, known here by name only (httpx is not imported)
        status = getattr(response, "status_code", "?")
        return f"the server answered HTTP {status}: {exc}", None, None
    if name == "ValidationError":
        return f"the server sent a result that does not match the protocol: {_first_line(str(exc))}", None, None
    text = str(exc) or name
    return (text if name in {"RuntimeError", "FlowError"} else f"{name}: {text}"), None, None


def _says_no_more(message: str, meaning: str) -> bool:
    """Whether every word of ``message`` is in ``meaning`` (the SDK's "Connection closed" beside ours)."""
    words = message.lower().replace(".", " ").split()
    return bool(words) and set(words) <= set(meaning.lower().split())


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _is_noise(exc: BaseException) -> bool:
    """Cancellation and stream-closed echoes that accompany the real cause in a group."""
    return isinstance(exc, (asyncio.CancelledError, GeneratorExit)) or type(exc).__name__ in {
        "ClosedResourceError",
        "BrokenResourceError",
        "EndOfStream",
    }
