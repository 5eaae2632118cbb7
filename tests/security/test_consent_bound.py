"""Consent is bound to the record the person read, never to its flow id (issue 34, finding 1).

A received notebook holds two records under one id: a harmless one in a cell output and, in the
metadata, one that reaches another host with the user's ``$SEC_SVC_TOKEN``. The kernel reads the
output's record first (Run All runs ``%mcp resume`` before the page's restore arrives), the person
is shown it, and then the page's restore brings the other under the same id. Before the fix, the
Resume click (or ``--trust``) trusted *the id*, and the next resume sent the bearer token to the
other host without a question. Here a real HTTP server records every ``Authorization`` header it
gets: after the swap it gets none, and the harmless record still resumes once consented to.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from mcp_notebook.errors import FlowError
from mcp_notebook.flows.record import OUTPUT_MIME, SavedFlow
from mcp_notebook.flows.store import Store
from mcp_notebook.flows.trust import RecordSigner, content_digest, shown_digest
from mcp_notebook.forms.model import Answers
from mcp_notebook.notebook.consent import ConfirmResume
from mcp_notebook.notebook.frontend import Frontend
from mcp_notebook.notebook.live_view import ResumeOffer
from mcp_notebook.session.settings import CallOptions

from ..support.recorder import Recorder, recording

TOKEN = "users-real-svc-token-7c2d"


@pytest.fixture(scope="module")
def hub(ip: InteractiveShell) -> Any:
    return ip.magics_manager.registry["MCPMagics"].session


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("SEC_SVC_TOKEN", TOKEN)
    return TOKEN


@pytest.fixture(scope="module")
def harmless() -> Iterator[Recorder]:
    with recording() as r:
        yield r


@pytest.fixture(scope="module")
def attacker() -> Iterator[Recorder]:
    with recording() as r:
        yield r


def record(flow_id: str, server: dict[str, Any], updated: str = "2026-11-30T10:00:00Z") -> dict[str, Any]:
    """A record as a received notebook holds it (no signature of this user's)."""
    question = {
        "method": "elicitation/create",
        "params": {
            "message": "Go on?",
            "requestedSchema": {"type": "object", "properties": {"go": {"type": "boolean", "default": True}}},
        },
    }
    return {
        "v": 1, "id": flow_id, "cell_id": None, "server": server, "method": "tools/call", "name": "report",
        "arguments": {"month": "11"}, "round": 1, "request_state": None, "pending": {"go": question}, "updated": updated,
    }  # fmt: skip


def pair(flow_id: str, harmless: Recorder, attacker: Recorder) -> tuple[dict[str, Any], dict[str, Any]]:
    """The harmless record (no token) and the one swapped in under the same id (the user's token, another host)."""
    shown = record(flow_id, {"name": f"rep_{flow_id}", "target": harmless.url("mcp")}, "2026-11-30T11:00:00Z")
    swapped = record(flow_id, {"name": f"rep_{flow_id}", "target": attacker.url("mcp"), "bearer_env": "SEC_SVC_TOKEN"})
    return shown, swapped


def notebook(path: Path, outputs: list[dict[str, Any]], metadata: list[dict[str, Any]] = ()) -> Path:  # type: ignore[assignment]
    """A received notebook: records in a cell's outputs (as front ends without the extension keep them) and in its metadata."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%mcp resume")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={OUTPUT_MIME: r, "text/plain": "waits"}) for r in outputs
    ]
    nb.cells = [cell]
    if metadata:
        nb.metadata["mcp_notebook"] = {"flows": {r["id"]: r for r in metadata}}
    nbformat.write(nb, str(path))
    return path


def restore(hub: Any, *records: dict[str, Any]) -> Frontend:
    """The page's restore, as the labextension sends it (its metadata's records), handled by the comm client."""
    page = Frontend(hub.store)
    page.handle({"op": "restore", "flows": {r["id"]: r for r in records}})
    return page


def refused(ip: InteractiveShell, line: str) -> str:
    with pytest.raises(UsageError) as info:
        ip.run_line_magic("mcp", line)
    return str(info.value)


def shown_text(ip: InteractiveShell, line: str) -> str:
    with capture_output() as out:
        ip.run_line_magic("mcp", line)
    return out.stdout + "".join(o.data.get("text/plain", "") for o in out.outputs)


# ---------------------------------------------------------------------- the store
def test_consent_is_to_content_and_a_second_record_under_an_id_is_a_conflict() -> None:
    store = Store(signer=RecordSigner(b"user"))
    shown = record("f1", {"name": "s", "target": "http://127.0.0.1:1/mcp"})
    swapped = record("f1", {"name": "s", "target": "http://127.0.0.1:2/mcp", "bearer_env": "TOKEN"})
    store.merge({"f1": shown}, "file")
    digest = content_digest(shown)
    assert store.digest("f1") == digest and store.trust("f1", digest) and store.is_trusted("f1")
    store.merge({"f1": swapped}, "notebook")  # the page's restore: another record under the same id
    assert store.get("f1") is shown  # not taken in its place
    assert store.claimants("f1") == [shown, swapped] and store.conflicts() == ["f1"]
    assert not store.is_trusted("f1")  # a conflict is never trusted, whatever was consented to
    assert not store.trust("f1", digest)  # nor can consent be given while it lasts
    store.merge({"f1": dict(swapped)}, "notebook")  # the same one again: still two claimants
    assert len(store.claimants("f1")) == 2
    assert store.choose("f1", "sha256:0123456789abcdef") is None and store.conflicts() == ["f1"]
    assert store.choose("f1", shown_digest(content_digest(swapped))) == swapped  # the person chose: held, consented
    assert store.conflicts() == [] and store.get("f1") == swapped and store.is_trusted("f1")
    # the same content again is no conflict; a record of this kernel's own is never displaced
    store.merge({"f1": dict(swapped)}, "notebook")
    assert store.conflicts() == []
    store.save(record("f2", {"name": "s", "target": "http://127.0.0.1:1/mcp"}))
    store.merge({"f2": swapped | {"id": "f2"}}, "notebook")
    assert store.conflicts() == [] and store.get("f2") is not None and store.is_trusted("f2")


# ---------------------------------------------------------------------- headless: --trust after a swap
def test_trust_after_the_restore_swapped_the_record_sends_no_token(
    ip: InteractiveShell, hub: Any, harmless: Recorder, attacker: Recorder, token: str, tmp_path: Path
) -> None:
    shown, swapped = pair("5a0f0001", harmless, attacker)
    path = notebook(tmp_path / "received.ipynb", outputs=[shown])  # what the kernel reads before the page answers
    listing = shown_text(ip, f"flows --from {path}")
    assert f"connects to: {harmless.url('mcp')}" in listing and "bearer" not in listing
    message = refused(ip, "resume 5a0f0001")  # shown whole once more, headless
    assert f"connects to: {harmless.url('mcp')}" in message
    restore(hub, swapped)  # the page's restore arrives with the metadata's record under the same id
    message = refused(ip, "resume 5a0f0001 --trust --accept-defaults")  # the consent was to the record shown
    time.sleep(0.2)
    assert attacker.seen == [] and harmless.seen == []
    assert "2 different saved records claim this id" in message
    assert f"connects to: {attacker.url('mcp')}" in message and "the value of $SEC_SVC_TOKEN" in message  # shown
    assert "%mcp resume 5a0f0001 --trust DIGEST" in message and "%mcp forget 5a0f0001" in message
    assert token not in message
    table = shown_text(ip, "flows")
    assert "2 different records claim this id" in table and table.count("flow 5a0f0001 ") == 2
    message = refused(ip, "resume 5a0f0001 --accept-defaults")  # and no later resume goes on by itself
    assert "2 different saved records claim this id" in message
    time.sleep(0.2)
    assert attacker.seen == [] and harmless.seen == []

    # the person chooses the harmless one by its digest: it resumes, to the harmless host, without the token
    chosen = shown_digest(content_digest(shown))
    assert f"content digest: {chosen}" in table
    with pytest.raises(FlowError):  # the recorder is no MCP server: the resume fails past the consent
        ip.run_line_magic("mcp", f"resume 5a0f0001 --trust {chosen} --accept-defaults")
    assert harmless.seen and harmless.authorizations() == [None] * len(harmless.seen)
    assert attacker.seen == [] and hub.store.conflicts() == []
    hub.store.delete("5a0f0001")
    harmless.seen.clear()


def test_a_file_holding_two_records_under_one_id_resumes_neither_until_chosen(
    ip: InteractiveShell, hub: Any, harmless: Recorder, attacker: Recorder, token: str, tmp_path: Path
) -> None:
    shown, swapped = pair("5a0f0002", harmless, attacker)
    path = notebook(tmp_path / "both.ipynb", outputs=[shown], metadata=[swapped])  # the output's is the newer
    listing = shown_text(ip, f"flows --from {path}")
    assert "2 different records claim this id" in listing
    assert f"connects to: {attacker.url('mcp')}" in listing and f"connects to: {harmless.url('mcp')}" in listing
    refused(ip, "resume 5a0f0002 --accept-defaults")
    message = refused(ip, "resume 5a0f0002 --trust --accept-defaults")  # a bare --trust names neither
    assert "2 different saved records claim this id" in message
    time.sleep(0.2)
    assert attacker.seen == [] and harmless.seen == []
    with pytest.raises(FlowError):  # choosing the other one, knowingly: that is what runs
        ip.run_line_magic("mcp", f"resume 5a0f0002 --trust {content_digest(swapped)} --accept-defaults")
    assert attacker.authorizations()[:1] == [f"Bearer {token}"] and harmless.seen == []
    hub.store.delete("5a0f0002")
    attacker.seen.clear()


def test_trust_is_to_the_record_last_shown(
    ip: InteractiveShell, hub: Any, harmless: Recorder, attacker: Recorder, token: str, tmp_path: Path
) -> None:
    """A bare --trust consents to what was shown: a record never shown here is shown first, not resumed."""
    shown, _swapped = pair("5a0f0003", harmless, attacker)
    hub.store.merge({"5a0f0003": shown}, "file")  # read, never listed nor refused here
    message = refused(ip, "resume 5a0f0003 --trust --accept-defaults")
    assert "not the record you were shown" in message and f"connects to: {harmless.url('mcp')}" in message
    assert harmless.seen == []
    message = refused(ip, "resume 5a0f0003 --trust sha256:00000000000000000000 --accept-defaults")  # another digest
    assert "not the record you were shown" in message and harmless.seen == []
    with pytest.raises(UsageError, match="content digest"):
        ip.run_line_magic("mcp", "resume 5a0f0003 --trust not-a-digest")
    with pytest.raises(FlowError):  # now it was shown: the bare --trust goes on, to what was shown
        ip.run_line_magic("mcp", "resume 5a0f0003 --trust --accept-defaults")
    assert harmless.seen and harmless.authorizations() == [None] * len(harmless.seen) and attacker.seen == []
    hub.store.delete("5a0f0003")
    harmless.seen.clear()


# ---------------------------------------------------------------------- interactive: the Resume button
def panel_for(hub: Any, flow_id: str) -> ConfirmResume:
    """``%mcp resume ID`` in a live page, before the page's restore: the consent panel (its Resume not clicked yet)."""
    record = hub.saved.pick(flow_id, None)
    options = CallOptions(answers=Answers(accept_defaults=True))
    panel = hub.saved.resume(record, options, interactive=True, cell_id=None)
    assert isinstance(panel, ConfirmResume)
    return panel


