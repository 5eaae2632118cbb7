"""The ``%mcp`` face of the engine's errors and notes.

The engine (``session``, ``wire``, ``flows``) says what happened in API terms and
gives structured fields (``kind``, ``flow_id``, ``server``, ``missing_field``, ``reason``,
``details``). Here, and only here, each kind gets the ``%mcp`` command that acts on it.

A command printed here is copied into cells, and its words come from servers and saved records
(a received notebook's flow id and server name, an elicitation's field name, a config's command):
every line here is built by ``core.text.mcp_line``, which encodes each word for the line's grammar,
so the copied line sends that text as it is and never evaluates a ``{...}`` in it
(tests/security/test_suggested_lines.py refuses a line put together any other way).
"""

from __future__ import annotations

import copy
from typing import Any, Never

from IPython.core.error import UsageError

from ..core.text import Flag, mcp_line, plain_text
from ..errors import FlowError, Kind, Note, SessionError
from ..forms.model import answer_words

__all__ = [
    "again_line",
    "connect_line",
    "connect_notes",
    "for_magics",
    "hint",
    "legacy_internal_error",
    "state_refused",
    "tool_failure",
    "with_hint",
]


def connect_line(conn: Any, protocol: str | None = None) -> str:
    """The ``%mcp connect`` line that opens ``conn`` again (secret values left as ``…``), optionally on another protocol."""
    t = conn.target
    words: list[str] = ["%mcp", "connect", conn.name]
    protocol = protocol or conn.protocol
    if protocol != "auto":
        words += [Flag("--protocol"), protocol]
    if t.kind == "stdio":
        words += [Flag("--cwd"), t.cwd] if t.cwd else []
        for var in sorted(t.env):
            words += [Flag("--env"), f"{var}=…"]
        return mcp_line(*words, Flag("--"), *t.command)
    if t.kind == "http":
        for header in sorted(t.headers):
            words += [Flag("--header"), f"{header}:…"]
        words += [Flag("--bearer-env"), t.bearer_env] if t.bearer_env else []
        oauth = t.oauth
        if oauth is not None:
            words += [Flag("--client-credentials")] if oauth.client_credentials else []
            for name in oauth.named():  # every sign-in flag but --client-credentials names something: VAR, URL, ID
                value = getattr(oauth, name)
                words += [Flag(f"--{name.replace('_', '-')}"), value] if value else []
    return mcp_line(*words, t.describe())  # an in-process object's is the name the user gave it


def connect_notes(conn: Any) -> list[str]:
    """What the connect cell says under "Connected ...": how the handshake went, and output kept out of the cell."""
    notes: list[str] = []
    if conn.fell_back:
        notes.append(
            "It exited on the 2026-07-28 probe (server/discover), as servers on older SDKs do, so the 2025 "
            f"handshake was used; {connect_line(conn, 'legacy')} skips the probe."
        )
    lines = conn.stdout_noise
    if lines:
        notes.append(
            f"It wrote {lines} line{'s' if lines != 1 else ''} on stdout that {'are' if lines != 1 else 'is'} not MCP "
            f"(a stdio server logs to stderr): kept in {mcp_line('%mcp', 'log', conn.name)}."
        )
    return notes


