"""What a ``%mcp`` subcommand is: a ``Command`` (the module holding its parser and its handler), and the ``Magic`` a handler works with.

A subcommand lives in its own module under ``commands/`` with a ``parser()`` and a ``run(magic, words,
cell)``; ``commands.COMMANDS`` names each once, by its module's name. The module is imported when the
subcommand is first used (its line runs, Tab reads its flags, ``%mcp?`` or the command reference lists
it), not at ``%load_ext``: importing all of them, with what they import, was about a tenth of
``%load_ext`` (bench/overhead.py P3). The handler gets the magic as the ``Magic`` protocol, not as
``MCPMagics``: the magic imports the commands, so a command importing the magic would run the
imports in a circle, and the protocol says in one place all a handler may use of it.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from ..session.session import Session
    from .cells import CellNames
    from .parser import Parser

__all__ = ["PACKAGE", "Command", "Handler", "Magic"]

PACKAGE = f"{__package__}.commands"  # where a ``Command``'s module lives


class Magic(Protocol):
    """What a handler uses of ``MCPMagics``: its session and parsers, and how a flow line gives its cell a value."""

    session: Session
    parsers: Mapping[str, Parser]  # every subcommand's, each built on first use and kept (grammar.Parsers)
    shell: Any  # IPython's shell (None outside one)
    cells: CellNames  # the cells flow lines ran in, named for %mcp flows
    review: str  # the %config MCPMagics.review setting (%mcp review sets it)

    def is_interactive(self) -> bool:
        """Whether a person answers in this cell (``%config MCPMagics.interactive``, else the request's stdin)."""
        ...

    def cell_id(self) -> str | None:
        """The running cell's id (a flow starts or resumes in it), its name noted for ``%mcp flows``."""
        ...

    def run_flow(
        self, method: Any, conn: Any, name: str, arguments: Any, ns: argparse.Namespace, prepare: Any = None
    ) -> Any:
        """Start a flow in this cell; what the cell gets is ``hand_back``'s."""
        ...

    def hand_back(self, flow: Any, ns: argparse.Namespace, interactive: bool) -> Any:
        """What a flow line gives its cell: the flow, its awaited value, or its report (headless)."""
        ...


Handler = Callable[[Magic, list[str], str | None], Any]


class Command(NamedTuple):
    """One subcommand: the module under ``commands/`` that holds its ``parser()`` and ``run``, imported on first use.

    ``parser()`` builds its grammar (for the magic, Tab and the command reference); ``run(magic, words,
    cell)`` gets the line's words after the subcommand's name and the ``%%mcp`` cell's body (``None``
    for a line), parses the words with ``magic.parsers[NAME]`` and returns the cell's value (a listing
    shows itself where the line runs). ``args`` go first to both, for a module that serves several
    subcommands (``offered``: the kind). A ``NamedTuple``, not a frozen dataclass: the registry is made
    at ``%load_ext``, where a frozen dataclass costs about 0.7 ms against 0.1 ms (bench/overhead.py P3).
    """

    module: str  # its name under ``commands/``
    args: tuple[str, ...] = ()

    def code(self) -> ModuleType:
        """The subcommand's module, imported now if it was not yet.

        Imported on first use, a module that cannot be imported (an incomplete install) fails its line,
        Tab or ``%mcp?`` rather than ``%load_ext``: the error says which module and what to do.
        """
        name = f"{PACKAGE}.{self.module}"
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            from IPython.core.error import UsageError

            raise UsageError(
                f"this %mcp subcommand cannot run: its module {name} could not be imported ({exc}); "
                "reinstall mcp-notebook in this kernel's environment and restart the kernel"
            ) from exc

    def parser(self) -> Parser:
        built: Parser = self.code().parser(*self.args)
        return built

    def run(self, magic: Magic, words: list[str], cell: str | None) -> Any:
        return self.code().run(*self.args, magic, words, cell)
