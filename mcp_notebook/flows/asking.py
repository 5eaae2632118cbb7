"""A flow's questions, both generations: each round's input requests answered together, and a 2025
server's back-channel requests answered inside the call.

The server asks; the flow shows itself waiting, hands the questions to its ``Answerer`` (the form
or the presets, the model router, the roots), records each exchange in its trace and sums up what
was answered (never the values). A 2025 question that may have come from any of several running
calls fails whichever asked; a resumed flow's secret arguments, never saved, are asked again like a
question (``ask_withheld``); a question re-worded every round is said once (``notice_reworded``).
Apart from ``flow.py``, whose ``answer_*`` methods (what ``wire.back_channel`` and the sampling
router call) and driving loop come here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from ..core.text import one_line
from ..core.urls import visible
from ..errors import FlowError
from ..wire.server_logs import not_serving
from .kinds import FlowState, Round
from .trace import dump, question_line, response_summary, sampling_request, without_task_id

if TYPE_CHECKING:
    from .flow import Flow

__all__ = [
    "answer_elicitations",
    "answer_roots",
    "answer_round",
    "answer_sampling",
    "ask_withheld",
    "notice_reworded",
    "several_calls",
    "waiting_for",
]


async def answer_round(flow: Flow, requests: dict[str, Any]) -> dict[str, Any]:
    """Answer every input request of one round together (one form for all elicitations)."""
    from mcp.types import CreateMessageRequest, ElicitRequest, ErrorData, ListRootsRequest

    elicitations = {k: r.params for k, r in requests.items() if isinstance(r, ElicitRequest)}
    jobs: dict[str, Any] = {}
    if elicitations:
        jobs["__forms__"] = answer_elicitations(flow, elicitations)
    for key, request in requests.items():
        if isinstance(request, CreateMessageRequest):
            jobs[key] = answer_sampling(flow, key, request.params)
        elif isinstance(request, ListRootsRequest):
            jobs[key] = answer_roots(flow)
        elif not isinstance(request, ElicitRequest):
            raise FlowError(f"{flow.label}: the server sent an input request this client does not know: {key}")
    results = dict(zip(jobs, await asyncio.gather(*jobs.values()), strict=True))
    responses: dict[str, Any] = results.pop("__forms__", {}) | results
    for key, answer in responses.items():
        if isinstance(answer, ErrorData):
            raise FlowError(f"{flow.label}: could not answer {key!r}: {answer.message}", code=answer.code)
    flow.pending = {}
    return responses


async def answer_elicitations(
    flow: Flow, requests: dict[str, Any], single: bool = False, candidates: list[Flow] | None = None
) -> Any:
    """Elicitation requests of one round -> ``ElicitResult`` per key (one form for all).

    ``candidates``: a 2025 back-channel question that could come from any of these running
    calls (the transport does not say which): it is asked without any call's presets, and
    the form names the calls.
    """
    if single:  # back-channel request of a 2025 server: show it, record it in the trace
        flow.pending = {
            key: {"method": "elicitation/create", "params": without_task_id(dump(p))} for key, p in requests.items()
        }
        # the 2025 back-channel request arrives while request ``round + 1`` is in flight
        flow.rounds.append(Round(number=flow.round + 1, direction="server->client", received=dict(flow.pending)))
    flow.state = FlowState.WAITING
    flow.view.changed(flow)
    try:
        context = several_calls(candidates) if candidates else ""
        with not_serving():  # the answer is the user's side, not the server's
            answers = await flow.answerer.elicit(flow, requests, context=context)
    except FlowError as exc:
        unanswered = not flow.answerer.ui.interactive  # headless: no preset answer fitted
        if single and candidates:  # whichever call asked fails with it when the server's reply comes
            for other in candidates:
                other._maybe_backchannel_error = other._maybe_backchannel_error or exc
                other._unanswered = other._unanswered or unanswered
                # its reply may be a plain result built on the cancel it was told (Connection._on_elicit)
                other.notes.append(
                    f"a question that may have been this call's went unanswered and the server was told 'cancel': {exc}"
                )
        else:
            flow._unanswered = unanswered
            if (
                single
            ):  # the flow fails with the first one once the server's call returns (told 'cancel', it may ask more)
                flow._backchannel_error = flow._backchannel_error or exc
        raise
    finally:
        flow.state = FlowState.RUNNING
        flow.pending = {}
        flow.view.changed(flow)
    for key, answer in answers.items():
        fields = sorted(answer.content or {})  # an ElicitResult (``FlowUI.ask``)
        detail = f" ({', '.join(fields)})" if fields else ""
        flow.answer_summary.append(f"{question_line(key, requests.get(key))}: {answer.action}{detail}")
    if single:
        flow.rounds[-1].sent = {key: response_summary(a) for key, a in answers.items()}
        flow.rounds[-1].answered = next(iter(answers.values()), None)
        flow.rounds[-1].ended = time.perf_counter()
        return next(iter(answers.values()))
    return answers


async def waiting_for(flow: Flow, awaitable: Awaitable[Any]) -> Any:
    """Show this flow as waiting while a person answers ``awaitable`` (a review panel); give up if the flow ends meanwhile.

    ``sampling.reviewer.Asking``: the sampling answerer waits for a review through this, never by setting the state itself.
    """
    from ..sampling.providers.base import wait_for_user

    flow.state = FlowState.WAITING
    flow.view.changed(flow)
    try:
        return await wait_for_user(flow, awaitable)
    finally:
        if flow.state is FlowState.WAITING:
            flow.state = FlowState.RUNNING
            flow.view.changed(flow)


async def answer_sampling(flow: Flow, key: str, params: Any, single: bool = False) -> Any:
    """A model's reply to one sampling request (``ErrorData`` when refused or failed).

    ``single``: a 2025 back-channel request, recorded in the trace as a server→client round with
    the reply's summary, as a back-channel elicitation is (on 2026-07-28 the request is in the
    round's ``input_requests`` and the reply in the next request's ``inputResponses``).
    """
    from mcp.types import ErrorData

    entry = None
    if single:  # it arrives while request ``round + 1`` is in flight
        entry = Round(number=flow.round + 1, direction="server->client", received={key: sampling_request(params)})
        flow.rounds.append(entry)
    with not_serving():  # the user's model (a callable, a provider's SDK) logs as the user's code
        result = await flow.answerer.sample(flow, key, params)
    failed = isinstance(result, ErrorData)  # a refusal or a failure; else the model's reply
    flow.answer_summary.append(f"{key}: {'sampling failed' if failed else 'sampled'}")
    if entry is not None:
        entry.sent, entry.answered, entry.ended = {key: response_summary(result)}, result, time.perf_counter()
    return result


async def answer_roots(flow: Flow) -> Any:
    with not_serving():
        return await flow.answerer.roots(flow)


async def ask_withheld(flow: Flow, names: list[str]) -> None:
    """A resumed flow's secret arguments were never saved: ask for them again, like a question."""
    from mcp.types import ElicitRequestFormParams

    schema = flow._tool_schema() or {}
    found = schema.get("properties")
    properties: dict[str, Any] = found if isinstance(found, dict) else {}
    fields: dict[str, Any] = {}
    for name in names:
        found = properties.get(name)
        prop: dict[str, Any] = found if isinstance(found, dict) else {}
        kind = prop.get("type") if prop.get("type") in ("string", "number", "integer", "boolean") else "string"
        fields[name] = {
            "type": kind,
            "title": str(prop.get("title") or name),
            "description": "never saved in the notebook; needed again to continue",
        }
    params = ElicitRequestFormParams(
        message=f"To continue {flow.label}, give again the arguments that were not saved: {', '.join(names)}",
        requested_schema={"type": "object", "properties": fields, "required": names},
    )
    answer = (await answer_elicitations(flow, {"arguments": params}))["arguments"]
    if answer.action != "accept" or not answer.content:
        raise FlowError(
            f"{flow.label}: the arguments {', '.join(names)} were not given again; the saved flow was not continued",
            code=-32000,
        )
    flow.arguments.update({k: v for k, v in answer.content.items() if k in names})


