"""A flow line's cell behaves like any cell: its result is the cell's value, and Interrupt says one line.

Issue 36 items 3 and 4, in a real kernel, both as a front end that allows stdin runs a cell
(interactive: the awaited cell with its live view) and as a headless runner does (nbclient, papermill).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ..conftest import REPO_ROOT
from ..support.kernel_harness import Kernel

MODES = [pytest.param(True, id="interactive"), pytest.param(False, id="headless")]


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return "%load_ext mcp_notebook\nfrom mcp_notebook.demo import demo\n%mcp connect demo demo"


def _count(kernel: Kernel, cell: str) -> int:
    (started,) = [m for m in kernel.for_cell(cell) if m["msg_type"] == "execute_input"]
    return int(started["content"]["execution_count"])


def _outputs(kernel: Kernel, cell: str, *kinds: str) -> list[dict[str, Any]]:
    return [m for m in kernel.for_cell(cell) if m["msg_type"] in kinds]


def _display_id(message: dict[str, Any]) -> str:
    return str((message["content"].get("transient") or {}).get("display_id", ""))


@pytest.mark.parametrize("interactive", MODES)
def test_a_bare_call_is_the_cells_value_shown_once(kernel: Kernel, interactive: bool) -> None:
    cell = kernel.execute("%mcp call demo.add a=2 b=3", allow_stdin=interactive)
    n = _count(kernel, cell)
    assert _outputs(kernel, cell, "execute_result") == []  # the report is the cell's output, not a second copy
    # Where no extension answered within page_wait (this harness has none), an interactive call also gets its
    # record's slot at start (notebook/output_records.py): an empty output that only a waiting flow fills. Whether
    # the timer ran out before this cell depends on the clock, so the slot is set apart and must stay empty.
    slots = [m for m in _outputs(kernel, cell, "display_data") if _display_id(m).startswith("mcp-record-")]
    assert [m["content"]["data"] for m in slots] in ([], [{"text/plain": ""}])
    reports = [m for m in _outputs(kernel, cell, "display_data", "update_display_data") if m not in slots]
    shown = [m["content"]["data"]["text/plain"] for m in reports]
    assert (
        len([m for m in reports if m["msg_type"] == "display_data"]) == 1
    )  # the report, once (interactive: its live view ...
    assert shown[-1] == "5"  # ... updated in place to the report)
    probe = kernel.execute(
        f"print(type(_).__name__, _.structured_content, Out[{n}] is _, _{n} is _)", allow_stdin=interactive
    )
    assert _printed(kernel, probe) == "CallToolResult {'result': 5} True True\n"
    bound = kernel.execute(
        "r = %mcp call demo.add a=2 b=3\nprint(type(r).__name__, r.structured_content, r == _)",
        allow_stdin=interactive,
    )
    assert _printed(kernel, bound).endswith("CallToolResult {'result': 5} True\n")  # `_` is what `r =` binds


@pytest.mark.parametrize("interactive", MODES)
def test_prompt_and_read_are_the_cells_value_too(kernel: Kernel, interactive: bool) -> None:
    prompt = kernel.execute("%mcp prompt demo.briefing topic=tides --answer audience=sailors", allow_stdin=interactive)
    n = _count(kernel, prompt)
    probe = kernel.execute(f"print(type(Out[{n}]).__name__, Out[{n}].messages[0].role)", allow_stdin=interactive)
    assert _printed(kernel, probe) == "GetPromptResult user\n"
    read = kernel.execute("%mcp read demo demo://readme", allow_stdin=interactive)
    assert _outputs(kernel, read, "execute_result") == []
    probe = kernel.execute("print(f'{type(_).__name__} {_.contents[0].uri}')", allow_stdin=interactive)
    assert _printed(kernel, probe) == "ReadResourceResult demo://readme\n"


def test_a_result_shown_again_later_shows_its_rendering(kernel: Kernel) -> None:
    """Out of its own cell, the value shows as the report shows a result, not as the SDK model's repr."""
    kernel.execute("%mcp call demo.add a=2 b=3")
    again = kernel.execute("_")
    shown = [m["content"]["data"] for m in _outputs(kernel, again, "display_data", "execute_result")]
    assert [d["text/plain"] for d in shown] == ["5"]
    assert "CallToolResult(" not in shown[0]["text/html"]


def test_a_listing_stays_the_cells_value(kernel: Kernel) -> None:
    cell = kernel.execute("%mcp tools demo")
    n = _count(kernel, cell)
    assert len(_outputs(kernel, cell, "display_data")) == 1 and _outputs(kernel, cell, "execute_result") == []
    probe = kernel.execute(f"print(type(_).__name__, Out[{n}] is _, ['demo', 'add'] in [row[:2] for row in _.rows])")
    assert _printed(kernel, probe) == "Table True True\n"


def _printed(kernel: Kernel, cell: str) -> str:
    """What the cell printed, its stream pieces joined as they were written."""
    return "".join(m["content"]["text"] for m in _outputs(kernel, cell, "stream"))


