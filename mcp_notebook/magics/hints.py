"""The ``%mcp`` face of the engine's errors and notes.

The engine (``session.py``, ``connections.py``, ``flows.py``) says what happened in API terms and
gives structured fields (``kind``, ``flow_id``, ``server``, ``missing_field``, ``reason``,
``details``). Here, and only here, each kind gets the ``%mcp`` command that acts on it.

A command printed here is copied into cells, and its words come from servers and saved records
(a received notebook's flow id and server name, an elicitation's field name, a config's command):
each such word goes in through ``line_expand.line_word``, so the copied line sends that text as it
is and never evaluates a ``{...}`` in it.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ..errors import FlowError, Note, SessionError
from .line_expand import line_word

__all__ = ["connect_line", "for_magics", "hint", "tool_failure", "with_hint"]


def connect_line(conn: Any, protocol: str | None = None) -> str:
    """The ``%mcp connect`` line that opens ``conn`` again (secret values left as ``…``), optionally on another protocol."""
    t = conn.target
    words = ["%mcp", "connect", line_word(conn.name)]
    protocol = protocol or conn.protocol
    if protocol != "auto":
        words += ["--protocol", protocol]
    if t.kind == "stdio":
        words += ["--cwd", line_word(t.cwd)] if t.cwd else []
        words += [f"--env {line_word(var)}=…" for var in sorted(t.env)]
        return " ".join([*words, "--", *map(line_word, t.command)])
    if t.kind == "http":
        words += [f"--header {line_word(header)}:…" for header in sorted(t.headers)]
        words += ["--bearer-env", line_word(t.bearer_env)] if t.bearer_env else []
        oauth = getattr(t, "oauth", None)
        if oauth is not None:
            words += ["--client-id", line_word(oauth.client_id)] if oauth.client_id else []
            words += ["--client-secret-env", line_word(oauth.client_secret_env)] if oauth.client_secret_env else []
            words += ["--scope", line_word(oauth.scope)] if oauth.scope else []
            words += ["--client-credentials"] if oauth.client_credentials else []
            words += ["--private-key-env", line_word(oauth.private_key_env)] if oauth.private_key_env else []
            for flag in ("id_token_env", "idp_token_endpoint", "idp_client_id", "issuer"):
                value = getattr(oauth, flag)
                words += [f"--{flag.replace('_', '-')}", line_word(value)] if value else []
        return " ".join([*words, line_word(t.describe())])
    return " ".join([*words, t.describe()])  # an in-process object: the name the user gave it


def hint(kind: str | None, fields: dict[str, Any]) -> str | None:
    """The ``%mcp`` command for one kind of error or note (``None``: nothing to add)."""
    flow_id, name, reason = _word_of(fields.get("flow_id"), "ID"), _word_of(fields.get("server"), "NAME"), fields.get("reason")
    details = fields.get("details") or {}
    resume = f"%mcp resume {flow_id}"
    if kind == "still_saved":
        if reason == "unanswered":
            return f"Continue it with {resume} --answer {_word_of(fields.get('missing_field'), 'FIELD')}=VALUE."
        if reason == "task":
            return f"Follow it again with {resume} (from this or a new kernel); %mcp tasks lists tasks."
        return f"Continue it with {resume} once the server answers again."
    if kind in ("connection_dead", "connection_closed") and details.get("connection") is not None:
        return f"Reconnect with {connect_line(details['connection'])}{' again' if kind == 'connection_dead' else ''}."
    if kind == "reconnect_needed":
        target = _word_of(details.get("target"), "TARGET")
        how = {
            "inproc": f"Define the server again (run its cell, or %mcp connect {name} ...)",
            "headers": f"Connect again with %mcp connect {name} {target} --header NAME:VALUE ...",
            "env": f"Connect again with %mcp connect {name} --env NAME=VALUE ... -- COMMAND",
        }.get(reason or "", f"Connect again with %mcp connect {name} ...")
        return f"{how}, then {resume}."
    if kind == "needs_legacy" and details.get("connection") is not None:
        return f"Reconnect with {connect_line(details['connection'], 'legacy')}, then run the call again."
    if kind in ("sign_in_required", "sign_in_denied", "sign_in_timeout", "sign_in_failed") and details.get("connection") is not None:
        again = "in JupyterLab or Notebook 7 (interactive)" if kind == "sign_in_required" else "again"
        return f"Sign in {again} with {connect_line(details['connection'])}; %mcp auth list shows the sign-ins kept."
    if kind == "sign_in_pending":
        return "Finish the sign-in in the panel of the cell that ran %mcp connect, then run this again."
    if kind == "auth_required":
        url = _word_of(details.get("url"), "URL")
        return (f"Give credentials with %mcp connect {name} {url} --bearer-env VAR (a token in environment variable VAR) "
                f"or --header Authorization:VALUE.")  # fmt: skip
    if kind == "connect_timeout":
        return (f"If the server is just slow, allow more time: %mcp connect {name} ... --timeout SECONDS, "
                f"or %config MCPMagics.connect_timeout = SECONDS.")  # fmt: skip
    if kind == "consent_needed":
        return (f"If you trust it as shown, run: {resume} --trust\n"
                f"Or connect the server yourself first (%mcp connect {name} TARGET), then {resume} --trust.")  # fmt: skip
    return {
        "rounds_exceeded": "Raise the limit with %config MCPMagics.max_rounds = N if this is expected.",
        "not_connected": "Use %mcp connect NAME TARGET first.",
        "no_saved_flow": "See %mcp flows.",
        "nothing_waiting": "(%mcp flows lists them; --from PATH reads another notebook.)",
        "several_waiting": "Say which: %mcp resume ID",
        "flow_id_needed": "Give a flow ID (see %mcp flows) or --all.",
        "saved_flow_waiting": f"To continue the saved one instead: {resume}",
        "task_gone": "Run the call again to start a new task; %mcp forget ID drops a saved one.",
        "task_handle_missing": f"Run the call again, or drop the saved task with %mcp forget {flow_id}.",
    }.get(kind or "")


def _word_of(value: Any, placeholder: str) -> str:
    """A field (server or record text) as one word of a printed ``%mcp`` line; the placeholder when there is none."""
    return line_word(str(value)) if value else placeholder


def with_hint(note: str) -> str:
    """A note of the session (``session.tell``) with its ``%mcp`` hint."""
    extra = hint(note.kind, note.fields) if isinstance(note, Note) else None
    return f"{note} {extra}" if extra else str(note)


def for_magics(error: FlowError) -> Exception:
    """What a magic raises for an engine error: its hint added; a ``SessionError`` becomes a ``UsageError``."""
    fields = {k: getattr(error, k, None) for k in ("flow_id", "server", "missing_field", "reason", "details")}
    extra = hint(getattr(error, "kind", None), fields)
    sep = "\n" if "\n" in str(error) else " "
    hinted = error.with_hint(extra, sep) if extra else error
    if isinstance(error, SessionError):
        return UsageError(str(hinted))
    return hinted


def tool_failure(flow: Any) -> FlowError | None:
    """The error a ``%mcp`` cell fails with when its tool answered ``isError`` (``None`` otherwise).

    The tool ran and reports that it failed: the cell fails like a cell whose code raised, so Run
    All stops there instead of going on with a result the next cells cannot use (as a failed row
    does in ``%mcp map``, and as Python clients of MCP raise by default). The flow itself is done
    (nothing to resume), its report shows the tool's error with an ``error`` badge, so this message
    repeats none of the server's text; ``-o VAR`` still binds the result, and the Python API
    (``mcp_notebook.call``) hands back the ``Flow``, whose ``result()`` is the SDK's result.
    """
    from ..notebook.display import tool_error

    if flow.error is not None or not tool_error(flow.value):
        return None
    return FlowError(
        f"{flow.label} reported a tool error (isError): see its result above. The cell fails so Run All stops here; -o VAR binds the result anyway.",
        kind="tool_error",
        server=flow.conn.name,
        flow_id=flow.id,
    )
