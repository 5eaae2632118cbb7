"""What a ``%mcp`` subcommand is: a ``Command`` (its parser, its handler), and the ``Magic`` a handler works with.

A subcommand lives in its own module under ``commands/`` with a ``parser()`` and a ``run(magic, words,
cell)``; ``commands.COMMANDS`` names each once. The handler gets the magic as the ``Magic`` protocol,
not as ``MCPMagics``: the magic imports the commands, so a command importing the magic would run
the imports in a circle, and the protocol says in one place all a handler may use of it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from ..session.session import Session
    from .cells import CellNames
    from .parser import Parser

__all__ = ["Command", "Handler", "Magic"]


class Magic(Protocol):
    """What a handler uses of ``MCPMagics``: its session and parsers, and how a flow line gives its cell a value."""

    session: Session
    parsers: dict[str, Parser]  # every subcommand's, built once by the magic (their usage and fast path are cached)
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
    """One subcommand: ``parser()`` builds its grammar (for the magic, Tab and the command reference), ``run`` a line.

    ``run(magic, words, cell)`` gets the line's words after the subcommand's name and the ``%%mcp``
    cell's body (``None`` for a line); it parses the words with ``magic.parsers[NAME]`` and returns
    the cell's value (a listing shows itself where the line runs). A ``NamedTuple``, not a frozen
    dataclass: ``%load_ext`` imports every command, and making a frozen dataclass costs about 0.7 ms
    against 0.1 ms (bench/overhead.py P3).
    """

    parser: Callable[[], Parser]
    run: Handler
