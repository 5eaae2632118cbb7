"""`mcp_notebook.magics.warm`: what the first call needs is imported while the kernel is idle after ``%load_ext``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

from mcp_notebook.magics.warm import FIRST_CALL_MODULES, warm_up

from ..support.kernel_harness import Kernel


def test_a_fresh_kernel_imports_them_after_load_ext_and_the_first_call_is_quick(tmp_path: Path) -> None:
    kernel = Kernel(cwd=str(tmp_path))
    try:
        probe = "import sys; print(sorted(m for m in ('mcp', 'jsonschema', 'mcp.client.streamable_http') if m in sys.modules))"
        first = kernel.text_of_cell(kernel.execute(f"%load_ext mcp_notebook\n{probe}"))
        assert (
            first.strip() == "[]"
        )  # %load_ext imported none of them itself (P3 stays small): they come after its cell
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            now = kernel.text_of_cell(kernel.execute(probe)).strip()
            if now == "['jsonschema', 'mcp', 'mcp.client.streamable_http']":
                break
            time.sleep(1.5)  # each probe is a cell: the imports wait for a second without one
        assert now == "['jsonschema', 'mcp', 'mcp.client.streamable_http']"  # imported while the kernel was idle
        start = time.perf_counter()
        kernel.execute(
            "%config MCPMagics.interactive = False\n%mcp connect demo mcp_notebook.demo:demo\n%mcp call demo.echo text=hi"
        )
        assert time.perf_counter() - start < 2.0  # about 0.1 s here; it was 2.5 s with the imports in the call
        server = kernel.text_of_cell(kernel.execute("from mcp.server import Server; print(Server.__name__)"))
        assert server.strip() == "Server"  # the user's own import of the SDK, after ours, on the same thread
    finally:
        kernel.close()


def test_without_a_running_loop_nothing_is_scheduled_and_a_failing_module_is_skipped() -> None:
    assert warm_up(["json"]) is False  # a script or a terminal IPython: no loop runs between cells
    name = "mcp_notebook_surely_missing_module"
    wanted = "colorsys"
    sys.modules.pop(wanted, None)

    async def idle() -> bool:
        scheduled = warm_up([name, wanted], pause=0, idle=0)
        await asyncio.sleep(0.2)  # the loop idles: the steps run
        return scheduled

    assert asyncio.run(idle()) is True
    assert wanted in sys.modules and name not in sys.modules
    assert FIRST_CALL_MODULES[0] == "mcp" and "jsonschema" in FIRST_CALL_MODULES


def test_no_step_runs_while_a_cell_runs() -> None:
    """A cell that awaits lets the loop run callbacks; the imports wait until it is over (and after %load_ext's own cell)."""
    from IPython.core.events import EventManager

    class Shell:
        events = EventManager(None, {"pre_run_cell": None, "post_run_cell": None})

    shell = Shell()
    wanted = "wave"
    sys.modules.pop(wanted, None)

    async def cells() -> list[bool]:
        seen = []
        assert warm_up([wanted], pause=0.01, shell=shell, idle=0.1) is True
        await asyncio.sleep(0.3)  # still inside the %load_ext cell: nothing imported
        seen.append(wanted in sys.modules)
        shell.events.trigger("post_run_cell", None)
        shell.events.trigger("pre_run_cell", None)  # the next cell starts at once and awaits
        await asyncio.sleep(0.3)
        seen.append(wanted in sys.modules)
        shell.events.trigger("post_run_cell", None)
        await asyncio.sleep(0.3)
        seen.append(wanted in sys.modules)
        return seen

    assert asyncio.run(cells()) == [False, False, True]
    assert (
        shell.events.callbacks["pre_run_cell"] == [] and shell.events.callbacks["post_run_cell"] == []
    )  # removed when done


#: third-party modules that each cost tens of milliseconds or more to import, against P3's budget for all of
#: %load_ext (a tenth of ``import mcp``, about 50 ms): the warm-up or the function that needs one imports it
HEAVY = (
    "mcp",
    "mcp_types",
    "pydantic",
    "httpx2",
    "uvicorn",
    "starlette",
    "jsonschema",
    "ipywidgets",
    "anywidget",
    "pandas",
    "nbformat",
    "jwt",
    "markdown_it",
    "lark",
    "urllib.request",
    "http.server",
)


#: lighter ones (2 to 4 ms each, a tenth of P3's budget together) that nothing in %load_ext uses: ada (a URL read as a
#: browser reads it, core/urls.py) and the Jupyter data folder's lookup (the session's tables find it on first use)
LIGHT = ("ada_url", "jupyter_core.paths", "platformdirs")


def test_load_ext_imports_none_of_the_heavy_modules() -> None:
    """The start-up budget's rule, checked where it is kept: an import of one of these on ``%load_ext``'s path fails here.

    Which function-local imports the budget needs is then a question this answers, not a convention: a
    module may import anything at its top that ``%load_ext`` would not pull in from these lists.
    """
    script = (
        "import json, sys\n"
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython()\n"
        f"heavy = {HEAVY + LIGHT!r}\n"
        "before = [m for m in heavy if m in sys.modules]\n"
        "ip.run_line_magic('load_ext', 'mcp_notebook')\n"
        "print(json.dumps([before, [m for m in heavy if m in sys.modules]]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [[], []]
