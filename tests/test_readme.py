"""The README's example and every code example of the docs' guide run as written, in real kernels.

Issue 39: the README keeps one short example, which must run outside a clone (a kernel whose folder is
not the repository and whose PATH has no venv); the rest of the old README moved into the docs, and
its examples are run here from their new pages, cell by cell, a form answered as a reader does:

- the tour (guide/calling-tools.md, issue 11 item 15): ``make lab`` starts JupyterLab from the venv
  without putting the venv on PATH, so the kernel's ``python`` is not the one with the package; the
  tour's stdio line uses ``{sys.executable}``, against the demo HTTP server it says to start (on a free
  port instead of 8000), and its cell that asks for ``%mcp servers`` and ``%mcp tools`` shows both;
- sampling and roots (guide/sampling.md) and a server in a cell (guide/prototyping.md) (issue 21 item 9:
  a complete ``%%mcp server`` cell, ``roots add .`` rather than a folder that may not exist);
- tasks (guide/tasks.md), replay (guide/replay.md), the Quickstart, and the Python API's example.

``test_every_docs_example_is_run_here`` keeps that list whole: a new code example in the docs fails it
until a test here runs it (or it is named, with why, among the few that need a person elsewhere).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from .conftest import REPO_ROOT
from .support.kernel_harness import Kernel

DOCS = REPO_ROOT / "docs"
FENCE = re.compile(r"^```(\S*)\n(.*?)^```$", flags=re.S | re.M)


def code_blocks(text: str) -> list[str]:
    """The python blocks, and bare ones (a %%mcp cell), of a markdown text, in order (bash, text and directives not)."""
    return [body for language, body in FENCE.findall(text) if language in ("python", "")]


def page_blocks(page: str, heading: str | None = None) -> list[str]:
    """The python (and bare) code blocks of a docs page, or of one ``## heading`` section of it, in order."""
    text = (DOCS / page).read_text() if page != "README.md" else (REPO_ROOT / page).read_text()
    if heading is not None:
        text = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return code_blocks(text)


def cells_of(block: str) -> list[str]:
    """A block's cells: the parts between blank lines (a ``%%`` cell magic's block is one cell)."""
    if block.startswith("%%"):
        return [block]
    return [c for c in re.split(r"\n\s*\n", block) if c.strip()]


def tour_blocks() -> list[str]:
    """The code blocks of the guide's "A tour" section, in order (the python block and the %%mcp cell)."""
    return page_blocks("guide/calling-tools.md", "A tour")


# Every python or bare code block of the docs, by page, that a test below runs (the count per page); the
# sign-in page's block needs a person at an authorization server's page (tests/browser/test_sign_in.py
# clicks through it in Chromium).
RUN_HERE = {
    "guide/calling-tools.md": 3,  # the tour's two, and "From Python"
    "guide/sampling.md": 1,
    "guide/prototyping.md": 2,
    "guide/tasks.md": 1,
    "guide/replay.md": 1,
    "quickstart.md": 3,
    "reference/api.md": 1,
}
NEEDS_A_PERSON = {"guide/sign-in.md": 1}


def test_every_docs_example_is_run_here() -> None:
    found = {
        page.relative_to(DOCS).as_posix(): len(code_blocks(page.read_text()))
        for page in DOCS.rglob("*.md")
        if "_build" not in page.parts and "notebooks" not in page.parts and page.name != "architecture.md"
    }  # architecture.md's bare blocks are diagrams, not code
    assert {page: n for page, n in found.items() if n} == {**RUN_HERE, **NEEDS_A_PERSON}


def outside_the_venv(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A kernel environment like ``make lab``'s or a pip user's: the venv's bin is not on PATH."""
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != Path(venv_bin))
    return venv_bin, {"PATH": path, "VIRTUAL_ENV": "", "JUPYTER_DATA_DIR": str(tmp_path / "jd")}


def test_readme_example_runs_outside_a_clone(tmp_path: Path) -> None:
    """The README's one example, in a kernel in an empty folder (not the clone), its form answered with Accept."""
    text = (REPO_ROOT / "README.md").read_text()
    (block,) = page_blocks("README.md", "A first call")
    assert len(block.strip().splitlines()) <= 10 and len(text.encode()) <= 15_000
    assert "](docs/" not in text and "](./" not in text  # images and links absolute: the README is read on PyPI too
    _, env = outside_the_venv(tmp_path)
    folder = tmp_path / "anywhere"
    folder.mkdir()
    kernel = Kernel(cwd=str(folder), env=env)
    try:
        ran = [run_answering(kernel, cell) for cell in cells_of(block)]
        shown = kernel.text_of_cell(ran[-1])  # the call answered through its form (default region), then the preset
        assert "Provisioned 'orders' in eu-west-1." in shown, shown
        assert shown.strip().splitlines()[-1] == "Provisioned 'orders' in us-east-1."
        where = kernel.execute(
            "import mcp_notebook, os; print(os.getcwd() != os.path.dirname(mcp_notebook.__path__[0]))"
        )
        assert kernel.text_of_cell(where).strip() == "True"
    finally:
        kernel.close()


def test_quickstart_runs_as_written(tmp_path: Path) -> None:
    """The Quickstart's cells from a pip user's kernel: the form answered, the preset call printed."""
    blocks = page_blocks("quickstart.md")
    _, env = outside_the_venv(tmp_path)
    kernel = Kernel(cwd=str(tmp_path), env=env)
    try:
        ran = [run_answering(kernel, cell) for block in blocks for cell in cells_of(block)]
        assert "Provisioned 'orders' in eu-west-1." in kernel.text_of_cell(ran[-2])
        assert kernel.text_of_cell(ran[-1]).strip().splitlines()[-1] == "Provisioned 'orders' in us-east-1."
    finally:
        kernel.close()


def test_python_api_example_runs_as_written(tmp_path: Path) -> None:
    """The Python API page's example (also the guide's "From Python"), as a script outside the clone."""
    (block,) = page_blocks("reference/api.md")
    assert block in page_blocks("guide/calling-tools.md", "From Python")
    expected = block.strip().splitlines()[-1].split("# ", 1)[1].strip().strip('"')
    lines = block.strip().splitlines()
    script = "\n".join([*lines[:-1], f"print({lines[-1].split('#')[0].strip()})"])
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "JUPYTER_DATA_DIR": str(tmp_path / "jd")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


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


def test_guide_tour_runs_as_written(start_http_server: Any, tmp_path: Path) -> None:
    blocks = tour_blocks()
    assert len(blocks) == 2 and "{sys.executable}" in blocks[0] and blocks[1].startswith("%%mcp call")
    url = start_http_server("demo")
    port = url.split(":")[-1].split("/")[0]
    venv_bin, env = outside_the_venv(tmp_path)
    kernel = Kernel(cwd=str(tmp_path), env=env)
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


def test_guide_tasks_page_runs_as_written(tmp_path: Path) -> None:
    """The tasks page's block, cell by cell in an interactive kernel, against the task server it names."""
    from tests.support import task_servers as ts

    section = (DOCS / "guide" / "tasks.md").read_text()
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


def test_guide_sampling_and_prototyping_pages_run_as_written(tmp_path: Path) -> None:
    """The sampling page's block, then the prototyping page's two: cell by cell, in an interactive kernel."""
    blocks = page_blocks("guide/sampling.md") + page_blocks("guide/prototyping.md")
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


def test_guide_replay_page_runs_as_written(tmp_path: Path) -> None:
    """The replay page's block, line by line, against the tour's stdio ``local`` server."""
    (block,) = page_blocks("guide/replay.md")
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
