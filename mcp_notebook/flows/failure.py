"""How a flow's failure is told, and whether its saved record stays to be resumed.

Whatever stops a call (an exception of the SDK or the transport, a sign-in that failed, a server
that wanted to ask over a back-channel this connection lacks, a task that ended) becomes one
``FlowError`` a person can act on (``explained``); a flow whose record stays resumable says so and
how (``still_saved``, ``keeps_record``). Apart from ``flow.py``, which only calls these once it knows
the call failed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..errors import FlowError, Kind, describe_exception

if TYPE_CHECKING:
    from .flow import Flow

__all__ = ["explained", "keeps_record", "no_backchannel", "result_text", "still_saved", "unreachable"]

_NO_BACKCHANNEL = re.compile(
    r"via server-initiated requests is unavailable on 2026-07-28|has no back-channel for server-initiated requests"
)


def result_text(result: Any) -> str:
    """The text blocks of a tool result, joined (what a server says in an error result)."""
    return "\n".join(getattr(block, "text", "") for block in getattr(result, "content", None) or [])


_TRANSPORT_ERRORS = {"ConnectError", "ConnectTimeout", "RemoteProtocolError", "ReadError", "WriteError", "NetworkError"}


def unreachable(exc: BaseException) -> bool:
    """Whether a failure means the server could not be reached (worth resuming later)."""
    from ..errors import leaf_exceptions

    return any(type(e).__name__ in _TRANSPORT_ERRORS or isinstance(e, ConnectionError) for e in leaf_exceptions(exc))


def no_backchannel(flow: Flow, text: str) -> FlowError | None:
    """The error for a server that could not ask its question because this connection has no back-channel.

    FastMCP 4 and the SDK's servers ask only over the 2025 back-channel (``ctx.elicit``,
    sampling, roots); on a 2026-07-28 connection they fail the call with a tool error
    instead. A 2025 connection over stateless HTTP has no back-channel either.
    """
    if not _NO_BACKCHANNEL.search(text):
        return None
    said = f"{flow.label} failed: the server wanted to ask a question over the 2025 back-channel, which this connection does not have (it said: {text.strip()[:300]!r})."
    if flow.conn.is_legacy:
        why = " The server runs without HTTP sessions (stateless), so on 2025-11-25 it cannot ask at all; ask its author for the 2026-07-28 way (questions returned in the result)."
        return FlowError(said + why, kind="no_backchannel", server=flow.conn.name)
    how = " Connect again with protocol 'legacy' (2025-11-25) and call again: then it asks, and the form or presets answer."
    return FlowError(said + how, kind="needs_legacy", server=flow.conn.name, details={"connection": flow.conn})


def explained(flow: Flow, exc: BaseException, failure_before: Any) -> FlowError:
    """The error a person reads for ``exc``, which stopped ``flow`` (``failure_before``: the connection's
    sign-in failure as the flow began; a newer one explains this failure)."""
    refused = None if isinstance(exc, FlowError) else no_backchannel(flow, str(exc))
    if isinstance(exc, FlowError):
        error = exc
    elif refused is not None:
        error = refused
    elif flow.conn.auth_failure is not None and flow.conn.auth_failure is not failure_before:
        error = flow.conn.sign_in_error(f"{flow.label} failed", FlowError)
        if error.kind != "auth_required":
            error.args = (f"{flow.label} failed. {error}",)
    else:
        text, code, data = describe_exception(exc)
        refused = flow.conn.auth_error(f"{flow.label} failed", FlowError) if code == -32603 else None  # an HTTP 401/403
        error = refused or FlowError(
            flow.conn._with_stderr(f"{flow.label} failed: {text}", flow._stderr_mark), code=code, data=data
        )
    return error


def still_saved(flow: Flow, error: FlowError) -> FlowError:
    """``error``, saying the flow is still saved and how it can be resumed, when its record stays."""
    if error.kind == "task_handle_missing":
        pass  # kept as it was, for whoever holds the handle; the error says why it cannot go on here
    elif keeps_record(flow, error) and flow.task_ref is not None:
        error = FlowError(
            f"{error}\nThe task goes on on the server; flow {flow.id} is still saved (the task's handle on this machine only) "
            "and can be resumed to follow it again.", code=error.code, data=error.data,
            kind="still_saved", flow_id=flow.id, server=flow.conn.name, reason="task", details={"error": error},
        )  # fmt: skip
    elif keeps_record(flow, error):
        reason = "unanswered" if flow._unanswered else "unreachable"
        how = "given the missing answers" if flow._unanswered else "once the server answers again"
        error = FlowError(
            f"{error}\nThe flow is still saved as {flow.id}; it can be resumed {how}.", code=error.code, data=error.data,
            kind="still_saved", flow_id=flow.id, server=flow.conn.name, reason=reason, details={"error": error},
            missing_field=error.missing_field,
        )  # fmt: skip
    return error


_TASK_ENDED: frozenset[Kind] = frozenset({"task_gone", "task_failed", "task_cancelled", "task_invalid"})


def keeps_record(flow: Flow, error: FlowError | None) -> bool:
    """A saved flow stays resumable when its server was unreachable or a headless run lacked an answer.

    A task stays resumable until it ended (or is gone): whatever stopped this kernel following it.
    """
    if error is None or not flow.in_store:
        return False
    if flow.task_ref is not None:
        if flow.following.user_cancelled:
            return False
        ended = flow.task is not None and flow.task.terminal and not flow._unreachable
        return not ended and error.kind not in _TASK_ENDED
    if flow.round < 1:
        return False
    return flow._unanswered or flow._unreachable or error.code in (-32000, -32001)
