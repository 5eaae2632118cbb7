"""Issue 11 item 15: the README's tour runs as written in a kernel like ``make lab``'s.

``make lab`` starts JupyterLab from the venv without putting the venv on PATH, so the kernel's
``python`` is not the one with the package. The tour's stdio line uses ``{sys.executable}``; this
test runs the tour's code block cell by cell in a real kernel whose PATH has no venv, against
the demo HTTP server the README says to start (on a free port instead of 8000).

Issue 21 item 9: every block of "Sampling, roots, saved flows, servers in cells" runs as written
too (a complete ``%%mcp server`` cell, ``roots add .`` rather than a folder that may not exist), and
the tour's cell that asks for ``%mcp servers`` and ``%mcp tools`` shows both listings.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from .conftest import REPO_ROOT
from .support.kernel_harness import Kernel


def tour_blocks() -> list[str]:
    """The code blocks of the README's "A tour" section, in order (the python block and the %%mcp cell)."""
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("## A tour", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"```(?:python)?\n(.*?)```", section, flags=re.S)


def run_answering(kernel: Kernel, cell: str, timeout: float = 60) -> str:
    """Run ``cell`` interactively as a reader does: a form that appears while it waits gets its Accept clicked."""
    import time

    clicked = set(kernel.find_widgets("ButtonModel", description="Accept"))
    msg_id = kernel.execute(cell, allow_stdin=True, wait=False)
    deadline = time.monotonic() + timeout
    while not any(
        m["msg_type"] == "status" and m["content"]["execution_state"] == "idle" for m in kernel.for_cell(msg_id)
    ):
        assert time.monotonic() < deadline, f"cell did not finish: {cell}"
        for button in set(kernel.find_widgets("ButtonModel", description="Accept")) - clicked:
            clicked.add(button)
            kernel.click(button)  # the reader answers the form with its prefilled default
        kernel.pump(0.1)
    errors = [m["content"] for m in kernel.for_cell(msg_id) if m["msg_type"] == "error"]
    assert not errors, f"cell failed: {errors[0]['ename']}: {errors[0]['evalue']}\n{cell}"
    return msg_id


def test_readme_tour_runs_as_written(start_http_server: Any, tmp_path: Path) -> None:
    blocks = tour_blocks()
    assert len(blocks) == 2 and "{sys.executable}" in blocks[0] and blocks[1].startswith("%%mcp call")
    url = start_http_server("demo")
    port = url.split(":")[-1].split("/")[0]
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != Path(venv_bin))
    kernel = Kernel(cwd=str(tmp_path), env={"PATH": path, "VIRTUAL_ENV": ""})
    try:
        probe = kernel.execute(
            "import shutil, sys; print('python on PATH:', shutil.which('python'), '|', sys.executable)"
        )
        assert venv_bin not in kernel.text_of_cell(probe).split("|")[0]  # like make lab: the venv is not on PATH
        cells = [c for c in re.split(r"\n\s*\n", blocks[0].replace(":8000/", f":{port}/")) if c.strip()] + [blocks[1]]
        ran = [run_answering(kernel, cell) for cell in cells]  # raises if a cell fails
        (asking,) = [msg_id for cell, msg_id in zip(cells, ran, strict=True) if "%mcp servers" in cell]
        shown = [m for m in kernel.for_cell(asking) if m["msg_type"] in ("display_data", "execute_result")]
        listed = [m["content"]["data"]["text/plain"].splitlines()[0].split()[:2] for m in shown]
        assert listed == [
            ["name", "server"],
            ["server", "tool"],
        ]  # %mcp servers and %mcp tools prov, both shown, in order
        listing = kernel.execute("%mcp servers")
        servers = kernel.text_of_cell(listing)
        assert all(name in servers for name in ("prov", "web", "local")), servers
        done = kernel.execute("print(result.content[0].text)")
        assert "Counted to 5." in kernel.text_of_cell(done)
        local = kernel.execute(
            "import mcp_notebook\nprint((await mcp_notebook.call('local.echo', {'text': 'from stdio'})).content[0].text)"
        )
        assert "from stdio" in kernel.text_of_cell(local)
    finally:
        kernel.close()


