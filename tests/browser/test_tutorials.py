"""Every tutorial under Run All in a real browser: JupyterLab and Notebook 7 in Debian's Chromium.

nbval proves a tutorial headless, where a call waits inside its cell and presets answer its
questions. A person opens it in JupyterLab (or Notebook 7), chooses Run > Run All Cells and clicks
only what the tutorial's text asks for. This test does exactly that, once per tutorial and front
end:

1. the tutorial is opened with its outputs cleared (so nothing shown can be a leftover), Run All;
2. while it runs, the clicks of ``CLICKS`` are made, each in its cell, when its button shows: a
   click is allowed only where the text before the cell names the button in bold (``**Accept**``),
   so the tutorial must tell its reader what the test does;
3. every code cell must have run (Run All stops at an unexpected error), no cell not tagged
   ``raises-exception`` may hold an error, and each cell's outputs must equal the outputs saved in
   the tutorial under nbval's own comparison (``nbval.plugin.IPyNbCell.compare_outputs``, with
   ``notebooks/nbval-sanitize.cfg``), so the page shows what nbval sees;
4. the saved notebook holds no waiting flow (``metadata.mcp_notebook.flows`` is empty).

What nbval skips, this skips too (widget views, images, cells tagged ``nbval-ignore-output``). Three
things more are skipped, for a reason: ``application/vnd.mcp-notebook.app+json`` goes out only
where a page runs the extension (tutorial 08's Apps), and headless runs have none; outputs holding a
flow's record or void (``OUTPUT_MIME``) go out only where no page runs it (the extension keeps records
in the metadata), so neither side's are compared; and stderr, where
a served server's threads log into whichever cell ipykernel routes them to (issue 25 sends server
logs to ``%mcp log`` instead). A cell the reader
clicks in shows what the click did rather than the headless preset's answer; its outputs are checked
against the text the click must produce (``Click.shows``) instead.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
import pytest

from mcp_notebook.flows.record import OUTPUT_MIME

from ..conftest import REPO_ROOT
from ..support.browser import Front
from ..support.lab_fixtures import SharedLab

NOTEBOOKS = REPO_ROOT / "notebooks"
TUTORIALS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
NOTEBOOK7_TUTORIALS = ["01-first-call.ipynb", "02-forms.ipynb", "05-close-and-resume.ipynb"]
"""The tutorials Run All also opens in Notebook 7: a first call, a form, a save and a resume (browser.LAB_ONLY says why not all)."""
SANITIZE = NOTEBOOKS / "nbval-sanitize.cfg"
APP_MIME = "application/vnd.mcp-notebook.app+json"
STALL_SECONDS = 90  # no cell finished and no click made for this long: the run is stuck


@dataclass(frozen=True)
class Click:
    """A click the tutorial's text asks for: ``button`` in cell ``cell`` (the index among all cells).

    ``sees`` is a text the cell must show when the button does; ``shows`` is a text the cell's
    outputs must hold afterwards (its outputs are not compared with the headless run's, which
    answered from presets instead of a click).
    """

    cell: int
    button: str
    shows: str
    sees: str = ""  # what the cell must show before the click (the reason the text gives for it)


CLICKS: dict[str, list[Click]] = {
    "02-forms.ipynb": [
        Click(9, "Decline", sees="must be ≤ 150", shows="decline")
    ],  # the unfitting preset, marked at once
    "03-sampling.ipynb": [
        Click(25, "Send", shows="Summary (echo)"),  # review on purpose (%mcp review ask): the request, then the reply
        Click(25, "Return", shows="Summary (echo): echo: Summarize: Review shows what a server asks your model"),
        Click(29, "Decline", shows="declined"),  # the human provider's box: the reader refuses to type
    ],
}
"""The clicks of each tutorial, in order. A tutorial not named here runs with no click at all."""


def test_every_tutorial_is_covered() -> None:
    """The list of tutorials is read from the folder: a new tutorial is run by the browser test too."""
    assert len(TUTORIALS) >= 9 and TUTORIALS[0].startswith("01-")
    for name, clicks in CLICKS.items():
        assert name in TUTORIALS, f"CLICKS names {name}, which is not a tutorial"
        cells = nbformat.read(NOTEBOOKS / name, as_version=4).cells
        for click in clicks:
            assert cells[click.cell].cell_type == "code", f"{name}: cell {click.cell} is not a code cell"
            assert _asked_for(cells, click), (
                f"{name}: no text before cell {click.cell} asks the reader to click **{click.button}**"
            )


def _asked_for(cells: list[Any], click: Click) -> bool:
    """The markdown between the previous code cell and ``click.cell`` names the button in bold."""
    i = click.cell - 1
    while i >= 0 and cells[i].cell_type == "markdown":
        if f"**{click.button}**" in cells[i].source:
            return True
        i -= 1
    return False


# ---------------------------------------------------------------------- nbval's comparison
def _nbval_compare(test: list[Any], ref: list[Any]) -> tuple[bool, str]:
    """nbval's own output comparison (``IPyNbCell.compare_outputs``) with the tutorials' sanitize file.

    The method reads only a few attributes of its item (its file's skip list and sanitize patterns,
    colours, a traceback list), so it is called on a stand-in holding exactly those: what it
    compares is what ``pytest --nbval`` compares.
    """
    from nbval.plugin import IPyNbCell, coalesce_streams, get_sanitize_patterns

    patterns = get_sanitize_patterns(SANITIZE.read_text())

    def sanitize(s: Any) -> Any:
        if not isinstance(s, str):
            return s
        for regex, replace in patterns:
            s = re.sub(regex, replace, s)
        return s

    skip = (
        "metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
        "application/vnd.jupyter.widget-view+json", "image/png", "image/jpeg",  # as nbval's defaults
        APP_MIME,  # only where a page runs the extension: the headless run has none
    )  # fmt: skip
    item = SimpleNamespace(
        parent=SimpleNamespace(skip_compare=skip), sanitize=sanitize, comparison_traceback=[],
        colors=SimpleNamespace(FAIL="", ENDC="", OKBLUE="", OKGREEN=""),
    )  # fmt: skip

    def differs(key: str, left: Any, right: Any) -> None:
        item.comparison_traceback.append(f"{key}: saved in the tutorial\n{left}\n--- shown in the browser\n{right}")

    item.format_output_compare = differs
    # stderr is not compared: what a server's own threads log (tutorial 05's served server: "requestState
    # rejected ...") lands in whichever cell ipykernel routes that thread's output to, which differs between
    # a page and a headless run and from run to run (seen missing in one fresh clone's run, present in others)
    test, ref = (
        [o for o in outs if o.get("name") != "stderr" and OUTPUT_MIME not in (o.get("data") or {})]
        for outs in (test, ref)
    )
    nodes = [nbformat.from_dict(o) for o in test], [nbformat.from_dict(o) for o in ref]
    same = IPyNbCell.compare_outputs(item, coalesce_streams(nodes[0]), coalesce_streams(nodes[1]))  # type: ignore[arg-type]
    return bool(same), "\n".join(item.comparison_traceback)


def _without_outputs(nb: Any) -> dict[str, Any]:
    cleared = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in cleared.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    cleared.metadata.pop("mcp_notebook", None)
    return dict(cleared)


# ---------------------------------------------------------------------- the server and the run
def _copy_tutorial(name: str, folder: Path) -> None:
    """Tutorial ``name`` into ``folder`` (a test's own, in the served root) with its outputs cleared, and the
    images and data files the tutorials link to."""
    for item in NOTEBOOKS.iterdir():
        if item.is_dir():
            shutil.copytree(item, folder / item.name)
        elif item.suffix != ".ipynb":
            shutil.copy(item, folder / item.name)
    (folder / name).write_text(json.dumps(_without_outputs(nbformat.read(NOTEBOOKS / name, as_version=4))))


_STATE = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.widgets;
  return {
    status: panel.sessionContext.kernelDisplayStatus,
    counts: cells.map(c => c.model.type === 'code' ? c.model.executionCount : 'md'),
    replies: window.__mcpnbReplies.slice(),
    idle: window.__mcpnbIdle,
  };
}"""

_COUNT_REPLIES = """() => {
  window.__mcpnbReplies = [];
  window.__mcpnbIdle = 0;
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  kernel.anyMessage.connect((_, args) => {
    const msg = args.msg;
    if (args.direction !== 'recv') return;
    if (msg.header.msg_type === 'execute_reply') window.__mcpnbReplies.push(msg.content.status);
    const parent = msg.parent_header || {};
    if (msg.header.msg_type === 'status' && msg.content.execution_state === 'idle' && parent.msg_type === 'execute_request') window.__mcpnbIdle++;
  });
}"""
"""Counts the kernel's execute replies (shell) and the idle status that ends each request's iopub messages.

A cell's prompt is not enough to tell that it ran: JupyterLab leaves it empty when the cell's reply
overtakes its iopub messages by far (seen now and then). Nor is the reply enough to tell its outputs
arrived: the idle status is the last iopub message of a request, so when every request has its idle,
every output is in the page (tutorial 08's App bundles made a cell's outputs come after the save)."""


def _run_all_with_clicks(front: Front, name: str, clicks: list[Click]) -> None:
    """Run All, make the tutorial's clicks as their buttons show, until every code cell ran."""
    front.page.evaluate(_COUNT_REPLIES)
    cells = front.page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets.filter(c => c.model.type === 'code').length"
    )
    front.run_all()
    pending = list(clicks)
    last, progress = None, time.monotonic()
    while True:
        state = front.page.evaluate(_STATE)
        counts = state["counts"]
        if pending:
            click = pending[0]
            cell = front.page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(click.cell)
            button = cell.get_by_role("button", name=click.button)  # an icon may add a space to the name
            if button.count() and button.first.is_visible() and button.first.is_enabled():
                assert click.sees in cell.inner_text(), (
                    f"{name}: cell {click.cell} does not show {click.sees!r} before **{click.button}**"
                )
                button.first.click()
                pending.pop(0)
                progress = time.monotonic()
        replies = state["replies"]
        assert "aborted" not in replies, f"{name}: Run All stopped at an error (the kernel aborted the cells after it)"
        if state["status"] == "idle" and len(replies) >= cells and state["idle"] >= cells and not pending:
            return
        if state != last:
            last, progress = state, time.monotonic()
        if time.monotonic() - progress > STALL_SECONDS:
            waiting = next((i for i, c in enumerate(counts) if c is None), None)  # the first not yet counted
            shown = ""
            if waiting is not None:
                shown = front.page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(waiting).inner_text()
            missing = (
                f"; the click on **{pending[0].button}** in cell {pending[0].cell} never became possible"
                if pending
                else ""
            )
            raise AssertionError(
                f"{name}: Run All stuck at cell {waiting} (kernel {state['status']}){missing}; the cell shows:\n{shown[:2000]}"
            )
        time.sleep(0.3)


