"""Replay: a finished flow kept as a recording, called again, and what changed.

A server author prototypes in cells; a regression test for a multi-round tool is "call it the same
way, answer the same questions the same way, and say if anything differs". ``recording(flow)`` is
what ``%mcp trace --save`` writes beside the trace: the call (method, server, name, the arguments
that are not secret), every question in the order it was asked (its round, request key, kind,
message and form fields), how each was answered, the number of requests sent and the outcome (the
result as JSON, or the failure's kind and code).

Secrets stay out of it as they stay out of traces: a secret argument (``core.redact``) is named
under ``withheld``, never valued, and answers are kept only when asked for (``keep_answers``: the
form values and a model's reply; a secret-looking form field is still withheld by name). Whatever
is withheld is given at replay time (``Answers`` fields) or the replay stops at that question and
names it.

``ReplayAnswerer`` answers a replayed flow from the recording, question by question: the same key
and message gets the recorded answer (plus the given values of its withheld fields); a question the
recording never saw is answered only by the given presets, else the replay ends there and
``differences`` lists it. No form is shown: a replay is a headless check.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..core.redact import secret_arguments
from ..core.text import one_line, plain_text
from ..core.urls import visible
from ..errors import FlowError
from ..forms.model import Answers
from .answering import Answerer
from .kinds import FlowState
from .trace import SentLater, dump
from .ui import HeadlessUI

if TYPE_CHECKING:
    from ..forms.model import Question
    from .flow import Flow

__all__ = [
    "RECORDING_VERSION",
    "Asked",
    "Replay",
    "ReplayAnswerer",
    "ReplayUI",
    "differences",
    "read_recording",
    "recording",
]

RECORDING_VERSION = 1
PURPOSE = "mcp-notebook replay"
RESULT_BYTES = 1_000_000  # a result larger than this is compared by its digest alone
DIFF_LINES = 40  # lines of a changed result's diff shown


@dataclass(frozen=True)
class Asked:
    """One question of a flow: its round, request key (``None`` for a 2025 back-channel request, whose id varies), kind and wording."""

    round: int
    key: str | None
    method: str
    message: str
    fields: tuple[str, ...] = ()
    answer: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "key": self.key, "method": self.method, "message": self.message, "fields": list(self.fields), "answer": self.answer}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any) -> Asked:
        if not isinstance(data, dict):
            raise ValueError("a question of the recording is not an object")
        key = data.get("key")
        fields = data.get("fields") or []
        answer = data.get("answer") or {}
        if not isinstance(data.get("round"), int) or not isinstance(data.get("method"), str):
            raise ValueError("a question of the recording has no round or method")
        if key is not None and not isinstance(key, str) or not _strings(fields) or not isinstance(answer, dict):
            raise ValueError("a question of the recording has a malformed key, fields or answer")
        if not isinstance(data.get("message", ""), str):
            raise ValueError("a question of the recording has a message that is not text")
        _check_answer(answer)
        return cls(data["round"], key, data["method"], data.get("message") or "", tuple(fields), answer)

    def same_question(self, other: Asked) -> bool:
        """Asked the same way: same kind and wording, and the same request key where both have one."""
        keys_agree = self.key is None or other.key is None or self.key == other.key
        return keys_agree and self.method == other.method and self.message == other.message

    @property
    def label(self) -> str:
        """How a difference names the question: its kind, key and wording, control and bidi characters spelled out."""
        name = f"'{visible(self.key)}' " if self.key is not None else ""
        kind = {"elicitation/create": "", "sampling/createMessage": "sampling ", "roots/list": "roots "}.get(
            self.method, f"{visible(self.method)} "
        )
        return f"{kind}{name}(“{_said(self.message)}”)" if self.message else f"{kind}{name}".strip()


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _check_answer(answer: dict[str, Any]) -> None:
    """A recorded answer of the shapes ``recording`` writes, else ``ValueError`` (a hostile file must not reach the flow)."""
    action = answer.get("action")
    if action is not None and action not in ("accept", "decline", "cancel"):
        raise ValueError(f"a recorded answer's action is {action!r}, not accept, decline or cancel")
    content = answer.get("content")
    if content is not None and not (isinstance(content, dict) and all(isinstance(k, str) for k in content)):
        raise ValueError("a recorded answer's content is not an object")
    for name in ("fields", "withheld"):
        if answer.get(name) is not None and not _strings(answer[name]):
            raise ValueError(f"a recorded answer's {name} is not a list of names")
    if answer.get("sampled") is not None and not isinstance(answer["sampled"], dict):
        raise ValueError("a recorded model reply is not an object")


# ---------------------------------------------------------------------- making a recording
def recording(flow: Flow, keep_answers: bool = False) -> dict[str, Any]:
    """What replaying ``flow`` needs, with no secret in it (see the module docstring)."""
    secrets = flow.secret_arguments
    withheld = sorted(secrets & flow.arguments.keys())
    return {
        "version": RECORDING_VERSION,
        "purpose": PURPOSE,  # signed with the rest: a saved record signed by the same key is not a recording
        "method": flow.method,
        "server": flow.conn.name,
        "name": flow.name,
        "arguments": {k: v for k, v in flow.arguments.items() if k not in secrets},
        "withheld": withheld,
        "answers_kept": keep_answers,
        "requests": flow.sent,
        "rounds_dropped": flow.rounds.dropped,  # a flow keeps its newest rounds (flows.flow.ROUNDS_KEPT)
        "asked": [a.to_dict() for a in asked_of(flow, keep_answers)],
        "outcome": outcome_of(flow),
    }


def asked_of(flow: Flow, keep_answers: bool = False) -> list[Asked]:
    """Every question of ``flow`` in the order asked, each with its answer (values only with ``keep_answers``)."""
    from mcp.types import InputRequiredResult

    out: list[Asked] = []
    rounds = list(flow.rounds)
    for index, r in enumerate(rounds):
        if r.direction == "server->client":  # a 2025 back-channel question, answered inside the request
            for request in (r.received or {}).values():
                answer = r.answered
                out.append(_asked(r.number, None, request.get("method", ""), request.get("params") or {}, answer, keep_answers))  # fmt: skip
            continue
        received = r.received
        result = received.args[0] if isinstance(received, partial) and received.args else None
        if not isinstance(result, InputRequiredResult) or not result.input_requests:
            continue
        later = next((n for n in rounds[index + 1 :] if n.direction == "client->server"), None)
        responses = later.sent.responses if later is not None and isinstance(later.sent, SentLater) else None
        for key, request in result.input_requests.items():
            answer = (responses or {}).get(key)
            out.append(_asked(r.number, key, request.method, dump(request.params) or {}, answer, keep_answers))
    return out


def _asked(number: int, key: str | None, method: str, params: dict[str, Any], answer: Any, keep: bool) -> Asked:
    message = params.get("message")
    if method == "sampling/createMessage":
        messages = params.get("messages") or []
        last = messages[-1].get("content") if messages and isinstance(messages[-1], dict) else None
        message = last.get("text") if isinstance(last, dict) else ""
    schema = params.get("requestedSchema") or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    fields = tuple(sorted(props)) if isinstance(props, dict) else ()
    return Asked(number, key, method, str(message or ""), fields, _answer_of(answer, schema, keep))


def _answer_of(answer: Any, schema: Any, keep: bool) -> dict[str, Any]:
    from mcp.types import CreateMessageResult, CreateMessageResultWithTools, ElicitResult

    if isinstance(answer, ElicitResult):  # an elicitation
        content = dict(answer.content or {})
        secret = secret_arguments(content, schema if isinstance(schema, dict) else None) & content.keys()
        out: dict[str, Any] = {"action": answer.action, "fields": sorted(content)}
        if keep:
            out["content"] = {k: v for k, v in content.items() if k not in secret}
            out["withheld"] = sorted(secret)
        return out
    if isinstance(answer, (CreateMessageResult, CreateMessageResultWithTools)):  # a model's reply
        return {"sampled": dump(answer)} if keep else {"sampled": None}
    return {}


def outcome_of(flow: Flow) -> dict[str, Any]:
    """The end of ``flow``: its state and result (JSON, bounded by its digest), or the failure's kind and code."""
    out: dict[str, Any] = {"state": flow.state.value}
    if flow.state is FlowState.DONE:
        result = dump(flow.value)
        if isinstance(result, dict):
            result = {k: v for k, v in result.items() if k not in ("_meta", "resultType")}  # per-call data
        text = json.dumps(result, sort_keys=True, default=str)
        out["sha256"] = hashlib.sha256(text.encode()).hexdigest()
        if len(text) <= RESULT_BYTES:
            out["result"] = json.loads(text)
    elif flow.error is not None:
        error = flow.error
        inner = (error.details or {}).get("error") if error.kind == "still_saved" else None
        if isinstance(inner, FlowError):  # kept for a resume: that is the call's own affair, not the server's
            error = inner
        out["error"] = {"kind": error.kind, "code": error.code, "message": one_line(str(error), 300)}
    return out


