"""What the first call needs, imported while the kernel is idle right after ``%load_ext``.

A person loads the extension and then types their first ``%mcp connect`` and ``%mcp call``. In a
fresh kernel that first call used to wait about 2.5 s, most of it for imports it alone needed: the
MCP SDK (``import mcp``, about 0.7 s) and ``jsonschema`` (which validates arguments and forms; its
import builds an IRI grammar of ``rfc3987_syntax`` when that is installed, as Jupyter installs it:
about 1.8 s). ``%load_ext`` itself must stay cheap (bench/overhead.py P3), so it only schedules
the imports on the kernel's own loop, one module per callback: they run after the ``%load_ext``
cell, while the kernel waits for the next one, and a cell that arrives meanwhile runs as soon as
the module being imported is done (at worst the 1.8 s grammar; bench/first_call.py measures the
first call made 3 s after ``%load_ext`` and that worst case).

Not in a thread: the SDK's packages import each other in circles, and two threads importing from
different ends can each see the other's module half made ("partially initialized module"), the
user's own ``from mcp.server import Server`` included. On the kernel's thread they cannot. Without
a running loop (a script, a terminal IPython) nothing is scheduled. An import that fails here is
left for the call that needs it to report. ``%config MCPMagics.warm_up = False`` in an IPython
profile turns it off.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Sequence

__all__ = ["FIRST_CALL_MODULES", "warm_up"]

#: the modules a first connect and call import, in import order (names: nothing is imported here)
FIRST_CALL_MODULES = (
    "mcp",
    "mcp.client",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "lark",
    "rfc3987_syntax",  # the IRI grammar jsonschema builds at its import when this is installed
    "jsonschema",
    "httpx2",
    "mcp_notebook.wire.connection",
    "mcp_notebook.flows.flow",
    "mcp_notebook.forms.model",
    "mcp_notebook.magics.args",
    "mcp_notebook.notebook.display",
    "mcp_notebook.notebook.live_view",
)
PAUSE = 0.01  # seconds between two modules, so that a waiting message is handled in between


def warm_up(modules: Sequence[str] = FIRST_CALL_MODULES, pause: float = PAUSE) -> bool:
    """Schedule importing ``modules`` on the running loop, one per callback; ``False`` when no loop runs."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    todo = list(modules)

    def step() -> None:
        if not todo:
            return
        name = todo.pop(0)
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S110 - the call that needs it reports the failure
            pass
        if todo and not loop.is_closed():
            loop.call_later(pause, step)

    loop.call_later(pause, step)
    return True