def _saved(root: Path, name: str, front: Front) -> Any:
    """Save through the menu and read the file once the page says it is saved (the model is no longer dirty)."""
    path = root / name
    before = path.stat().st_mtime_ns
    front.save()
    front.page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)
    deadline = time.monotonic() + 30
    while True:
        try:
            if path.stat().st_mtime_ns != before:
                return nbformat.reads(path.read_text(), as_version=4)
        except (ValueError, json.JSONDecodeError):
            pass  # caught mid-write
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} was not saved")
        time.sleep(0.3)


@pytest.mark.parametrize(
    ("served", "name"),
    [("lab", name) for name in TUTORIALS] + [("notebook7", name) for name in NOTEBOOK7_TUTORIALS],
    indirect=["served"],
)
def test_run_all_in_the_browser_shows_what_nbval_sees(
    front: Front, shared_labs: Callable[[str], SharedLab], name: str, tmp_path: Path
) -> None:
    folder = shared_labs(front.app).root / front.folder
    _copy_tutorial(name, folder)
    front.open(front.path(name))
    clicks = CLICKS.get(name, [])
    _run_all_with_clicks(front, name, clicks)
    # the page's own prompts and kernel status: every cell numbered, the kernel idle (issue 36, item 1)
    assert front.settled_prompts() == {}, f"{name}: after Run All in {front.app}, not every cell ended numbered"

    reference = nbformat.read(NOTEBOOKS / name, as_version=4)
    ran = _saved(folder, name, front)
    assert len(ran.cells) == len(reference.cells)
    clicked = {c.cell: c for c in clicks}
    problems: list[str] = []
    for i, (cell, ref) in enumerate(zip(ran.cells, reference.cells, strict=True)):
        if cell.cell_type != "code":
            continue
        first = cell.source.splitlines()[0] if cell.source else ""
        tags = ref.metadata.get("tags", [])
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if errors and "raises-exception" not in tags:
            problems.append(f"cell {i} ({first!r}) failed: {errors[0].ename}: {errors[0].evalue}")
            continue
        if i in clicked:
            text = json.dumps([o for o in cell.outputs], default=str)
            if clicked[i].shows not in text:
                problems.append(
                    f"cell {i} ({first!r}) after **{clicked[i].button}** does not show {clicked[i].shows!r}"
                )
            continue
        if "nbval-ignore-output" in tags or "NBVAL_IGNORE_OUTPUT" in cell.source:
            continue
        same, why = _nbval_compare(cell.outputs, ref.outputs)
        if not same:
            problems.append(f"cell {i} ({first!r}) differs from what nbval sees:\n{why[:3000]}")
    flows = ran.metadata.get("mcp_notebook", {}).get("flows", {})
    if flows:
        problems.append(f"waiting flows left in the saved notebook: {sorted(flows)}")
    kept = [o for c in ran.cells for o in c.get("outputs", []) if OUTPUT_MIME in (o.get("data") or {})]
    if [o for o in kept if "ended" not in o["data"][OUTPUT_MIME]]:
        problems.append("a flow's record was written into an output although the extension keeps them in metadata")
    if problems:
        nbformat.write(ran, tmp_path / name)  # the whole run, to read what the page showed
    assert not problems, f"{name} under Run All in {front.app} (saved as {tmp_path / name}):\n" + "\n\n".join(problems)