def notice_reworded(flow: Flow, requests: dict[str, Any], asked: dict[str, str]) -> None:
    """A question asked again under its answered key with new wording: said once, naming the rule.

    The SDK pins an answer to the exact question it answered; a server that puts per-call data (a
    time, a counter) in the message asks again every round, and the flow loops until ``max_rounds``.
    """
    from mcp.types import ElicitRequest

    for key, request in requests.items():
        if not isinstance(request, ElicitRequest):
            continue
        message = str(getattr(request.params, "message", ""))
        before = asked.get(key)
        asked[key] = message
        if before is None or before == message or key in flow._reworded:
            continue
        flow._reworded.add(key)
        flow.notes.append(
            f"the server asked {visible(key)!r} again with new wording ({visible(one_line(before, 60))!r}, now "
            f"{visible(one_line(message, 60))!r}): "
            "an answer is pinned to the exact question, so a message that changes each round is asked again and again. "
            "Build the message from the tool's arguments, not from per-call data such as the time."
        )


def several_calls(flows: list[Flow]) -> str:
    """What a form says when a question could come from any of ``flows`` (the server does not say which)."""
    calls = ", ".join(f"{f.label} ({f.id})" for f in flows)
    return (
        f"{len(flows)} calls are running on this server ({calls}) and it does not say which one asks; "
        "no call's preset answers are used. Run them one after another, or connect over streamable HTTP, to keep them apart."
    )