def test_resume_clicked_after_the_swap_asks_again_and_sends_no_token(
    ip: InteractiveShell, hub: Any, harmless: Recorder, attacker: Recorder, token: str, tmp_path: Path
) -> None:
    shown, swapped = pair("5a0f0004", harmless, attacker)
    ip.run_line_magic("mcp", f"flows --from {notebook(tmp_path / 'received.ipynb', outputs=[shown])}")
    panel = panel_for(hub, "5a0f0004")
    assert f"{harmless.url('mcp')}" in panel.review.html() and "SEC_SVC_TOKEN" not in panel.review.html()
    restore(hub, swapped)  # arrives after the cell: the person still sees the harmless record
    panel.yes.click()  # no kernel loop here: the action runs at once
    value, error = panel._ran or (None, None)
    with pytest.raises((UsageError, FlowError)) as refusal:  # the next resume, without a question
        ip.run_line_magic("mcp", "resume 5a0f0004 --accept-defaults")
    time.sleep(0.2)
    assert attacker.authorizations() == [] and harmless.seen == []  # the token went nowhere; nothing was reached
    assert value is None and error is not None and "2 different saved records claim this id" in str(error)
    assert isinstance(refusal.value, UsageError) and "2 different saved records claim this id" in str(refusal.value)
    assert not hub.store.is_trusted("5a0f0004")
    hub.store.delete("5a0f0004")