def _one_line_interrupt(kernel: Kernel, cell: str) -> dict[str, Any]:
    (error,) = [m["content"] for m in _outputs(kernel, cell, "error")]
    assert len(error["traceback"]) == 1 and "\n" not in error["traceback"][0], error["traceback"]
    shown = error["traceback"][0]
    for ours in ("Traceback", "_mcp_notebook_await_", "cell_await", "magics.py", "flow.py", "File "):
        assert ours not in shown
    assert shown == f"\x1b[31m{error['ename']}\x1b[0m: {error['evalue']}"
    assert "Interrupted" not in _printed(kernel, cell)  # said once, by the error
    return error


@pytest.mark.parametrize("interactive", MODES)
def test_interrupting_a_long_call_says_one_line(kernel: Kernel, interactive: bool) -> None:
    cell = kernel.execute("%mcp call demo.slow_count n=100 delay=0.1", allow_stdin=interactive, wait=False)
    kernel.wait_for(
        lambda: any(m["msg_type"] == "execute_input" for m in kernel.for_cell(cell)), what="the call to start"
    )
    kernel.pump(1.5)
    interrupted = time.monotonic()
    kernel.km.interrupt_kernel()
    kernel.wait_idle(cell)
    assert time.monotonic() - interrupted < 5  # the call had 8 s to go: the interrupt ended the cell, not the call
    error = _one_line_interrupt(kernel, cell)
    assert (error["ename"], error["evalue"]) == ("Interrupted", "demo.slow_count was cancelled.")
    after = kernel.execute("x = %mcp call demo.add a=2 b=5\nprint(x.content[0].text)", allow_stdin=interactive)
    assert _printed(kernel, after).endswith("7\n")  # the kernel goes on


def test_interrupting_a_blocking_line_says_one_line(kernel: Kernel) -> None:
    """A line that cannot be awaited (inside a ``def``) blocks in ``flow.result()``: the same one line."""
    cell = kernel.execute(
        "def count():\n    r = %mcp call demo.slow_count n=100 delay=0.1 --wait\n    return r\ncount()", wait=False
    )
    kernel.pump(2.0)
    kernel.km.interrupt_kernel()
    kernel.wait_idle(cell, timeout=5)
    error = _one_line_interrupt(kernel, cell)
    assert (error["ename"], error["evalue"]) == ("Interrupted", "demo.slow_count was cancelled.")


def test_interrupting_a_waiting_form_says_one_line_with_the_resume_line(kernel: Kernel) -> None:
    kernel.execute("from mcp_notebook.demo import provisioner\n%mcp connect prov provisioner")
    before = set(kernel.find_widgets("ButtonModel", description="Accept"))
    cell = kernel.execute("%mcp call prov.provision name=interrupted-once", allow_stdin=True, wait=False)
    kernel.wait_for(lambda: set(kernel.find_widgets("ButtonModel", description="Accept")) - before, what="the form")
    kernel.km.interrupt_kernel()
    kernel.wait_idle(cell)
    error = _one_line_interrupt(kernel, cell)
    probe = kernel.execute(
        "from mcp_notebook.session.api import default_session\n"
        "print([r['id'] for r in default_session().store.all() if r['arguments'] == {'name': 'interrupted-once'}])"
    )
    (flow_id,) = eval(kernel.text_of_cell(probe))  # noqa: S307 - the kernel printed a list of ids
    assert (error["ename"], error["evalue"]) == (
        "Interrupted",
        f"prov.provision stopped waiting here; it stays saved as flow {flow_id} "
        f"(%mcp resume {flow_id} continues it, %mcp forget {flow_id} drops it).",
    )
    kernel.execute(f"%mcp forget {flow_id}")


def test_terminal_ipython_interrupt_says_one_line_and_sets_underscore(tmp_path: Path) -> None:
    """Terminal IPython (Ctrl-C is SIGINT to the process): the same one line, and ``_`` is the result."""
    lines = [
        "%load_ext mcp_notebook",
        "from mcp_notebook.demo import demo",
        "%mcp connect demo demo",
        "%mcp call demo.add a=2 b=3",
        "print('underscore', _.structured_content)",
        "%mcp call demo.slow_count n=100 delay=0.1",
    ]
    ipython = Path(sys.executable).with_name("ipython")
    shell = subprocess.Popen(
        [str(ipython), "--simple-prompt", "--no-banner", "--colors=NoColor", "--HistoryManager.enabled=False"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=str(REPO_ROOT),
        env={**os.environ, "IPYTHONDIR": str(tmp_path)},
    )
    try:
        assert shell.stdin is not None and shell.stdout is not None
        shell.stdin.write("\n".join(lines) + "\n")
        shell.stdin.flush()
        seen = ""
        while "underscore" not in seen:  # the call before the long one has ended
            seen += shell.stdout.readline()
        seen += shell.stdout.readline()
        time.sleep(1.5)  # the long call is under way
        shell.send_signal(signal.SIGINT)
        shell.stdin.write("print('after')\nexit\n")
        shell.stdin.flush()
        out, _ = shell.communicate(timeout=30)
    finally:
        if shell.poll() is None:
            shell.kill()
    out = seen + out
    assert "underscore {'result': 5}" in out
    assert "Interrupted\x1b[0m: demo.slow_count was cancelled.\n" in out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out
    assert "after" in out