def read_recording(data: Any) -> dict[str, Any]:
    """The recording of a saved trace file's JSON (``ValueError`` saying what is wrong)."""
    if not isinstance(data, dict):
        raise ValueError("the file is not a JSON object")
    rec = data.get("replay")
    if not isinstance(rec, dict):
        raise ValueError("the file holds no recording (a trace saved before replay existed?); save the trace again")
    if rec.get("version") != RECORDING_VERSION:
        raise ValueError(
            f"the recording is version {rec.get('version')!r}; this client reads version {RECORDING_VERSION}"
        )
    for name, kind in (("method", str), ("server", str), ("name", str), ("arguments", dict), ("withheld", list), ("asked", list), ("outcome", dict)):  # fmt: skip
        if not isinstance(rec.get(name), kind):
            raise ValueError(f"the recording's {name!r} is missing or not a {kind.__name__}")
    if rec.get("purpose") != PURPOSE:
        raise ValueError("the file's recording is not a replay recording")
    if rec["method"] not in ("tools/call", "prompts/get", "resources/read"):
        raise ValueError(f"the recording's method {visible(str(rec['method']))!r} is not one this client replays")
    if not _strings(rec["withheld"]) or not all(isinstance(k, str) for k in rec["arguments"]):
        raise ValueError("the recording's withheld names or argument names are not text")
    if not isinstance(rec.get("requests"), int) or isinstance(rec.get("requests"), bool):
        raise ValueError("the recording's 'requests' is missing or not a number")
    dropped = rec.get("rounds_dropped", 0)
    if not isinstance(dropped, int) or isinstance(dropped, bool) or dropped < 0:
        raise ValueError("the recording's 'rounds_dropped' is not a count")
    if dropped:
        from .flow import ROUNDS_KEPT

        raise ValueError(
            f"the recording lacks the first {dropped:,} rounds of its flow (a flow keeps its newest "
            f"{ROUNDS_KEPT:,} rounds), so it cannot be replayed as it was answered; the trace still shows the rest"
        )
    outcome = rec["outcome"]
    if not isinstance(outcome.get("state"), str) or not isinstance(outcome.get("error", {}), dict):
        raise ValueError("the recording's outcome has no state, or an error that is not an object")
    if not isinstance(outcome.get("sha256", ""), str):
        raise ValueError("the recording's result digest is not text")
    if "result" in outcome and len(json.dumps(outcome["result"], default=str)) > RESULT_BYTES:
        rec["outcome"] = {k: v for k, v in outcome.items() if k != "result"}  # compared by its digest alone
    rec["asked"] = [Asked.from_dict(a) for a in rec["asked"]]
    return rec


