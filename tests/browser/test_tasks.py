"""A call running as a task, followed from a new kernel: JupyterLab in Debian's Chromium, driven by Playwright.

A real 2026-07-28 task server (``tests.support.task_servers``, over HTTP in its own process, so its tasks
outlive any kernel) serves ``slow_job``. A notebook runs ``%mcp call jobs.slow_job duration=15
--task``: the cell shows the task's live view ("task working ..."). The notebook is saved and the
kernel shut down while the task still runs; on disk the notebook's record holds a ``task`` entry
(a ref, never the task id, which the test learns from the server's stats) and the id waits in
``tasks.json`` (0600) of the kernels' temp ``JUPYTER_DATA_DIR``. The server finishes the task on
its own. The page is reloaded (a new kernel on the same notebook, same data folder, so the record
is trusted): ``%mcp flows`` lists the flow as "task working", ``%mcp resume ID`` reconnects by the
saved URL, polls once and shows "Done after 15s"; the record leaves the notebook and the handle
leaves ``tasks.json``. A screenshot of the resumed cell goes to ``docs/images/task-resumed.png``.

The kernels' ``JUPYTER_DATA_DIR`` (task handles, the notary secret that signs records) is a temp
folder: the user's own is never read or touched.
"""

from __future__ import annotations

import json
import re
import stat
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..conftest import REPO_ROOT
from ..support.browser import Front, api, chromium_page, has_class, notebook, shut_down_kernels, wait_for
from ..support.lab_fixtures import SharedLab, own_folder
from ..support.task_servers import running_task_server, stats_url

SCREENSHOT = REPO_ROOT / "docs" / "images" / "task-resumed.png"
NAME = "tasks.ipynb"
DURATION = 15  # seconds of work on the server: long enough to save and shut the kernel down meanwhile
RESULT = f"Done after {DURATION}s"


