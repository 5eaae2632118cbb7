"""What a flow's trace and record say of each message: questions in one line, answers by shape, never a secret.

A trace (``--trace``, ``%mcp trace``, ``--save``) shows every round's messages for teaching; a saved
record keeps the questions of a waiting round. Both go through these: requests as JSON without a
task's id (``without_task_id``), answers summarised by action and field names, never values
(``response_summary``), task ids shortened to a fingerprint-like prefix (``shorten_token``).

A flow's trace itself is read here too (``events``, behind ``Flow.trace``): its rounds as the
messages that crossed the wire, in the order they crossed, each request built only when read
(``SentLater``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.redact import masked

__all__ = [
    "SentLater",
    "dump",
    "events",
    "parse_requests",
    "question_line",
    "response_summary",
    "sampling_request",
    "shorten_token",
    "task_received",
    "trace_received",
    "without_task_id",
]

if TYPE_CHECKING:
    from .flow import Flow


def shorten_token(token: str, keep: int = 12) -> str:
    """An opaque state token, shown but not spelled out (it is long and means nothing to read)."""
    return token if len(token) <= 2 * keep else f"{token[:keep]}…{token[-6:]} ({len(token)} chars)"


def dump(obj: Any) -> Any:
    return obj.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(obj, "model_dump") else obj


def question_line(key: str, params: Any) -> str:
    """How an answer summary names a question: its message (shortened), else its request key."""
    message = params.get("message") if isinstance(params, dict) else getattr(params, "message", None)
    if not isinstance(message, str) or not message.strip():
        return key
    message = " ".join(message.split())
    return f"“{message}”" if len(message) <= 60 else f"“{message[:59]}…”"


def response_summary(answer: Any) -> Any:
    """What the trace shows of an answer: the action and field names, never the values."""
    from mcp.types import CreateMessageResult, CreateMessageResultWithTools, ElicitResult, ErrorData, ListRootsResult

    if isinstance(answer, ElicitResult):
        return {"action": answer.action, "fields": sorted((answer.content or {}).keys())}
    if isinstance(answer, (CreateMessageResult, CreateMessageResultWithTools)):
        return {"model": answer.model, "stopReason": answer.stop_reason}
    if isinstance(answer, ListRootsResult):
        return {"roots": [str(r.uri) for r in answer.roots]}
    if isinstance(answer, ErrorData):  # a sampling refused or failed (2025)
        return {"error": answer.code}  # its code only: a provider's message is not ours to copy into a trace
    return {"type": type(answer).__name__}


def sampling_request(params: Any) -> dict[str, Any]:
    """A ``sampling/createMessage`` request as the trace shows it: its params, each image's or audio's
    base64 ``data`` shortened as a token is (``shorten_token``), so a trace holds no megabytes of media."""
    return {"method": "sampling/createMessage", "params": without_task_id(_media_shortened(dump(params)))}


def _media_shortened(value: Any) -> Any:
    if isinstance(value, dict):
        media = value.get("type") in ("image", "audio") and isinstance(value.get("data"), str)
        return {k: shorten_token(v) if media and k == "data" else _media_shortened(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_media_shortened(v) for v in value]
    return value


def without_task_id(params: Any) -> Any:
    """Request params whose related-task ``_meta`` names the task by its fingerprint, never its id (a bearer-like handle)."""
    from ..wire.tasks import RELATED_TASK, fingerprint

    meta = params.get("_meta") if isinstance(params, dict) else None
    related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
    if not isinstance(related, dict) or not isinstance(related.get("taskId"), str):
        return params
    return {**params, "_meta": {**meta, RELATED_TASK: {**related, "taskId": fingerprint(related["taskId"])}}}  # type: ignore[dict-item]


def task_received(status: Any) -> dict[str, Any]:
    """What the trace shows of a created task: its status, never its id (a bearer-like handle)."""
    from ..wire.tasks import fingerprint

    return {"resultType": "task", "task": fingerprint(status.task_id), "status": status.status}


def trace_received(result: Any) -> dict[str, Any]:
    from mcp.types import CreateMessageRequest, InputRequiredResult

    if isinstance(result, InputRequiredResult):
        out: dict[str, Any] = {"resultType": "input_required"}
        if result.input_requests:
            out["inputRequests"] = {
                k: sampling_request(v.params) if isinstance(v, CreateMessageRequest) else dump(v)
                for k, v in result.input_requests.items()
            }
        if result.request_state is not None:
            out["requestState"] = shorten_token(result.request_state)
        return out
    return {"resultType": "complete", "result": type(result).__name__}


def parse_requests(requests: dict[str, Any]) -> dict[str, Any]:
    """Saved questions (plain dicts) back into SDK request models."""
    from mcp.types import InputRequest
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(InputRequest)
    return {key: adapter.validate_python(value) for key, value in requests.items()}


@dataclass(frozen=True)
class SentLater:
    """A request's trace entry, built from these only when the trace is read (``sent_request``).

    Not a bound method of the flow: that would make a reference cycle of every flow, which only
    the garbage collector frees, and a map's thousand flows would then cost collections.
    """

    responses: dict[str, Any] | None
    state: str | None


def resolve(value: Any, flow: Flow | None = None) -> Any:
    if isinstance(value, SentLater) and flow is not None:
        return sent_request(flow, value.responses, value.state)
    return value() if callable(value) else value


def sent_request(flow: Flow, responses: dict[str, Any] | None, state: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {"name" if flow.method != "resources/read" else "uri": flow.name}
    if flow.method != "resources/read":
        params["arguments"] = masked(flow.arguments, flow.secret_arguments)
    if responses:
        params["inputResponses"] = {k: response_summary(v) for k, v in responses.items()}
    if state is not None:
        params["requestState"] = shorten_token(state)
    return {"method": flow.method, "params": params}


def events(flow: Flow, times: bool = False) -> list[dict[str, Any]]:
    """Every message of the flow in the order it crossed the wire, as ``{round, from, to, kind, message}``.

    A 2025 back-channel exchange happens *inside* a request, so events are ordered by time:
    the request, the server's question, the client's answer, then the request's result.
    ``times`` adds ``ms``: when each crossed, in milliseconds since the call began (what shows a
    "not ready" back-off: 50 ms, doubling to 250 ms).
    """
    timed: list[tuple[float, int, dict[str, Any]]] = []
    for r in flow.rounds:
        done = r.ended if r.ended is not None else r.started
        if r.direction == "client->server":
            timed.append(
                (
                    r.started,
                    len(timed),
                    {
                        "round": r.number,
                        "from": "client",
                        "to": "server",
                        "kind": "request",
                        "message": resolve(r.sent, flow),
                    },
                )
            )
            if r.received:
                timed.append(
                    (
                        done,
                        len(timed),
                        {
                            "round": r.number,
                            "from": "server",
                            "to": "client",
                            "kind": "result",
                            "message": resolve(r.received),
                        },
                    )
                )
        else:
            timed.append(
                (
                    r.started,
                    len(timed),
                    {"round": r.number, "from": "server", "to": "client", "kind": "request", "message": r.received},
                )
            )
            if r.sent:
                timed.append(
                    (
                        done,
                        len(timed),
                        {
                            "round": r.number,
                            "from": "client",
                            "to": "server",
                            "kind": "result",
                            "message": {"result": r.sent},
                        },
                    )
                )
    ordered = sorted(timed, key=lambda item: (item[0], item[1]))
    if times:
        return [{**event, "ms": max(0, round((at - flow.started) * 1000))} for at, _, event in ordered]
    return [event for _, _, event in ordered]
