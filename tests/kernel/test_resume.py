"""Saved flows across kernels: the extension's comm played by the test, the .ipynb read from disk.

* A real kernel says hello on comm ``mcp_notebook``; ``FakeLab`` answers as the JupyterLab
  extension does (``labextension/src/comm.ts``): ``restore`` with the notebook's records, ``ack``
  for every ``save``/``delete``, and writes the ``.ipynb`` the way Ctrl+S would.
* A flow waits in one kernel, the kernel goes away, a second kernel process continues it, against a
  streamable HTTP demo server run by uvicorn with 2 workers and shared request-state keys.
* Faults: a tampered state, an expired state, a server restarted with fresh keys, a server that is
  down at resume time, a corrupt ``mcp_notebook`` metadata block.
* Secrets: after flows with answers, headers and a bearer token, the saved ``.ipynb`` holds none.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from ..conftest import REPO_ROOT, _wait_until_listening, free_port
from ..support.kernel_harness import Kernel
from ..support.ready_process import stop as _stop

KEY_ENV = "MCPNB_RESUME_TEST_KEY"


# ---------------------------------------------------------------------- the extension's part
class FakeLab:
    """What the labextension does for one notebook, driven by the kernel's iopub messages."""

    def __init__(self, kernel: Kernel, flows: dict[str, Any] | None = None, answer: bool = True) -> None:
        self.k = kernel
        self.flows: dict[str, Any] = json.loads(json.dumps(flows or {}))
        self.answer = answer  # False: JupyterLab without the extension (closes the comm)
        self.received: list[dict[str, Any]] = []
        self.comm_id: str | None = None
        self._seen = 0

    def poll(self) -> None:
        msgs = self.k.messages
        while self._seen < len(msgs):
            m = msgs[self._seen]
            self._seen += 1
            c = m["content"]
            if m["msg_type"] == "comm_open" and c.get("target_name") == "mcp_notebook":
                self.comm_id = c["comm_id"]
                if not self.answer:
                    msg = self.k.kc.session.msg("comm_close", {"comm_id": c["comm_id"], "data": {}})
                    self.k.kc.shell_channel.send(msg)
                    continue
                self._handle(c["data"])
            elif m["msg_type"] == "comm_msg" and c["comm_id"] == self.comm_id and self.answer:
                self._handle(c["data"])

    def _handle(self, data: dict[str, Any]) -> None:
        self.received.append(data)
        op = data.get("op")
        if op == "hello":
            reply = {"op": "restore", "v": 1, "reason": "hello", "flows": self.flows, "path": "nb.ipynb"}
        elif op == "save":
            self.flows[data["record"]["id"]] = data["record"]
            reply = {"op": "ack", "id": data["record"]["id"]}
        elif op == "delete" and data.get("all"):
            self.flows.clear()
            reply = {"op": "ack", "id": None, "all": True}
        else:
            self.flows.pop(data.get("id"), None)
            reply = {"op": "ack", "id": data.get("id")}
        assert self.comm_id is not None
        self.k._comm_msg(self.comm_id, reply)

    def wait(self, predicate: Any, what: str, timeout: float = 30) -> Any:
        def check() -> Any:
            self.poll()
            return predicate()

        return self.k.wait_for(check, timeout, what)

    def ops(self, op: str, flow_id: str | None = None) -> list[dict[str, Any]]:
        out = [d for d in self.received if d.get("op") == op]
        if flow_id is not None:
            out = [d for d in out if (d.get("record") or {}).get("id", d.get("id")) == flow_id]
        return out

    def write(self, path: Path, cells: list[tuple[str, str]]) -> None:
        """Ctrl+S: the notebook model, with ``metadata.mcp_notebook`` as the extension keeps it."""
        write_notebook(path, cells, self.flows)


def write_notebook(path: Path, cells: list[tuple[str, str]], flows: dict[str, Any]) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source, id=cell_id) for cell_id, source in cells]
    if flows:
        nb.metadata["mcp_notebook"] = {"flows": flows}
    nbformat.write(nb, str(path))