@dataclass(frozen=True)
class Lab:
    url: str  # http://127.0.0.1:PORT, without a last /
    root: Path  # this test's folder in the one JupyterLab serves
    folder: str  # its path there
    data_dir: Path  # the kernels' JUPYTER_DATA_DIR

    @property
    def name(self) -> str:
        """The notebook's path on the server."""
        return f"{self.folder}/{NAME}"

    @property
    def handles_file(self) -> Path:
        return self.data_dir / "mcp_notebook" / "tasks.json"

    def on_disk(self) -> dict[str, Any] | None:
        """The saved notebook read from disk; ``None`` while it is missing or being written."""
        try:
            data = json.loads((self.root / NAME).read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None


def server_tasks(mcp_url: str) -> dict[str, dict[str, Any]]:
    """The task server's live tasks by id (``GET /test/stats``, which the server does not count)."""
    return dict(server_stats(mcp_url)["tasks"])


def server_stats(mcp_url: str) -> dict[str, Any]:
    with urllib.request.urlopen(stats_url(mcp_url), timeout=5) as reply:
        return dict(json.loads(reply.read()))


def flows_of(nb: dict[str, Any]) -> dict[str, Any]:
    return dict(nb.get("metadata", {}).get("mcp_notebook", {}).get("flows", {}))


def run_cell(front: Front, index: int, timeout: float = 60_000) -> Any:
    """Run the (filled) cell ``index`` as a person does (click, Shift+Enter) and wait until it ran; returns the cell."""
    from playwright.sync_api import expect

    cell = front.page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(index)
    cell.locator(".jp-InputArea-editor").click()
    front.page.keyboard.press("Shift+Enter")
    expect(cell.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"), timeout=timeout)
    return cell


@pytest.fixture
def task_server() -> Iterator[str]:
    with running_task_server("2026", poll_interval_ms=200) as url:
        yield url


@pytest.fixture
def lab(task_server: str, shared_labs: Callable[[str], SharedLab]) -> Iterator[Lab]:
    """The shared JupyterLab (``support/lab_fixtures.py``: both kernels share its JUPYTER_DATA_DIR, so the
    same task handles and notary secret) and this test's folder there, holding the notebook."""
    cells = [
        "%load_ext mcp_notebook",
        f"%mcp connect jobs {task_server}",
        f"%mcp call jobs.slow_job duration={DURATION} --task",
        "",  # the new kernel's cells: %load_ext, %mcp flows, %mcp resume
        "",
        "",
    ]
    shared = shared_labs("lab")
    with own_folder(shared.url, "lab", "task-survives") as folder:
        (shared.root / folder / NAME).write_text(json.dumps(notebook(cells)))
        yield Lab(shared.url, shared.root / folder, folder, shared.data_dir)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    with chromium_page(tmp_path / "profile") as page:
        page.set_default_timeout(30_000)
        yield page


def test_task_survives_the_kernel_and_resumes(lab: Lab, task_server: str, browser: Any) -> None:
    from playwright.sync_api import expect

    front = Front(browser, lab.url, "lab")
    panel = front.open(lab.name)
    run_cell(front, 0)
    run_cell(front, 1)
    call = panel.locator(".jp-Cell").nth(2)
    call.locator(".jp-InputArea-editor").click()
    front.page.keyboard.press("Shift+Enter")
    started = time.monotonic()

    # the live view: status line with the poll interval, and a Cancel button
    output = call.locator(".jp-OutputArea")
    expect(output).to_contain_text("task working", timeout=10_000)
    expect(output).to_contain_text(re.compile(r"task working · .* · started [\d.]+ s ago · polled every 0\.2 s"))
    expect(call.locator(".mcp-flow").get_by_role("button", name="Cancel")).to_be_visible()
    ((task_id, task),) = wait_for(lambda: server_tasks(task_server), "the task on the server", timeout=10).items()
    assert task["tool"] == "slow_job" and task["status"] == "working", task
    expect(call).to_have_class(has_class("mcp-notebook-waiting"), timeout=10_000)  # the record is in the model
    flow_id = call.get_attribute("data-mcp-flows")
    assert flow_id and " " not in flow_id
    assert output.inner_text().count(task_id) == 0  # the view shows no task id

    # save, then the kernel goes away while the server still works on the task
    front.save()
    wait_for(lambda: (nb := lab.on_disk()) is not None and flows_of(nb), "the record on disk", timeout=15)
    shut_down_kernels(lab.url)
    assert time.monotonic() - started < DURATION, "the kernel must be gone before the task ends; the test was too slow"
    assert server_tasks(task_server)[task_id]["status"] == "working"
    assert api(lab.url, "kernels") == []

    text = (lab.root / NAME).read_text()
    assert task_id not in text  # the bearer-like handle never enters the notebook
    ((record_id, record),) = flows_of(json.loads(text)).items()
    assert record_id == flow_id == record["id"]
    assert record["cell_id"] == "cell-2" and record["server"]["name"] == "jobs" and record["name"] == "slow_job"
    assert record["server"]["target"] == task_server
    entry = record["task"]
    assert entry["status"] == "working" and entry["generation"] == "2026"
    assert {"ref", "generation", "status", "created", "ttl_ms", "poll_ms"} <= set(entry), entry
    assert entry["poll_ms"] == 200 and entry["ttl_ms"] > DURATION * 1000
    assert entry["ref"] != task_id and task_id not in json.dumps(record)

    handles = lab.handles_file
    assert stat.S_IMODE(handles.stat().st_mode) == 0o600
    kept = json.loads(handles.read_text())
    assert kept[entry["ref"]]["task_id"] == task_id
    assert kept[entry["ref"]]["flow_id"] == flow_id

    # no kernel follows the task now: the server finishes it on its own
    wait_for(
        lambda: server_tasks(task_server)[task_id]["status"] == "completed",
        "the server to complete the task",
        timeout=30,
    )
    polls_before = server_stats(task_server)["task_requests"].get(task_id, {}).get("tasks/get", 0)

    # a new kernel on the same notebook (the page reopened): the saved record lists and resumes
    front.page.reload()
    front.wait_idle(lab.name)
    panel = front.page.locator(".jp-NotebookPanel:visible")
    call = panel.locator(".jp-Cell").nth(2)
    expect(call).to_have_class(has_class("mcp-notebook-waiting"))
    expect(call.locator(".mcp-notebook-badge")).to_contain_text(f"%mcp resume {flow_id}")
    front.run_in_cell(3, "%load_ext mcp_notebook")
    listing = front.run_in_cell(4, "%mcp flows")
    row = listing.locator(".jp-OutputArea tr", has_text=flow_id)
    expect(row).to_have_count(1)
    expect(row).to_contain_text("task working")
    expect(row).to_contain_text("slow_job")
    expect(row.locator("td").last).to_have_text("yes")  # saved by you: same notary secret, no consent needed

    asked = time.monotonic()
    resumed = front.run_in_cell(5, f"%mcp resume {flow_id}", timeout=15_000)
    out = resumed.locator(".jp-OutputArea")
    expect(out).to_contain_text(RESULT, timeout=15_000)
    assert time.monotonic() - asked < 15, "the resumed task's result took too long"
    expect(resumed.locator(".mcp-confirm-resume")).to_have_count(0)
    expect(out).to_contain_text("task completed")
    assert task_id not in out.inner_text()
    assert (
        server_stats(task_server)["task_requests"][task_id]["tasks/get"] > polls_before
    )  # the new kernel asked the server

    # the record leaves the notebook, the handle leaves tasks.json
    expect(panel.locator(".jp-Cell.mcp-notebook-waiting")).to_have_count(0, timeout=15_000)
    wait_for(lambda: task_id not in handles.read_text(), "the task handle dropped from tasks.json", timeout=15)
    assert entry["ref"] not in json.loads(handles.read_text())
    front.save()

    def saved_after_resume() -> bool:
        nb = lab.on_disk()
        return nb is not None and bool(nb["cells"][5]["execution_count"]) and not flows_of(nb)

    wait_for(saved_after_resume, "the notebook saved without the record", timeout=15)
    final = (lab.root / NAME).read_text()
    assert task_id not in final
    assert RESULT in json.dumps(json.loads(final)["cells"][5]["outputs"])

    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    resumed.screenshot(path=str(SCREENSHOT))