# ---------------------------------------------------------------------- answering from it
class ReplayUI(HeadlessUI):
    """A headless view that answers each elicitation from the recording (``ReplayAnswerer`` makes it)."""

    def __init__(self, recorded: list[Asked], given: Answers) -> None:
        self.recorded = recorded
        self.given = given
        self.used: set[int] = set()  # indexes of recorded questions already answered

    def match(self, asked: Asked) -> Asked | None:
        """The first recorded question not yet used that was asked the same way (``None``: a new question)."""
        for index, before in enumerate(self.recorded):
            if index not in self.used and before.same_question(asked):
                self.used.add(index)
                return before
        return None

    async def ask(self, flow: Flow, questions: list[Question], answers: Answers) -> dict[str, Any]:
        from mcp.types import ElicitResult

        out: dict[str, Any] = {}
        for q in questions:
            params = dump(q.params) or {}
            before = self.match(_asked(flow.round + 1, None if flow.conn.is_legacy else q.key, "elicitation/create", params, None, False))  # fmt: skip
            answer = before.answer if before is not None else {}
            if answer.get("action") in ("decline", "cancel"):
                out[q.key] = ElicitResult(action=answer["action"])
                continue
            fields = {**dict(answer.get("content") or {}), **self.given.fields}
            missing = [f for f in answer.get("fields") or [] if f not in fields]
            if missing and q.form is not None:
                name = missing[0]
                why = "withheld as a secret" if name in (answer.get("withheld") or []) else "not kept in the file (it was saved without its answers)"  # fmt: skip
                raise FlowError(
                    f"{flow.conn.name} asks: {q.form.message!r}; the recording answered field {name!r}, {why}; give its value",
                    kind="unanswered", server=flow.conn.name, missing_field=name, reason="withheld",
                )  # fmt: skip
            out[q.key] = self.answer(flow, q, Answers(fields=fields, raw=self.given.raw, decline=self.given.decline))
        return out


