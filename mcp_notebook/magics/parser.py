"""The argparse dialect every ``%mcp`` subcommand's grammar is written in, and the flag groups they share.

``Parser`` reports through ``UsageError`` (never ``sys.exit`` in a kernel), answers ``--help`` with
``Help``, and keeps a fast path for the hot ``call TOOL key=value`` line that skips argparse
altogether. Each subcommand builds its own parser in its module (``commands/``); the flags several
share (a flow's answers and options) are added here, and read back here (``call_options``).
"""

from __future__ import annotations

import argparse
import keyword
from typing import Any

from IPython.core.error import UsageError

from ..core.text import mcp_line

__all__ = [
    "Help",
    "Parser",
    "answer_args",
    "answer_fields",
    "call_options",
    "check_choice",
    "flow_args",
    "fresh_namespace",
    "headers_of",
    "name_and_pairs",
]


class Help(Exception):
    """``--help`` was asked for; carries the text to show."""


class Parser(argparse.ArgumentParser):
    """argparse that reports through ``UsageError`` instead of exiting the kernel."""

    def __init__(self, prog: str, description: str, **kw: Any) -> None:
        super().__init__(prog=mcp_line("%mcp", *prog.split()), description=description, add_help=False, **kw)
        self.add_argument("-h", "--help", action="store_true", help="show this help")

    def _fast(self, positional: str) -> argparse.Namespace:
        """The defaults namespace with the one positional set (argparse itself costs ~40 µs)."""
        defaults = getattr(self, "_fast_defaults", None)
        if defaults is None:
            defaults = self._fast_defaults = vars(self.parse_known_args(["placeholder"])[0])
        ns = argparse.Namespace(**{k: (list(v) if isinstance(v, list) else v) for k, v in defaults.items()})
        setattr(ns, self._positionals._group_actions[0].dest, positional)
        return ns

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message}\n{self.format_usage().strip()}")

    def parse(self, words: list[str], intermixed_pairs: bool = False) -> tuple[argparse.Namespace, list[str]]:
        if "-h" in words or "--help" in words:
            raise Help(self.format_help())
        if intermixed_pairs and words and not any(w.startswith("-") for w in words):
            return self._fast(words[0]), words[1:]  # `call TOOL k=v ...` without flags: the hot path
        if self.usage is None:
            # parse_intermixed_args %-formats the usage a second time; escape the "%" of "%mcp"
            self.usage = self.format_usage()[len("usage: ") :].strip().replace("%", "%%")
        if intermixed_pairs:
            ns, extra = self.parse_known_args(words)
            for word in extra:
                if word.startswith("-"):
                    self.error(f"unrecognized option {word}")
            return ns, extra
        return self.parse_intermixed_args(words), []


def answer_args(p: Parser) -> None:
    p.add_argument(
        "--answer",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="pre-fill form field FIELD in every elicitation (VALUE is JSON when it parses)",
    )
    p.add_argument("--answers", metavar="JSON", help="several fields at once, as a JSON object")
    p.add_argument(
        "--accept-defaults", action="store_true", help="accept every form with its defaults for fields not answered"
    )
    p.add_argument(
        "--decline",
        action="append",
        default=[],
        metavar="NAME",
        help="decline the question with field (or input-request key) NAME",
    )
    p.add_argument("--cancel", action="store_true", help="cancel every question")
    p.add_argument(
        "--confirm",
        action="store_true",
        help="show the form even when the presets answer it (interactive runs send those at once)",
    )


def flow_args(p: Parser) -> None:
    answer_args(p)
    p.add_argument(
        "--background",
        action="store_true",
        help="return the running Flow at once and let the cell end before the call (await it later); without it the call ends its cell when it is done, and x = %%mcp ... binds the result",
    )
    p.add_argument(
        "--wait",
        action="store_true",
        help="block inside the cell, answering only from presets (for code that cannot await)",
    )
    p.add_argument("--trace", action="store_true", help="show every round's messages as a timeline")
    p.add_argument("--no-save", action="store_true", help="keep this flow out of the notebook's metadata")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="wall-clock limit for the whole flow")
    p.add_argument(
        "-o",
        "--output",
        metavar="VAR",
        help="store the result object in variable VAR (also a tool's isError result, whose cell still fails)",
    )


