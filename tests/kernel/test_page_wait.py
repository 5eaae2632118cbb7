"""``MCPMagics.page_wait``: how long the kernel waits for the labextension's answer to its hello.

A real kernel with no page at all (nobody answers the hello), its cells sent as a live page sends
them (allowing stdin), so only the wait decides when records go into cell outputs. Set either as a
profile sets it (before ``%load_ext``) or with ``%config`` after it, which re-times the wait under way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ..support.kernel_harness import Kernel

HELLO = "import time\nhello = time.monotonic()\n%load_ext mcp_notebook"
SETTINGS = {
    "profile": ("get_ipython().config.MCPMagics.page_wait = 0.3\n" + HELLO, ""),
    "config": (HELLO, "%config MCPMagics.page_wait = 0.3"),
}
SILENT = (
    "fe = get_ipython().magics_manager.registry['MCPMagics'].session.frontend\n"
    "while not fe.writes_outputs() and time.monotonic() - hello < 10:\n"
    "    time.sleep(0.01)\n"
    "print('=>', fe.writes_outputs(), round(time.monotonic() - hello, 2))"
)


@pytest.mark.parametrize("how", SETTINGS)
def test_a_short_page_wait_ends_the_wait_for_a_silent_page_early(tmp_path: Path, how: str) -> None:
    load, config = SETTINGS[how]
    kernel = Kernel(cwd=str(tmp_path))
    try:
        kernel.execute(load, allow_stdin=True)
        if config:
            kernel.execute(config, allow_stdin=True)
        cell = kernel.execute(SILENT, allow_stdin=True)
        [line] = [x for x in kernel.text_of_cell(cell).splitlines() if x.startswith("=>")]
        _, silent, after = line.split()
        assert silent == "True"
        assert 0.3 <= float(after) < 2.0, line  # the default would have waited 2.5 s from the hello
    finally:
        kernel.close()
