"""The command-line grammar of ``%mcp``: one argparse parser per subcommand, and the summary.

Kept apart from the magics so the table of options reads in one place. The parsers report through
``UsageError`` (never ``sys.exit`` in a kernel), answer ``--help``, and keep a fast path for the hot
``call TOOL key=value`` line that skips argparse altogether.
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
    "SUMMARY",
    "build_parsers",
    "call_options",
    "check_choice",
    "fresh_namespace",
    "full_usage",
    "headers_of",
    "summary",
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


def _answer_args(p: Parser) -> None:
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


def _flow_args(p: Parser) -> None:
    _answer_args(p)
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


def _providers_help() -> str:
    """The providers as ``%mcp model --help`` lists them, each in its own module's words (``Provider.described``)."""
    from ..sampling.providers import PROVIDERS

    return ", ".join(f"{p.name} ({p.described})" if p.described else p.name for p in PROVIDERS.values())


def build_parsers() -> dict[str, Parser]:
    ps: dict[str, Parser] = {}
    p = ps["connect"] = Parser(
        "connect",
        "Connect NAME to an MCP server: an http(s) URL, a server object in the notebook, module:attr, or -- COMMAND ARGS (stdio). "
        "Or --from-config [PATH] [NAME ...] [--all] [--trust-project]: the servers of Claude Desktop's, VS Code's and "
        "jupyter-mcp-manager's user configs, then of .mcp.json and .vscode/mcp.json from the notebook's folder up to the project root "
        "(the nearest .git, never above home); listed, the ones named (or all) connected, ${env:VAR} read from the environment. "
        "A project file's entry is used only once you approved it as shown (asked in the cell; headless: --trust-project), "
        "again after the file changes; your own entries keep their names.",
    )  # fmt: skip
    p.add_argument("name", nargs="?")
    p.add_argument("target", nargs="?", help="URL, object name or module:attr (stdio: put the command after --)")
    p.add_argument("--header", action="append", default=[], metavar="K:V", help="HTTP header (never saved)")
    p.add_argument(
        "--bearer-env", metavar="VAR", help="send 'Authorization: Bearer $VAR' (the token is read from the environment)"
    )
    p.add_argument(
        "--protocol",
        default="auto",
        choices=["auto", "legacy", "2026-07-28"],
        help="protocol generation (default: auto)",
    )
    p.add_argument("--cwd", help="working directory of a stdio server")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="environment variable for a stdio server")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="per-request read timeout")
    p.add_argument(
        "--client-id", metavar="ID", help="sign in as this pre-registered OAuth client (else the server's registration)"
    )
    p.add_argument(
        "--client-secret-env", metavar="VAR", help="the OAuth client's secret, read from environment variable VAR"
    )
    p.add_argument(
        "--scope", metavar="SCOPES", help="OAuth scopes to ask for when signing in (space-separated, quoted)"
    )
    p.add_argument(
        "--client-credentials",
        action="store_true",
        help="sign in as a machine (OAuth client credentials: --client-id with --client-secret-env or --private-key-env)",
    )
    p.add_argument(
        "--private-key-env",
        metavar="VAR",
        help="PEM private key of a private_key_jwt client, from environment variable VAR",
    )
    p.add_argument(
        "--id-token-env",
        metavar="VAR",
        help="enterprise sign-in (cross-app access): your identity provider's ID token, from VAR",
    )
    p.add_argument(
        "--idp-token-endpoint",
        metavar="URL",
        help="enterprise sign-in: the identity provider's token endpoint (token exchange)",
    )
    p.add_argument(
        "--idp-client-id", metavar="ID", help="enterprise sign-in: this client's id at the identity provider"
    )
    p.add_argument(
        "--issuer",
        metavar="URL",
        help="pin sign-in to this authorization server (issuer URL): a client secret, key or workload token goes nowhere else",
    )
    p.add_argument(
        "--assertion-env",
        metavar="VAR",
        help="workload identity: a ready-made JWT (GitHub OIDC, cloud, CI) in VAR, exchanged by the jwt-bearer grant (with --client-id)",
    )
    p.add_argument(
        "--assertion-file",
        metavar="PATH",
        help="workload identity: a JWT in a file, read at each exchange (a Kubernetes projected token; with --client-id)",
    )
    p.add_argument(
        "--no-sign-in", action="store_true", help="never start an OAuth sign-in for this server (a 401 is an error)"
    )
    p.add_argument(
        "--from-config",
        nargs="?",
        const="",
        metavar="PATH",
        help="read MCP configs (the user's, then this notebook's folder up to the project root; or PATH); list them, or connect the NAMEs given",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="with --from-config: connect every server found that is yours or approved (the others are listed)",
    )
    p.add_argument(
        "--trust-project", action="store_true",
        help="with --from-config: approve the named project entries (.mcp.json, .vscode/mcp.json) as they are now, without asking; "
        "read what they run first: --from-config alone lists them",
    )  # fmt: skip
    p = ps["auth"] = Parser(
        "auth", "OAuth sign-ins kept for you (in your Jupyter data folder, never in notebooks): list them, or sign out."
    )
    p.add_argument("action", choices=["list", "logout"], nargs="?", default="list")
    p.add_argument("server", nargs="?", help="a connection name or a server URL (logout)")
    p.add_argument("--all", action="store_true", help="logout: forget every sign-in")
    ps["servers"] = Parser("servers", "List the connected servers.")
    p = ps["log"] = Parser(
        "log", "Show a connection's log: server log messages and what a stdio server wrote on stderr."
    )
    p.add_argument("name", nargs="?")
    p.add_argument("-n", "--lines", type=int, default=50, help="how many recent lines (default 50)")
    p = ps["disconnect"] = Parser("disconnect", "Close connection NAME.")
    p.add_argument("name")
    for kind in ("tools", "prompts", "resources"):
        p = ps[kind] = Parser(
            kind,
            f"List the {kind} of a server (default: every connected server); PATTERN keeps the names it matches "
            f"(a glob, any case: {mcp_line('%mcp', kind, 'SERVER', 'get_*')}, or {mcp_line('%mcp', kind, 'get_*')} "
            "over every server).",
        )
        p.add_argument("server", nargs="?")
        p.add_argument("pattern", nargs="?", help="a glob on the name (* ? [...]), any case")
    p = ps["call"] = Parser(
        "call",
        "Call a tool: %mcp call [SERVER.]TOOL key=value ... (or a JSON cell body with %%mcp call). A result the tool marks isError is shown as an error and fails the cell, so Run All stops there.",
    )
    p.add_argument("tool")
    p.add_argument("--json", metavar="JSON", help="arguments as a JSON object (key=value words override)")
    p.add_argument(
        "--task", action="store_true",
        help="run as a task where the server offers tasks: the call returns at once and is followed by polling; it is saved so "
        "a new kernel can pick it up (%%mcp resume ID). A tool that requires a task runs as one anyway",
    )  # fmt: skip
    p.add_argument(
        "--ttl",
        type=float,
        metavar="SECONDS",
        help="how long the server should keep the task and its result (2025-11-25 servers; they may choose otherwise)",
    )
    p.add_argument(
        "--frame", action="store_true",
        help="give the result as a pandas DataFrame (df = %%mcp call ... --frame): its structured content's list of "
        "records, or the one such list an object holds; anything else is refused, naming its shape",
    )  # fmt: skip
    _flow_args(p)
    p = ps["prompt"] = Parser("prompt", "Get a prompt: %mcp prompt [SERVER.]NAME key=value ...")
    p.add_argument("prompt")
    p.add_argument("--json", metavar="JSON", help="arguments as a JSON object")
    _flow_args(p)
    p = ps["skills"] = Parser(
        "skills",
        "List the skills a server offers (the skills extension, SEP-2640): names, descriptions, files. Reads no file.",
    )
    p.add_argument("server", nargs="?", help="a connection name (default: every connected server)")
    p = ps["skill"] = Parser(
        "skill",
        "Load a skill: %mcp skill [SERVER.]NAME reads its files, verifies each against the listed sha256 digest, size and "
        "frontmatter (a file that fails is refused, and nothing further is read) and shows its SKILL.md with its files.",
    )
    p.add_argument("skill", help="[SERVER.]NAME, as %%mcp skills lists it")
    p = ps["read"] = Parser("read", "Read a resource: %mcp read [SERVER] URI")
    p.add_argument("first")
    p.add_argument("uri", nargs="?")
    _flow_args(p)
    p = ps["tasks"] = Parser(
        "tasks",
        "List tasks: the ones this notebook follows or saved, and the server's own list where it offers one (2025-11-25 servers).",
    )
    p.add_argument("server", nargs="?", help="a connection name (default: every connected server)")
    p = ps["map"] = Parser(
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
    _answer_args(p)
    p = ps["watch"] = Parser(
        "watch",
        "Show a resource and update the output whenever the server says it changed: %mcp watch [SERVER] URI [--into VAR].",
    )
    p.add_argument("first", help="the server's name, or the URI when one server is connected")
    p.add_argument("uri", nargs="?")
    p.add_argument("--into", metavar="VAR", help="keep the latest value (the ReadResourceResult) in variable VAR")
    p = ps["unwatch"] = Parser(
        "unwatch",
        "Stop watching: %mcp unwatch [SERVER] [URI] (without arguments: every watch); %mcp unwatch --list shows them.",
    )
    p.add_argument("first", nargs="?")
    p.add_argument("uri", nargs="?")
    p.add_argument("--list", action="store_true", help="list the watches instead")
    p = ps["flows"] = Parser("flows", "List flows waiting for input and tasks still running (saved in this notebook).")
    p.add_argument(
        "--from", dest="from_path", metavar="PATH", help="also read the flows saved in the notebook file PATH"
    )
    p = ps["resume"] = Parser(
        "resume",
        "Continue a saved flow: show its questions in this cell and go on with its saved state. Takes the answer flags of %mcp call.",
    )
    p.add_argument("id", nargs="?", help="the flow's id (see %%mcp flows); optional when only one is waiting")
    p.add_argument(
        "--from", dest="from_path", metavar="PATH", help="read the flows saved in the notebook file PATH first"
    )
    p.add_argument(
        "--trust", nargs="?", const=True, default=False, metavar="DIGEST",
        help="resume even a flow you did not save (a received notebook) or whose connection now points elsewhere, "
        "exactly as it was last shown to you (read it first: %%mcp flows shows it whole); with DIGEST (after the flow's ID), the record with "
        "that content digest (as shown): also chooses between different records that claim one id",
    )  # fmt: skip
    _flow_args(p)
    p = ps["forget"] = Parser("forget", "Forget a saved flow: %mcp forget ID | --all")
    p.add_argument("id", nargs="?")
    p.add_argument("--all", action="store_true")
    p = ps["trace"] = Parser("trace", "Show the protocol trace of the last flow (or export it as JSON).")
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
    p = ps["replay"] = Parser(
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
    p = ps["server"] = Parser(
        "server",
        "%%mcp server NAME: run the cell and connect the MCPServer (or low-level Server) it defines as NAME; re-run to reload.",
    )
    p.add_argument("name")
    p.add_argument("--var", help="the variable holding the server, when the cell defines several")
    p = ps["serve"] = Parser("serve", "Serve a notebook-defined server over streamable HTTP in the background.")
    p.add_argument("name")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    p.add_argument("--keys-env", metavar="VAR", help="seal request state with the key in $VAR, so it survives restarts")
    p.add_argument(
        "--no-auth",
        action="store_true",
        help="no bearer token (loopback hosts only: any local process can then call it)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another Host name clients use to reach it (e.g. a DNS name)",
    )
    p = ps["stop"] = Parser("stop", "Stop serving NAME over HTTP (the in-process connection stays).")
    p.add_argument("name")
    p = ps["roots"] = Parser(
        "roots",
        "Roots (file:// folders) offered to servers: %mcp roots [list | add PATH [--name N] | remove PATH | reset]. "
        "Default: none, and servers are not told about roots at all, so a server keeps the folders it was started with "
        "(MCP's filesystem server and server-pdf replace them with the client's roots). A connection declares roots when "
        "it opens: add them before connecting (add . offers the notebook's folder). 2025-generation servers that were "
        "offered roots are told when the list changes; reset offers none again.",
    )
    p.add_argument("action", nargs="?", default="list", metavar="{list,add,remove,reset}")
    p.add_argument("path", nargs="?")
    p.add_argument("--name", help="the name servers see for the root")
    p = ps["model"] = Parser(
        "model",
        "Models that answer sampling requests: %mcp model add NAME PROVIDER [MODEL] [options] | use NAME | remove NAME | list. "
        f"PROVIDER: {_providers_help()}.",
    )
    p.add_argument("action", nargs="?", default="list", metavar="{add,use,remove,list}")
    p.add_argument("name", nargs="?")
    p.add_argument("provider", nargs="?")
    p.add_argument("model", nargs="?")
    p.add_argument("--base-url", metavar="URL", help="the endpoint, e.g. http://localhost:11434/v1 for Ollama")
    p.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding the API key (default for the official endpoints: OPENAI_API_KEY / ANTHROPIC_API_KEY); the key is never shown or saved",
    )
    p.add_argument(
        "--cost",
        type=float,
        metavar="X",
        help="how expensive the model is, 0..1 (matched against a request's costPriority)",
    )
    p.add_argument("--speed", type=float, metavar="X", help="how fast it is, 0..1 (speedPriority)")
    p.add_argument("--intelligence", type=float, metavar="X", help="how capable it is, 0..1 (intelligencePriority)")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="how long to wait for a hosted model (default 60)")
    p = ps["review"] = Parser(
        "review",
        "Review of sampling in interactive runs: %mcp review [remote | ask | always | never]. remote (the default): ask only when "
        "the request leaves this machine (an openai or anthropic model not on a loopback address); echo, callable, human and "
        "local models such as Ollama on 127.0.0.1 answer without review. ask: see and edit every request, then Send or Deny; "
        "then the reply, then Return or Deny. always: show both without waiting. never: show neither. Headless runs never review.",
    )
    p.add_argument("policy", nargs="?", metavar="{remote,ask,always,never}")
    for name, words in (("call", "[SERVER.]TOOL [key=value ...]"), ("prompt", "[SERVER.]NAME [key=value ...]")):
        _name_and_pairs(ps[name], words)
    return ps


def _name_and_pairs(p: Parser, words: str) -> None:
    """The usage line ends with what the line takes after its flags: the name and its ``key=value`` words.

    argparse knows only the one positional (the pairs are read by ``args.parse_pairs`` from the words it
    leaves), so its usage ended in a bare ``tool``: the usage is generated once, its last word replaced.
    """
    usage = p.format_usage().removeprefix("usage: ").rstrip()
    head, _, _ = usage.rpartition(" ")
    p.usage = f"{head} {words}".replace("%", "%%")  # formatted with % by argparse (prog), as parse() escapes it


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

The line: {expr} is replaced by its value in bare words and "..." (a function's locals first, then the
notebook's variables; {{ and }} are literal braces there); inside '...' nothing is expanded, so JSON goes
in single quotes as typed (--json '{"values": {"id": 2}}'); NaN and Infinity are no JSON and are refused;
a # that starts a word begins a comment."""


def summary(settings: list[str]) -> str:
    """``%mcp --help``: the subcommands, then every ``%config MCPMagics`` setting by name."""
    return (
        f"{SUMMARY}\n\nSettings: %config MCPMagics ({', '.join(settings)}); %config MCPMagics shows each with its help."
    )


def full_usage(parsers: dict[str, Parser]) -> str:
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