def hint(kind: Kind | None, fields: dict[str, Any]) -> str | None:
    """The ``%mcp`` command for one kind of error or note (``None``: nothing to add).

    Every ``Kind`` has its case below, a hint or an explicit "no hint": the ``match`` is exhaustive,
    so a kind added to ``errors.Kind`` fails mypy (at ``_undecided``) until it is decided here.
    """
    flow_id, name, reason = (
        _word_of(fields.get("flow_id"), "ID"),
        _word_of(fields.get("server"), "NAME"),
        fields.get("reason"),
    )
    details = fields.get("details") or {}
    resume = mcp_line("%mcp", "resume", flow_id)
    match kind:
        case "still_saved":
            if reason == "unanswered":
                field = _word_of(fields.get("missing_field"), "FIELD")
                return f"Continue it with {mcp_line('%mcp', 'resume', flow_id, *answer_words(field))}."
            if reason == "task":
                return f"Follow it again with {resume} (from this or a new kernel); %mcp tasks lists tasks."
            return f"Continue it with {resume} once the server answers again."
        case "connection_dead" | "connection_closed":
            if details.get("connection") is None:
                return None
            return (
                f"Reconnect with {connect_line(details['connection'])}{' again' if kind == 'connection_dead' else ''}."
            )
        case "reconnect_needed":
            target = _word_of(details.get("target"), "TARGET")
            how = {
                "inproc": f"Define the server again (run its cell, or {mcp_line('%mcp', 'connect', name, '...')})",
                "headers": f"Connect again with {mcp_line('%mcp', 'connect', name, target, Flag('--header'), 'NAME:VALUE', '...')}",
                "env": f"Connect again with {mcp_line('%mcp', 'connect', name, Flag('--env'), 'NAME=VALUE', '...', Flag('--'), 'COMMAND')}",
            }.get(reason or "", f"Connect again with {mcp_line('%mcp', 'connect', name, '...')}")
            return f"{how}, then {resume}."
        case "needs_legacy":
            if details.get("connection") is None:
                return None
            return f"Reconnect with {connect_line(details['connection'], 'legacy')}, then run the call again."
        case "sign_in_required" | "sign_in_denied" | "sign_in_timeout" | "sign_in_failed":
            if details.get("connection") is None:
                return None
            again = "in JupyterLab or Notebook 7 (interactive)" if kind == "sign_in_required" else "again"
            return (
                f"Sign in {again} with {connect_line(details['connection'])}; %mcp auth list shows the sign-ins kept."
            )
        case "sign_in_pending":
            return "Finish the sign-in in the panel of the cell that ran %mcp connect, then run this again."
        case "auth_required":
            url = _word_of(details.get("url"), "URL")
            return (f"Give credentials with {mcp_line('%mcp', 'connect', name, url, Flag('--bearer-env'), 'VAR')} "
                    "(a token in environment variable VAR) or --header Authorization:VALUE.")  # fmt: skip
        case "connect_timeout":
            return (f"If the server is just slow, allow more time: {mcp_line('%mcp', 'connect', name, '...', Flag('--timeout'), 'SECONDS')}, "
                    "or %config MCPMagics.connect_timeout = SECONDS.")  # fmt: skip
        case "consent_needed" if reason == "conflict":
            return (f"Choose the record you mean by its content digest: {mcp_line('%mcp', 'resume', flow_id, Flag('--trust'), 'DIGEST')}\n"
                    f"Or drop them all: {mcp_line('%mcp', 'forget', flow_id)}.")  # fmt: skip
        case "consent_needed":
            trust = mcp_line("%mcp", "resume", flow_id, Flag("--trust"))
            return (f"If you trust it as shown, run: {trust}\n"
                    f"Or connect the server yourself first ({mcp_line('%mcp', 'connect', name, 'TARGET')}), then {trust}.")  # fmt: skip
        case "rounds_exceeded":
            return (
                "Raise the limit with %config MCPMagics.max_rounds = N if this is expected: it bounds the rounds of one call, "
                "questions and 'not ready' answers alike (at 10, a server that keeps answering 'not ready' is given about 2 s)."
            )
        case "not_connected":
            return "Use %mcp connect NAME TARGET first."
        case "no_saved_flow":
            return "See %mcp flows."
        case "nothing_waiting":
            return "(%mcp flows lists them; --from PATH reads another notebook.)"
        case "several_waiting":
            return "Say which: %mcp resume ID"
        case "flow_id_needed":
            return "Give a flow ID (see %mcp flows) or --all."
        case "saved_flow_waiting":
            return f"To continue the saved one instead: {resume}"
        case "task_gone":
            return "Run the call again to start a new task; %mcp forget ID drops a saved one."
        case "task_handle_missing":
            return f"Run the call again, or drop the saved task with {mcp_line('%mcp', 'forget', flow_id)}."
        case "replay_changed":
            path = _word_of(details.get("path"), "FILE")
            if fields.get("missing_field"):
                answer = answer_words(_word_of(fields["missing_field"], "FIELD"))
                return f"Give what the recording withheld: {mcp_line('%mcp', 'replay', path, *answer)}"
            return (f"If the change is what you meant, record it again: run the call, then "
                    f"{mcp_line('%mcp', 'trace', Flag('--save'), path, Flag('--keep-answers'))}; %mcp trace shows the replay's messages.")  # fmt: skip
        case "replay_untrusted":
            return f"If you trust it as shown, run: {mcp_line('%mcp', 'replay', _word_of(details.get('path'), 'FILE'), Flag('--trust'))}"
        case "policy_refused":
            return "%mcp policy shows the administrator's policy in force and the file each rule comes from."
        case "skill_refused":
            return f"Nothing of it was used; {mcp_line('%mcp', 'skills', name)} lists what the server offers now."
        # no hint: the message already says what to do, or there is no %mcp command that helps
        case (
            "bad_config" | "bad_input" | "cancelled" | "failed" | "flow_running" | "map_failed" | "no_backchannel" | "no_subscriptions"
            | "not_live" | "reconnected" | "resume_failed" | "several_connected" | "sign_in_refused" | "sign_in_unreachable"
            | "task_cancelled" | "task_failed" | "task_invalid" | "tool_error" | "unanswered" | "unknown_connection" | "unreadable_file"
        ):  # fmt: skip
            return None
        case None:
            return None
        case _:
            _undecided(kind)
            return None


def _undecided(kind: Never) -> None:
    """The static half of ``typing.assert_never``, without its run-time ``AssertionError``.

    Typed ``Never``: mypy rejects the call while any ``Kind`` is left without a case in ``hint``. At
    run time a kind from code mypy does not check (a caller's own ``FlowError``) gets no hint, as
    it always did, rather than an error raised while another error is being shown.
    """


