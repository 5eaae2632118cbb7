"""``%mcp`` / ``%%mcp``: the notebook's MCP client commands, routed.

``MCPMagics`` is the router: it reads the line (comments, ``{expr}``, words), looks the subcommand
up in ``commands.COMMANDS``, calls its handler (one module per subcommand, its parser beside it)
and shows what comes back; no protocol logic lives here. It also keeps what a handler needs of the
cell it runs in (interactive or not, the cell's id and name) and what a flow line gives its cell
(``run_flow``, ``hand_back``): the handlers see it as ``command.Magic``. The engine's errors and
notes get their ``%mcp`` hints in ``magics/hints.py``. Settings are traitlets of ``SessionSettings``,
inherited by ``MCPMagics`` (``%config MCPMagics.max_rounds = 5``, or ``c.MCPMagics.max_rounds`` in
``ipython_config.py``).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Mapping
from functools import partial
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, needs_local_scope, no_var_expand

from ..core.text import UNWRITABLE, plain_text
from ..errors import FlowError
from ..notebook.views import NotebookViews
from ..session.session import Session, SessionSettings
from .cells import CellNames
from .commands import COMMANDS
from .grammar import build_parsers, full_usage, summary
from .hints import flow_failure, for_magics, tool_failure, with_hint
from .line_expand import expand_braces, strip_comment
from .parser import Help, Parser, call_options

__all__ = ["MCPMagics"]


@magics_class
class MCPMagics(Magics, SessionSettings):
    """Call MCP tools, prompts and resources from cells; answer server questions inline.

    The settings are the traitlets of ``SessionSettings`` (inherited); ``self.session`` reads them.
    """

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        # first: configuration applied by Magics.__init__ reaches the session's model router
        self.session = Session(
            self, shell=shell, tell=lambda note: print(plain_text(with_hint(note))), views=NotebookViews()
        )
        super().__init__(shell=shell, **kwargs)
        self.parsers: Mapping[str, Parser] = build_parsers()  # each built on first use (grammar.Parsers)
        self.awaiting = (
            False  # set by cell_await while an awaiting cell runs a flow line: the flow is handed back, not returned
        )
        self.cells = CellNames()  # the cells flow lines ran in, named for %mcp flows

    # ------------------------------------------------------------------ entry point
    @no_var_expand  # IPython would format the whole line at once and mangle JSON; line_expand does it per {expr}
    @needs_local_scope  # the caller's frame: {i} in a function's %mcp line is its own i, as with `!`
    @line_cell_magic
    def mcp(self, line: str, cell: str | None = None, local_ns: dict[str, Any] | None = None) -> Any:
        """%mcp SUBCOMMAND ... — see `%mcp --help` for the list of subcommands."""
        line = strip_comment(line)
        if self.shell is not None:  # {expr} as in `!` commands; never the cell body
            line = expand_braces(line, self.shell.user_ns, local_ns)
        words = self._split(line)
        if UNWRITABLE in words:  # a suggested line's word the person was to fill in (core.text.mcp_line)
            raise UsageError(
                f"this line still holds {UNWRITABLE}, which stands for a word the suggested line could not hold "
                "(a line break, a control character, or text starting with -): replace it with what you mean"
            )
        if not words or words[0] in ("-h", "--help", "help"):
            print(summary(list(SessionSettings.class_trait_names(config=True))))
            return None
        sub, rest = words[0], words[1:]
        command = COMMANDS.get(sub)
        if command is None:
            raise UsageError(f"unknown subcommand {sub!r}. Try %mcp --help")
        error: Exception | None = None
        try:
            return self._shown(command.run(self, rest, cell))
        except Help as h:
            print(str(h))
            return None
        except FlowError as exc:
            error = for_magics(exc)  # the engine's error with its %mcp hint; a SessionError as UsageError
        # raised outside the except block: no ExceptionGroup in the context, no traceback
        error.__context__ = None
        raise error

    def _shown(self, value: Any) -> Any:
        """A listing shows where its line runs, not only as the cell's last line (see listing.py); returned as well."""
        from ..notebook.listing import ShownOnce

        if isinstance(value, ShownOnce) and value.asked and self.shell is not None:
            value.show()
        return value

    @staticmethod
    def _split(line: str) -> list[str]:
        if not any(c in line for c in "'\"\\#"):
            return line.split()  # the common case, without shlex's per-character state machine
        try:
            return shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"could not split the line: {exc} (check the quotes)") from None

    # ------------------------------------------------------------------ what a handler needs of its cell
    def is_interactive(self) -> bool:
        if self.interactive is not None:
            return bool(self.interactive)
        return bool(self.session.cell_request().get("content", {}).get("allow_stdin", False))

    def cell_id(self) -> str | None:
        """The running cell's id (a flow starts or resumes in it), its name noted for ``%mcp flows``."""
        request = self.session.cell_request()
        cell_id = request.get("metadata", {}).get("cellId")
        if isinstance(cell_id, str) and cell_id:
            code = request.get("content", {}).get("code")
            inputs = getattr(getattr(self.shell, "history_manager", None), "input_hist_parsed", None)
            count = len(inputs) - 1 if inputs else None  # the cell's In [N]: stored before it runs (IPython 8 and 9)
            self.cells.note(cell_id, count, code if isinstance(code, str) else "")
        return cell_id

    def run_flow(
        self, method: Any, conn: Any, name: str, arguments: Any, ns: argparse.Namespace, prepare: Any = None
    ) -> Any:
        """Start a flow in this cell; see ``hand_back`` for what the cell gets."""
        interactive = self.is_interactive() and not ns.wait
        if getattr(ns, "frame", False) and (ns.background or (interactive and not self.awaiting)):
            raise UsageError(
                "--frame needs the call's result in this cell, and this line gives the running Flow "
                "(--background, or a line inside a def): frame it once done, mcp_notebook.frame(await flow), "
                "or add --wait"
            )
        flow = self.session.call(
            method,
            conn,
            name,
            arguments,
            call_options(ns),
            interactive=interactive,
            cell_id=self.cell_id(),
            prepare=prepare,
        )
        return self.hand_back(flow, ns, interactive)

    def hand_back(self, flow: Any, ns: argparse.Namespace, interactive: bool) -> Any:
        """What a flow line gives its cell.

        In an awaiting cell (``cell_await``) the flow goes back to the cell's helper, which awaits it:
        the cell ends when the flow ends and ``x = %mcp call ...`` binds the result. ``--background``,
        or a line the cell cannot await (inside a ``def``, or a kernel older than ipykernel 7.4), gives
        the ``Flow`` at once when interactive; headless waits in the cell and shows the report.
        """
        from ..flows.flow import Flow  # not the panel's module: a headless call imports no widgets
        from .cell_await import InCell

        background = getattr(ns, "background", False)
        if flow is None:
            return None
        if not isinstance(flow, Flow):  # a panel was shown instead (consent to resume, continue or start over)
            return (
                InCell(None, choice=flow) if self.awaiting and not background else None
            )  # awaited: the click, then its flow
        if interactive:
            if not self.awaiting or background:
                return flow
            if hasattr(flow.view, "error_follows"):
                flow.view.error_follows = True  # the cell raises the flow's error after its report
            return InCell(flow, frame=getattr(ns, "frame", False))
        if self.awaiting and not background:  # awaited, so that Interrupt ends the wait (see InCell.report)
            return InCell(flow, report=partial(self._report, flow, ns), frame=getattr(ns, "frame", False))
        return self._report(flow, ns)

    def _report(self, flow: Any, ns: argparse.Namespace) -> Any:
        """A headless flow: wait, show its report, raise its error or bind ``-o VAR``."""
        from IPython.display import display

        from ..notebook.display import FlowReport
        from .cell_await import framed, interrupted

        if flow is None:
            return None
        try:
            flow.result()
        except KeyboardInterrupt:  # one line says what became of the flow, no traceback through ours
            raise interrupted(flow) from None
        except Exception:  # noqa: BLE001 - the report shows the error; re-raised below, outside except
            pass
        display(
            FlowReport(flow, trace=ns.trace, show_error=False)._repr_mimebundle_(), raw=True
        )  # the raised error says it
        self.session.kept_notice(flow)
        if flow.error is not None:
            error = flow_failure(flow, flow.error)
            error.__context__ = None
            raise error
        if ns.output:
            from ..notebook.results import readable

            assert self.shell is not None  # a line magic runs in its shell
            self.shell.user_ns[ns.output] = readable(flow.value)
        failed = tool_failure(flow)
        if failed is not None:
            raise failed
        return framed(flow) if getattr(ns, "frame", False) else flow


def _usage() -> str:
    """``%mcp?``: the whole usage, generated from every parser when asked (``grammar.full_usage``).

    IPython's inspector (``%mcp?``, and a front end's inspect request) asks an object's ``getdoc()``
    before its ``__doc__`` (``IPython.core.oinspect.getdoc``), and a bound method hands the function's
    attributes on: so the parsers, and every subcommand's module, are built when someone asks, not
    at ``%load_ext`` (writing ``__doc__`` there built them all: bench/overhead.py P3).
    """
    return full_usage(build_parsers())


setattr(MCPMagics.mcp, "getdoc", _usage)  # noqa: B010 - a function's attribute, which mypy would refuse
