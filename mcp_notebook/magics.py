"""``%mcp`` / ``%%mcp``: the notebook's MCP client commands.

This module only parses text and delegates to ``api.Hub``; no protocol logic lives here.
Settings are traitlets on ``MCPMagics`` (``%config MCPMagics.max_rounds = 5``, or
``c.MCPMagics.max_rounds`` in ``ipython_config.py``).
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any, Callable

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from traitlets import Dict, Enum, Int, TraitError, Unicode, observe, validate
from traitlets import Any as TAny

from .args import build_arguments, describe_parameters, parse_body, parse_json_object, parse_pairs
from .limits import Limits
from .magic_grammar import SUMMARY, Help, build_parsers, fresh_namespace

__all__ = ["MCPMagics"]


@magics_class
class MCPMagics(Magics):
    """Call MCP tools, prompts and resources from cells; answer server questions inline."""

    max_rounds = Int(10, help="Most input-required rounds one flow may take before it stops.").tag(config=True)
    flow_timeout = TAny(None, allow_none=True, help="Default wall-clock limit of a flow in seconds (None: no limit).").tag(config=True)
    interactive = TAny(None, allow_none=True, help="True/False forces interactive or headless; None decides per cell (a front end that allows stdin is interactive).").tag(config=True)
    log_level = Enum(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"], "info", allow_none=True, help="Server log messages at or above this level are shown with the flow.").tag(config=True)
    models = Dict(
        {},
        help="Models for sampling by name, e.g. {'gpt': {'provider': 'openai', 'model': 'gpt-4o-mini', 'api_key_env': 'OPENAI_API_KEY', 'cost': 0.3}}; "
        "the settings of %mcp model add (provider, model, base_url, api_key_env, cost, speed, intelligence, timeout, function).",
    ).tag(config=True)
    default_model = Unicode(None, allow_none=True, help="The model that answers when no hint or priority picks another (%mcp model use NAME).").tag(config=True)
    review = Enum(["ask", "always", "never"], "ask", help="Review of sampling in interactive runs: ask (edit the request and the reply), always (show both, don't wait), never. Headless runs never review.").tag(config=True)
    max_record_bytes = Int(
        1_000_000, min=1024,
        help="Largest saved flow record, in bytes. A waiting flow whose record (mostly the server's request state) is larger "
        "is not saved in the notebook, and a notebook's records over it are ignored: notebooks stay small and a received "
        "notebook cannot make the kernel hold huge values.",
    ).tag(config=True)  # fmt: skip
    max_result_chars = Int(
        100_000, min=100,
        help="Characters of a result shown in the cell (text, structured content, resource text, logs, trace messages); the "
        "rest is cut with a note. A server decides how big its results are: without a bound a 50 MB text becomes a 100 MB "
        "output that slows the browser and bloats the notebook. The whole value stays on the flow (flow.result(), -o VAR).",
    ).tag(config=True)  # fmt: skip
    max_inline_bytes = Int(
        5_000_000, min=0,
        help="Decoded bytes of images, audio and downloadable files one result embeds in the cell (as base64 data URLs); "
        "larger ones become a note. Embedded media are saved in the notebook, so a server must not be able to grow it "
        "without bound. The data stays on the flow (flow.result(), -o VAR).",
    ).tag(config=True)  # fmt: skip
    max_schema_depth = Int(
        32, min=4,
        help="Deepest nesting of a server's elicitation schema the client walks or checks. MCP forms are flat (a few "
        "levels); a deeper schema is shown as a JSON editor that cannot send, so a hostile schema cannot exhaust the "
        "kernel's recursion limit (RecursionError) in the form or in jsonschema.",
    ).tag(config=True)  # fmt: skip
    max_form_fields = Int(
        200, min=1,
        help="Most fields one elicitation form renders as widgets (each tick box of a multi-select counts as one). "
        "Widgets are built on the kernel thread, about 2 ms a field: a larger form is offered as a JSON editor instead "
        "of freezing the kernel for seconds.",
    ).tag(config=True)  # fmt: skip

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self._parsers = build_parsers()
        from .api import get_hub

        self.hub = get_hub()
        self._sync_settings()
        self.hub.roots.session_path = (shell.user_ns.get("__session__") if shell is not None else None) or None

    @observe("max_rounds", "flow_timeout", "log_level", "max_record_bytes", "max_result_chars", "max_inline_bytes", "max_schema_depth", "max_form_fields")
    def _settings_changed(self, change: Any) -> None:
        self._sync_settings()

    def _sync_settings(self) -> None:
        hub = getattr(self, "hub", None)
        if hub is not None:
            hub.max_rounds = self.max_rounds
            hub.flow_timeout = float(self.flow_timeout) if self.flow_timeout is not None else None
            hub.log_level = self.log_level
            hub.store.max_record_bytes = self.max_record_bytes
            hub.limits = Limits(
                max_result_chars=self.max_result_chars, max_inline_bytes=self.max_inline_bytes,
                max_schema_depth=self.max_schema_depth, max_form_fields=self.max_form_fields,
            )  # fmt: skip

    # sampling settings go to the process-wide router (get_hub(): config values arrive before self.hub exists)
    @validate("models")
    def _check_models(self, proposal: Any) -> Any:
        from .sampling import ModelRouter

        try:
            ModelRouter.build(proposal["value"], self.shell.user_ns if self.shell is not None else None)
        except ValueError as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]

    @validate("default_model")
    def _check_default_model(self, proposal: Any) -> Any:
        from .api import get_hub

        name = proposal["value"]
        if name is not None and name not in get_hub().router.models and name not in self.models:
            raise TraitError(f"no model named {name!r} (configured: {', '.join(get_hub().router.models)})")
        return name

    @observe("models", "default_model", "review")
    def _sampling_settings_changed(self, change: Any) -> None:
        from .api import get_hub
        from .sampling import ModelRouter

        router = get_hub().router
        if change["name"] == "review":
            router.set_review(change["new"])
            return
        if change["name"] == "models":
            router.configure(ModelRouter.build(self.models, self.shell.user_ns if self.shell is not None else None))
        if self.default_model is not None and self.default_model in router.models:
            router.use(self.default_model)

    # ------------------------------------------------------------------ entry point
    @no_var_expand
    @line_cell_magic
    def mcp(self, line: str, cell: str | None = None) -> Any:
        """%mcp SUBCOMMAND ... — see `%mcp --help` for the list of subcommands."""
        from .errors import FlowError

        words = self._split(line)
        if not words or words[0] in ("-h", "--help", "help"):
            print(SUMMARY)
            return None
        sub, rest = words[0], words[1:]
        handler: Callable[..., Any] | None = getattr(self, f"_do_{sub}", None)
        if handler is None:
            raise UsageError(f"unknown subcommand {sub!r}. Try %mcp --help")
        error: FlowError | None = None
        try:
            return handler(rest, cell)
        except Help as h:
            print(str(h))
            return None
        except FlowError as exc:
            error = exc
        # raised outside the except block: no ExceptionGroup in the context, no traceback
        error.__context__ = None
        raise error

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
        command: list[str] = []
        if "--" in words:
            i = words.index("--")
            words, command = words[:i], words[i + 1 :]
        ns, _ = self._parsers["connect"].parse(words)
        if command and ns.target:
            raise UsageError("give either a TARGET or -- COMMAND, not both")
        if not command and not ns.target:
            raise UsageError("missing TARGET: a URL, an object name, module:attr, or -- COMMAND ARGS")
        headers = {}
        for item in ns.header:
            key, sep, value = item.partition(":")
            if not sep or not key.strip():
                raise UsageError(f"--header wants K:V, got {item!r}")
            headers[key.strip()] = value.strip()
        env = parse_pairs(ns.env) if ns.env else {}
        conn = self.hub.connect(
            ns.name,
            command or ns.target,
            headers=headers or None,
            bearer_env=ns.bearer_env,
            protocol=ns.protocol,
            cwd=ns.cwd,
            env=env,
            namespace=self.shell.user_ns if self.shell is not None else None,
            read_timeout=ns.timeout,
        )
        print(f"Connected {conn.name!r} to {conn.server_label} at {conn.target.describe()} (protocol {conn.protocol_version}).")
        return None

    def _do_servers(self, words: list[str], cell: str | None) -> Any:
        from .display import Table

        self._parsers["servers"].parse(words)
        served = self.hub.prototypes.served
        rows = [
            [c.name, c.server_label, c.target.kind, c.target.describe(), c.protocol_version or c.state, len(c.flows), served[c.name].url if c.name in served else ""]
            for c in self.hub.registry
        ]
        notes = [f"{c.name} is dead ({c.dead}): reconnect with {c.reconnect_hint} again." for c in self.hub.registry if c.state == "dead"]
        return Table(["name", "server", "kind", "target", "protocol / state", "active flows", "served at"], rows, empty="No servers connected. Use %mcp connect NAME TARGET.", notes=notes)

    def _do_log(self, words: list[str], cell: str | None) -> Any:
        from .display import Table

        ns, _ = self._parsers["log"].parse(words)
        conn = self.hub.registry.get(ns.name)
        rows = [[e["level"], e.get("logger") or "", e["data"]] for e in list(conn.logs)[-ns.lines:]]
        rows += [["stderr", "", line] for line in list(conn.stderr)[-ns.lines:]]
        return Table(["level", "logger", "message"], rows, title=f"log of {conn.name}", empty=f"{conn.name} has logged nothing yet.")

    def _do_disconnect(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["disconnect"].parse(words)
        self.hub.registry.disconnect(ns.name)
        print(f"Disconnected {ns.name!r}.")

    def _listing(self, kind: str, words: list[str]) -> Any:
        from .display import Table
        from .runtime import get_runtime

        ns, _ = self._parsers[kind].parse(words)
        conns = [self.hub.registry.get(ns.server)] if ns.server or len(self.hub.registry) == 1 else list(self.hub.registry)
        if not conns:
            raise UsageError("No MCP server is connected. Use %mcp connect NAME TARGET first.")
        rows: list[list[Any]] = []
        for conn in conns:
            if kind == "tools":
                tools = get_runtime().run(conn.tools(refresh=True))
                rows += [[conn.name, t.name, t.title or "", (t.description or "").strip().split("\n")[0], describe_parameters(t.input_schema)] for t in tools.values()]
            elif kind == "prompts":
                for p in get_runtime().run(conn.list_all("prompts")):
                    params = ", ".join(f"{a.name}{' (required)' if a.required else ''}" for a in (p.arguments or [])) or "(no arguments)"
                    rows.append([conn.name, p.name, p.title or "", (p.description or "").split("\n")[0], params])
            else:
                for r in get_runtime().run(conn.list_all("resources")):
                    rows.append([conn.name, str(r.uri), r.name, r.mime_type or "", (r.description or "").split("\n")[0]])
                for r in get_runtime().run(conn.list_all("resource_templates")):
                    rows.append([conn.name, r.uri_template, r.name, r.mime_type or "", (r.description or "").split("\n")[0] + " (template)"])
        columns = {
            "tools": ["server", "tool", "title", "description", "parameters"],
            "prompts": ["server", "prompt", "title", "description", "arguments"],
            "resources": ["server", "uri", "name", "mime type", "description"],
        }[kind]
        return Table(columns, rows, empty=f"No {kind}.")

    def _do_tools(self, words: list[str], cell: str | None) -> Any:
        return self._listing("tools", words)

    def _do_prompts(self, words: list[str], cell: str | None) -> Any:
        return self._listing("prompts", words)

    def _do_resources(self, words: list[str], cell: str | None) -> Any:
        return self._listing("resources", words)

    # ------------------------------------------------------------------ flows
    def _do_call(self, words: list[str], cell: str | None) -> Any:
        ns, extra = self._parsers["call"].parse(words, intermixed_pairs=True)
        conn, tool = self.hub.resolve(ns.tool)
        json_args = parse_json_object(ns.json) if ns.json else {}
        if cell is not None:
            json_args = {**parse_body(cell), **json_args}
        schema = self.hub.tool_schema_sync(conn, tool)
        arguments = build_arguments(f"{conn.name}.{tool}", schema, parse_pairs(extra), json_args)
        return self._run_flow("tools/call", conn, tool, arguments, ns)

    def _do_prompt(self, words: list[str], cell: str | None) -> Any:
        ns, extra = self._parsers["prompt"].parse(words, intermixed_pairs=True)
        conn, name = self.hub.resolve(ns.prompt)
        arguments: dict[str, Any] = parse_json_object(ns.json) if ns.json else {}
        if cell is not None:
            arguments = {**parse_body(cell), **arguments}
        arguments.update(parse_pairs(extra))
        return self._run_flow("prompts/get", conn, name, arguments, ns)

    def _do_read(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["read"].parse(words)
        server, uri = (ns.first, ns.uri) if ns.uri else (None, ns.first)
        conn = self.hub.registry.get(server)
        return self._run_flow("resources/read", conn, uri, None, ns)

    def _answers(self, ns: argparse.Namespace) -> Any:
        from .form_model import Answers, parse_answer_value

        fields: dict[str, Any] = parse_json_object(ns.answers, "--answers") if ns.answers else {}
        for item in ns.answer:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise UsageError(f"--answer wants FIELD=VALUE, got {item!r}")
            fields[key] = parse_answer_value(value)
        return Answers(fields=fields, accept_defaults=ns.accept_defaults)

    def _is_interactive(self) -> bool:
        if self.interactive is not None:
            return bool(self.interactive)
        kernel = getattr(self.shell, "kernel", None)
        if kernel is None:
            return False
        parent = _parent(kernel)
        return bool(parent.get("content", {}).get("allow_stdin", False))

    def _cell_id(self) -> str | None:
        kernel = getattr(self.shell, "kernel", None)
        if kernel is None:
            return None
        return _parent(kernel).get("metadata", {}).get("cellId")

    def _run_flow(
        self,
        method: Any,
        conn: Any,
        name: str,
        arguments: Any,
        ns: argparse.Namespace,
        *,
        resume: dict[str, Any] | None = None,
        interactive: bool | None = None,
        cell_id: str | None = None,
    ) -> Any:
        """Start a flow (or continue the saved ``resume`` record) in this cell.

        ``interactive`` and ``cell_id`` are given by buttons (Continue, Start over) that run
        after their cell ended; a magic reads them from the running cell.
        """
        from IPython.display import display

        from .display import FlowReport
        from .frontend import get_frontend

        answers = self._answers(ns)
        if interactive is None:
            interactive = self._is_interactive() and not ns.wait
            cell_id = self._cell_id()
        frontend = get_frontend()
        if resume is None and cell_id and not ns.no_save:
            saved = self._saved_for_cell(cell_id, method, conn.name, name)
            if saved is not None:
                if interactive:
                    return self._offer(saved, method, conn, name, arguments, ns, cell_id)
                print(f"This cell has a saved flow {saved['id']} waiting for input (round {saved['round']}); "
                      f"starting a new call. To continue the saved one instead: %mcp resume {saved['id']}")
        resumed: dict[str, Any] = {}
        if resume is not None:
            resumed = dict(
                flow_id=resume["id"], start_round=resume["round"], resume_state=resume.get("request_state"),
                resume_requests=resume["pending"], withheld=resume.get("withheld"),
            )  # fmt: skip
            cell_id = cell_id or resume.get("cell_id")
            if cell_id != resume.get("cell_id") and not ns.no_save:
                self.hub.store.save({**resume, "cell_id": cell_id})  # the marker follows the form
        if interactive and not ns.no_save:
            notice = frontend.notice(interactive=True)
            if notice:
                print(notice)
        options = dict(answers=answers, timeout=ns.timeout, save=not ns.no_save, cell_id=cell_id, **resumed)
        if interactive:
            from .live_view import LiveView

            view = LiveView(f"{conn.name}.{name}", trace=ns.trace)
            view.start_over = lambda: self._run_flow(method, conn, name, arguments, fresh_namespace(ns), interactive=True, cell_id=cell_id)
            flow = self.hub.start(method, conn, name, arguments, ui=view, view=view, **options)
            view.attach(flow)
            flow.shown = True  # type: ignore[attr-defined]
            if ns.output:
                self._bind_when_done(flow, ns.output, view)
            return flow
        flow = self.hub.start(method, conn, name, arguments, **options)
        flow.shown = True  # type: ignore[attr-defined]
        try:
            flow.result()
        except Exception:  # noqa: BLE001 - the report shows the error; re-raised below, outside except
            pass
        display(FlowReport(flow, trace=ns.trace)._repr_mimebundle_(), raw=True)
        if self.hub.store.get(flow.id) is not None:  # kept to be resumed: say where it lives
            notice = frontend.notice(interactive=False)
            if notice:
                print(notice)
        if flow.error is not None:
            error = flow.error
            error.__context__ = None
            raise error
        if ns.output:
            self.shell.user_ns[ns.output] = flow.value
        return flow

    def _bind_when_done(self, flow: Any, var: str, view: Any) -> None:
        """``-o VAR`` for an interactive flow: bind on the kernel thread once the flow ends."""

        def bind(_future: Any) -> None:
            if flow.error is None and flow.value is not None:
                view.main.call(self.shell.user_ns.__setitem__, var, flow.value)

        flow._future.add_done_callback(bind)

    # ------------------------------------------------------------------ saved flows
    def _load_saved(self, from_path: str | None) -> Any:
        """Make sure the saved records are in the store (a file given, or ``__session__``); show warnings."""
        from .frontend import get_frontend

        frontend = get_frontend()
        if from_path:
            try:
                frontend.read_file(from_path)
            except OSError as exc:
                raise UsageError(f"cannot read {from_path}: {exc.strerror or exc}") from None
        frontend.ensure_loaded()
        for warning in frontend.take_warnings():
            print(f"Warning: {warning}")
        return frontend

    def _do_flows(self, words: list[str], cell: str | None) -> Any:
        from .display import Table
        from .store import age

        ns, _ = self._parsers["flows"].parse(words)
        frontend = self._load_saved(ns.from_path)
        records = self.hub.store.all()
        if records:
            notice = frontend.notice(self._is_interactive())
            if notice:
                print(notice)
        kinds = {"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}
        store = self.hub.store
        rows = [
            [r["id"], r.get("cell_id") or "", r["server"]["name"], f"{kinds[r['method']]} {r['name']}", r["round"], age(r.get("updated")),
             "yes" if store.is_trusted(r["id"]) else "NO: review below"]
            for r in records
        ]  # fmt: skip
        table = Table(
            ["id", "cell", "server", "call", "round", "age", "saved by you"],
            rows,
            title=f"flows waiting for input ({frontend.describe()}); continue one with %mcp resume ID",
            empty="No flows are waiting for input.",
        )
        foreign = [r for r in records if not store.is_trusted(r["id"])]
        if not foreign:
            return table
        from IPython.display import display

        from .consent import RecordReview

        display(table)
        print(f"{len(foreign)} saved flow{'s' if len(foreign) > 1 else ''} did not come from you (this notebook was saved by someone else, "
              "or changed outside mcp-notebook). Resuming one asks first; here is all each would do:")
        for record in foreign:
            display(RecordReview(record, self.hub.resume_concerns(record)))
        return None

    def _do_resume(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["resume"].parse(words)
        self._load_saved(ns.from_path)
        return self._resume(self._pick_saved(ns.id), ns)

    def _pick_saved(self, flow_id: str | None) -> dict[str, Any]:
        store = self.hub.store
        if flow_id:
            record = store.get(flow_id)
            if record is None:
                known = ", ".join(r["id"] for r in store.all()) or "none"
                raise UsageError(f"no saved flow {flow_id!r} (waiting: {known}). See %mcp flows.")
            return record
        cell_id = self._cell_id()
        candidates = (store.for_cell(cell_id) if cell_id else []) or store.all()
        if not candidates:
            raise UsageError("No flow is waiting for input. (%mcp flows lists them; --from PATH reads another notebook.)")
        if len(candidates) > 1:
            ids = ", ".join(r["id"] for r in candidates)
            raise UsageError(f"several saved flows are waiting ({ids}); say which: %mcp resume ID")
        return candidates[0]

    def _resume(self, record: dict[str, Any], ns: argparse.Namespace, *, interactive: bool | None = None, cell_id: str | None = None) -> Any:
        """Continue ``record``: reconnect, re-render its questions here, go on with its saved state."""
        from .flows import FlowState
        from .frontend import get_frontend

        live = self._live_flow(record["id"])
        if live is not None:
            if live.state is not FlowState.WAITING:
                raise UsageError(f"flow {record['id']} is running in this kernel right now; wait for it, or cancel it first")
            live.cancel(forget=False)  # it continues here; its form elsewhere goes away
            try:
                live.result(timeout=10)
            except Exception:  # noqa: BLE001 - cancelled, as asked
                pass
        concerns = self.hub.resume_concerns(record)
        if concerns and not getattr(ns, "trust", False):  # a Continue button passes the call's flags
            if interactive if interactive is not None else self._is_interactive():
                return self._confirm_resume(record, concerns, ns, cell_id)
            raise UsageError(_consent_needed(record, concerns))
        conn = self.hub.reconnect(record)
        notice = get_frontend().notice(self._is_interactive() if interactive is None else interactive)
        if notice:  # resuming changes what is saved; without the extension the file keeps the old record
            print(notice)
        return self._run_flow(record["method"], conn, record["name"], dict(record.get("arguments") or {}), ns, resume=record, interactive=interactive, cell_id=cell_id)

    def _confirm_resume(self, record: dict[str, Any], concerns: list[str], ns: argparse.Namespace, cell_id: str | None) -> None:
        """Show what the record would do and resume only when the user says yes (buttons run after the cell)."""
        from .consent import ConfirmResume

        cell_id = cell_id or self._cell_id()

        def confirmed() -> None:
            self.hub.store.trust(record["id"])
            self._resume(record, argparse.Namespace(**{**vars(ns), "trust": True}), interactive=True, cell_id=cell_id)

        ConfirmResume(record, concerns, confirmed)

    def _live_flow(self, flow_id: str) -> Any:
        """A flow of this kernel with that id that has not finished, if any."""
        for conn in self.hub.registry:
            for flow in list(conn.flows):
                if flow.id == flow_id and not flow.finished:
                    return flow
        return None

    def _saved_for_cell(self, cell_id: str, method: str, server: str, name: str) -> dict[str, Any] | None:
        """A saved flow that this cell started with the same call, still waiting for input."""
        from .flows import FlowState
        from .frontend import get_frontend

        get_frontend().ensure_loaded()
        for record in self.hub.store.for_cell(cell_id):
            if record["method"] == method and record["name"] == name and record["server"]["name"] == server:
                live = self._live_flow(record["id"])
                if live is None or live.state is FlowState.WAITING:
                    return record
        return None

    def _offer(self, record: dict[str, Any], method: Any, conn: Any, name: str, arguments: Any, ns: argparse.Namespace, cell_id: str) -> None:
        """Re-running the cell of a waiting flow: offer Continue / Start over (buttons run after the cell)."""
        from .live_view import ResumeOffer
        from .store import age, questions

        def resume() -> None:
            current = self.hub.store.get(record["id"]) or record
            self._resume(current, ns, interactive=True, cell_id=cell_id)

        def start_over() -> None:
            live = self._live_flow(record["id"])
            if live is not None:
                live.cancel()
            self.hub.store.delete(record["id"])
            self._run_flow(method, conn, name, arguments, ns, interactive=True, cell_id=cell_id)

        ResumeOffer(record, questions(record), age(record.get("updated")), resume, start_over)
        return None

    def _do_forget(self, words: list[str], cell: str | None) -> Any:
        from .frontend import get_frontend

        ns, _ = self._parsers["forget"].parse(words)
        self._load_saved(None)
        if ns.all:
            for flow_id in self.hub.store.forget_all():
                live = self._live_flow(flow_id)
                if live is not None:
                    live.cancel()
            get_frontend().delete_all()
            print("Forgot every saved flow.")
            return None
        if not ns.id:
            raise UsageError("give a flow ID (see %mcp flows) or --all")
        if self.hub.store.get(ns.id) is None:
            raise UsageError(f"no saved flow {ns.id!r} (see %mcp flows)")
        self.hub.store.delete(ns.id)
        print(f"Forgot flow {ns.id}.")

    def _do_trace(self, words: list[str], cell: str | None) -> Any:
        from .display import TraceView

        ns, _ = self._parsers["trace"].parse(words)
        flow = self.hub.last_flow
        if flow is None:
            raise UsageError("no flow has run yet in this kernel")
        if ns.save:
            import json

            with open(ns.save, "w", encoding="utf-8") as fh:
                json.dump({"flow": flow.label, "protocol": flow.conn.protocol_version, "events": flow.trace()}, fh, indent=2, default=str)
            print(f"Wrote the trace of {flow.label} to {ns.save}.")
            return None
        return flow.trace() if ns.json else TraceView(flow)

    # ------------------------------------------------------------------ servers in the notebook
    def _do_server(self, words: list[str], cell: str | None) -> Any:
        from .prototype import Inventory, describe_diff, find_new_server, inventory_diff, root_logging_kept, server_ids
        from .runtime import get_runtime

        ns, _ = self._parsers["server"].parse(words)
        if cell is None:
            raise UsageError("%%mcp server is a cell magic: write the server's code in the cell below the magic line")
        protos = self.hub.prototypes
        before = server_ids(self.shell.user_ns)
        with root_logging_kept():  # MCPServer() calls logging.basicConfig(level=INFO) on the user's kernel
            result = self.shell.run_cell(cell, store_history=False)
        if not result.success:
            kept = f"; {ns.name!r} still runs the previous version" if ns.name in protos.objects else ""
            print(f"The cell failed{kept}.")
            return None
        var, obj = find_new_server(before, self.shell.user_ns, ns.var)
        first = ns.name not in protos.objects
        conn = self.hub.connect(ns.name, obj, namespace={var: obj})
        inventory = get_runtime().run(Inventory.of(conn))
        diff = inventory_diff(protos.inventories.get(ns.name), inventory)
        protos.inventories[ns.name], protos.objects[ns.name] = inventory, obj
        print(describe_diff(ns.name, diff, first))
        served = protos.served.get(ns.name)
        if served is not None:
            served.restart(obj)
            print(f"Still serving {ns.name!r} at {served.url} (now the new version).")
        return None

    def _do_serve(self, words: list[str], cell: str | None) -> Any:
        from .prototype import LOOPBACK

        ns, _ = self._parsers["serve"].parse(words)
        if ns.no_auth and ns.host not in LOOPBACK:
            raise UsageError(f"--no-auth is only allowed on a loopback host (127.0.0.1, localhost, ::1), not {ns.host}: "
                             "anyone who can reach the port could call this notebook's server")
        if ns.host not in LOOPBACK:
            print(f"Warning: serving on {ns.host} lets other machines call this notebook's server with its token, "
                  "which plain HTTP sends unencrypted. Prefer 127.0.0.1 unless you mean it.")
        if ns.no_auth:
            print(f"Warning: --no-auth: any process on this machine can call {ns.name!r}, and through its tools reach this kernel.")
        served = self.hub.prototypes.serve(ns.name, ns.host, ns.port, ns.keys_env, no_auth=ns.no_auth, allowed_hosts=ns.allow_host)
        sealed = f", request state sealed with ${ns.keys_env}" if ns.keys_env else ""
        auth = " (no authentication)" if served.token is None else " (bearer token required)"
        print(f"Serving {ns.name!r} at {served.url}{auth}{sealed}. Stop with %mcp stop {ns.name}.")
        if served.token is not None:
            # Never printed: outputs are saved with the notebook, and notebooks get shared.
            print("Clients send 'Authorization: Bearer TOKEN'. The token is .token of what this returns "
                  f"(served = %mcp serve {ns.name}; served.token); %mcp connect from this notebook adds it by itself.")
        return served

    def _do_stop(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["stop"].parse(words)
        self.hub.prototypes.stop(ns.name)
        print(f"Stopped serving {ns.name!r}.")

    # ------------------------------------------------------------------ answering settings
    def _do_roots(self, words: list[str], cell: str | None) -> Any:
        from .display import Table

        ns, _ = self._parsers["roots"].parse(words)
        _check_choice("roots", ns.action, ["list", "add", "remove", "reset"])
        roots = self.hub.roots
        if ns.action in ("add", "remove"):
            if not ns.path:
                raise UsageError(f"%mcp roots {ns.action} needs a PATH")
            try:
                roots.add(ns.path, ns.name) if ns.action == "add" else roots.remove(ns.path)
            except (FileNotFoundError, KeyError) as exc:
                raise UsageError(str(exc).strip("'\"")) from None
        elif ns.action == "reset":
            roots.reset()
        if ns.action != "list":
            told = self.hub.registry.roots_changed()
            if told:
                print(f"Told {', '.join(told)} that the roots changed (2025-generation servers cache them).")
        rows = [[e.name or "", e.uri] for e in roots.effective()]
        title = "roots" + (" (default: the notebook's folder)" if roots.is_default else "")
        return Table(["name", "uri"], rows, title=title, empty="No roots: servers are offered no folders (%mcp roots reset for the notebook's folder).")

    def _do_model(self, words: list[str], cell: str | None) -> Any:
        from .display import Table
        from .sampling import ModelConfig

        ns, _ = self._parsers["model"].parse(words)
        _check_choice("model", ns.action, ["add", "use", "remove", "list"])
        router = self.hub.router
        try:
            if ns.action == "add":
                if not ns.name or not ns.provider:
                    raise UsageError("%mcp model add NAME PROVIDER [MODEL] [--base-url URL] [--api-key-env VAR] [--cost X --speed X --intelligence X]")
                function = None
                if ns.provider == "callable":
                    function = self.shell.user_ns.get(ns.model or "") if self.shell is not None else None
                    if not callable(function):
                        raise UsageError("the callable provider needs the name of a function in the notebook as MODEL: %mcp model add NAME callable FUNCTION")
                timeout = {"timeout": ns.timeout} if ns.timeout is not None else {}
                router.add(ModelConfig(ns.name, ns.provider, ns.model, ns.base_url, ns.api_key_env, function=function, cost=ns.cost, speed=ns.speed, intelligence=ns.intelligence, **timeout))
            elif ns.action in ("use", "remove"):
                if not ns.name:
                    raise UsageError(f"%mcp model {ns.action} NAME (see %mcp model list)")
                if ns.action == "use":
                    router.use(ns.name)
                    self.default_model = ns.name
                else:
                    router.remove(ns.name)
        except (KeyError, ValueError) as exc:
            raise UsageError(str(exc).strip("'\"")) from None

        def rating(value: float | None) -> str:
            return "" if value is None else f"{value:g}"

        rows = [
            [("* " if n == router.default else "  ") + n, c.provider, c.model or "", c.base_url or "", c.api_key_env or "", rating(c.cost), rating(c.speed), rating(c.intelligence)]
            for n, c in router.models.items()
        ]
        columns = ["name", "provider", "model", "base url", "key from env", "cost", "speed", "intelligence"]
        return Table(columns, rows, title=f"models (* answers by default; review: {router.review})")

    def _do_review(self, words: list[str], cell: str | None) -> Any:
        ns, _ = self._parsers["review"].parse(words)
        _check_choice("review", ns.policy, ["ask", "always", "never"])
        if ns.policy:
            self.review = ns.policy
        meaning = {
            "ask": "you see each sampling request and may edit it, then Send or Deny; then the reply, then Return or Deny",
            "always": "each request and reply is shown in the cell; nothing waits for you",
            "never": "requests go to the model and replies to the server without being shown",
        }[self.hub.router.review]
        print(f"Sampling review: {self.hub.router.review} ({meaning}). Headless runs never review.")


def _consent_needed(record: dict[str, Any], concerns: list[str]) -> str:
    """The headless refusal: why, everything the flow would do, and the two explicit ways on."""
    from .consent import RecordReview

    flow_id, name = record["id"], record["server"]["name"]
    return (
        f"Flow {flow_id} was not resumed: " + "; and ".join(concerns) + ".\n"
        + RecordReview(record).text() + "\n"
        + f"If you trust it as shown, run: %mcp resume {flow_id} --trust\n"
        + f"Or connect the server yourself first (%mcp connect {name} TARGET), then %mcp resume {flow_id} --trust."
    )


def _check_choice(sub: str, value: str | None, choices: list[str]) -> None:
    """A clear error for a word that is not one of ``choices`` (``None``: nothing was given)."""
    if value is not None and value not in choices:
        raise UsageError(f"%mcp {sub}: {value!r} is not one of {', '.join(choices)}")


def _parent(kernel: Any) -> dict[str, Any]:
    """The execute request of the running cell (ipykernel 6 and 7 spell this differently)."""
    try:
        return kernel.get_parent("shell") or {}
    except TypeError:
        return kernel.get_parent() or {}
