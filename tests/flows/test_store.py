"""Saved-flow records without a kernel: checking, reading notebooks, the store, the comm client's logic."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import nbformat
import pytest

from mcp_notebook.flows.record import age, check_record, parse_block, questions, read_notebook
from mcp_notebook.flows.store import Store
from mcp_notebook.flows.trust import RecordSigner
from mcp_notebook.notebook.frontend import Frontend
from mcp_notebook.session.page import NOT_SAVED_NOTICE


def record(flow_id: str = "f1", **changes: Any) -> dict[str, Any]:
    base = {
        "v": 1,
        "id": flow_id,
        "cell_id": "c1",
        "server": {"name": "prov", "target": "http://127.0.0.1:8000/mcp"},
        "method": "tools/call",
        "name": "provision",
        "arguments": {"name": "orders"},
        "round": 1,
        "request_state": "opaque",
        "pending": {
            "region": {"method": "elicitation/create", "params": {"message": "Which region?", "requestedSchema": {}}}
        },
        "updated": "2026-11-30T10:00:00Z",
    }
    return {**base, **changes}


class FakeComm:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self._closed = False

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)


def frontend(store: Store | None = None) -> tuple[Frontend, FakeComm]:
    store = store or Store()
    fe = Frontend(store)
    store.backend = fe
    fe._comm, fe.status = FakeComm(), "pending"
    return fe, fe._comm


# ---------------------------------------------------------------------- checking and reading
@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"v": 2}, "newer mcp-notebook"),
        ({"v": None}, "no record version"),
        ({"id": "other"}, "carries another id"),
        ({"server": {"target": {}}}, "which server"),
        ({"method": "tools/list"}, "unknown method"),
        ({"name": ""}, "no tool, prompt or resource name"),
        ({"arguments": [1]}, "arguments that are an array"),
        ({"round": 0}, "no valid round"),
        ({"round": True}, "no valid round"),
        ({"request_state": 5}, "request state that is a number"),
        ({"pending": {}}, "no questions"),
    ],
)
def test_check_record_names_the_problem(changes: dict[str, Any], problem: str) -> None:
    assert check_record("f1", record()) is None
    assert problem in (check_record("f1", record(**changes)) or "")


def test_parse_block_keeps_good_records_and_warns_about_the_rest() -> None:
    assert parse_block(None) == ({}, [])
    assert parse_block([]) == ({}, ['notebook metadata "mcp_notebook" is an array, not an object; ignored'])
    assert parse_block({"flows": "x"})[1] == [
        'notebook metadata "mcp_notebook.flows" is a string, not an object; ignored'
    ]
    records, warnings = parse_block({"flows": {"f1": record(), "bad": None}})
    assert list(records) == ["f1"] and warnings == ["saved flow 'bad' is null, not an object; ignored"]


def test_read_notebook(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["mcp_notebook"] = {"flows": {"f1": record()}}
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, str(path))
    assert read_notebook(str(path)) == ({"f1": record()}, [])
    (tmp_path / "broken.ipynb").write_text("{not json")
    records, warnings = read_notebook(str(tmp_path / "broken.ipynb"))
    assert records == {}
    assert warnings == [
        f"{tmp_path / 'broken.ipynb'} is not a readable notebook (not JSON: Expecting property name enclosed "
        "in double quotes at line 1); no saved flows read from it"
    ]
    for name, content, why in [
        ("list.ipynb", b"[1, 2]", "not a JSON object"),
        ("v3.ipynb", json.dumps({"nbformat": 3, "metadata": {"mcp_notebook": {"flows": {"f1": record()}}}}).encode(), "not an nbformat 4 notebook"),
        ("latin1.ipynb", b'{"nbformat": 4, "metadata": {"x": "\xe9"}}', "not UTF-8 text"),
    ]:  # fmt: skip
        (tmp_path / name).write_bytes(content)
        assert read_notebook(str(tmp_path / name)) == (
            {},
            [f"{tmp_path / name} is not a readable notebook ({why}); no saved flows read from it"],
        )
    with pytest.raises(OSError):
        read_notebook(str(tmp_path / "missing.ipynb"))


def test_age_and_questions() -> None:
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    stamp = lambda delta: (now - delta).strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731 - a one-line helper
    assert age(stamp(timedelta(seconds=5)), now) == "5 s"
    assert age(stamp(timedelta(minutes=3)), now) == "3 min"
    assert age(stamp(timedelta(hours=2)), now) == "2 h"
    assert age(stamp(timedelta(days=4)), now) == "4 d"
    assert age("yesterday", now) == "?" and age(None, now) == "?"
    pending = {
        "a": {"method": "elicitation/create", "params": {"message": "Which region?"}},
        "b": {"method": "sampling/createMessage", "params": {}},
    }
    assert questions(record(pending=pending)) == ["Which region?", "b: a model reply (sampling)"]


# ---------------------------------------------------------------------- the store
def test_store_merge_never_resurrects_deleted_flows() -> None:
    store = Store(signer=RecordSigner(b"user"))
    store.save(record("mine"))
    store.save(record("done"))
    store.delete("done")  # waited here, then finished before the restore arrived
    store.delete("never")  # a call that never waited: no page or file holds its id, nothing to remember
    assert list(store._gone) == ["done"]
    added, stale = store.merge(
        {"mine": record("mine", round=9), "done": record("done"), "other": record("other")}, "notebook"
    )
    assert added == ["other"] and stale == ["done"]
    assert store.get("mine")["round"] == 1  # this kernel's copy is at least as new
    assert store.origin("other") == "notebook" and store.origin("mine") == "kernel"
    # a record of this user's read from a file gives way to the notebook's (both signed: two versions of one flow)
    store.merge({"filed": store.signer.sign(record("filed", round=1))}, "file")
    store.merge({"filed": store.signer.sign(record("filed", round=2))}, "notebook")
    assert store.get("filed")["round"] == 2 and store.is_trusted("filed") and store.conflicts() == []
    # two different records this user did not both sign, under one id: a conflict, neither taken silently
    store.merge({"twice": record("twice", round=1)}, "file")
    store.merge({"twice": record("twice", round=2)}, "notebook")
    assert [c["round"] for c in store.claimants("twice")] == [1, 2] and store.conflicts() == ["twice"]
    assert not store.is_trusted("twice")
    assert [r["id"] for r in store.for_cell("c1")]  # by cell
    assert sorted(store.forget_all()) == ["filed", "mine", "other", "twice"] and len(store) == 0
    assert store.conflicts() == []


def test_the_store_remembers_the_last_gone_kept_deletes() -> None:
    """Deleted ids are remembered (a late restore cannot revive them) up to ``GONE_KEPT``, the newest."""
    from mcp_notebook.flows.store import GONE_KEPT

    store = Store()
    ids = [f"f{n:07d}" for n in range(GONE_KEPT + 5)]
    for flow_id in ids:
        store.save(record(flow_id))
        store.delete(flow_id)
    assert len(store._gone) == GONE_KEPT and list(store._gone) == ids[5:]
    added, stale = store.merge({i: record(i) for i in (ids[0], ids[5], ids[-1])}, "notebook")
    assert stale == [ids[5], ids[-1]]  # remembered: the notebook's copy is stale
    assert added == [ids[0]]  # forgotten: taken back as a record of the notebook
    store.save(record(ids[-1]))  # the same id waiting again is no longer gone
    assert len(store._gone) == GONE_KEPT - 1 and ids[-1] not in store._gone
    store.delete(ids[-1])
    assert len(store._gone) == GONE_KEPT and list(store._gone)[-1] == ids[-1]  # the newest again
    store.forget_all()  # forgets ids[0], the one record left
    assert len(store._gone) == GONE_KEPT and list(store._gone)[-1] == ids[0]


# ---------------------------------------------------------------------- the comm client
def test_restore_fills_the_store_and_saves_go_through_the_comm() -> None:
    fe, comm = frontend()
    fe.handle({"op": "restore", "v": 1, "reason": "hello", "flows": {"f1": record(), "x": 3}, "path": "dir/nb.ipynb"})
    assert fe.status == "connected" and fe.path == "dir/nb.ipynb"
    assert fe.store.get("f1") == record() and comm.sent == []  # restored, not echoed
    assert fe.take_warnings() == ["saved flow 'x' is a number, not an object; ignored"] and fe.take_warnings() == []
    fe.store.save(record("f2"))
    fe.store.delete("f1")
    fe.store.delete("never-saved")  # nothing to tell the notebook
    signed = comm.sent[0]["record"]
    assert signed == {**record("f2"), "sig": signed["sig"]} and fe.store.signer.verify(signed)  # saved signed
    assert comm.sent == [{"op": "save", "record": signed}, {"op": "delete", "id": "f1"}]
    fe.handle(
        {"op": "ack", "id": "f1", "warnings": ['notebook metadata "mcp_notebook" is a string, not an object; dropped']}
    )
    fe.handle({"op": "error", "for": "save", "message": 'record has no string "id"'})
    assert len(fe.take_warnings()) == 2
    fe.handle({"op": "path", "path": "renamed.ipynb"})
    assert fe.describe() == "saved in renamed.ipynb"


def test_reconnect_restore_puts_back_what_the_kernel_knows() -> None:
    fe, comm = frontend()
    fe.handle({"op": "restore", "reason": "hello", "flows": {"old": record("old")}})
    fe.store.save(record("live"))  # waiting in this kernel, page reloaded before a save
    fe.store.delete("old")  # finished here
    comm.sent.clear()
    fe.handle({"op": "restore", "reason": "reconnect", "flows": {"old": record("old")}})
    assert comm.sent == [{"op": "delete", "id": "old"}, {"op": "save", "record": fe.store.signer.sign(record("live"))}]
    assert fe.store.get("old") is None


def test_reports_are_kept_until_a_page_shows_them_and_sent_again_on_restore() -> None:
    """A settled report goes to the page; until some page answers ``shown``, every restore sends it again (at most 20 kept)."""
    from mcp_notebook.notebook.frontend import REPORTS_KEPT

    fe, comm = frontend()
    output = {
        "output_type": "display_data",
        "data": {"text/plain": "done"},
        "metadata": {"mcp_notebook": {"display_id": "d0", "final": True}},
    }
    fe.send_report("cell-1", "d0", output)
    assert comm.sent == [{"op": "report", "cell_id": "cell-1", "display_id": "d0", "output": output}]
    comm.sent.clear()
    fe.handle({"op": "restore", "reason": "reconnect", "flows": {}})  # a page reloaded as the flow ended
    assert comm.sent == [{"op": "report", "cell_id": "cell-1", "display_id": "d0", "output": output}]
    fe.handle({"op": "shown", "display_id": "d0"})
    fe.handle({"op": "shown", "display_id": 7})  # not an id: ignored
    assert fe.pending_reports() == []
    comm.sent.clear()
    fe.handle({"op": "restore", "reason": "reconnect", "flows": {}})
    assert comm.sent == []  # a page has it: nothing sent again
    for i in range(REPORTS_KEPT + 5):
        fe.send_report(None, f"d{i}", output)
    assert fe.pending_reports() == [f"d{i}" for i in range(5, REPORTS_KEPT + 5)]  # the oldest go first


def test_a_live_area_is_kept_until_its_report_replaces_it() -> None:
    """The live area goes to pages that did not see it displayed, again on every restore, until its report comes."""
    fe, comm = frontend()
    live = {
        "output_type": "display_data",
        "data": {"text/plain": "live"},
        "metadata": {"mcp_notebook": {"display_id": "d1"}},
    }
    report = {
        "output_type": "display_data",
        "data": {"text/plain": "done"},
        "metadata": {"mcp_notebook": {"display_id": "d1", "final": True}},
    }
    fe.send_live("cell-1", "d1", live)
    fe.handle({"op": "shown", "display_id": "d1"})  # one page has it; a page that reloads later needs it too
    comm.sent.clear()
    fe.handle({"op": "restore", "reason": "reconnect", "flows": {}})
    assert comm.sent == [{"op": "display", "cell_id": "cell-1", "display_id": "d1", "output": live}]
    fe.send_report("cell-1", "d1", report)
    fe.send_live("cell-1", "d1", live)  # late (a flow that settled at once): never over its report
    comm.sent.clear()
    fe.handle({"op": "restore", "reason": "reconnect", "flows": {}})
    assert comm.sent == [{"op": "report", "cell_id": "cell-1", "display_id": "d1", "output": report}]
    fe.handle({"op": "shown", "display_id": "d1"})
    assert fe.pending_reports() == []


def test_without_the_extension_records_stay_in_memory_with_one_notice() -> None:
    fe, comm = frontend()
    assert fe.saves(interactive=True) and not fe.saves(interactive=False)  # pending: a live front end may answer
    fe._on_close({})
    assert fe.status == "absent"
    fe.store.save(record())
    assert comm.sent == [] and fe.store.get("f1") is not None
    assert fe.notice(interactive=True) == NOT_SAVED_NOTICE
    assert fe.notice(interactive=True) is None  # once


def test_session_file_is_read_once(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["mcp_notebook"] = {"flows": {"f1": record()}}
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))

    class Shell:
        user_ns = {"__session__": str(tmp_path / "nb.ipynb")}

    fe = Frontend(Store(), Shell())
    fe.ensure_loaded()
    assert fe.store.get("f1") is not None and fe.describe() == "read from nb.ipynb; changes stay in this kernel"
    fe.store.delete("f1")
    fe.ensure_loaded()
    fe.read_file(str(tmp_path / "nb.ipynb"))  # read again on purpose: a finished flow stays finished
    assert fe.store.get("f1") is None


def test_saved_flow_round_trips_the_dict_form_and_its_signature() -> None:
    from mcp_notebook.flows.record import SavedFlow, check_record
    from mcp_notebook.flows.trust import RecordSigner

    signer = RecordSigner(b"k")
    full = signer.sign({
        "v": 1, "id": "f1", "cell_id": "c", "server": {"name": "s", "target": "http://h/mcp", "headers": ["X"]},
        "method": "tools/call", "name": "t", "arguments": {"a": 1}, "round": 2, "request_state": "opaque",
        "pending": {"q": {"method": "elicitation/create", "params": {}}}, "updated": "2026-01-01T00:00:00Z",
        "withheld": ["password"], "later": {"a newer writer's key": True},
    })  # fmt: skip
    minimal = {
        "v": 1,
        "id": "f2",
        "server": {"name": "s"},
        "method": "prompts/get",
        "name": "p",
        "round": 1,
        "pending": {"q": {}},
    }
    for record in (full, minimal):
        assert check_record(record["id"], record) is None
        saved = SavedFlow.from_dict(record)
        assert saved.to_dict() == record  # nothing added, nothing lost
    assert signer.verify(SavedFlow.from_dict(full).to_dict())
    assert SavedFlow.from_dict(full).withheld == ["password"] and SavedFlow.from_dict(minimal).sig is None


def test_a_hostile_notebook_file_is_refused_with_a_warning(tmp_path: Path) -> None:
    """What nbformat refused is refused: too deep, not UTF-8 (UTF-16, a byte-order mark, lone surrogates)."""
    good = json.dumps({"nbformat": 4, "metadata": {"mcp_notebook": {"flows": {"f1": record()}}}})
    cases = {
        "deep.ipynb": (b'{"nbformat": 4, "metadata": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deep"),
        "utf16.ipynb": (good.encode("utf-16"), "not UTF-8 text"),
        "surrogate.ipynb": (good.encode()[:-1] + b', "x": "\xed\xb2\x80"}', "not UTF-8 text"),
        "bom.ipynb": (b"\xef\xbb\xbf" + good.encode(), "not JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) at line 1"),
    }  # fmt: skip
    for name, (content, why) in cases.items():
        (tmp_path / name).write_bytes(content)
        assert read_notebook(str(tmp_path / name)) == (
            {},
            [f"{tmp_path / name} is not a readable notebook ({why}); no saved flows read from it"],
        ), name
    (tmp_path / "good.ipynb").write_text(good)
    assert read_notebook(str(tmp_path / "good.ipynb")) == ({"f1": record()}, [])


def test_a_record_nested_too_deep_is_ignored_and_the_others_kept(tmp_path: Path) -> None:
    """A record nested past MAX_DEPTH (which signing and showing would recurse through) is left out, with why."""
    deep: Any = "bottom"
    for _ in range(600):
        deep = {"a": deep}
    flows = {"f1": record(), "f2": record("f2", arguments={"x": deep}, sig="hmac-sha256:00")}
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"mcp_notebook": {"flows": flows}}, "cells": []}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    assert read_notebook(str(tmp_path / "nb.ipynb")) == (
        {"f1": record()},
        ["saved flow 'f2' nests objects or lists more than 64 deep; ignored"],
    )
    shallow = record("f3", arguments={"x": {"a": {"b": [1, [2, {"c": 3}]]}}})
    assert check_record("f3", shallow) is None
    for _ in range(2000):  # past Python's recursion limit: verify says no, it does not raise
        deep = {"a": deep}
    signer = RecordSigner(b"k" * 32)
    assert signer.verify({**record("f2", arguments={"x": deep}), "sig": "hmac-sha256:00"}) is False
    assert signer.verify(signer.sign(shallow)) is True


def test_a_record_with_a_lone_surrogate_is_ignored_and_the_others_kept() -> None:
    flows = {"f1": record(), "f2": record("f2", arguments={"name": "\udc80"})}
    assert parse_block({"flows": flows}) == (
        {"f1": record()},
        ["saved flow 'f2' holds text that is not Unicode (a lone surrogate); ignored"],
    )
