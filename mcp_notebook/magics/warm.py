"""What the first call needs, imported while the kernel is idle right after ``%load_ext``.

A person loads the extension and then types their first ``%mcp connect`` and ``%mcp call``. In a
fresh kernel that first call used to wait about 2.5 s, most of it for imports it alone needed: the
MCP SDK (``import mcp``, about 0.7 s) and ``jsonschema`` (which validates arguments and forms; its
import builds an IRI grammar of ``rfc3987_syntax`` when that is installed, as Jupyter installs it:
about 1.8 s). ``%load_ext`` itself must stay cheap (bench/overhead.py P3), so it only schedules
the imports on the kernel's own loop, one module per callback: they start once the kernel has been
a second without a cell (Run All's cells follow one another closely, and are not held up), run
while it waits for the next one, and a cell that arrives meanwhile runs as soon as the module being
imported is done (at worst the SDK's 0.7 s; bench/first_call.py measures the first
call made 3 s after ``%load_ext`` and that worst case).

Not in a thread: the SDK's packages import each other in circles, and two threads importing from
different ends can each see the other's module half made ("partially initialized module"), the
user's own ``from mcp.server import Server`` included. On the kernel's thread they cannot. Without
a running loop (a script, a terminal IPython) nothing is scheduled. An import that fails here is
left for the call that needs it to report. ``%config MCPMagics.warm_up = False`` in an IPython
profile turns it off.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["FIRST_CALL_MODULES", "warm_up"]

#: the modules a first connect and call import, in import order (names: nothing is imported here)
FIRST_CALL_MODULES = (
    "mcp",
    "mcp.client",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "jsonschema",
    "httpx2",
    "mcp_notebook.wire.connection",
    "mcp_notebook.flows.flow",
    "mcp_notebook.forms.model",
    "mcp_notebook.magics.args",
    "mcp_notebook.magics.commands.connect",  # a subcommand's module is imported on its first line (commands/)
    "mcp_notebook.magics.commands.call",
    "mcp_notebook.notebook.display",
    "mcp_notebook.notebook.live_view",
)
PAUSE = 0.01  # seconds between two modules, so that a waiting message is handled in between
IDLE = 1.0  # seconds the kernel has been without a cell before the first import (a person types slower)


def warm_up(
    modules: Sequence[str] = FIRST_CALL_MODULES,
    pause: float = PAUSE,
    shell: Any = None,
    stop: Callable[[], bool] | None = None,
    idle: float = IDLE,
) -> bool:
    """Schedule importing ``modules`` on the running loop, one per callback; ``False`` when no loop runs.

    With ``shell`` (IPython's), no step runs while a cell runs: a cell that awaits (a call ending
    its cell) lets the loop run callbacks, and the flow's own thread may then be importing the
    same SDK modules, which two threads must not do at once (see the module docstring). ``stop``
    says when to give up for good: the session's loop thread has started (a connection or a flow
    imports what it needs there, now, and may go on doing so after its cell ended). ``idle``: seconds
    without a cell before the first import, so that Run All (cells one right after the other) and the
    page's first messages (the saved flows it sends after ``%load_ext``) are never held up by one.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    todo = list(modules)
    running = [shell is not None]  # called from %load_ext's own cell: its post_run_cell starts the steps
    quiet_since = [time.monotonic()]  # when the last cell ended

    def pre_run_cell(*_: Any) -> None:
        running[0] = True

    def post_run_cell(*_: Any) -> None:
        running[0] = False
        quiet_since[0] = time.monotonic()

    if shell is not None:
        shell.events.register("pre_run_cell", pre_run_cell)
        shell.events.register("post_run_cell", post_run_cell)

    def done() -> None:
        if shell is not None:
            for event, callback in (("pre_run_cell", pre_run_cell), ("post_run_cell", post_run_cell)):
                with contextlib.suppress(ValueError):
                    shell.events.unregister(event, callback)

    def step() -> None:
        if loop.is_closed() or (stop is not None and stop()):
            done()
            return
        if running[0] or time.monotonic() - quiet_since[0] < idle:  # a cell runs, or one just ended: later
            loop.call_later(max(pause, idle / 5), step)
            return
        name = todo.pop(0)
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S110 - the call that needs it reports the failure
            pass
        if todo:
            loop.call_later(pause, step)
        else:
            done()

    if not todo:
        return True
    loop.call_later(pause, step)
    return True
