"""``%mcp map [SERVER.]TOOL --over VAR``: the tool once per row, one progress bar, results in input order."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..parser import Parser, answer_args, call_options

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "map",
        "Call a tool once per row of a variable (a list of argument dicts, a pandas or Dask DataFrame, an iterable): one progress bar, one table of failures, results in input order. The rows' questions are answered by --answer presets; to answer them in a form, once for every row, await mcp_notebook.map_async(...) in the cell.",
    )
    p.add_argument("tool", help="[SERVER.]TOOL")
    p.add_argument("--over", required=True, metavar="VAR", help="the notebook variable holding the rows")
    p.add_argument(
        "--column", metavar="C", help="for a one-argument tool: the column (or values) passed as that argument"
    )
    p.add_argument("--concurrency", type=int, default=8, metavar="N", help="calls at once (default 8)")
    p.add_argument("--retries", type=int, default=0, metavar="N", help="tries again a failed call N times")
    p.add_argument(
        "--keep-errors",
        action="store_true",
        help="keep a failed row's error in the results instead of raising after the map",
    )
    p.add_argument("--expand", action="store_true", help="DataFrame: structured results expanded to columns")
    p.add_argument("-o", "--output", metavar="VAR", help="store the results in variable VAR")
    answer_args(p)
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...mapping.map import map_magic

    ns, _ = magic.parsers["map"].parse(words)
    if ns.concurrency < 1 or ns.retries < 0:
        raise UsageError("--concurrency wants 1 or more, --retries 0 or more")
    if ns.output is not None and not ns.output.isidentifier():
        raise UsageError(f"-o wants a Python variable name, got {ns.output!r}")
    options = call_options(
        argparse.Namespace(**{**vars(ns), "timeout": None, "no_save": True, "trace": False, "wait": True})
    )
    results = map_magic(
        magic.session,
        magic.session.namespace,
        ns.tool,
        ns.over,
        ns.column,
        ns.concurrency,
        ns.retries,
        ns.keep_errors,
        ns.expand,
        options.answers,
    )
    if ns.output:
        magic.session.namespace[ns.output] = results
        return None
    return results
