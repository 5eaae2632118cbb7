"""``%mcp replay FILE``: call a flow saved with ``%mcp trace --save`` again, answered as recorded; the cell fails on a change."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.text import plain_text
from ..parser import Parser, answer_fields

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "replay",
        "Call the flow saved with %mcp trace --save FILE again, answering as recorded, and say what changed "
        "(requests, questions, result); the cell fails when anything did.",
    )  # fmt: skip
    p.add_argument("file", metavar="FILE", help="a trace file written by %%mcp trace --save")
    p.add_argument("--server", metavar="NAME", help="the connection to replay against (default: the recorded one)")
    p.add_argument(
        "--answer", action="append", default=[], metavar="FIELD=VALUE",
        help="a value the recording withheld (a secret argument or field) or did not keep; also answers a new question",
    )  # fmt: skip
    p.add_argument("--answers", metavar="JSON", help="several values at once, as a JSON object")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="wall-clock limit for the replayed flow")
    p.add_argument(
        "--trust", action="store_true",
        help="replay a file you did not write (received, or edited since): it chooses the tool, arguments and answers sent; "
        "without it such a file is shown and nothing is sent",
    )  # fmt: skip
    p.add_argument("-o", "--output", metavar="VAR", help="store the Replay (before, after, differences) in VAR")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    ns, _ = magic.parsers["replay"].parse(words)
    from ...forms.model import Answers

    fields, raw = answer_fields(ns)
    outcome = magic.session.replay(ns.file, ns.server, Answers(fields=fields, raw=raw), ns.timeout, trust=ns.trust)
    if ns.output:
        assert magic.shell is not None  # a line magic runs in its shell
        magic.shell.user_ns[ns.output] = outcome
    print(plain_text(outcome.check().summary()))  # check() raises, listing the differences, when anything changed