def test_readme_tasks_section_runs_as_written(tmp_path: Path) -> None:
    """The "Long-running calls as tasks" block, cell by cell in an interactive kernel, against the task server it names."""
    from tests.support import task_servers as ts

    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("## Long-running calls as tasks", 1)[1].split("\n## ", 1)[0]
    assert "python -m tests.support.task_servers 2026 --transport http --port 8001" in section
    (block,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    with ts.running_task_server("2026") as url:
        kernel = Kernel(cwd=str(REPO_ROOT), env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")})
        try:
            for cell in (c for c in re.split(r"\n\s*\n", block.replace("http://127.0.0.1:8001/mcp", url)) if c.strip()):
                run_answering(kernel, cell, timeout=90)
            done = kernel.execute("print(result.content[0].text, '|', texts == ['Done after 1s'] * 20)")
            assert "Done in eu-west | True" in kernel.text_of_cell(done)
            listed = kernel.text_of_cell(kernel.execute("%mcp tasks"))
            assert "slow_job" in listed and "followed here" in listed  # the 20 s task, still running
        finally:
            kernel.close()


def test_readme_sampling_roots_servers_section_runs_as_written(tmp_path: Path) -> None:
    """ "Sampling, roots, saved flows, servers in cells": every block, cell by cell, in an interactive kernel."""
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("### Sampling, roots, saved flows, servers in cells", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(?:python)?\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 3 and blocks[1].startswith("%%mcp server notes\n")
    cells = [c for c in re.split(r"\n\s*\n", blocks[0]) if c.strip()] + [blocks[1], blocks[2]]
    notebook_dir = tmp_path / "project"
    notebook_dir.mkdir()
    kernel = Kernel(cwd=str(notebook_dir), env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")})
    try:
        kernel.execute("%load_ext mcp_notebook")
        ran = [run_answering(kernel, cell) for cell in cells]
        settings = kernel.text_of_cell(ran[0])
        assert "Sampling review: remote (the default" in settings
        assert "roots offered to servers" in settings
        roots = kernel.execute(
            "print([(e.name, e.uri) for e in get_ipython().magics_manager.registry['MCPMagics'].session.roots.effective()])"
        )
        assert (
            kernel.text_of_cell(roots) == f"{[('notebook', notebook_dir.resolve().as_uri())]}\n"
        )  # roots add . : the notebook's folder
        assert "Kept: hello" in kernel.text_of_cell(ran[-1])
        probe = kernel.execute(
            "print(type(served).__name__, served.url.startswith('http://127.0.0.1:'), bool(served.token))"
        )
        assert kernel.text_of_cell(probe).split() == ["ServedServer", "True", "True"]
    finally:
        kernel.close()


def test_readme_replay_block_runs_as_written(tmp_path: Path) -> None:
    """ "The protocol, round by round": the replay block, line by line, against the tour's stdio ``local`` server."""
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("### The protocol, round by round", 1)[1].split("\n### ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    lines = [line for line in block.splitlines() if line.strip()]
    assert [line.split()[1] for line in lines] == ["call", "trace", "replay"]
    expected = lines[-1].split("# ", 1)[1].strip().strip('"')
    kernel = Kernel(cwd=str(tmp_path), env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")})
    try:
        kernel.execute("%load_ext mcp_notebook")
        kernel.execute("import sys\n%mcp connect local -- {sys.executable} -m mcp_notebook.demo demo")
        ran = [run_answering(kernel, line) for line in lines]
        assert kernel.text_of_cell(ran[-1]).strip() == expected
        assert (tmp_path / "orders.json").exists()
    finally:
        kernel.close()