def run(
    k: Kernel, code: str, cell_id: str | None = None, interactive: bool = False, wait: bool = True, ok: bool = True
) -> str:
    """Execute like JupyterLab does: ``cellId`` in the request's metadata, stdin allowed when interactive."""
    content = {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": interactive,
        "stop_on_error": False,
    }
    msg = k.kc.session.msg("execute_request", content, metadata={"cellId": cell_id} if cell_id else {})
    k.kc.shell_channel.send(msg)
    msg_id = msg["header"]["msg_id"]
    if wait:
        k.wait_idle(msg_id)
        if ok:
            errors = [m for m in k.for_cell(msg_id) if m["msg_type"] == "error"]
            assert not errors, f"cell failed: {errors[0]['content']['evalue']}\n{code}"
    return msg_id


def newest(k: Kernel, model: str, before: set[str], **state: Any) -> str:
    """The widget of that kind that appeared after ``before`` was taken."""
    found = k.wait_for(
        lambda: [c for c in k.find_widgets(model, **state) if c not in before], what=f"a new {model} {state}"
    )
    return found[-1]


def widgets(k: Kernel) -> set[str]:
    return set(k.comms)


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def server(start_http_server: Any) -> str:
    """The multi-worker demo server: 2 uvicorn workers sharing one request-state key."""
    return start_http_server("demo", keys_env=KEY_ENV, workers=2)


SECRETS = {
    "typed": "typed-passphrase-7f3a",
    "preset": "preset-passphrase-91c2",
    "header": "header-value-5d8e",
    "token": "bearer-token-c4b1",
}

VAULT = """
from typing import Annotated
from pydantic import BaseModel, Field
from mcp.server.mcpserver import Elicit, MCPServer, Resolve

class Secret(BaseModel):
    passphrase: str = Field(description="The passphrase")

class Go(BaseModel):
    go: bool = Field(description="Unlock now?")

async def ask_secret() -> Elicit[Secret]:
    return Elicit("Passphrase, please", Secret)

async def ask_go(secret: Annotated[Secret, Resolve(ask_secret)]) -> Elicit[Go]:
    return Elicit("Ready to unlock?", Go)

vault = MCPServer("vault")

@vault.tool()
async def unlock(door: str, secret: Annotated[Secret, Resolve(ask_secret)], go: Annotated[Go, Resolve(ask_go)]) -> str:
    return f"unlocked {door}" if go.go else "kept shut"
"""

CELLS = [
    ("cell-load", "%load_ext mcp_notebook"),
    ("cell-a", "%mcp call demo.provision_db name=orders size=large"),
    ("cell-b", "%mcp call demo.provision_db name=billing"),
]