class ReplayAnswerer(Answerer):
    """The answerer of a replayed flow: elicitations from the recording (``ReplayUI``), a model's reply as recorded."""

    def __init__(self, recorded: list[Asked], given: Answers, **options: Any) -> None:
        ui = ReplayUI(recorded, given)
        super().__init__(answers=given, ui=ui, **options)
        self.replay_ui = ui

    async def sample(self, flow: Flow, key: str, params: Any) -> Any:
        from mcp.types import CreateMessageResult

        asked = _asked(
            flow.round + 1,
            None if flow.conn.is_legacy else key,
            "sampling/createMessage",
            dump(params) or {},
            None,
            False,
        )
        before = self.replay_ui.match(asked)
        sampled = before.answer.get("sampled") if before is not None else None
        if isinstance(sampled, dict):
            from pydantic import ValidationError

            try:
                reply = CreateMessageResult.model_validate(sampled)
            except ValidationError as exc:
                raise FlowError(f"the recorded model reply for {visible(key)!r} is not a reply: {exc.error_count()} problem(s)") from None  # fmt: skip
            flow.answer_summary.append(f"{key}: the recorded reply")
            return reply
        return await super().sample(flow, key, params)  # not kept: the configured model answers


# ---------------------------------------------------------------------- what changed
def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What the replay (``after``, a ``recording``) did differently from the recording ``before``, one line each."""
    out: list[str] = []
    if before.get("requests") != after.get("requests"):
        out.append(f"requests sent: {before.get('requests')!r} before, {after.get('requests')!r} now")
    out += _question_changes(list(before["asked"]), [Asked.from_dict(a) for a in after["asked"]])
    out += _outcome_changes(before["outcome"], after["outcome"])
    return out


def _said(message: str) -> str:
    """A question's wording in a difference: one line, cut, control and bidi characters spelled out."""
    return visible(one_line(message, 60))