def test_resume_clicked_on_a_record_changed_since_it_was_shown_shows_the_new_one(
    ip: InteractiveShell, hub: Any, harmless: Recorder, attacker: Recorder, token: str
) -> None:
    """No conflict (the held record was replaced as the user's own would be): the click asks again, showing it."""
    shown, swapped = pair("5a0f0005", harmless, attacker)
    hub.store.merge({"5a0f0005": shown}, "file")
    panel = panel_for(hub, "5a0f0005")
    with hub.store._lock:  # what any path that replaces the held record leaves: other content under the id
        hub.store._take("5a0f0005", swapped, "notebook")
    panel.yes.click()
    again, error = panel._ran or (None, None)
    assert error is None and isinstance(again, ConfirmResume)  # asked again ...
    assert attacker.url("mcp") in again.review.html() and "$SEC_SVC_TOKEN" in again.review.html()  # ... showing it
    assert not hub.store.is_trusted("5a0f0005")
    time.sleep(0.2)
    assert attacker.seen == [] and harmless.seen == []
    again.no.click()
    hub.store.delete("5a0f0005")


SERVER = """
from mcp.server.mcpserver import MCPServer, Elicit, Resolve
from pydantic import BaseModel, Field
from typing import Annotated

class Go(BaseModel):
    go: bool = Field(True, description="Go on?")

async def ask_go() -> Elicit[Go]:
    return Elicit("Go on?", Go)

sec_rep = MCPServer("sec_rep")
sec_rep_calls = []

@sec_rep.tool()
async def report(month: str, go: Annotated[Go, Resolve(ask_go)]) -> str:
    sec_rep_calls.append(month)
    return f"report {month}"
"""


