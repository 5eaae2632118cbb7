"""Tasks in real kernels: the live task view, its question answered in the form, Cancel, a hundred tasks in
one table, and a task followed from a second kernel after the first one is gone.

The JupyterLab extension's part (``restore``, ``save``/``delete`` acks, Ctrl+S) is played by
``FakeLab`` from ``kernel/test_resume``; the browser test (``browser/test_tasks``) does the same
through JupyterLab in Chromium. Both kernels share a temporary ``JUPYTER_DATA_DIR``: the task
handles (``mcp_notebook/tasks.json``) and the notary secret that signs records live there, as they
would for one user on one machine.
"""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import nbformat
import pytest

from tests.support import task_servers as ts

from ..support.kernel_harness import Kernel
from .test_resume import FakeLab, run

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with ts.running_task_server("2026", poll_interval_ms=200) as url:
        yield url


def stats(url: str) -> dict[str, Any]:
    response = httpx2.get(ts.stats_url(url), timeout=10)
    response.raise_for_status()
    data: dict[str, Any] = response.json()
    return data


def newest(k: Kernel, model: str, before: set[str], **state: Any) -> str:
    found = k.wait_for(
        lambda: [c for c in k.find_widgets(model, **state) if c not in before], what=f"a new {model} {state}"
    )
    return str(found[-1])


def header_text(k: Kernel, before: set[str]) -> str:
    """The newest live view's header (an HTML widget), as it is now."""
    headers = [
        c for c in k.find_widgets("HTMLModel") if c not in before and "mcpnb" in str(k.comms[c].get("value", ""))
    ]
    return str(k.comms[headers[0]].get("value", "")) if headers else ""