def _question_changes(old: list[Asked], new: list[Asked]) -> list[str]:
    out: list[str] = []
    matched: set[int] = set()
    for asked in new:
        index = next((i for i, b in enumerate(old) if i not in matched and b.same_question(asked)), None)
        if index is None:
            reworded = next((i for i, b in enumerate(old) if i not in matched and b.key is not None and b.key == asked.key and b.method == asked.method), None)  # fmt: skip
            if reworded is not None:
                matched.add(reworded)
                out.append(f"round {asked.round}: '{visible(asked.key or '')}' is worded differently: “{_said(old[reworded].message)}” before, “{_said(asked.message)}” now")  # fmt: skip
            else:
                out.append(f"round {asked.round}: a new question, {asked.label}")
            continue
        matched.add(index)
        b = old[index]
        if b.fields != asked.fields:
            out.append(f"round {asked.round}: {asked.label} has fields {', '.join(asked.fields) or 'none'} (before: {', '.join(b.fields) or 'none'})")  # fmt: skip
        elif b.round != asked.round:
            out.append(f"{asked.label} is asked in round {asked.round} (before: round {b.round})")
    out += [f"round {b.round}: {b.label} is no longer asked" for i, b in enumerate(old) if i not in matched]
    return out


def _outcome_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    if old.get("state") != new.get("state"):
        why = visible(str((new.get("error") or {}).get("message") or ""))
        return [f"the flow ended {visible(str(new.get('state')))} (before: {visible(str(old.get('state')))})" + (f": {why}" if why else "")]  # fmt: skip
    if old.get("state") != FlowState.DONE.value:
        o, n = old.get("error") or {}, new.get("error") or {}
        if (o.get("kind"), o.get("code")) != (n.get("kind"), n.get("code")):
            return [f"it failed differently: {visible(str(n.get('message') or n.get('kind')))} (before: {visible(str(o.get('message') or o.get('kind')))})"]  # fmt: skip
        return []
    if old.get("sha256") == new.get("sha256"):
        return []
    if "result" not in old or "result" not in new:
        return ["the result changed (too large to show a diff: its sha256 differs)"]
    lines = list(
        difflib.unified_diff(
            json.dumps(old["result"], indent=1, sort_keys=True).splitlines(),
            json.dumps(new["result"], indent=1, sort_keys=True).splitlines(),
            "before", "now", lineterm="", n=1,
        )
    )  # fmt: skip
    shown = lines[2 : 2 + DIFF_LINES] + (
        [f"… {len(lines) - 2 - DIFF_LINES} more lines"] if len(lines) > 2 + DIFF_LINES else []
    )
    return ["the result changed:\n" + "\n".join(f"    {visible(line)}" for line in shown)]


# ---------------------------------------------------------------------- the outcome of a replay
@dataclass
class Replay:
    """A replay's outcome: the recording (``before``), the replayed flow's own (``after``) and what differs.

    ``same`` is true when nothing does; ``check()`` raises a ``FlowError`` (kind ``replay_changed``)
    otherwise, so a test or a notebook cell fails when the server's behaviour changed.
    """

    path: str
    before: dict[str, Any]
    after: dict[str, Any]
    flow: Flow
    differences: list[str]

    @property
    def same(self) -> bool:
        return not self.differences

    def summary(self) -> str:
        what = f"{self.flow.label} from {self.path}"
        if self.same:
            asked = len(self.after["asked"])
            return (f"Replayed {what}: the same ({self.after['requests']} request{'s' if self.after['requests'] != 1 else ''}, "
                    f"{asked} question{'s' if asked != 1 else ''}, the same {'result' if self.after['outcome']['state'] == 'done' else 'failure'}).")  # fmt: skip
        lines = "\n".join(f"  - {d}" for d in self.differences)
        return (
            f"Replayed {what}: {len(self.differences)} difference{'s' if len(self.differences) != 1 else ''}\n{lines}"
        )

    def check(self) -> Replay:
        """``self`` when nothing changed; else a ``FlowError`` (kind ``replay_changed``) listing the differences."""
        if self.same:
            return self
        missing = (self.flow.error.missing_field if self.flow.error is not None else None) or None
        raise FlowError(
            self.summary(), kind="replay_changed", server=self.flow.conn.name, missing_field=missing,
            details={"path": self.path},
        )  # fmt: skip

    def __repr__(self) -> str:
        return self.summary()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(plain_text(self.summary()))