def name_and_pairs(p: Parser, words: str) -> None:
    """The usage line ends with what the line takes after its flags: the name and its ``key=value`` words.

    argparse knows only the one positional (the pairs are read by ``args.parse_pairs`` from the words it
    leaves), so its usage ended in a bare ``tool``: the usage is generated once, its last word replaced.
    """
    usage = p.format_usage().removeprefix("usage: ").rstrip()
    head, _, _ = usage.rpartition(" ")
    p.usage = f"{head} {words}".replace("%", "%%")  # formatted with % by argparse (prog), as parse() escapes it


def fresh_namespace(ns: argparse.Namespace) -> argparse.Namespace:
    """The flags of a resume, for calling again from the beginning (same answers, no output var)."""
    return argparse.Namespace(**{**vars(ns), "output": None})


def check_choice(sub: str, value: str | None, choices: list[str]) -> None:
    """A clear error for a word that is not one of ``choices`` (``None``: nothing was given)."""
    if value is not None and value not in choices:
        raise UsageError(f"{mcp_line('%mcp', sub)}: {value!r} is not one of {', '.join(choices)}")


def headers_of(items: list[str]) -> dict[str, str]:
    """``--header K:V`` flags as a dict."""
    headers = {}
    for item in items:
        key, sep, value = item.partition(":")
        if not sep or not key.strip():
            raise UsageError(f"--header wants K:V, got {item!r}")
        headers[key.strip()] = value.strip()
    return headers


def answer_fields(ns: argparse.Namespace) -> tuple[dict[str, Any], dict[str, str]]:
    """``--answers JSON`` and every ``--answer FIELD=VALUE`` of a line: the values, and each as typed."""
    from ..core.json_value import NotFinite
    from ..forms.model import parse_answer_value
    from .args import parse_json_object

    fields: dict[str, Any] = parse_json_object(ns.answers, "--answers") if ns.answers else {}
    raw: dict[str, str] = {}  # as typed, for a text field ("1.50" stays "1.50")
    for item in ns.answer:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--answer wants FIELD=VALUE, got {item!r}")
        try:
            fields[key] = parse_answer_value(value)
        except NotFinite:  # as typed: a text field takes "NaN"; a number field refuses it, saying why
            fields[key] = value
        raw[key] = value
    return fields, raw


def call_options(ns: argparse.Namespace) -> Any:
    """The ``CallOptions`` of a ``call`` / ``prompt`` / ``read`` / ``resume`` line (answers and flags)."""
    from ..forms.model import Answers
    from ..session.session import CallOptions

    fields, raw = answer_fields(ns)
    output = getattr(ns, "output", None)
    if output is not None and (not output.isidentifier() or keyword.iskeyword(output)):
        raise UsageError(f"-o wants a Python variable name, got {output!r}")
    task = None
    if getattr(ns, "task", False) or getattr(ns, "ttl", None) is not None:
        from ..wire.task_handles import TaskOptions

        if ns.ttl is not None and not 0 < ns.ttl <= 366 * 86400:
            raise UsageError(f"--ttl wants seconds between 0 and a year, got {ns.ttl:g}")
        task = TaskOptions(requested=True, ttl_ms=round(ns.ttl * 1000) if ns.ttl is not None else None)
    return CallOptions(
        task=task,
        answers=Answers(fields=fields, accept_defaults=ns.accept_defaults, raw=raw, decline=list(ns.decline), cancel=ns.cancel, confirm=ns.confirm), timeout=ns.timeout, save=not ns.no_save,
        trace=ns.trace, output=ns.output, trust=getattr(ns, "trust", False),
    )  # fmt: skip