def test_task_view_question_cancel_and_a_hundred_in_one_table(server: str, tmp_path: Path) -> None:
    k = Kernel(cwd=str(tmp_path), env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")})
    FakeLab(k)
    try:
        run(k, "%load_ext mcp_notebook", "cell-load")
        run(k, f"%mcp connect jobs {server}")

        # the live view shows the task; its question is a form in the cell
        before = set(k.comms)
        cell = run(
            k, "%mcp call jobs.slow_job duration=1 ask=true --task", "cell-ask", interactive=True, wait=False
        )  # ends with its task
        k.wait_for(
            lambda: "task working" in header_text(k, before) and "polled every 0.2 s" in header_text(k, before),
            what="the task line",
        )
        field = newest(k, "TextModel", before)
        k.set_value(field, "af-south")
        k.click(newest(k, "ButtonModel", before, description="Accept"))
        k.wait_for(lambda: "Done in af-south" in k.text_of_cell(cell), what="the task's result in its cell")
        assert "task completed" in k.text_of_cell(cell)

        # Cancel: the server is told
        before = set(k.comms)
        cancelled = run(k, "%mcp call jobs.slow_job duration=30 --task", "cell-cancel", interactive=True, wait=False)
        k.wait_for(lambda: "task working" in header_text(k, before), what="the second task")
        task_id = k.wait_for(
            lambda: [t for t, v in stats(server)["tasks"].items() if v["status"] == "working"],
            what="the task on the server",
        )[0]
        k.click(newest(k, "ButtonModel", before, description="Cancel"))
        k.wait_for(lambda: stats(server)["tasks"][task_id]["status"] == "cancelled", what="the server's task cancelled")
        assert stats(server)["task_requests"][task_id]["tasks/cancel"] == 1
        k.wait_idle(cancelled)  # the cell ends with its cancelled task

        # a hundred tasks from a loop: one table, no widgets
        before = set(k.comms)
        loop = run(
            k,
            "import mcp_notebook\nflows = [mcp_notebook.call('jobs.slow_job', {'duration': round(0.01 * i, 2)}, task=True) for i in range(100)]",
            "cell-loop",
        )
        run(
            k,
            "results = [f.result(60).content[0].text for f in flows]\nassert results == [f'Done after {round(0.01 * i, 2):g}s' for i in range(100)]",
        )
        k.wait_for(lambda: "100 (100 done)" in k.text_of_cell(loop), what="the final table")
        shown = [m for m in k.for_cell(loop) if m["msg_type"] == "display_data"]
        assert len(shown) == 1 and "calls started in this cell" in shown[0]["content"]["data"]["text/plain"]
        assert set(k.comms) == before  # not one widget for a hundred calls
        updates = [m for m in k.for_cell(loop) if m["msg_type"] == "update_display_data"]
        assert 1 <= len(updates) < 60  # redrawn at most every half second, not once per poll
    finally:
        k.close()


def test_a_task_started_in_one_kernel_is_finished_in_another(server: str, tmp_path: Path) -> None:
    env = {"JUPYTER_DATA_DIR": str(tmp_path / "jd")}
    cells = [
        ("cell-load", "%load_ext mcp_notebook"),
        ("cell-connect", f"%mcp connect jobs {server}"),
        ("cell-job", "%mcp call jobs.slow_job duration=3 --task"),
    ]
    path = tmp_path / "nb.ipynb"
    first = Kernel(cwd=str(tmp_path), env=env)
    lab = FakeLab(first)
    try:
        run(first, cells[0][1], cells[0][0])
        run(first, cells[1][1], cells[1][0])
        known = set(stats(server)["tasks"])
        run(
            first, cells[2][1] + " --background", cells[2][0], interactive=True
        )  # the kernel closes while the task works
        record = lab.wait(
            lambda: [s["record"] for s in lab.ops("save") if s["record"].get("task")], "the task's record"
        )[0]
        task_id = first.wait_for(lambda: [t for t in stats(server)["tasks"] if t not in known], what="the new task")[0]
        lab.write(path, cells)
    finally:
        first.close()  # the kernel goes away; the server goes on

    text = path.read_text()
    saved = json.loads(text)["metadata"]["mcp_notebook"]["flows"]
    assert list(saved) == [record["id"]] and saved[record["id"]]["task"]["status"] == "working"
    assert saved[record["id"]]["task"]["generation"] == "2026" and saved[record["id"]]["round"] == 0
    assert task_id not in text  # the notebook holds a reference, never the handle
    handles = tmp_path / "jd" / "mcp_notebook" / "tasks.json"
    assert task_id in handles.read_text() and stat.S_IMODE(handles.stat().st_mode) == 0o600
    deadline = time.monotonic() + 30
    while stats(server)["tasks"][task_id]["status"] != "completed":
        assert time.monotonic() < deadline, "the server did not finish the task"
        time.sleep(0.2)

    second = Kernel(cwd=str(tmp_path), env=env)
    lab2 = FakeLab(second, flows=nbformat.read(str(path), as_version=4).metadata["mcp_notebook"]["flows"])
    try:
        run(second, "%load_ext mcp_notebook", "cell-load")
        lab2.wait(lambda: lab2.ops("hello"), "hello")
        listed = second.text_of_cell(run(second, "%mcp flows"))
        assert record["id"] in listed and "task working" in listed and "yes" in listed  # saved by this user
        tasks = second.text_of_cell(run(second, "%mcp tasks"))
        assert f"saved: %mcp resume {record['id']}" in tasks and task_id not in tasks
        cell = run(second, f"%mcp resume {record['id']}", "cell-job", interactive=True)
        second.wait_for(lambda: "Done after 3s" in second.text_of_cell(cell), what="the result in the new kernel")
        assert "Reconnected 'jobs'" in second.text_of_cell(cell)
        lab2.wait(lambda: lab2.ops("delete", record["id"]), "the finished task's record deleted")
        assert record["id"] not in lab2.flows and task_id not in handles.read_text()
        assert stats(server)["task_requests"][task_id].get("tasks/get", 0) >= 1
    finally:
        second.close()
