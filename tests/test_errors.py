"""Error kinds (``errors.Kind``): each has a ``%mcp`` hint decision, each is raised or noted somewhere, and the hints read as before.

mypy proves the first statically (the ``match`` in ``magics/hints.py`` is exhaustive over ``Kind``);
these tests hold the same rules at run time, and add what mypy cannot see: a kind no code produces
any more, and a kind compared under a misspelt name.
"""

from __future__ import annotations

import ast
import typing
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

import mcp_notebook
from mcp_notebook.errors import FlowError, Kind, Note, SessionError
from mcp_notebook.magics import hints
from mcp_notebook.magics.hints import for_magics, hint, with_hint
from mcp_notebook.wire.connection import Connection
from mcp_notebook.wire.target import Target

KINDS: tuple[str, ...] = typing.get_args(Kind)
PACKAGE = Path(mcp_notebook.__file__).parent
#: where kinds are declared and decided, not produced
DECLARED = {PACKAGE / "errors.py", PACKAGE / "magics" / "hints.py"}
#: the kinds hints.py decides to leave without a command (their message says all there is to do)
NO_HINT = {
    "bad_config", "bad_input", "cancelled", "failed", "flow_running", "map_failed", "no_backchannel", "no_subscriptions",
    "not_live", "reconnected", "resume_failed", "several_connected", "sign_in_refused", "sign_in_unreachable",
    "task_cancelled", "task_failed", "task_invalid", "tool_error", "unanswered", "unknown_connection", "unreadable_file",
}  # fmt: skip


def _demo_connection() -> Connection:
    return Connection("demo", Target(kind="stdio", command=["python", "-m", "demo_server"]))


def _every_field() -> dict[str, Any]:
    """Fields that let every conditional hint speak (a connection, a target, a URL ...)."""
    return {"flow_id": "abc", "server": "demo", "reason": "unanswered", "missing_field": "region",
            "details": {"connection": _demo_connection(), "target": "http://127.0.0.1:9/mcp", "url": "http://127.0.0.1:9/mcp"}}  # fmt: skip


def _sources() -> list[tuple[Path, ast.Module]]:
    files = sorted(p for p in PACKAGE.rglob("*.py") if p not in DECLARED and "labextension" not in p.parts)
    return [(p, ast.parse(p.read_text(encoding="utf-8"), str(p))) for p in files]


def _produced() -> set[str]:
    """Every constant passed as ``kind=`` (``FlowError(..., kind=...)``, ``dict(kind=...)``) or as a ``Note``'s second argument."""
    found: set[str] = set()
    for _, tree in _sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            found |= {
                kw.value.value
                for kw in node.keywords
                if kw.arg == "kind" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)
            }
            if (
                isinstance(node.func, ast.Name)
                and node.func.id == "Note"
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                found.add(node.args[1].value)
    return found


def _compared() -> list[tuple[str, int, str]]:
    """``error.kind == "x"`` / ``exc.kind in ("x", "y")`` and the like: (file, line, the constant compared)."""
    errorish = {"error", "exc", "outcome", "e", "err"}
    found: list[tuple[str, int, str]] = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr == "kind"
            ):
                continue
            owner = node.left.value
            if not (isinstance(owner, ast.Name) and owner.id in errorish):
                continue
            for right in node.comparators:
                items = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
                found += [
                    (path.name, node.lineno, item.value)
                    for item in items
                    if isinstance(item, ast.Constant) and isinstance(item.value, str)
                ]
    return found


def test_kinds_are_distinct_snake_case_names() -> None:
    assert len(KINDS) == len(set(KINDS)) == 47
    assert all(kind.isidentifier() and kind == kind.lower() for kind in KINDS)


def test_every_kind_has_a_hint_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind without a case reaches ``_undecided`` (what mypy rejects statically); here it would fail the test."""

    def undecided(kind: object) -> None:
        raise AssertionError(f"hints.hint has no case for kind {kind!r}")

    monkeypatch.setattr(hints, "_undecided", undecided)
    fields = _every_field()
    outcomes = {kind: hint(kind, fields) for kind in KINDS}  # type: ignore[arg-type]  # each one of Kind
    assert {kind for kind, text in outcomes.items() if text is None} == NO_HINT
    assert all(
        isinstance(text, str) and "%" in text for kind, text in outcomes.items() if kind not in NO_HINT
    )  # each names a magic


def test_every_kind_is_raised_or_noted_somewhere_in_the_package() -> None:
    produced = _produced()
    assert sorted(set(KINDS) - produced) == []  # no dead kind: each is produced outside errors.py and hints.py


def test_every_kind_the_package_compares_an_error_with_is_a_kind() -> None:
    compared = _compared()
    assert {"failure.py", "map.py", "call.py", "live_view.py"} <= {
        file for file, _, _ in compared
    }  # the scan sees them
    assert [(file, line, kind) for file, line, kind in compared if kind not in KINDS] == []


def test_an_unknown_kind_at_run_time_gets_no_hint_and_no_error() -> None:
    assert hint("not_a_kind", {}) is None  # type: ignore[arg-type]  # what code mypy does not check may pass
    assert hint(None, {"flow_id": "abc"}) is None
    error = FlowError("the server went away.", kind="not_a_kind")  # type: ignore[arg-type]
    assert str(for_magics(error)) == "the server went away."


def test_a_session_error_becomes_a_usage_error_ending_with_its_hint() -> None:
    error = SessionError(
        "no saved flow 'abc' (waiting: none).", kind="no_saved_flow", flow_id="abc", details={"ids": []}
    )
    shown = for_magics(error)
    assert isinstance(shown, UsageError) and str(shown) == "no saved flow 'abc' (waiting: none). See %mcp flows."


def test_conditional_hints_speak_only_with_what_they_need() -> None:
    fields: dict[str, Any] = {"flow_id": "abc", "server": "demo", "reason": "unanswered", "missing_field": "region"}
    assert hint("still_saved", fields) == "Continue it with %mcp resume abc --answer region=VALUE."
    assert (
        hint("still_saved", {**fields, "reason": "task"})
        == "Follow it again with %mcp resume abc (from this or a new kernel); %mcp tasks lists tasks."
    )
    assert hint("connection_dead", {"details": {}}) is None  # no connection to print a line for
    assert (
        hint("connection_dead", {"details": {"connection": _demo_connection()}})
        == "Reconnect with %mcp connect demo -- python -m demo_server again."
    )
    assert (
        hint("connection_closed", {"details": {"connection": _demo_connection()}})
        == "Reconnect with %mcp connect demo -- python -m demo_server."
    )
    assert (
        hint("reconnect_needed", {**fields, "reason": "env"})
        == "Connect again with %mcp connect demo --env NAME=VALUE ... -- COMMAND, then %mcp resume abc."
    )


def test_a_note_of_a_kind_without_a_hint_is_shown_as_it_is() -> None:
    text = "Reconnected 'demo' to -- python -m demo_server to resume flow abc."
    assert with_hint(Note(text, "reconnected", flow_id="abc", server="demo")) == text
    waiting = Note(
        "This cell has a saved flow abc waiting for input (round 1); starting a new call.",
        "saved_flow_waiting",
        flow_id="abc",
    )
    assert with_hint(waiting) == f"{waiting} To continue the saved one instead: %mcp resume abc"