@pytest.fixture(scope="module")
def saved(server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Kernel one: flows wait, the extension saves them, the notebook is written, the kernel stops."""
    root = tmp_path_factory.mktemp("resume")
    env = {"VAULT_KEY": secrets.token_hex(32), "MCPNB_TOKEN": SECRETS["token"]}
    k = Kernel(cwd=str(root), env=env)
    lab = FakeLab(k)
    try:
        run(k, "%load_ext mcp_notebook", "cell-load")
        lab.wait(lambda: lab.ops("hello"), "hello")
        run(k, f"%mcp connect demo {server}")

        # flow A: answer round one in the form; round two waits
        before = widgets(k)
        run(k, CELLS[1][1] + " --background", "cell-a", interactive=True)  # left waiting while later cells run
        first = lab.wait(lambda: lab.ops("save"), "the first save")[0]["record"]
        flow_a = first["id"]
        k.click(newest(k, "ButtonModel", before, description="Accept"))
        lab.wait(lambda: any(s["record"]["round"] == 2 for s in lab.ops("save", flow_a)), "round two saved")

        # flow B waits at round one
        run(k, CELLS[2][1] + " --background", "cell-b", interactive=True)
        flow_b = lab.wait(
            lambda: [s["record"]["id"] for s in lab.ops("save") if s["record"]["id"] != flow_a], "flow B saved"
        )[0]

        # flow C finishes: saved while it waited, deleted when done
        cell_c = run(
            k,
            "%mcp call demo.provision_db name=tmp --answer region=us-east-1 --accept-defaults --wait",
            "cell-c",
            interactive=True,
        )
        assert "Provisioned 'tmp' in us-east-1" in k.text_of_cell(cell_c)
        flow_c = lab.wait(lambda: [d["id"] for d in lab.ops("delete")], "flow C deleted")[0]
        assert lab.ops("save", flow_c) and flow_c not in lab.flows

        # secrets: a vault served by this kernel, reached with a header and a bearer token
        run(k, "%%mcp server vault_src\n" + VAULT)
        url = re.search(
            r"http://127\.0\.0\.1:\d+/mcp",
            k.text_of_cell(run(k, "%mcp serve vault_src --keys-env VAULT_KEY --no-auth")),
        ).group(0)
        run(k, f"%mcp connect vault {url} --header X-Team:{SECRETS['header']} --bearer-env MCPNB_TOKEN")
        before = widgets(k)
        run(k, "%mcp call vault.unlock door=front --background", "cell-v1", interactive=True)
        k.set_value(newest(k, "PasswordModel", before), SECRETS["typed"])  # a secret-looking field: masked
        k.click(newest(k, "ButtonModel", before, description="Accept"))
        lab.wait(
            lambda: any(r["name"] == "unlock" and r["round"] == 2 for r in lab.flows.values()), "vault round two saved"
        )
        stopped = run(
            k, f"%mcp call vault.unlock door=back --answer passphrase={SECRETS['preset']}", "cell-v2", ok=False
        )
        assert "'go'" in k.text_of_cell(stopped) and "still saved" in k.text_of_cell(stopped)
        lab.wait(lambda: sum(r["name"] == "unlock" for r in lab.flows.values()) == 2, "headless vault flow kept")

        status = k.text_of_cell(
            run(
                k,
                "_g = get_ipython().magics_manager.registry['MCPMagics'].session.frontend; print(_g.status, _g.replies > 5)",
            )
        )
        assert "connected True" in status
        path = root / "nb.ipynb"
        lab.write(path, CELLS)
    finally:
        k.close()
    yield {
        "path": path,
        "root": root,
        "a": flow_a,
        "b": flow_b,
        "c": flow_c,
        "first": first,
        "lab": lab,
        "server": server,
    }


# ---------------------------------------------------------------------- kernel level
def test_hello_and_saved_record_shape(saved: dict[str, Any]) -> None:
    lab: FakeLab = saved["lab"]
    assert lab.received[0] == {"op": "hello", "v": 1}
    first = saved["first"]
    assert set(first) == {
        "v",
        "id",
        "cell_id",
        "server",
        "method",
        "name",
        "arguments",
        "round",
        "request_state",
        "pending",
        "updated",
        "sig",
    }
    assert first["v"] == 1 and first["cell_id"] == "cell-a" and first["round"] == 1
    assert first["server"] == {"name": "demo", "target": saved["server"]}
    assert first["method"] == "tools/call" and first["name"] == "provision_db"
    assert first["arguments"] == {"name": "orders", "size": "large"}
    assert isinstance(first["request_state"], str) and len(first["request_state"]) > 20
    (question,) = first["pending"].values()
    assert question["method"] == "elicitation/create" and "region" in json.dumps(question["params"])
    assert first["updated"].endswith("Z")
    on_disk = nbformat.read(str(saved["path"]), as_version=4).metadata["mcp_notebook"]["flows"]
    assert on_disk[saved["a"]]["round"] == 2 and on_disk[saved["b"]]["round"] == 1
    assert saved["c"] not in on_disk  # finished: removed


def test_saved_notebook_holds_no_secrets(saved: dict[str, Any]) -> None:
    text = saved["path"].read_text()
    for what, value in SECRETS.items():
        assert value not in text, f"the {what} leaked into the notebook"
    assert "input_responses" not in text and "inputResponses" not in text
    vault = [r for r in json.loads(text)["metadata"]["mcp_notebook"]["flows"].values() if r["name"] == "unlock"]
    assert len(vault) == 2
    for record in vault:
        assert record["server"]["headers"] == ["X-Team"]
        assert record["server"]["bearer_env"] == "MCPNB_TOKEN"


def test_resume_in_a_second_kernel_with_the_extension(saved: dict[str, Any]) -> None:
    flows = nbformat.read(str(saved["path"]), as_version=4).metadata["mcp_notebook"]["flows"]
    k = Kernel(cwd=str(saved["root"]))
    lab = FakeLab(k, flows=dict(flows))
    try:
        run(k, "%load_ext mcp_notebook", "cell-load")
        lab.wait(lambda: lab.ops("hello"), "hello")
        listing = k.text_of_cell(run(k, "%mcp flows"))
        assert saved["a"] in listing and saved["b"] in listing
        # the cell is named as a person finds it (its number and first line), never by the page's cell id; a
        # record from the saved file ran in no cell of this kernel, and the listing says so
        assert "cell-a" not in listing and "(not run in this kernel)" in listing
        assert "tool provision_db" in listing and "saved in nb.ipynb" in listing

        # a vault flow needs its header values again: the message says how
        vault_id = next(i for i, r in flows.items() if r["name"] == "unlock")
        refused = k.text_of_cell(run(k, f"%mcp resume {vault_id}", ok=False))
        assert "X-Team" in refused and "never saved" in refused and "%mcp connect vault" in refused

        # %mcp resume in another cell: reconnects from the saved URL, asks round two there
        before = widgets(k)
        cell = run(k, f"%mcp resume {saved['a']}", "cell-z", interactive=True, wait=False)  # ends with its flow
        k.click(newest(k, "ButtonModel", before, description="Accept"))
        k.wait_for(
            lambda: "Provisioned 'orders' in eu-west-1 (size large)." in k.text_of_cell(cell), what="the resumed result"
        )
        assert "Reconnected 'demo'" in k.text_of_cell(cell)
        lab.wait(lambda: lab.ops("delete", saved["a"]), "flow A deleted")
        assert any(s["record"]["cell_id"] == "cell-z" for s in lab.ops("save", saved["a"]))  # the marker followed
        assert saved["a"] not in lab.flows

        # re-running flow B's original cell offers Continue / Start over; the cell waits for the click and the flow
        before = widgets(k)
        cell = run(k, CELLS[2][1], "cell-b", interactive=True, wait=False)
        nxt = run(k, "print('next cell')", interactive=True, wait=False)  # Run All's next cell
        k.click(newest(k, "ButtonModel", before, description="Continue"))
        html = [str(s.get("value")) for s in k.comms.values() if s.get("_model_name") == "HTMLModel"]
        assert any(saved["b"] in h and "waiting for input" in h for h in html)
        k.click(newest(k, "ButtonModel", before, description="Accept"))  # region (round one)
        confirm = newest(k, "ButtonModel", before | widgets(k), description="Accept")  # confirm (round two)
        assert not k.for_cell(nxt), "the next cell ran while the continued flow waited"
        k.click(confirm)
        k.wait_idle(cell)
        assert "Provisioned 'billing' in eu-west-1 (size small)." in k.text_of_cell(cell)
        k.wait_idle(nxt)
        assert k.text_of_cell(nxt) == "next cell\n"
        lab.wait(lambda: saved["b"] not in lab.flows, "flow B deleted")
    finally:
        k.close()


def test_a_received_flow_resumes_after_consent_and_its_cell_waits(saved: dict[str, Any]) -> None:
    """A flow someone else saved (no signature of this user's) is resumed only after Resume; the cell
    that showed the consent panel ends after the click and the flow it starts, so Run All waits."""
    flows = nbformat.read(str(saved["path"]), as_version=4).metadata["mcp_notebook"]["flows"]
    received = {fid: {key: value for key, value in record.items() if key != "sig"} for fid, record in flows.items()}
    k = Kernel(cwd=str(saved["root"]))
    lab = FakeLab(k, flows=received)
    try:
        run(k, "%load_ext mcp_notebook", "cell-load")
        lab.wait(lambda: lab.ops("hello"), "hello")
        before = widgets(k)
        cell = run(k, f"%mcp resume {saved['a']}", "cell-z", interactive=True, wait=False)
        nxt = run(k, "print('next cell')", interactive=True, wait=False)  # Run All's next cell
        yes = newest(k, "ButtonModel", before, description="Resume")
        k.pump(0.5)
        assert not k.for_cell(nxt), "the next cell ran while the consent panel waited"
        k.click(yes)
        k.click(newest(k, "ButtonModel", before, description="Accept"))
        k.wait_idle(cell)
        assert "Provisioned 'orders' in eu-west-1 (size large)." in k.text_of_cell(cell)
        assert not [m for m in k.for_cell(cell) if m["msg_type"] == "error"]
        k.wait_idle(nxt)
        assert k.text_of_cell(nxt) == "next cell\n"

        # Don't resume: the cell ends, nothing ran, the record stays
        before = widgets(k)
        cell = run(k, f"%mcp resume {saved['b']}", "cell-y", interactive=True, wait=False)
        k.click(newest(k, "ButtonModel", before, description="Don't resume"))
        k.wait_idle(cell)
        assert not [m for m in k.for_cell(cell) if m["msg_type"] == "error"]
        assert saved["b"] in lab.flows and saved["b"] in k.text_of_cell(run(k, "%mcp flows"))
    finally:
        k.close()


def test_resume_from_the_saved_ipynb_without_the_extension(saved: dict[str, Any]) -> None:
    """Another process, no extension (JupyterLab closes the comm): ``__session__`` names the file."""
    k = Kernel(cwd=str(saved["root"]), env={"JPY_SESSION_NAME": str(saved["path"])})
    lab = FakeLab(k, answer=False)
    try:
        run(k, "%load_ext mcp_notebook")
        lab.wait(lambda: lab.comm_id, "hello")
        listing = k.text_of_cell(run(k, "%mcp flows"))
        assert saved["a"] in listing and "read from nb.ipynb; new ones saved in cell outputs" in listing
        done = k.text_of_cell(run(k, f"%mcp resume {saved['a']} --accept-defaults"))
        assert "Provisioned 'orders' in eu-west-1 (size large)." in done
        # the record stays in the file's metadata, which no kernel edits: a void where it ended outvotes it
        assert f"flow {saved['a']} ended here" in done
        assert saved["a"] not in k.text_of_cell(run(k, "%mcp flows"))

        # Start over, offered when the original cell runs again: the cell waits for the new flow
        before = widgets(k)
        cell = run(k, CELLS[2][1], "cell-b", interactive=True, wait=False)
        k.click(newest(k, "ButtonModel", before, description="Start over"))
        newest(k, "ButtonModel", before, description="Accept")  # a fresh form for round one
        assert "Starting over" in k.text_of_cell(cell)
        k.km.interrupt_kernel()  # as closing the notebook does: the new flow stays saved
        k.wait_idle(cell)
        assert "stays saved as flow" in k.text_of_cell(cell)
        listing = k.text_of_cell(run(k, "%mcp flows"))
        # the new flow waits in the same cell, named by its number and first line (not the page's cell id)
        assert saved["b"] not in listing and "] %mcp call demo.provision_db name=billing" in listing
        assert "cell-b" not in listing

        # running that cell once more, in the same kernel, takes the waiting flow over
        before = widgets(k)
        cell = run(k, CELLS[2][1], "cell-b", interactive=True, wait=False)
        k.click(newest(k, "ButtonModel", before, description="Continue"))
        k.click(newest(k, "ButtonModel", before, description="Accept"))
        k.click(newest(k, "ButtonModel", before | widgets(k), description="Accept"))
        k.wait_idle(cell)
        assert "Provisioned 'billing' in eu-west-1 (size small)." in k.text_of_cell(cell)
        assert "name=billing" not in k.text_of_cell(run(k, "%mcp flows"))
    finally:
        k.close()


# ---------------------------------------------------------------------- faults
class DemoProcess:
    """A single-worker demo server on a fixed port, so it can be stopped and started again there."""

    def __init__(self, tmp: Path, key: str, ttl: float | None = None) -> None:
        self.port, self.key, self.ttl, self.tmp = free_port(), key, ttl, tmp
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self, key: str | None = None) -> DemoProcess:
        env = {**os.environ, KEY_ENV: key or self.key}
        if self.ttl:
            env["MCP_NOTEBOOK_DEMO_STATE_TTL"] = str(self.ttl)
        log = self.tmp / f"demo-{self.port}-{time.monotonic_ns()}.log"
        args = [
            sys.executable,
            "-m",
            "mcp_notebook.demo",
            "demo",
            "--transport",
            "http",
            "--port",
            str(self.port),
            "--keys-env",
            KEY_ENV,
        ]
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                args, cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        _wait_until_listening(self.proc, self.port, log)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            _stop(self.proc)
            self.proc = None


@pytest.fixture(scope="module")
def shell() -> Any:
    from ..conftest import get_shell

    return get_shell()


def stop_at_round_two(shell: Any, conn: str, name: str) -> dict[str, Any]:
    """A headless flow that answers round one and stops at round two: its record stays saved."""
    from mcp_notebook.errors import FlowError

    with pytest.raises(FlowError, match="still saved"):
        shell.run_line_magic("mcp", f"call {conn}.provision_db name={name} --answer region=us-west-2")
    hub = shell.magics_manager.registry["MCPMagics"].session
    (record,) = [r for r in hub.store.all() if r["arguments"] == {"name": name}]
    assert record["round"] == 2
    return record


@pytest.fixture(scope="module")
def fault_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """A second kernel with no front end at all (like nbclient): it reads the files it is given."""
    k = Kernel(cwd=str(tmp_path_factory.mktemp("faults")))
    run(k, "%load_ext mcp_notebook")
    yield k
    k.close()


def resume_text(k: Kernel, line: str) -> str:
    return k.text_of_cell(run(k, line, ok=False))


def test_tampered_state_is_refused_and_other_flows_are_untouched(
    shell: Any, server: str, fault_kernel: Kernel, tmp_path: Path
) -> None:
    shell.run_line_magic("mcp", f"connect tamper {server}")
    bad, good = stop_at_round_two(shell, "tamper", "t-bad"), stop_at_round_two(shell, "tamper", "t-good")
    state = bad["request_state"]
    middle = len(state) // 2
    bad = {**bad, "request_state": state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1 :]}
    path = tmp_path / "tampered.ipynb"
    write_notebook(path, [], {bad["id"]: bad, good["id"]: good})

    listing = resume_text(fault_kernel, f"%mcp flows --from {path}")
    assert bad["id"] in listing and good["id"] in listing
    # an edited record no longer carries the user's signature: refused before anything is sent
    text = resume_text(fault_kernel, f"%mcp resume {bad['id']} --accept-defaults")
    assert "UsageError" in text and "not saved by you" in text and f"%mcp resume {bad['id']} --trust" in text
    # resumed anyway: the server's own seal refuses the state
    text = resume_text(fault_kernel, f"%mcp resume {bad['id']} --accept-defaults --trust")
    assert "-32602" in text and "refused the saved request state" in text and "another worker or instance" in text
    # the exact line that starts it afresh (its JSON encoded for the %mcp grammar: braces doubled)
    assert 'To start it again: %mcp call tamper.provision_db --json \'{"name":"t-bad"}\'' in text
    listing = resume_text(fault_kernel, "%mcp flows")
    assert bad["id"] not in listing and good["id"] in listing
    done = resume_text(fault_kernel, f"%mcp resume {good['id']} --accept-defaults")
    assert "Provisioned 't-good' in us-west-2 (size small)." in done
    shell.run_line_magic("mcp", "disconnect tamper")


def test_expired_state_is_refused(shell: Any, fault_kernel: Kernel, tmp_path: Path) -> None:
    srv = DemoProcess(tmp_path, secrets.token_hex(32), ttl=1).start()
    try:
        shell.run_line_magic("mcp", f"connect ttl {srv.url}")
        record = stop_at_round_two(shell, "ttl", "t-ttl")
        path = tmp_path / "ttl.ipynb"
        write_notebook(path, [], {record["id"]: record})
        time.sleep(1.5)
        text = resume_text(fault_kernel, f"%mcp resume {record['id']} --from {path} --accept-defaults")
        assert "-32602" in text and "expired" in text
    finally:
        shell.run_line_magic("mcp", "disconnect ttl")
        srv.stop()


def test_server_restarted_with_fresh_keys_refuses(shell: Any, fault_kernel: Kernel, tmp_path: Path) -> None:
    srv = DemoProcess(tmp_path, secrets.token_hex(32)).start()
    try:
        shell.run_line_magic("mcp", f"connect fresh {srv.url}")
        record = stop_at_round_two(shell, "fresh", "t-fresh")
        shell.run_line_magic("mcp", "disconnect fresh")
        srv.stop()
        srv.start(key=secrets.token_hex(32))  # same URL, new keys
        path = tmp_path / "fresh.ipynb"
        write_notebook(path, [], {record["id"]: record})
        text = resume_text(fault_kernel, f"%mcp resume {record['id']} --from {path} --accept-defaults")
        assert "refused the saved request state" in text and "RequestStateSecurity(keys=[...])" in text
    finally:
        srv.stop()


def test_server_down_at_resume_time_keeps_the_flow(shell: Any, fault_kernel: Kernel, tmp_path: Path) -> None:
    srv = DemoProcess(tmp_path, secrets.token_hex(32)).start()
    try:
        shell.run_line_magic("mcp", f"connect down {srv.url}")
        record = stop_at_round_two(shell, "down", "t-down")
        shell.run_line_magic("mcp", "disconnect down")
        srv.stop()
        path = tmp_path / "down.ipynb"
        write_notebook(path, [], {record["id"]: record})
        text = resume_text(fault_kernel, f"%mcp resume {record['id']} --from {path} --accept-defaults")
        assert "could not reach the server" in text and "stays saved" in text
        assert record["id"] in resume_text(fault_kernel, "%mcp flows")
        srv.start()  # back, same keys: the same saved state goes through
        done = resume_text(fault_kernel, f"%mcp resume {record['id']} --accept-defaults")
        assert "Provisioned 't-down' in us-west-2 (size small)." in done
    finally:
        srv.stop()


def test_corrupt_metadata_is_ignored_with_a_warning(
    fault_kernel: Kernel, tmp_path: Path, saved: dict[str, Any]
) -> None:
    garbage = tmp_path / "garbage.ipynb"
    write_notebook(garbage, [("c1", "print(1)")], {})
    nb = nbformat.read(str(garbage), as_version=4)
    nb.metadata["mcp_notebook"] = "not a block"
    nbformat.write(nb, str(garbage))
    text = resume_text(fault_kernel, f"%mcp flows --from {garbage}")
    assert 'Warning: garbage.ipynb: notebook metadata "mcp_notebook" is a string, not an object; ignored' in text
    assert nbformat.read(str(garbage), as_version=4).cells[0].source == "print(1)"  # the notebook still opens

    good = dict(saved["first"], id="goodflow", round=1)
    mixed = tmp_path / "mixed.ipynb"
    write_notebook(
        mixed,
        [],
        {"goodflow": good, "broken": 42, "future": dict(good, id="future", v=9), "nostate": {"v": 1, "id": "nostate"}},
    )
    text = resume_text(fault_kernel, f"%mcp flows --from {mixed}")
    assert "saved flow 'broken' is a number, not an object; ignored" in text
    assert "saved flow 'future' was written by a newer mcp-notebook" in text
    assert "saved flow 'nostate' does not say which server" in text
    assert "goodflow" in text.split("flows waiting for input")[1]
    resume_text(fault_kernel, "%mcp forget goodflow")


def test_unload_and_load_again(fault_kernel: Kernel) -> None:
    run(fault_kernel, "%unload_ext mcp_notebook")
    opened = len(
        [
            m
            for m in fault_kernel.messages
            if m["msg_type"] == "comm_open" and m["content"].get("target_name") == "mcp_notebook"
        ]
    )
    run(fault_kernel, "%load_ext mcp_notebook")
    fault_kernel.wait_for(
        lambda: (
            len(
                [
                    m
                    for m in fault_kernel.messages
                    if m["msg_type"] == "comm_open" and m["content"].get("target_name") == "mcp_notebook"
                ]
            )
            > opened
        ),
        what="a new hello",
    )
    assert any(m["msg_type"] == "comm_close" for m in fault_kernel.messages)  # the old comm was closed
    assert "flows waiting for input" in resume_text(fault_kernel, "%mcp flows") or "No flows" in resume_text(
        fault_kernel, "%mcp flows"
    )


def test_help(shell: Any, capsys: Any) -> None:
    for sub in ("flows", "resume", "forget"):
        shell.run_line_magic("mcp", f"{sub} --help")
        assert f"%mcp {sub}" in capsys.readouterr().out
