"""mcp-notebook: a Jupyter notebook as a first-class MCP client.

``%load_ext mcp_notebook`` registers the ``%mcp`` magics. The same client is usable from plain
Python: ``connect``, ``call``, ``prompt``, ``read``, ``map``, ``map_async``, ``frame`` and ``Flow``. Imports are lazy on purpose:
loading the extension must cost a small fraction of importing the ``mcp`` SDK, which is only
imported when a first connection is made.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = [
    "Flow",
    "call",
    "connect",
    "frame",
    "load_ipython_extension",
    "map",
    "map_async",
    "prompt",
    "read",
    "replay",
    "unload_ipython_extension",
]

if TYPE_CHECKING:
    from .flows.flow import Flow
    from .mapping.map import map, map_async
    from .mapping.tabular import frame
    from .session.api import call, connect, prompt, read, replay


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext mcp_notebook``: register ``%mcp`` / ``%%mcp`` and greet the notebook's front end.

    The greeting asks the JupyterLab extension for the flows saved in the notebook; its answer
    arrives after this cell, so ``%mcp flows`` / ``%mcp resume`` in a later cell see them.
    """
    from .magics.completion import register
    from .magics.magics import MCPMagics
    from .notebook.views import attach_page

    ipython.register_magics(MCPMagics)
    _show_flows(ipython)
    magics = ipython.magics_manager.registry["MCPMagics"]
    session = magics.session
    attach_page(session)  # the labextension's comm: the notebook keeps the saved flows
    register(ipython, session, magics.parsers)  # Tab after %mcp: subcommands, servers, tools, arguments, values
    _await_calls_in_cells(ipython, magics)
    # The start-up budget (docs/architecture.md, "Start-up"): the session made above has put jsonschema's slow
    # format libraries off (core/lazy_imports.py); the warm-up imports what a first call needs while the kernel idles.
    if magics.warm_up:
        from .magics.warm import warm_up

        warm_up(
            shell=ipython, stop=session.runtime.started
        )  # what the first call needs, imported while idle (magics/warm.py)


def _show_flows(shell: Any) -> None:
    """A ``Flow`` as a cell's value shows its report (``notebook.display``), registered by name: nothing is imported now.

    The flow itself knows nothing of the page (``flows`` sits below ``notebook``), so its display is a
    formatter of the shell rather than a ``_ipython_display_`` method. So is an SDK result's (the
    value of a ``%mcp call`` cell, ``_``, ``Out[n]``): its rendering, not the model's repr, and
    nothing more in the cell whose report already shows it (``notebook.display.display_result``).
    """
    formatter = getattr(getattr(shell, "display_formatter", None), "ipython_display_formatter", None)
    if formatter is not None:
        formatter.for_type_by_name("mcp_notebook.flows.flow", "Flow", _display_flow)
        for name in _RESULT_TYPES:
            formatter.for_type_by_name("mcp_types._types", name, _display_result)


_RESULT_TYPES = ("CallToolResult", "GetPromptResult", "ReadResourceResult")  # what a flow's value is


def _display_flow(flow: Any) -> None:
    from .notebook.display import display_flow

    display_flow(flow)


def _display_result(result: Any) -> None:
    from .notebook.display import display_result

    display_result(result)


def _in_ipython() -> None:
    """In IPython without ``%load_ext`` (the plain API, a hand-made ``Session``): flows show their reports all the same.

    Called when the package is first imported, whichever submodule is asked for, and again on the
    lazy API's first use (a shell started after the import).
    """
    ipython_module = sys.modules.get("IPython")
    shell = ipython_module.get_ipython() if ipython_module is not None else None
    if shell is not None:
        _show_flows(shell)


def _await_calls_in_cells(ipython: Any, magics: Any) -> None:
    """A call ends its cell when its flow ends (``cell_await``), where the kernel hears clicks while a cell awaits."""
    from .magics.cell_await import CellAwait, kernel_hears_comms_while_awaiting

    if not hasattr(ipython, "input_transformers_post"):
        return  # not an IPython shell that transforms input
    if kernel_hears_comms_while_awaiting():
        CellAwait(magics).register()
    else:
        print(
            "note: this kernel (ipykernel older than 7.4) cannot hear a form's clicks while a cell waits, so "
            "%mcp call returns at once with a Flow and the next cell may run before it ends; `await` the Flow "
            "in a later cell (pip install 'ipykernel>=7.4' to have calls end their cells)."
        )


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext``: close the notebook comm, stop served prototypes, close every connection, stop the loop.

    Connections end in state ``closed``; a later ``%load_ext`` (or any use) starts a fresh loop.
    """
    from .magics.cell_await import CellAwait
    from .magics.completion import unregister

    unregister(ipython)
    if hasattr(ipython, "input_transformers_post"):
        CellAwait.unregister(ipython)
    magics = ipython.magics_manager.registry.get("MCPMagics")
    if magics is not None:
        magics.session.close()


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "mcp-notebook"}]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """The Jupyter Server extension: the OAuth sign-in callback (``auth/server_extension.py``)."""
    return [{"module": "mcp_notebook.auth.server_extension"}]


def __dir__() -> list[str]:
    """Tab on ``mcp_notebook.`` offers the lazy API too (``__getattr__`` alone hides it)."""
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})


def __getattr__(name: str) -> Any:
    if name in __all__:
        _in_ipython()
    if name in ("connect", "call", "prompt", "read", "replay"):
        from .session import api

        return getattr(api, name)
    if name == "Flow":
        from .flows.flow import Flow

        return Flow
    if name in ("map", "map_async"):
        from .mapping import map as mapping

        return getattr(mapping, name)
    if name == "frame":  # a result (or listing) as a pandas DataFrame; pandas imported on first use
        from .mapping.tabular import frame

        return frame
    raise AttributeError(f"module 'mcp_notebook' has no attribute {name!r}")


_in_ipython()  # a Flow reached through any submodule shows its report in a shell that is already running
