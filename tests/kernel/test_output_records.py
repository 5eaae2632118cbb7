"""Front ends without the labextension keep a waiting flow in its cell's output: papermill, nbclient, VS Code.

* papermill runs a notebook whose call asks a question nobody preset: the cell fails, the executed
  notebook holds the flow's record in that cell's output; a second kernel, opened on that very file
  (``__session__``), runs ``%mcp resume ID`` and gets the result, and the server (a real stdio process
  per kernel, ``tests/support/counting_server.py``) saw the first round once.
* A kernel that looks like VS Code's (``__vsc_ipynb_file__`` set, the comm's hello never answered, cells
  that allow stdin): the form waits, the record appears in the cell after ``page_wait``, the file is
  written from the iopub messages as a front end writes it, the kernel goes away, a new one lists the
  flow from that file, the form is answered and the flow ends, leaving a void: the file holds no flow.
* With the extension answering (``FakeLab``), nothing goes into outputs: the metadata is the store.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

import nbclient
import nbformat
import papermill
import pytest

from mcp_notebook.flows.record import OUTPUT_MIME, read_notebook

from ..conftest import REPO_ROOT
from ..support.counting_server import KEY_ENV, calls
from ..support.kernel_harness import Kernel
from .test_resume import FakeLab

CONNECT = (
    "import sys, os\n"
    "key = os.environ['{env}']\n"
    "%mcp connect local --env {env}={{key}} --cwd {root} -- {{sys.executable}} -m tests.support.counting_server {log}"
)


def _connect(log: Path) -> str:
    return CONNECT.format(env=KEY_ENV, root=json.dumps(str(REPO_ROOT)), log=json.dumps(str(log)))


def _record_outputs(nb: Any) -> list[dict[str, Any]]:
    return [o for c in nb.cells for o in c.get("outputs", []) if OUTPUT_MIME in o.get("data", {})]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, KEY_ENV: secrets.token_hex(32), "PYTHONPATH": str(REPO_ROOT)}


def test_papermill_run_leaves_the_flow_in_the_executed_notebook_and_a_new_kernel_resumes_it(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "calls.jsonl"
    source = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("%load_ext mcp_notebook"),
            nbformat.v4.new_code_cell(_connect(log)),
            nbformat.v4.new_code_cell("%mcp call local.provision_db name=orders --answer region=eu-west-1"),
            nbformat.v4.new_code_cell("print('not reached')"),
        ]
    )
    source.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(source, tmp_path / "job.ipynb")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(papermill.PapermillExecutionError) as failed:
        papermill.execute_notebook(
            str(tmp_path / "job.ipynb"), str(tmp_path / "ran.ipynb"), kernel_name="python3", cwd=str(tmp_path)
        )
    assert "has no answer" in str(failed.value) and "ok=VALUE" in str(failed.value)
    ran = nbformat.read(tmp_path / "ran.ipynb", as_version=4)
    [output] = _record_outputs(ran)
    record = output["data"][OUTPUT_MIME]
    flow_id = record["id"]
    assert record["round"] == 2 and record["name"] == "provision_db" and record["sig"].startswith("hmac-sha256:")
    text = output["data"]["text/plain"]
    assert f"%mcp resume {flow_id}" in text and "Create 'orders' (small) in eu-west-1?" in text
    assert key_not_in(env[KEY_ENV], tmp_path / "ran.ipynb")
    assert [c["state"] for c in calls(str(log))] == [False, True]  # round 1 asked the region, round 2 the confirmation
    assert read_notebook(str(tmp_path / "ran.ipynb"))[0].keys() == {flow_id}

    # a person opens the executed notebook later (a new kernel whose __session__ is that file) and continues
    ran.cells.append(nbformat.v4.new_code_cell(f"%mcp resume {flow_id} --answer ok=true"))
    client = nbclient.NotebookClient(
        ran, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    with client.setup_kernel(env={**env, "JPY_SESSION_NAME": str(tmp_path / "ran.ipynb")}):
        code = [i for i, c in enumerate(ran.cells) if c.cell_type == "code"]  # papermill added a markdown cell
        for index in (code[0], code[1], code[-1]):  # %load_ext, connect, resume: not the call again
            client.execute_cell(ran.cells[index], index)
    resume_cell = ran.cells[-1]
    texts = [o.get("data", {}).get("text/plain", "") for o in resume_cell.outputs]
    assert "Provisioned 'orders' in eu-west-1 (size small)." in texts
    assert not [o for o in resume_cell.outputs if o["output_type"] == "error"]
    sent = calls(str(log))
    assert len(sent) == 3 and sent[2]["state"] is True and sent[2]["responses"] == ["mcp_notebook.demo:ask_confirm"]
    # the record above still sits in the failed cell's output, voided by the resume cell's output
    nbformat.write(ran, tmp_path / "ran.ipynb")
    void = resume_cell.outputs[-1]["data"][OUTPUT_MIME]
    assert void["ended"] == flow_id and void["at"] >= record["updated"]
    assert read_notebook(str(tmp_path / "ran.ipynb")) == ({}, [])


def key_not_in(key: str, path: Path) -> bool:
    return key not in path.read_text(encoding="utf-8")


# ---------------------------------------------------------------------- a front end that writes the file
class FileFront:
    """Writes cells' outputs from the kernel's iopub messages as a notebook front end does (display ids in its memory)."""

    def __init__(self, kernel: Kernel) -> None:
        self.k = kernel
        self.cells: list[tuple[str, Any]] = []  # (execute msg id, nbformat cell)
        self._displays: dict[str, list[dict[str, Any]]] = {}

    def run(self, code: str, wait: bool = True) -> str:
        msg_id = self.k.execute(code, allow_stdin=True, wait=wait)
        self.cells.append((msg_id, nbformat.v4.new_code_cell(code)))
        return msg_id

    def write(self, path: Path) -> Any:
        self._displays.clear()
        for msg_id, cell in self.cells:
            cell.outputs = []
            for m in self.k.for_cell(msg_id):
                self._apply(cell, m)
        nb = nbformat.v4.new_notebook(cells=[c for _i, c in self.cells])
        nbformat.write(nb, path)
        return nb

    def _apply(self, cell: Any, m: dict[str, Any]) -> None:
        kind, c = m["msg_type"], m["content"]
        if kind in ("display_data", "execute_result"):
            out = nbformat.v4.new_output("display_data", data=c["data"], metadata=c.get("metadata", {}))
            cell.outputs.append(out)
            display_id = c.get("transient", {}).get("display_id")
            if display_id:
                self._displays.setdefault(display_id, []).append(out)
        elif kind == "update_display_data":
            for out in self._displays.get(c.get("transient", {}).get("display_id"), []):
                out["data"] = c["data"]
        elif kind == "stream":
            cell.outputs.append(nbformat.v4.new_output("stream", name=c["name"], text=c["text"]))
        elif kind == "error":
            cell.outputs.append(nbformat.v4.new_output("error", ename=c["ename"], evalue=c["evalue"], traceback=[]))


def _confirm_and_accept(kernel: Kernel, cell: str) -> None:
    accept = kernel.wait_for(lambda: kernel.find_widgets("ButtonModel", description="Accept"), what="Accept")[-1]
    kernel.click(accept)
    kernel.wait_for(lambda: "Provisioned 'orders'" in kernel.text_of_cell(cell), what="the result")
    kernel.wait_idle(cell)


def test_a_vs_code_like_kernel_saves_the_flow_in_its_cell_and_a_new_kernel_finishes_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    log = tmp_path / "calls.jsonl"
    path = tmp_path / "analysis.ipynb"
    first = Kernel(cwd=str(tmp_path), env=env)
    try:
        front = FileFront(first)
        front.run(f"__vsc_ipynb_file__ = {str(path)!r}\n%load_ext mcp_notebook\n%config MCPMagics.page_wait = 0.5")
        front.run(_connect(log))
        cell = front.run("%mcp call local.provision_db name=orders --answer region=eu-west-1", wait=False)
        first.wait_for(lambda: first.find_widgets("ButtonModel", description="Accept"), what="the confirm form")
        # nobody answers the extension's hello: after page_wait the record goes into the waiting cell's output
        first.wait_for(
            lambda: any(OUTPUT_MIME in m["content"].get("data", {}) for m in first.for_cell(cell)),
            timeout=15,
            what="the record in the cell's output",
        )
        nb = front.write(path)  # Ctrl+S while the form waits
    finally:
        first.close()
    [output] = _record_outputs(nb)
    flow_id = output["data"][OUTPUT_MIME]["id"]
    assert read_notebook(str(path))[0].keys() == {flow_id}

    second = Kernel(cwd=str(tmp_path), env=env)
    try:
        front2 = FileFront(second)
        front2.run(f"__vsc_ipynb_file__ = {str(path)!r}\n%load_ext mcp_notebook")
        front2.run(_connect(log))
        listed = second.text_of_cell(front2.run("%mcp flows"))
        assert flow_id in listed and "read from analysis.ipynb" in listed
        resume = front2.run(f"%mcp resume {flow_id}", wait=False)
        _confirm_and_accept(second, resume)
        second.wait_for(
            lambda: any(OUTPUT_MIME in m["content"].get("data", {}) for m in second.for_cell(resume)),
            timeout=15,
            what="the void where the flow ended",
        )
        assert not [m for m in second.for_cell(resume) if m["msg_type"] == "error"]
        # the second kernel's notebook is the first one with its new cells: the void lands beside the old record
        nb2 = front2.write(tmp_path / "second-cells.ipynb")
        merged = nbformat.v4.new_notebook(cells=nb.cells + nb2.cells)
        nbformat.write(merged, path)
    finally:
        second.close()
    voids = [o["data"][OUTPUT_MIME] for o in _record_outputs(merged) if "ended" in o["data"][OUTPUT_MIME]]
    assert [v["ended"] for v in voids] == [flow_id]
    assert read_notebook(str(path)) == ({}, [])
    assert [c["state"] for c in calls(str(log))] == [False, True, True]  # no first round again


def test_with_the_extension_records_stay_in_metadata_only(tmp_path: Path, env: dict[str, str]) -> None:
    log = tmp_path / "calls.jsonl"
    kernel = Kernel(cwd=str(tmp_path), env=env)
    try:
        lab = FakeLab(kernel)
        kernel.execute("%load_ext mcp_notebook\n%config MCPMagics.page_wait = 0.5", allow_stdin=True)
        kernel.wait_for(lambda: (lab.poll(), lab.comm_id)[1], what="the hello")
        kernel.execute(_connect(log), allow_stdin=True)  # the restore was handled before this cell: connected
        cell = kernel.execute(
            "%mcp call local.provision_db name=orders --answer region=eu-west-1", allow_stdin=True, wait=False
        )
        kernel.wait_for(lambda: (lab.poll(), lab.flows)[1], what="the record saved through the comm")
        kernel.pump(1.0)  # past page_wait (0.5 s here): nothing goes into the cell's outputs
        assert not [m for m in kernel.for_cell(cell) if OUTPUT_MIME in m["content"].get("data", {})]
        _confirm_and_accept(kernel, cell)
        lab.poll()
        assert lab.flows == {}
        assert not [m for m in kernel.for_cell(cell) if OUTPUT_MIME in m["content"].get("data", {})]
    finally:
        kernel.close()
