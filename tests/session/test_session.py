"""``Session`` on its own, without IPython: a fresh session per test.

Connect the in-process demo server, call a tool headless with preset answers, a flow that stops
and stays saved, resume it, forget, the structured fields of the engine's errors (and the
``%mcp`` hints only the magics add), ``close()`` stopping the loop thread, and two sessions that
share nothing.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from IPython.core.error import UsageError

from mcp_notebook.errors import FlowError, Note, SessionError
from mcp_notebook.flows.record import SavedFlow
from mcp_notebook.forms.model import Answers
from mcp_notebook.magics.hints import for_magics, with_hint
from mcp_notebook.session.session import CallOptions, Session

DEMO = "mcp_notebook.demo:demo"


def answers(accept_defaults: bool = False, **fields: Any) -> CallOptions:
    return CallOptions(answers=Answers(fields=fields, accept_defaults=accept_defaults))


def provision(s: Session, name: str, options: CallOptions) -> Any:
    """A headless ``provision_db`` call of the demo server (two questions over two rounds)."""
    return s.call(
        "tools/call", s.registry.get("demo"), "provision_db", {"name": name}, options, interactive=False, cell_id=None
    )


def stopped(s: Session, name: str) -> tuple[FlowError, dict[str, Any]]:
    """A flow answered in round one only: it stops at round two and its record stays saved."""
    flow = provision(s, name, answers(region="us-west-2"))
    with pytest.raises(FlowError) as info:
        flow.result(timeout=30)
    record = s.store.get(flow.id)
    assert record is not None and record["round"] == 2
    return info.value, record


def loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "mcp-notebook-loop"]


def test_connect_and_call_headless_with_answers(session: Session) -> None:
    conn = session.connect("demo", DEMO)
    assert conn.is_open and "demo" in session.registry
    flow = provision(session, "orders", answers(accept_defaults=True, region="us-west-2"))
    result = flow.result(timeout=30)
    assert result.content[0].text == "Provisioned 'orders' in us-west-2 (size small)."
    assert session.store.get(flow.id) is None  # done: nothing stays saved
    assert session.last_flow is flow and session.notes == []  # nothing to tell, and nothing printed


def test_a_stopped_flow_stays_saved_and_resumes(session: Session) -> None:
    session.connect("demo", DEMO)
    error, record = stopped(session, "orders")
    assert (error.kind, error.reason, error.flow_id, error.server, error.missing_field) == (
        "still_saved",
        "unanswered",
        record["id"],
        "demo",
        "ok",
    )
    assert "still saved" in str(error) and "%mcp" not in str(error)  # the engine speaks API
    hinted = for_magics(error)
    assert isinstance(hinted, FlowError) and hinted.kind == "still_saved"
    assert f"%mcp resume {record['id']} --answer ok=VALUE" in str(hinted)  # the field that had no answer

    assert session.saved.pick(None, None).to_dict() == record  # the only one waiting
    flow = session.saved.resume(
        SavedFlow.from_dict(record), answers(accept_defaults=True), interactive=False, cell_id=None
    )
    assert flow is not None and flow.id == record["id"]
    assert flow.result(timeout=30).content[0].text == "Provisioned 'orders' in us-west-2 (size small)."
    assert session.store.get(record["id"]) is None


def test_forget_and_the_errors_of_saved_flows(session: Session) -> None:
    with pytest.raises(SessionError) as info:
        session.saved.pick(None, None)
    assert info.value.kind == "nothing_waiting" and "%mcp" not in str(info.value)
    session.connect("demo", DEMO)
    _, first = stopped(session, "one")
    _, second = stopped(session, "two")

    with pytest.raises(SessionError) as info:
        session.saved.pick(None, None)
    assert info.value.kind == "several_waiting" and sorted(info.value.details["ids"]) == sorted(
        [first["id"], second["id"]]
    )
    hinted = for_magics(info.value)
    assert isinstance(hinted, UsageError) and "Say which: %mcp resume ID" in str(hinted)

    session.saved.forget(first["id"])
    assert session.store.get(first["id"]) is None and session.saved.pick(None, None).to_dict() == second
    with pytest.raises(SessionError) as info:
        session.saved.forget(first["id"])
    assert (info.value.kind, info.value.flow_id, info.value.details["ids"]) == (
        "no_saved_flow",
        first["id"],
        [second["id"]],
    )
    assert str(for_magics(info.value)).endswith("See %mcp flows.")
    with pytest.raises(SessionError) as info:
        session.saved.forget()
    assert info.value.kind == "flow_id_needed" and "--all" in str(for_magics(info.value))
    session.saved.forget(everything=True)
    assert session.store.all() == []


def test_registry_errors_are_structured(session: Session) -> None:
    with pytest.raises(FlowError) as info:
        session.resolve("add")
    assert info.value.kind == "not_connected" and str(info.value) == "No MCP server is connected."
    assert str(for_magics(info.value)) == "No MCP server is connected. Use %mcp connect NAME TARGET first."
    session.connect("demo", DEMO)
    with pytest.raises(FlowError) as info:
        session.registry.get("nobody")
    assert (info.value.kind, info.value.server) == ("unknown_connection", "nobody")
    with pytest.raises(SessionError) as info:
        session.connect("x", "https://example.invalid/mcp", cwd="/tmp")
    assert info.value.kind == "bad_input" and "cwd and env only apply to stdio" in str(info.value)


def test_a_record_that_needs_consent_is_refused_with_its_fields(session: Session) -> None:
    session.connect("demo", DEMO)
    _, record = stopped(session, "orders")
    session.connect("demo", "mcp_notebook.demo:echo_server")  # the name now points elsewhere
    with pytest.raises(SessionError) as info:
        session.saved.resume(
            SavedFlow.from_dict(record), answers(accept_defaults=True), interactive=False, cell_id=None
        )
    error = info.value
    assert (error.kind, error.flow_id, error.server) == ("consent_needed", record["id"], "demo")
    assert any("now points to" in concern for concern in error.details["concerns"])
    assert "--trust" not in str(error)
    hinted = for_magics(error)
    assert isinstance(hinted, UsageError) and f"%mcp resume {record['id']} --trust" in str(hinted)
    assert session.store.get(record["id"]) is not None  # still saved, untouched


def test_a_server_of_another_kernel_cannot_be_reconnected(session: Session) -> None:
    other = Session()
    try:
        other.connect("demo", DEMO)
        _, record = stopped(other, "orders")
    finally:
        other.close()
    session.store.merge({record["id"]: record}, origin="file")  # as if read from the notebook; signed by this user
    with pytest.raises(FlowError) as info:
        session.saved.resume(SavedFlow.from_dict(record), CallOptions(trust=True), interactive=False, cell_id=None)
    error = info.value
    assert (error.kind, error.reason, error.flow_id, error.server) == (
        "reconnect_needed",
        "inproc",
        record["id"],
        "demo",
    )
    assert "%mcp" not in str(error)
    assert f"%mcp connect demo ...), then %mcp resume {record['id']}." in str(for_magics(error))


def test_notes_carry_their_kind_and_the_magics_add_the_hint(session: Session) -> None:
    note = Note(
        "This cell has a saved flow abc waiting for input (round 1); starting a new call.",
        "saved_flow_waiting",
        flow_id="abc",
    )
    assert with_hint(note).endswith("starting a new call. To continue the saved one instead: %mcp resume abc")
    assert with_hint("plain text") == "plain text"
    session.tell(note)
    assert session.notes == [note] and session.notes[0].kind == "saved_flow_waiting"


def test_a_session_keeps_its_newest_notes(session: Session) -> None:
    """Re-running a cell whose flow waits tells a note each time; a session without ``tell`` keeps the last ``NOTES_KEPT``."""
    from mcp_notebook.session.session import NOTES_KEPT

    conn = session.connect("demo", DEMO)

    def in_cell(options: CallOptions) -> Any:
        return session.call(
            "tools/call", conn, "provision_db", {"name": "orders"}, options, interactive=False, cell_id="c1"
        )

    waiting = in_cell(answers(region="us-west-2"))  # stops at round two: its record stays, for cell c1
    with pytest.raises(FlowError):
        waiting.result(timeout=30)
    for _ in range(NOTES_KEPT + 5):
        in_cell(answers(accept_defaults=True, region="us-west-2")).result(timeout=30)
    assert len(session.notes) == NOTES_KEPT and session.notes.dropped == 5
    assert {note.kind for note in session.notes} == {"saved_flow_waiting"}
    assert session.notes.marker("notes") == f"5 earlier notes dropped (the last {NOTES_KEPT} kept)"


def test_calls_that_never_waited_leave_no_deleted_id_behind(session: Session) -> None:
    """The store remembers a deleted id only when it held its record: ten thousand plain calls add nothing."""
    conn = session.connect("demo", DEMO)
    for _ in range(20):
        session.start("tools/call", conn, "echo", {"text": "hi"}).result(timeout=30)
    assert session.store._gone == {}
    flow = provision(session, "orders", answers(accept_defaults=True, region="us-west-2"))  # waits, saved, done
    flow.result(timeout=30)
    assert list(session.store._gone) == [flow.id] and session.store.get(flow.id) is None


def test_close_leaves_no_loop_thread() -> None:
    before = set(loop_threads())
    s = Session()
    s.connect("demo", DEMO)
    assert len(set(loop_threads()) - before) == 1
    s.close()
    assert set(loop_threads()) - before == set()


def test_two_sessions_are_isolated() -> None:
    a, b = Session(), Session()
    try:
        a.connect("demo", DEMO)
        assert "demo" in a.registry and "demo" not in b.registry and len(b.registry) == 0
        with pytest.raises(FlowError) as info:
            b.registry.get("demo")
        assert info.value.kind == "unknown_connection"
        assert a.runtime is not b.runtime and a.store is not b.store and a.router is not b.router
        _, record = stopped(a, "orders")
        assert b.store.get(record["id"]) is None
    finally:
        a.close()
        b.close()


# ---------------------------------------------------------------------- a flow run in its caller's task (map's rows)
def test_run_here_returns_the_result_and_a_cancel_stops_only_the_flow(session: Session) -> None:
    import asyncio

    from mcp_notebook.demo import make_demo

    conn = session.connect("demo", make_demo())

    async def scenario() -> tuple[Any, str, str, bool, int]:
        quick = session.make_flow("tools/call", conn, "echo", {"text": "hi"}, save=False)
        result = await quick.run_here()
        quick.cancel()  # after it finished: must not reach this task's next await
        await asyncio.sleep(0.05)
        slow = session.make_flow("tools/call", conn, "slow_count", {"n": 200, "delay": 0.05}, save=False)
        asyncio.get_running_loop().call_later(0.2, slow.cancel)
        try:
            await slow.run_here()
        except FlowError as exc:
            kind = str(exc.kind)
        else:
            kind = "finished"
        task = asyncio.current_task()
        assert task is not None
        await asyncio.sleep(0.05)  # the calling task goes on, not cancelled
        return result.content[0].text, kind, slow.state.value, slow.finished, task.cancelling()

    text, kind, state, finished, cancelling = session.runtime.run(scenario(), timeout=30)
    assert (text, kind, state, finished, cancelling) == ("hi", "cancelled", "cancelled", True, 0)


def test_run_here_in_a_cancelled_task_cancels_the_flow_and_raises_cancelled(session: Session) -> None:
    import asyncio

    from mcp_notebook.demo import make_demo

    conn = session.connect("demo", make_demo())
    flow = session.make_flow("tools/call", conn, "slow_count", {"n": 200, "delay": 0.05}, save=False)

    async def scenario() -> str:
        runner = asyncio.ensure_future(flow.run_here())
        await asyncio.sleep(0.2)
        runner.cancel()
        try:
            await runner
        except asyncio.CancelledError:
            return "cancelled"
        return "finished"

    assert session.runtime.run(scenario(), timeout=30) == "cancelled"
    assert flow.state.value == "cancelled"
