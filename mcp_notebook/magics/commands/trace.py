"""``%mcp trace [last] [--json] [--save FILE [--keep-answers]]``: the last flow's messages, round by round."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..hints import saved_trace_line
from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser("trace", "Show the protocol trace of the last flow (or export it as JSON).")
    p.add_argument("which", nargs="?", default="last", help="'last' (the only one kept for now)")
    p.add_argument("--json", action="store_true", help="return the trace as a list of dicts")
    p.add_argument(
        "--save",
        metavar="PATH",
        help="write the trace as JSON to PATH, with the recording %%mcp replay PATH calls again",
    )
    p.add_argument(
        "--keep-answers", action="store_true",
        help="keep the answers' values in the saved file, so a replay needs none given (a secret-looking field is never kept)",
    )  # fmt: skip
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...notebook.display import TraceView

    ns, _ = magic.parsers["trace"].parse(words)
    flow = magic.session.last_flow
    if flow is None:
        raise UsageError("no flow has run yet in this kernel")
    if ns.save:
        rec = magic.session.save_trace(flow, ns.save, keep_answers=ns.keep_answers)
        return print(saved_trace_line(flow, ns.save, rec))
    if ns.keep_answers:
        raise UsageError("--keep-answers goes with --save FILE (what is saved keeps them)")
    return flow.trace() if ns.json else TraceView(flow)