def test_the_harmless_record_still_resumes_after_consent(
    ip: InteractiveShell, hub: Any, attacker: Recorder, token: str, tmp_path: Path
) -> None:
    """Nothing changed between the review and the click (the page restores the very same record): it resumes and finishes."""
    ip.run_cell_magic("mcp", "server sec_rep", SERVER)
    served = ip.run_line_magic("mcp", "serve sec_rep --no-auth")  # a real MCP server on streamable HTTP
    try:
        shown = record("5a0f0006", {"name": "rep_served", "target": served.url})
        ip.run_line_magic("mcp", f"flows --from {notebook(tmp_path / 'received.ipynb', outputs=[shown])}")
        panel = panel_for(hub, "5a0f0006")
        restore(hub, dict(shown))  # the page holds the same record: nothing changed
        assert hub.store.conflicts() == []
        panel.yes.click()
        flow, error = panel._ran or (None, None)
        assert error is None and flow is not None
        flow.result(timeout=30)  # raises unless the call finished
        assert flow.state.value == "done"
        assert ip.user_ns["sec_rep_calls"] == ["11"] and hub.store.get("5a0f0006") is None  # finished: gone
        assert attacker.seen == []
    finally:
        ip.run_line_magic("mcp", "stop sec_rep")


def test_continue_goes_on_only_with_the_record_it_offered(
    ip: InteractiveShell, hub: Any, attacker: Recorder, token: str
) -> None:
    """Continue on a re-run cell's offer: when the record changed since it was offered, it is offered again as it is now."""
    if "sec_rep" not in hub.registry:
        ip.run_cell_magic("mcp", "server sec_rep", SERVER)
    conn = hub.registry.get("sec_rep")
    mine = hub.store.signer.sign(record("5a0f0008", {"name": "sec_rep", "target": "sec_rep", "in_process": True}))
    hub.store.merge({"5a0f0008": mine}, "notebook")
    assert hub.store.is_trusted("5a0f0008")  # this user's own: Continue would need no other question
    options = CallOptions(answers=Answers(accept_defaults=True))
    offer = hub.saved.offer(SavedFlow.from_dict(mine), "tools/call", conn, "report", {"month": "11"}, options, "cell-8")
    _shown, swapped = pair("5a0f0008", attacker, attacker)
    with hub.store._lock:  # other content under the id before the click
        hub.store._take("5a0f0008", swapped, "notebook")
    offer.continue_button.click()
    again, error = offer._ran or (None, None)
    assert error is None and isinstance(again, ResumeOffer) and again.record.to_dict() == swapped  # offered anew
    again.continue_button.click()  # Continue on what it shows now: a record not the user's asks first
    asked, error = again._ran or (None, None)
    assert error is None and isinstance(asked, ConfirmResume) and "$SEC_SVC_TOKEN" in asked.review.html()
    asked.no.click()
    time.sleep(0.2)
    assert attacker.seen == [] and hub.store.get("5a0f0008") == swapped
    hub.store.delete("5a0f0008")
