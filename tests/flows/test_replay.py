"""`mcp_notebook.flows.replay`: what a replay says changed, read from two recordings (no server needed)."""

from __future__ import annotations

from typing import Any

from mcp_notebook.flows.replay import Asked, differences


def rec(*asked: Asked, requests: int = 2, outcome: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"requests": requests, "asked": list(asked), "outcome": outcome or {"state": "done", "sha256": "a", "result": {"x": 1}}}  # fmt: skip


def after(*asked: Asked, **kw: Any) -> dict[str, Any]:
    out = rec(*asked, **kw)
    out["asked"] = [a.to_dict() for a in asked]  # a fresh recording holds dicts, as a file does
    return out


SIZE = Asked(1, "size", "elicitation/create", "Which size?", ("size",))


def test_nothing_changed_is_no_difference() -> None:
    assert differences(rec(SIZE), after(SIZE)) == []


def test_each_kind_of_change_is_one_line() -> None:
    reworded = Asked(1, "size", "elicitation/create", "Which size, at 10:02?", ("size",))
    assert differences(rec(SIZE), after(reworded)) == [
        "round 1: 'size' is worded differently: “Which size?” before, “Which size, at 10:02?” now"
    ]
    more_fields = Asked(1, "size", "elicitation/create", "Which size?", ("colour", "size"))
    assert differences(rec(SIZE), after(more_fields)) == [
        "round 1: 'size' (“Which size?”) has fields colour, size (before: size)"
    ]
    later = Asked(2, "size", "elicitation/create", "Which size?", ("size",))
    assert differences(rec(SIZE), after(later, requests=3)) == [
        "requests sent: 2 before, 3 now",
        "'size' (“Which size?”) is asked in round 2 (before: round 1)",
    ]
    assert differences(rec(SIZE), after(requests=1)) == [
        "requests sent: 2 before, 1 now",
        "round 1: 'size' (“Which size?”) is no longer asked",
    ]


def test_a_2025_question_has_no_key_and_matches_by_wording() -> None:
    legacy = Asked(1, None, "elicitation/create", "Which size?", ("size",))
    assert differences(rec(legacy), after(Asked(1, None, "elicitation/create", "Which size?", ("size",)))) == []
    sampling = Asked(1, None, "sampling/createMessage", "Summarise this")
    assert differences(rec(legacy), after(sampling)) == [
        "round 1: a new question, sampling (“Summarise this”)",
        "round 1: (“Which size?”) is no longer asked",
    ]


def test_outcomes_compare_by_state_then_failure_kind_then_result() -> None:
    failed = {"state": "failed", "error": {"kind": "unanswered", "code": None, "message": "no answer for size"}}
    assert differences(rec(SIZE), after(SIZE, outcome=failed)) == [
        "the flow ended failed (before: done): no answer for size"
    ]
    refused = {"state": "failed", "error": {"kind": None, "code": -32602, "message": "bad state"}}
    assert differences(rec(SIZE, outcome=failed), after(SIZE, outcome=refused)) == [
        "it failed differently: bad state (before: no answer for size)"
    ]
    worded = {"state": "failed", "error": {"kind": "unanswered", "code": None, "message": "other words"}}
    assert differences(rec(SIZE, outcome=failed), after(SIZE, outcome=worded)) == []  # the same kind and code
    big = {"state": "done", "sha256": "b"}  # too large to keep: compared by digest
    assert differences(rec(SIZE), after(SIZE, outcome=big)) == [
        "the result changed (too large to show a diff: its sha256 differs)"
    ]


def test_a_long_result_diff_is_cut() -> None:
    old = {"state": "done", "sha256": "a", "result": {"rows": list(range(100))}}
    new = {"state": "done", "sha256": "b", "result": {"rows": [n * 2 for n in range(100)]}}
    [line] = differences(rec(SIZE, outcome=old), after(SIZE, outcome=new))
    shown = line.splitlines()
    assert shown[0] == "the result changed:" and len(shown) == 1 + 40 + 1
    assert shown[-1].strip().startswith("…") and shown[-1].strip().endswith("more lines")