def _word_of(value: Any, placeholder: str) -> str:
    """A field (server or record text) as a word for ``mcp_line`` (which encodes it); the placeholder when there is none."""
    return str(value) if value else placeholder


def with_hint(note: str) -> str:
    """A note of the session (``session.tell``) with its ``%mcp`` hint."""
    extra = hint(note.kind, note.fields) if isinstance(note, Note) else None
    return f"{note} {extra}" if extra else str(note)


def for_magics(error: FlowError) -> Exception:
    """What a magic raises for an engine error: its hint added; a ``SessionError`` becomes a ``UsageError``."""
    fields = {
        "flow_id": error.flow_id,
        "server": error.server,
        "missing_field": error.missing_field,
        "reason": error.reason,
        "details": error.details,
    }
    extra = hint(error.kind, fields)
    sep = "\n" if "\n" in str(error) else " "
    hinted = error.with_hint(extra, sep) if extra else error
    text = plain_text(str(hinted))  # a server's words in it: its escape sequences spelled out for a terminal
    if isinstance(error, SessionError):
        return UsageError(text)
    if text != str(hinted):
        hinted = copy.copy(hinted)
        hinted.args = (text,)
    return hinted


def again_line(flow: Any) -> str:
    """The ``%mcp`` line that starts ``flow``'s call afresh: same server, name and arguments, every word encoded
    for the line's grammar; a secret argument is left as ``NAME=…`` for the user to give (never printed)."""
    import json

    secrets = flow.secret_arguments
    target = f"{flow.conn.name}.{flow.name}"
    if flow.method == "resources/read":
        return mcp_line("%mcp", "read", flow.conn.name, flow.name)
    verb = "call" if flow.method == "tools/call" else "prompt"
    shown = {k: v for k, v in flow.arguments.items() if k not in secrets}
    words = ["%mcp", verb, target]
    if shown:
        words += [Flag("--json"), json.dumps(shown, ensure_ascii=False, separators=(",", ":"))]
    words += [f"{k}=…" for k in sorted(secrets & flow.arguments.keys())]
    return mcp_line(*words)


def flow_failure(flow: Any, error: FlowError) -> FlowError:
    """What a cell fails with when ``flow`` ended in ``error``, headless or in a form: a refused request state gets
    the line that starts the call again, a 2025 session's -32603 its likely cause (else ``error`` as it is)."""
    return state_refused(flow, error) or legacy_internal_error(flow, error) or error


def state_refused(flow: Any, error: FlowError) -> FlowError | None:
    """A flow whose saved request state the server refused (-32602), with the exact line that starts it again."""
    from ..errors import STATE_REFUSED_HINT

    if error.code != -32602 or STATE_REFUSED_HINT not in str(error):
        return None
    return error.with_hint(f"To start it again: {again_line(flow)}", "\n")


def legacy_internal_error(flow: Any, error: FlowError) -> FlowError | None:
    """A -32603 from a call on a 2025-11-25 session: most often a server that answered with a 2026-07-28
    input-required result, which that protocol cannot carry (its SDK turns it into an internal error).

    Where the user forced ``--protocol legacy`` the line that connects on the newer protocol is given;
    where the server itself offered only 2025-11-25, the likely cause alone is said.
    """
    if error.code != -32603 or not flow.conn.is_legacy:
        return None
    cause = (
        "On a 2025-11-25 session a -32603 most often means the server answered with a 2026-07-28 "
        "input-required result (a question in the result), which that protocol cannot carry."
    )
    if flow.conn.protocol == "legacy":
        return error.with_hint(f"{cause} Connect on the newer protocol: {connect_line(flow.conn, 'auto')}", "\n")
    return error.with_hint(
        f"{cause} The server offered only 2025-11-25: it should ask over the back-channel there.", "\n"
    )


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


def saved_trace_line(flow: Any, path: str, recording: dict[str, Any]) -> str:
    """What ``%mcp trace --save`` says: where it went, and what a replay of it will need given."""
    told = f"Wrote the trace of {flow.label} to {path}; {mcp_line('%mcp', 'replay', path)} calls it again."
    needs = list(recording["withheld"])
    for asked in recording["asked"]:
        answer = asked.get("answer") or {}
        if answer.get("action") == "accept":
            kept = answer.get("content") or {}
            needs += [f for f in answer.get("fields") or [] if f not in kept]
    kept = any(
        (a.get("answer") or {}).get("content") or (a.get("answer") or {}).get("sampled") for a in recording["asked"]
    )
    if recording["answers_kept"] and kept:
        told += " Your answers are in it (a secret-looking field never is); treat the file like what you typed."
    if needs:
        unique = list(dict.fromkeys(needs))
        told += (
            f" A replay needs {mcp_line(*(word for n in unique for word in answer_words(n)))}"
            + ("" if recording["answers_kept"] else " (or save with --keep-answers)")
            + "."
        )
    return told
