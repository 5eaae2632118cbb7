"""The command-line grammar of ``%mcp`` as a whole: every subcommand's parser, the summary, ``%mcp?``.

Each subcommand's parser is built in its own module (``commands/``, in the dialect of ``parser.py``);
``build_parsers`` gathers them from the registry, in its order, for the magic, Tab completion and
the command reference, each built when first asked for (``Parsers``). ``SUMMARY`` is the hand-kept
overview ``%mcp --help`` shows (a new subcommand adds its line); ``full_usage`` is ``%mcp?``,
generated from the parsers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .commands import COMMANDS
from .parser import Help, Parser, answer_fields, call_options, check_choice, fresh_namespace, headers_of

__all__ = [
    "Help",
    "Parser",
    "Parsers",
    "SUMMARY",
    "answer_fields",
    "build_parsers",
    "call_options",
    "check_choice",
    "fresh_namespace",
    "full_usage",
    "headers_of",
    "summary",
]


class Parsers(Mapping[str, Parser]):
    """Every subcommand's parser by name, in ``COMMANDS``' order, each built on first use and kept.

    Built when asked for, because building one imports its subcommand's module (``Command``):
    ``%load_ext`` makes the magic's (which Tab reads too) and builds none; a line builds its own
    subcommand's, Tab after ``%mcp NAME`` that one, ``%mcp?`` all. The names are the registry's, read
    when asked, so an entry added to ``COMMANDS`` is a parser here without anything else.
    """

    def __init__(self) -> None:
        self._built: dict[str, Parser] = {}

    def __getitem__(self, name: str) -> Parser:
        command = COMMANDS[name]  # KeyError for a name that is no subcommand, as a dict's
        parser = self._built.get(name)
        if parser is None:
            parser = self._built[name] = command.parser()
        return parser

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS  # without building it (Mapping's would)

    def __iter__(self) -> Iterator[str]:
        return iter(list(COMMANDS))

    def __len__(self) -> int:
        return len(COMMANDS)


def build_parsers() -> Parsers:
    """Every subcommand's parser by name, fresh (a parser caches its usage and fast-path defaults), in ``COMMANDS``' order."""
    return Parsers()


SUMMARY = """\
%mcp SUBCOMMAND [args] — an MCP client in your notebook. Every subcommand answers --help.

  connect NAME TARGET       connect to a URL, a server object, module:attr, or -- COMMAND ARGS
  servers | disconnect NAME list or close connections
  log [NAME]                a connection's log messages and its stdio server's stderr
  tools|prompts|resources   list what a server offers
  skills [SERVER] | skill [SERVER.]NAME   a server's skills; one read and verified (digest, size, frontmatter)
  call [SERVER.]TOOL k=v    call a tool (%%mcp call takes a JSON/YAML body)
  prompt NAME k=v | read [SERVER] URI
  flows [--from PATH]       flows waiting for input and running tasks (saved in the notebook)
  call ... --task | tasks [SERVER]   run a call as a task (kept across kernels); list tasks
  watch [SERVER] URI | unwatch       a resource shown live, updated when it changes
  map [SERVER.]TOOL --over VAR      the tool once per row (DataFrame, list), one progress bar
  connect --from-config [PATH] [NAME ...|--all]   servers of your MCP configs (Claude Desktop, VS Code)
                            and, once approved (asks, or --trust-project), a project's .mcp.json
  resume [ID] | forget ID|--all   continue a saved flow, or drop it
  trace [last] [--json] [--save FILE]   the last flow's messages, round by round (saved: replayable)
  replay FILE [--server NAME]   call a saved flow again, answered as recorded; the cell fails on a change
  roots [list|add|remove|reset]  folders offered to servers connected after (default: none)
  auth [list] | auth logout NAME|--all   OAuth sign-ins kept for you
  %%mcp server NAME         the server defined in the cell becomes connection NAME (re-run reloads)
  serve NAME | stop NAME    serve a notebook-defined server over streamable HTTP
  model add|use|remove|list models that answer sampling requests
  review [remote|ask|always|never]  whether you see sampling requests and replies first (default: remote)
  policy                    the administrator's policy in force, and the file each rule comes from

The line: {expr} is replaced by its value in bare words and "..." (a function's locals first, then the
notebook's variables; {{ and }} are literal braces there); inside '...' nothing is expanded, so JSON goes
in single quotes as typed (--json '{"values": {"id": 2}}'); NaN and Infinity are no JSON and are refused;
a # that starts a word begins a comment."""


def summary(settings: list[str]) -> str:
    """``%mcp --help``: the subcommands, then every ``%config MCPMagics`` setting by name."""
    return (
        f"{SUMMARY}\n\nSettings: %config MCPMagics ({', '.join(settings)}); %config MCPMagics shows each with its help."
    )


def full_usage(parsers: Mapping[str, Parser]) -> str:
    """``%mcp?``: the summary, then every subcommand's usage line and description, generated from the parsers.

    As ``magic_arguments`` writes a magic's ``__doc__`` from its parser, so the help cannot drift from
    what the line accepts; ``%mcp SUB --help`` shows the whole of one subcommand, every flag explained.
    """
    parts = [SUMMARY, "", "Usage of each subcommand (%mcp SUB --help explains every flag):", ""]
    for parser in parsers.values():
        usage = " ".join(parser.format_usage().removeprefix("usage: ").split())
        described = " ".join((parser.description or "").split())
        parts.append(f"  {usage}")
        if described:
            parts.append(f"      {described}")
    return "\n".join(parts)
