"""``%mcp`` / ``%%mcp``: the notebook's MCP client commands.

This module only parses text, calls the ``Session`` it owns (``session.session``) and displays what
comes back; no protocol logic lives here. The engine's errors and notes get their ``%mcp`` hints in
``magics/hints.py``. Settings are traitlets of ``SessionSettings``, inherited by ``MCPMagics``
(``%config MCPMagics.max_rounds = 5``, or ``c.MCPMagics.max_rounds`` in ``ipython_config.py``).

Why this module is long: one short ``_do_SUB`` method per subcommand, each only parsing, calling the
session and displaying (the grammar is ``grammar.py``, the hints ``hints.py``, the listings
``listings.py``); IPython's magics find them on one class.
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Callable
from functools import partial
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, needs_local_scope, no_var_expand

from ..auth.sdk_provider import OAuthOptions
from ..core.text import UNWRITABLE, mcp_line, plain_text
from ..errors import FlowError
from ..notebook.views import NotebookViews
from ..notebook.watching import Watches
from ..session.session import Session, SessionSettings
from .args import build_arguments, check_prompt_arguments, parse_body, parse_json_object, parse_pairs
from .cells import CellNames
from .grammar import Help, answer_fields, build_parsers, call_options, check_choice, full_usage, headers_of, summary
from .hints import connect_line, connect_notes, flow_failure, for_magics, saved_trace_line, tool_failure, with_hint
from .line_expand import expand_braces, strip_comment
from .listings import declared_arguments, listing_rows

__all__ = ["MCPMagics"]

_GLOB = re.compile(r"[*?\[]")
_LISTINGS = {  # %mcp tools / prompts / resources: their columns
    "tools": ["server", "tool", "title", "description", "parameters"],
    "prompts": ["server", "prompt", "title", "description", "arguments"],
    "resources": ["server", "uri", "name", "mime type", "description"],
}


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
        self._parsers = build_parsers()
        type(self).mcp.__doc__ = full_usage(self._parsers)  # %mcp? shows the whole usage, generated from the parsers
        self.awaiting = (
            False  # set by cell_await while an awaiting cell runs a flow line: the flow is handed back, not returned
        )
        self._cells = CellNames()  # the cells flow lines ran in, named for %mcp flows

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
        handler: Callable[..., Any] | None = (
            getattr(self, f"_do_{sub}", None) if sub not in _LISTINGS else partial(self._listing, sub)
        )
        if handler is None:
            raise UsageError(f"unknown subcommand {sub!r}. Try %mcp --help")
        error: Exception | None = None
        try:
            return self._shown(handler(rest, cell))
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

    # ------------------------------------------------------------------ connections
    def _do_connect(self, words: list[str], cell: str | None) -> Any:
        if "--from-config" in words and "--" not in words:
            return self._connect_from_config(words)
        command: list[str] = []
        if "--" in words:
            i = words.index("--")
            words, command = words[:i], words[i + 1 :]
        ns, _ = self._parsers["connect"].parse(words)
        if not ns.name:
            raise UsageError("missing NAME: %mcp connect NAME TARGET (or --from-config to use the configs you have)")
        if command and ns.target:
            raise UsageError("give either a TARGET or -- COMMAND, not both")
        if not command and not ns.target:
            raise UsageError("missing TARGET: a URL, an object name, module:attr, or -- COMMAND ARGS")
        oauth = None
        sign_in_flags = (
            ns.client_id,
            ns.client_secret_env,
            ns.scope,
            ns.client_credentials,
            ns.private_key_env,
            ns.id_token_env,
            ns.idp_token_endpoint,
            ns.idp_client_id,
            ns.issuer,
            ns.assertion_env,
            ns.assertion_file,
        )
        if any(sign_in_flags):
            oauth = OAuthOptions(*sign_in_flags)
        conn = self.session.connect(
            ns.name, command or ns.target, headers=headers_of(ns.header) or None, bearer_env=ns.bearer_env, protocol=ns.protocol,
            cwd=ns.cwd, env=parse_pairs(ns.env) if ns.env else {}, namespace=self.session.namespace or None, read_timeout=ns.timeout,
            oauth=oauth, sign_in=not ns.no_sign_in, interactive=self._is_interactive(),
        )  # fmt: skip
        request = conn.sign_in.pending if conn.sign_in is not None and conn.state == "connecting" else None
        if request is not None and conn.sign_in is not None:  # a person signs in here; the connection opens after
            from IPython.display import display

            from ..core.threads import KernelLoop
            from ..notebook.sign_in_view import SignInPanel

            print(
                f"Connecting {conn.name!r} to {conn.target.describe()}: the server wants you to sign in first. Calls wait for it."
            )
            if conn.sign_in.claim_panel(request):  # one panel per sign-in: calls waiting on it say so instead
                display(SignInPanel(request, conn.sign_in, call=KernelLoop().call).widget)
            return None
        who = (
            conn.server_name or "an unnamed server"
        )  # its own name, never the connection's (that would read as the server's)
        print(
            plain_text(
                f"Connected {conn.name!r} to {who} at {conn.target.describe()} (protocol {conn.protocol_version})."
            )
        )
        for note in connect_notes(conn):
            print(plain_text(note))
        return None

    def _connect_from_config(self, words: list[str]) -> Any:
        """``%mcp connect --from-config [PATH] [NAME ...] [--all] [--trust-project]``: list the servers found, connect the ones named."""
        import os

        from ..notebook.display import Table
        from ..session.from_config import COLUMNS, connect_from_config

        if "-h" in words or "--help" in words:
            self._parsers["connect"].parse(["--help"])
        flags = ("--from-config", "--all", "--trust-project")
        rest = [w for w in words if w not in flags]
        unknown = [w for w in rest if w.startswith("-")]
        if unknown:
            raise UsageError(f"--from-config takes [PATH] [NAME ...] [--all] [--trust-project], not {unknown[0]}")
        first = rest[0] if rest else ""
        is_path = bool(first) and (
            os.path.exists(os.path.expanduser(first)) or first.endswith(".json") or os.sep in first
        )
        path, names = (first, rest[1:]) if is_path else (None, rest)
        if names and "--all" in words:
            raise UsageError("--from-config: name the servers to connect, or --all, not both")
        rows, notes = connect_from_config(
            self.session,
            path,
            names,
            "--all" in words,
            interactive=self._is_interactive(),
            trust_project="--trust-project" in words,
        )
        return Table(
            COLUMNS,
            rows,
            title="MCP server configs (values of ${env:VAR} are never shown or saved)",
            empty="No MCP config files found.",
            notes=notes,
        )

    def _do_map(self, words: list[str], cell: str | None) -> Any:
        from ..mapping.map import map_magic

        ns, _ = self._parsers["map"].parse(words)
        if ns.concurrency < 1 or ns.retries < 0:
            raise UsageError("--concurrency wants 1 or more, --retries 0 or more")
        if ns.output is not None and not ns.output.isidentifier():
            raise UsageError(f"-o wants a Python variable name, got {ns.output!r}")
        options = call_options(
            argparse.Namespace(**{**vars(ns), "timeout": None, "no_save": True, "trace": False, "wait": True})
        )
        results = map_magic(
            self.session,
            self.session.namespace,
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
            self.session.namespace[ns.output] = results
            return None
        return results

    def _do_watch(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["watch"].parse(words)
        server, uri = (ns.first, ns.uri) if ns.uri else (None, ns.first)
        if ns.into is not None and not ns.into.isidentifier():
            raise UsageError(f"--into wants a Python variable name, got {ns.into!r}")
        self._watches().watch(server, uri, ns.into, self.session.namespace)
        return None  # the watch shows itself, updated in place

    def _watches(self) -> Watches:
        watches = self.session.watches
        assert watches is not None  # the magics' session is made with the notebook side, which brings them
        return watches

    def _do_unwatch(self, words: list[str], cell: str | None) -> Any:
        from ..notebook.display import Table

        ns, _ = self._parsers["unwatch"].parse(words)
        watches = self._watches()
        if ns.list:
            return Table(
                ["server", "uri", "updates", "since"],
                [list(r) for r in watches.list()],
                title="watched resources",
                empty="Nothing is watched.",
            )
        server, uri = (
            (ns.first, ns.uri)
            if ns.uri
            else ((ns.first, None) if ns.first in self.session.registry else (None, ns.first))
        )
        stopped = watches.unwatch(server, uri)
        print(f"Stopped watching {', '.join(stopped)}." if stopped else "Nothing was being watched there.")
        return None

    def _do_auth(self, words: list[str], cell: str | None) -> Any:
        from ..notebook.display import Table

        ns, _ = self._parsers["auth"].parse(words)
        vault = self.session.vault
        if ns.action == "logout":
            if ns.all:
                print(f"Signed out everywhere: forgot {vault.clear()} sign-in(s).")
                return None
            if not ns.server:
                raise UsageError("say which: %mcp auth logout NAME (a connection or a server URL), or --all")
            url = self.session.registry.get(ns.server).target.url if ns.server in self.session.registry else ns.server
            if not vault.remove(url):
                raise UsageError(f"no sign-in kept for {url!r}. See %mcp auth list.")
            print(f"Signed out of {url}: its tokens are forgotten (the next call signs in again).")
            return None
        names = {c.target.url: c.name for c in self.session.registry if c.target.kind == "http"}
        rows = [
            [
                names.get(e["resource"], ""),
                e["resource"],
                e["issuer"],
                e["scope"],
                _expiry(e["expires_at"]),
                "yes" if e["refreshable"] else "no",
            ]
            for e in vault.entries()
        ]
        return Table(
            ["connection", "server", "issuer", "scope", "expires", "refreshable"],
            rows,
            title=f"Sign-ins kept in {vault.path}",
            empty="No sign-ins kept.",
        )

    def _do_servers(self, words: list[str], cell: str | None) -> Any:
        from ..notebook.display import Table

        self._parsers["servers"].parse(words)
        served = self.session.prototypes.served
        rows = [
            [
                c.name,
                c.server_label,
                c.target.kind,
                c.target.describe(),
                c.protocol_version or c.state,
                len(c.flows),
                served[c.name].url if c.name in served else "",
            ]
            for c in self.session.registry
        ]
        notes = [
            f"{c.name} is dead ({c.dead}): reconnect with {connect_line(c)} again."
            for c in self.session.registry
            if c.state == "dead"
        ]
        return Table(
            ["name", "server", "kind", "target", "protocol / state", "active flows", "served at"],
            rows,
            empty="No servers connected. Use %mcp connect NAME TARGET.",
            notes=notes,
        )

    def _do_log(self, words: list[str], cell: str | None) -> Any:
        from ..notebook.display import Table, log_text

        ns, _ = self._parsers["log"].parse(words)
        conn = self.session.registry.get(ns.name)
        rows = [[e["level"], e.get("logger") or "", log_text(e["data"])] for e in list(conn.logs)[-ns.lines :]]
        rows += [["stderr", "", line] for line in list(conn.stderr)[-ns.lines :]]
        return Table(
            ["level", "logger", "message"],
            rows,
            title=f"log of {conn.name}",
            empty=f"{conn.name} has logged nothing yet.",
            wrap=True,
        )

    def _do_disconnect(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["disconnect"].parse(words)
        self.session.registry.disconnect(ns.name)
        print(f"Disconnected {ns.name!r}.")

    def _listing(self, kind: str, words: list[str], cell: str | None) -> Any:
        """``%mcp tools`` / ``prompts`` / ``resources``."""
        from ..notebook.display import Table

        ns, _ = self._parsers[kind].parse(words)
        server, pattern = ns.server, ns.pattern
        if pattern is None and server is not None and server not in self.session.registry and _GLOB.search(server):
            server, pattern = None, server  # %mcp tools 'get_*': a glob over every server, not a server's name
        rows = listing_rows(self.session, kind, server, pattern)
        empty = f"No {kind} matching {pattern!r}." if pattern is not None else f"No {kind}."
        return Table(_LISTINGS[kind], rows, empty=empty)

    def _do_skills(self, words: list[str], cell: str | None) -> Any:
        """``%mcp skills [SERVER]``: what ``skills/list`` says, one row per skill; no file is read."""
        from ..notebook.display import Table
        from .listings import skill_rows

        ns, _ = self._parsers["skills"].parse(words)
        columns = ["server", "skill", "description", "files", "bytes"]
        return Table(columns, skill_rows(self.session, ns.server), empty="No skills.")

    def _do_skill(self, words: list[str], cell: str | None) -> Any:
        """``%mcp skill [SERVER.]NAME``: the skill read and verified (``wire.skills.load_skill``), shown."""
        from ..notebook.skill_view import SkillView
        from ..wire.skills import load_skill
        from .listings import find_skill

        ns, _ = self._parsers["skill"].parse(words)
        conn, skill = find_skill(self.session, ns.skill)
        return SkillView(self.session.runtime.run(load_skill(conn, skill)))

    # ------------------------------------------------------------------ flows
    def _do_call(self, words: list[str], cell: str | None) -> Any:
        ns, extra = self._parsers["call"].parse(words, intermixed_pairs=True)
        conn, tool = self.session.resolve(ns.tool)
        json_args = parse_json_object(ns.json) if ns.json else {}
        if cell is not None:
            json_args = {**parse_body(cell), **json_args}
        pairs, label = parse_pairs(extra), f"{conn.name}.{tool}"
        try:
            schema = self.session.tool_schema_sync(conn, tool)
        except FlowError as exc:
            if exc.kind not in ("sign_in_required", "sign_in_pending") or not self._is_interactive() or ns.wait:
                raise

            async def prepare() -> dict[str, Any]:  # after the sign-in this call's cell shows
                return build_arguments(label, await self.session.tool_schema(conn, tool), pairs, json_args)

            return self._run_flow("tools/call", conn, tool, {}, ns, prepare=prepare)
        arguments = build_arguments(label, schema, pairs, json_args)
        return self._run_flow("tools/call", conn, tool, arguments, ns)

    def _do_prompt(self, words: list[str], cell: str | None) -> Any:
        ns, extra = self._parsers["prompt"].parse(words, intermixed_pairs=True)
        conn, name = self.session.resolve(ns.prompt)
        arguments: dict[str, Any] = parse_json_object(ns.json) if ns.json else {}
        if cell is not None:
            arguments = {**parse_body(cell), **arguments}
        arguments.update(parse_pairs(extra))
        check_prompt_arguments(f"{conn.name}.{name}", declared_arguments(self.session, conn, name), arguments)
        return self._run_flow("prompts/get", conn, name, arguments, ns)

    def _do_read(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["read"].parse(words)
        server, uri = (ns.first, ns.uri) if ns.uri else (None, ns.first)
        conn = self.session.registry.get(server)
        return self._run_flow("resources/read", conn, uri, None, ns)

    def _is_interactive(self) -> bool:
        if self.interactive is not None:
            return bool(self.interactive)
        return bool(self.session.cell_request().get("content", {}).get("allow_stdin", False))

    def _cell_id(self) -> str | None:
        """The running cell's id (a flow starts or resumes in it), its name noted for ``%mcp flows``."""
        request = self.session.cell_request()
        cell_id = request.get("metadata", {}).get("cellId")
        if isinstance(cell_id, str) and cell_id:
            code = request.get("content", {}).get("code")
            inputs = getattr(getattr(self.shell, "history_manager", None), "input_hist_parsed", None)
            count = len(inputs) - 1 if inputs else None  # the cell's In [N]: stored before it runs (IPython 8 and 9)
            self._cells.note(cell_id, count, code if isinstance(code, str) else "")
        return cell_id

    def _run_flow(
        self, method: Any, conn: Any, name: str, arguments: Any, ns: argparse.Namespace, prepare: Any = None
    ) -> Any:
        """Start a flow in this cell; see ``_hand_back`` for what the cell gets."""
        interactive = self._is_interactive() and not ns.wait
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
            cell_id=self._cell_id(),
            prepare=prepare,
        )
        return self._hand_back(flow, ns, interactive)

    def _hand_back(self, flow: Any, ns: argparse.Namespace, interactive: bool) -> Any:
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

    # ------------------------------------------------------------------ saved flows
    def _do_flows(self, words: list[str], cell: str | None) -> Any:
        from ..core.text import one_line
        from ..core.urls import visible
        from ..flows.record import SavedFlow, age, questions
        from ..notebook.display import Table

        ns, _ = self._parsers["flows"].parse(words)
        records = self.session.saved.waiting(ns.from_path, interactive=self._is_interactive())
        kinds = {"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}
        store = self.session.store

        def waits_for(record: Any) -> str:  # the server's words: one line, control characters spelled out, cut
            asked = questions({"pending": record.pending})
            if not asked:
                return "its task's result" if isinstance(record.task, dict) else ""
            more = f" (+{len(asked) - 1} more)" if len(asked) > 1 else ""
            return visible(one_line(asked[0], 60)) + more

        rows = [
            [r.id, self._cells.name(r.cell_id), r.server_name, f"{kinds[r.method]} {r.name}", waits_for(r),
             f"task {r.task.get('status')}" if isinstance(r.task, dict) else r.round, age(r.updated),
             "yes" if store.is_trusted(r.id) else "NO: review below" if not store.claimants(r.id)
             else f"NO: {len(store.claimants(r.id))} different records claim this id, below"]
            for r in records
        ]  # fmt: skip
        table = Table(
            ["id", "cell", "server", "call", "waits for", "round / task", "age", "saved by you"],
            rows,
            title=f"flows waiting for input and running tasks ({self.session.frontend.describe()}); continue one with %mcp resume ID",
            empty="No flows are waiting for input.",
        )
        foreign = [r for r in records if not store.is_trusted(r.id)]  # an id in conflict among them
        if not foreign:
            return table
        from IPython.display import display

        from ..notebook.consent import RecordReview

        display(table)
        print(
            f"{len(foreign)} saved flow{'s' if len(foreign) > 1 else ''} did not come from you (this notebook was saved by someone else, "
            "or changed outside mcp-notebook). Resuming one asks first; here is all each would do:"
        )
        for record in foreign:
            claimants = [SavedFlow.from_dict(c) for c in store.claimants(record.id)]
            for one in claimants or [record]:  # several records claiming one id: each shown, none alone
                display(RecordReview(one, self.session.saved.concerns(one)))
            store.shown(record.id, None if claimants else store.digest(record.id))
        return None

    def _do_tasks(self, words: list[str], cell: str | None) -> Any:
        from ..notebook.display import Table

        ns, _ = self._parsers["tasks"].parse(words)
        rows = self.session.saved.task_rows(ns.server)
        columns = ["flow", "server", "tool", "status", "message", "created", "ttl", "where"]
        return Table(
            columns,
            rows,
            title="tasks (task ids stay on this machine; unknown ones show a fingerprint)",
            empty="No tasks. Start one with %mcp call SERVER.TOOL ... --task.",
        )

    def _do_resume(self, words: list[str], cell: str | None) -> Any:
        from dataclasses import replace

        from ..flows.trust import is_digest

        ns, _ = self._parsers["resume"].parse(words)
        typed = ns.trust if isinstance(ns.trust, str) else None
        if typed is not None and ns.id is None:
            # `resume --trust ID`: the word is the flow's id, even one that looks like a digest (a received id
            # spelled as another record's digest would otherwise consent to that record); a digest follows an id
            ns.id, typed = typed, None
        elif typed is not None and not is_digest(typed):
            raise UsageError(
                f"--trust takes a record's content digest (sha256:..., as the flows listing shows it), not {typed!r}"
            )
        self.session.saved.load(ns.from_path)
        record = self.session.saved.pick(ns.id, self._cell_id())
        interactive = self._is_interactive()
        # consent is to content: the digest typed, else the record as it was last shown here (a bare --trust,
        # which never chooses between records claiming one id: they are shown, and one is named by its digest),
        # else, for the user's own record (signed by this user, or written by this kernel; never one in conflict),
        # the content held now: nobody else can make a record that verifies, so there is nothing to swap in
        store = self.session.store
        consented = (
            typed
            or (store.last_shown(record.id) if not store.claimants(record.id) else None)
            or (store.digest(record.id) if store.is_trusted(record.id) else None)
            or ""
        )
        options = replace(call_options(ns), trust=ns.trust is not False, consented=consented)
        flow = self.session.saved.resume(
            record, options, interactive=interactive, cell_id=self._cell_id(), wait=ns.wait
        )
        return self._hand_back(flow, ns, interactive and not ns.wait)

    def _do_forget(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["forget"].parse(words)
        self.session.saved.forget(ns.id, everything=ns.all)
        print("Forgot every saved flow." if ns.all else f"Forgot flow {ns.id}.")

    def _do_trace(self, words: list[str], cell: str | None) -> Any:
        from ..notebook.display import TraceView

        ns, _ = self._parsers["trace"].parse(words)
        flow = self.session.last_flow
        if flow is None:
            raise UsageError("no flow has run yet in this kernel")
        if ns.save:
            rec = self.session.save_trace(flow, ns.save, keep_answers=ns.keep_answers)
            return print(saved_trace_line(flow, ns.save, rec))
        if ns.keep_answers:
            raise UsageError("--keep-answers goes with --save FILE (what is saved keeps them)")
        return flow.trace() if ns.json else TraceView(flow)

    def _do_replay(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["replay"].parse(words)
        from ..forms.model import Answers

        fields, raw = answer_fields(ns)
        outcome = self.session.replay(ns.file, ns.server, Answers(fields=fields, raw=raw), ns.timeout, trust=ns.trust)
        if ns.output:
            assert self.shell is not None  # a line magic runs in its shell
            self.shell.user_ns[ns.output] = outcome
        print(plain_text(outcome.check().summary()))  # check() raises, listing the differences, when anything changed

    # ------------------------------------------------------------------ servers in the notebook
    def _do_server(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["server"].parse(words)
        if cell is None:
            raise UsageError("%%mcp server is a cell magic: write the server's code in the cell below the magic line")
        told, rows = self.session.define_server(ns.name, cell, ns.var)
        if not rows:
            print(plain_text("\n".join(told)))
            return None
        from ..notebook.display import Table

        return Table(["change", "kind", "name"], rows, title=told[0], notes=told[1:])

    def _do_serve(self, words: list[str], cell: str | None) -> Any:
        from ..prototype import LOOPBACK

        ns, _ = self._parsers["serve"].parse(words)
        if ns.no_auth and ns.host not in LOOPBACK:
            raise UsageError(
                f"--no-auth is only allowed on a loopback host (127.0.0.1, localhost, ::1), not {ns.host}: "
                "anyone who can reach the port could call this notebook's server"
            )
        if ns.host not in LOOPBACK:
            print(
                f"Warning: serving on {ns.host} lets other machines call this notebook's server with its token, "
                "which plain HTTP sends unencrypted. Prefer 127.0.0.1 unless you mean it."
            )
        if ns.no_auth:
            print(
                f"Warning: --no-auth: any process on this machine can call {ns.name!r}, and through its tools reach this kernel."
            )
        served = self.session.prototypes.serve(
            ns.name, ns.host, ns.port, ns.keys_env, no_auth=ns.no_auth, allowed_hosts=ns.allow_host
        )
        sealed = f", request state sealed with ${ns.keys_env}" if ns.keys_env else ""
        auth = " (no authentication)" if served.token is None else " (bearer token required)"
        print(f"Serving {ns.name!r} at {served.url}{auth}{sealed}. Stop with {mcp_line('%mcp', 'stop', ns.name)}.")
        if served.token is not None:
            # Never printed: outputs are saved with the notebook, and notebooks get shared.
            print(
                "Clients send 'Authorization: Bearer TOKEN'. The token is .token of what this returns "
                f"(served = {mcp_line('%mcp', 'serve', ns.name)}; served.token); %mcp connect from this notebook adds it by itself."
            )
        return served

    def _do_stop(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["stop"].parse(words)
        self.session.prototypes.stop(ns.name)
        print(f"Stopped serving {ns.name!r}.")

    # ------------------------------------------------------------------ answering settings
    def _do_roots(self, words: list[str], cell: str | None) -> Any:
        from ..notebook.display import Table

        ns, _ = self._parsers["roots"].parse(words)
        check_choice("roots", ns.action, ["list", "add", "remove", "reset"])
        if ns.action in ("add", "remove") and not ns.path:
            raise UsageError(f"{mcp_line('%mcp', 'roots', ns.action)} needs a PATH")
        if ns.action not in (None, "list"):
            told = self.session.change_roots(ns.action, ns.path, ns.name)
            if told:
                print(f"Told {', '.join(told)} that the roots changed (2025-generation servers cache them).")
        roots = self.session.roots
        rows = [[e.name or "", e.uri] for e in roots.effective()]
        unoffered = self.session.registry.not_offered_roots() if roots.offered else []
        notes = [
            f"Not offered to {', '.join(unoffered)}: connected before any root was added (a connection declares roots when it opens); "
            "connect again to offer them."
        ] if unoffered else []  # fmt: skip
        table = Table(["name", "uri"], rows, title="roots offered to servers", notes=notes, empty=(
            "No roots are offered (the default): servers keep the folders they were started with. %mcp roots add PATH "
            "offers a folder (add . for the notebook's folder) to servers connected after it."
        ))  # fmt: skip
        table.asked = ns.action in (
            None,
            "list",
        )  # after a change: its confirmation, shown as the cell's last line only
        return table

    def _do_model(self, words: list[str], cell: str | None) -> Any:
        from ..notebook.display import Table

        ns, _ = self._parsers["model"].parse(words)
        check_choice("model", ns.action, ["add", "use", "remove", "list"])
        if ns.action == "add":
            if not ns.name or not ns.provider:
                raise UsageError(
                    "%mcp model add NAME PROVIDER [MODEL] [--base-url URL] [--api-key-env VAR] [--cost X --speed X --intelligence X]"
                )
            self.session.add_model(ns.name, ns.provider, ns.model, base_url=ns.base_url, api_key_env=ns.api_key_env,
                                   cost=ns.cost, speed=ns.speed, intelligence=ns.intelligence, timeout=ns.timeout)  # fmt: skip
        elif ns.action in ("use", "remove"):
            if not ns.name:
                raise UsageError(f"{mcp_line('%mcp', 'model', ns.action, 'NAME')} (see %mcp model list)")
            (self.session.use_model if ns.action == "use" else self.session.remove_model)(ns.name)
        router = self.session.router

        def rating(value: float | None) -> str:
            return "" if value is None else f"{value:g}"

        rows = [
            [
                ("* " if n == router.default else "  ") + n,
                c.provider,
                c.model or "",
                c.base_url or "",
                c.api_key_env or "",
                rating(c.cost),
                rating(c.speed),
                rating(c.intelligence),
            ]
            for n, c in router.models.items()
        ]
        columns = ["name", "provider", "model", "base url", "key from env", "cost", "speed", "intelligence"]
        table = Table(columns, rows, title=f"models (* answers by default; review: {router.review})")
        table.asked = ns.action in (
            None,
            "list",
        )  # after add/use/remove: its confirmation, shown as the cell's last line only
        return table

    def _do_review(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["review"].parse(words)
        check_choice("review", ns.policy, ["remote", "ask", "always", "never"])
        if ns.policy:
            self.review = ns.policy
        meaning = {
            "remote": "the default: a request to a model on another machine (openai or anthropic, not on a loopback address) waits "
            "for you to review it, then its reply; echo, callable, human and local models answer without review",
            "ask": "you see each sampling request and may edit it, then Send or Deny; then the reply, then Return or Deny",
            "always": "each request and reply is shown in the cell; nothing waits for you",
            "never": "requests go to the model and replies to the server without being shown",
        }[self.session.router.review]
        print(f"Sampling review: {self.session.router.review} ({meaning}). Headless runs never review.")


def _expiry(at: float | None) -> str:
    """When an access token expires, relative to now ("in 5 min", "expired 2 h ago")."""
    import time

    if at is None:
        return "unknown"
    left = at - time.time()
    span = abs(left)
    text = f"{span:.0f} s" if span < 120 else f"{span / 60:.0f} min" if span < 7200 else f"{span / 3600:.0f} h"
    return f"in {text}" if left >= 0 else f"expired {text} ago (refreshed on next use)"
