"""Tab completion for ``%mcp`` / ``%%mcp`` lines, on IPython's completer API (matchers, API v2).

One ``@context_matcher`` is appended to ``ipython.Completer.custom_matchers`` by ``register``. It
reads the magic line up to the cursor with the subcommands' own argparse parsers
(``magics.grammar.build_parsers``), so flags, their choices and the positionals stay in step with
what the magic accepts. What it offers:

* the subcommands after ``%mcp``, each subcommand's ``--flags`` and the choices of a flag's value;
* ``call`` / ``prompt``: ``SERVER.`` and that server's tool or prompt names (bare names too with one
  server connected), then ``name=`` for the arguments not typed yet, then the values a tool's input
  schema allows (``enum``, ``const``, ``oneOf``/``anyOf`` of ``const``, ``true``/``false``) or, for a
  prompt, what the server's ``completion/complete`` answers;
* ``read``: servers, resource URIs, the fixed start of each URI template and, inside a template's
  variable, the server's ``completion/complete`` values;
* connection names, saved flow ids, model names and the other fixed words of the grammar.

Every name and value offered that a server or a saved record wrote goes into the cell through
``line_expand.line_word``: put in single quotes when it holds a brace or a quote (nothing in '...' is
expanded), so running the completed line sends that
text as it is and never evaluates a ``{...}`` the server put in it. What the user typed is compared
with the raw names and values through ``line_expand.typed_word`` (quotes undone, never evaluated).

Tab runs on the kernel's main thread and must never hang it. Everything local is read without
crossing threads (``conn.cached_tools``, the store, the router). A listing not known yet goes to the
session's loop and is waited for at most ``LIST_TIMEOUT`` seconds; if it is late it keeps running
there and the next Tab uses it. ``completion/complete`` is asked with ``COMPLETE_TIMEOUT`` and
dropped when late: a stale answer is of no use. A position where nothing is known is left to
IPython's other matchers (file names for ``--from PATH``, names for ``connect``): this matcher
suppresses them only when it offers something.

Why this module is long: Tab has one entry point (IPython's matcher) and every word of a ``%mcp``
line (subcommands, flags, servers, tools, schema-derived names and values, a server's own
completions), each bounded in time and encoded for the line's grammar.

Why this module is long: one job, Tab after ``%mcp``, whose parts (where the cursor is in the line,
the parsers' flags and choices, the names and values a session or a server offers, their encoding)
share the reading of the line; the subcommands themselves are ``commands/``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import re
import shlex
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from IPython.core.completer import CompletionContext, SimpleCompletion, SimpleMatcherResult, context_matcher

from .grammar import Parser, build_parsers
from .line_expand import expand_braces, line_word, typed_word, unquoted

if TYPE_CHECKING:
    from ..session.session import Session
    from ..wire.connection import Connection

__all__ = [
    "MATCHER_ID",
    "LIST_TIMEOUT",
    "COMPLETE_TIMEOUT",
    "LISTING_TTL",
    "McpCompleter",
    "completer_of",
    "register",
    "unregister",
]

MATCHER_ID = "mcp_notebook.completion"
LIST_TIMEOUT = 0.3  # seconds Tab waits for a listing it does not have (it goes on in the background)
COMPLETE_TIMEOUT = 0.5  # seconds Tab waits for the server's completion/complete (dropped when late)
LISTING_TTL = 10.0  # seconds a prompts / resources listing is reused before it is asked again
PRIORITY = 100  # before IPython's own matchers, so a %mcp line's answer can suppress Jedi and file names

# the magic at the start of a line, maybe assigned (`r = %mcp call ...`), followed by a space
_MAGIC = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\s*=\s*)?(%%?mcp)(?=\s)")
_METAVAR_CHOICES = re.compile(r"^\{([\w,-]+)\}$")  # `metavar="{list,add,remove,reset}"`
_TEMPLATE_PART = re.compile(r"\{([^}]*)\}")

Listed = Literal["prompts", "resources", "resource_templates"]  # what Connection.list_all lists


@dataclass(frozen=True)
class Found:
    """What to offer: the completions, and the end of the typed text they replace."""

    fragment: str
    items: list[tuple[str, str]]  # (text, type)


class McpCompleter:
    """The ``%mcp`` completer of one session; ``matcher`` is what IPython calls."""

    def __init__(self, session: Session, parsers: Mapping[str, Parser] | None = None) -> None:
        """``parsers``: the magic's own (read here, never changed), so each is built once, on first use."""
        self.session = session
        self.parsers: Mapping[str, Parser] = parsers if parsers is not None else build_parsers()
        self._lock = threading.Lock()  # completions come from the kernel thread, but be safe with subshells
        self._listings: dict[
            tuple[int, str], tuple[Any, float, list[Any]]
        ] = {}  # (id(conn), kind) -> (conn, when, items)
        self._pending: dict[tuple[int, str], tuple[Any, concurrent.futures.Future[Any]]] = {}
        self.matcher = self._make_matcher()

    # ------------------------------------------------------------------ IPython's side
    def _make_matcher(self) -> Callable[[CompletionContext], SimpleMatcherResult]:
        """A plain function carrying the v2 matcher attributes (a bound method cannot take them)."""

        def mcp_matcher(context: CompletionContext) -> SimpleMatcherResult:
            found = self.complete(context.text_until_cursor)
            items = shown_items(found.items) if found is not None else []
            if found is None or not items:
                return SimpleMatcherResult(completions=[], suppress=False)
            return SimpleMatcherResult(
                completions=[SimpleCompletion(text, type=kind) for text, kind in items],
                matched_fragment=found.fragment,
                suppress=True,  # a %mcp line: Jedi and file names would only be noise next to these
                ordered=True,  # already in a meaningful order (names sorted, schema values as declared)
            )

        setattr(mcp_matcher, "mcp_completer", self)  # noqa: B010 - found again by completer_of
        return context_matcher(identifier=MATCHER_ID, priority=PRIORITY)(mcp_matcher)

    # ------------------------------------------------------------------ the grammar
    def complete(self, text: str) -> Found | None:
        """Completions for a line typed up to the cursor, or ``None`` when it is not ours to complete."""
        match = _MAGIC.match(text)
        if match is None:
            return None
        rest = text[match.end() :]
        cut = _word_start(rest)
        current, words = rest[cut:], _split(rest[:cut])
        if not words:
            return Found(current, [(sub, "subcommand") for sub in sorted(self.parsers) if sub.startswith(current)])
        sub, words = words[0], words[1:]
        try:
            parser = self.parsers.get(sub)  # builds it, importing its module: that can fail too (command.Command)
            if parser is None or "--" in words:  # an unknown subcommand, or a stdio command after `connect ... --`
                return None
            return self._complete_sub(sub, parser, words, current)
        except Exception:  # noqa: BLE001 - Tab must never show a traceback; a failed source offers nothing
            return None

    def _complete_sub(self, sub: str, parser: Parser, words: list[str], current: str) -> Found | None:
        options = {opt: action for action in parser._actions for opt in action.option_strings}
        if current.startswith("-"):
            flag, eq, value = current.partition("=")
            if eq:  # --protocol=le
                return self._flag_value(options.get(flag), value)
            typed = set(words)
            flags = sorted(
                opt
                for opt, action in options.items()
                if opt.startswith("--")
                and opt.startswith(current)
                and (opt not in typed or isinstance(action, argparse._AppendAction))
            )
            return Found(current, [(opt, "flag") for opt in flags])
        positionals: list[str] = []
        expecting: argparse.Action | None = None
        for word in words:
            if expecting is not None:
                expecting = None
                continue
            if word.startswith("-") and word != "-":
                action = options.get(word.partition("=")[0])
                if action is not None and action.nargs != 0 and "=" not in word:
                    expecting = action
                continue
            positionals.append(word)
        if expecting is not None:
            return self._flag_value(expecting, current)
        return self._positional(sub, parser, positionals, current)

    @staticmethod
    def _flag_value(action: argparse.Action | None, value: str) -> Found | None:
        """A flag's value: its choices (``--protocol``), else nothing (paths and numbers are left to others)."""
        choices = _choices_of(action) if action is not None else None
        if not choices:
            return None
        return Found(value, [(c, "value") for c in choices if c.startswith(value)])

    def _positional(self, sub: str, parser: Parser, positionals: list[str], current: str) -> Found | None:
        index = len(positionals)
        if sub in ("call", "prompt"):
            return (
                self._target(sub, current)
                if index == 0
                else self._argument(sub, positionals[0], positionals[1:], current)
            )
        if sub == "read":
            return self._read(positionals, current)
        if sub == "model" and index == 1 and positionals[0] in ("use", "remove"):
            return _found(current, self.session.router.models, "model")
        if sub == "auth" and index == 1 and positionals[0] == "logout":
            return _found(current, self._connection_names(), "connection")
        sources: dict[str, Callable[[], Iterable[str]]] = {
            "disconnect": self._connection_names,
            "log": self._connection_names,
            "tools": self._connection_names,
            "prompts": self._connection_names,
            "resources": self._connection_names,
            "skills": self._connection_names,
            "tasks": self._connection_names,
            "resume": self._flow_ids,
            "forget": self._flow_ids,
            "serve": lambda: self.session.prototypes.objects,
            "stop": lambda: self.session.prototypes.served,
        }
        if index == 0 and sub in sources:
            kind = "flow" if sub in ("resume", "forget") else "connection"
            return _found(current, sources[sub](), kind)
        actions = [a for a in parser._actions if not a.option_strings]
        if index < len(actions):
            choices = _choices_of(actions[index])
            if choices:
                return Found(current, [(c, "value") for c in choices if c.startswith(current)])
            if sub == "trace" and index == 0:
                return _found(current, ["last"], "value")
        return None

    # ------------------------------------------------------------------ call / prompt
    def _target(self, sub: str, current: str) -> Found:
        """``SERVER.`` names, a server's tools or prompts after ``SERVER.``, bare names with one server."""
        kind = "tool" if sub == "call" else "prompt"
        conns = self._open_connections()
        typed = typed_word(current)
        server, dot, rest = typed.partition(".")
        if dot and server in conns:
            names = self._names(conns[server], sub)
            return Found(current, [(line_word(f"{server}.{n}"), kind) for n in sorted(names) if n.startswith(rest)])
        items = [(line_word(f"{name}."), "server") for name in sorted(conns) if f"{name}.".startswith(typed)]
        if len(conns) == 1 and len(self.session.registry) == 1:  # `call TOOL` resolves to the one connection
            (conn,) = conns.values()
            items += [(line_word(n), kind) for n in sorted(self._names(conn, sub)) if n.startswith(typed)]
        return Found(current, items)

    def _names(self, conn: Connection, sub: str) -> list[str]:
        if sub == "call":
            return list(self._tools(conn) or {})
        return [p.name for p in self._listing(conn, "prompts")]

    def _resolve(self, qualified: str) -> tuple[Connection, str] | None:
        """Like ``Session.resolve``, without its errors: which connection a typed target means."""
        registry = self.session.registry
        server, dot, rest = qualified.partition(".")
        if dot and server in registry:
            conn = registry.get(server)
            return (conn, rest) if conn.is_open else None
        if len(registry) == 1:
            conn = next(iter(registry))
            return (conn, qualified) if conn.is_open else None
        return None

    def _argument(self, sub: str, target: str, pairs: list[str], current: str) -> Found | None:
        """``name=`` for an argument not typed yet; after ``name=``, the values it can take."""
        resolved = self._resolve(target)
        if resolved is None:
            return None
        conn, name = resolved
        typed = dict(p.partition("=")[::2] for p in pairs if "=" in p)
        key, eq, value = current.partition("=")
        key, raw_value = typed_word(key), typed_word(value)
        if sub == "call":
            tool = (self._tools(conn) or {}).get(name)
            if tool is None:
                return None
            schema = tool.input_schema or {}
            props: dict[str, Any] = schema.get("properties") or {}
            if not eq:
                return Found(current, _argument_names(props, typed, key))
            prop = props.get(key)
            if not isinstance(prop, dict):
                return None
            return Found(
                value, [(line_word(v), "value") for v in schema_values(prop, schema) if v.startswith(raw_value)]
            )
        prompt = next((p for p in self._listing(conn, "prompts") if p.name == name), None)
        if prompt is None:
            return None
        arg_names = [a.name for a in (prompt.arguments or [])]
        if not eq:
            return Found(current, _argument_names(arg_names, typed, key))
        if key not in arg_names:
            return None
        from mcp.types import PromptReference

        context = {k: v for k, v in typed.items() if k != key}
        values = self._server_complete(conn, PromptReference(name=name), key, raw_value, context)
        return Found(value, [(line_word(v), "value") for v in values])

    # ------------------------------------------------------------------ read
    def _read(self, positionals: list[str], current: str) -> Found | None:
        """``read [SERVER] URI``: servers and URIs first; a server's URIs after its name."""
        conns = self._open_connections()
        if len(positionals) == 0:
            items = [(name, "server") for name in sorted(conns) if name.startswith(current)]
            if len(conns) == 1 and len(self.session.registry) == 1:
                items += self._uris(next(iter(conns.values())), current)
            return Found(current, items)
        if len(positionals) == 1 and positionals[0] in conns:
            return Found(current, self._uris(conns[positionals[0]], current))
        return None

    def _uris(self, conn: Connection, current: str) -> list[tuple[str, str]]:
        """Resource URIs, each template's fixed start, and the values of the template variable being typed."""
        resources, templates = self._listings_of(conn, ("resources", "resource_templates"))
        typed = typed_word(current)
        items = [
            (line_word(str(r.uri)), "resource")
            for r in sorted(resources, key=lambda r: str(r.uri))
            if str(r.uri).startswith(typed)
        ]
        for template in templates:
            uri_template = template.uri_template
            head = uri_template.split("{", 1)[0]
            if "{" in uri_template and head.startswith(typed) and head != typed:
                items.append((line_word(head), "template"))
                continue
            inside = template_variable(uri_template, typed)
            if inside is None:
                continue
            var, prefix, value, context = inside
            from mcp.types import ResourceTemplateReference

            values = self._server_complete(conn, ResourceTemplateReference(uri=uri_template), var, value, context)
            items += [(line_word(prefix + v), "value") for v in values]
        return items

    # ------------------------------------------------------------------ sources
    def _open_connections(self) -> dict[str, Connection]:
        return {c.name: c for c in self.session.registry if c.is_open}

    def _connection_names(self) -> list[str]:
        return [c.name for c in self.session.registry]

    def _flow_ids(self) -> list[str]:
        return [str(r["id"]) for r in self.session.store.all() if r.get("id")]

    def _tools(self, conn: Connection) -> dict[str, Any] | None:
        """The connection's tools: cached, else listed on its loop for at most ``LIST_TIMEOUT``."""
        cached = conn.cached_tools
        if cached is not None:
            return cached
        future = self._start(conn, "tools", conn.tools)
        found = self._collect(conn, "tools", future, LIST_TIMEOUT)
        return found if isinstance(found, dict) else None

    def _listing(self, conn: Connection, kind: Listed) -> list[Any]:
        return self._listings_of(conn, (kind,))[0]

    def _listings_of(self, conn: Connection, kinds: tuple[Listed, ...]) -> list[list[Any]]:
        """Prompts / resources / templates, reused for ``LISTING_TTL``; the missing ones asked together, one deadline."""
        now = time.monotonic()
        kept: dict[str, list[Any]] = {}  # any listing known for this connection, fresh or not
        fresh: set[str] = set()
        with self._lock:
            for kind in kinds:
                entry = self._listings.get((id(conn), kind))
                if entry is not None and entry[0] is conn:
                    kept[kind] = entry[2]
                    if now - entry[1] < LISTING_TTL:
                        fresh.add(kind)
        missing = [
            k
            for k in kinds
            if k not in fresh and self._has_capability(conn, "prompts" if k == "prompts" else "resources")
        ]
        if not conn.is_open:
            missing = []
        started = [(kind, self._start(conn, kind, _lister(conn, kind))) for kind in missing]  # all on the loop first
        deadline = now + LIST_TIMEOUT
        for kind, future in started:
            found = self._collect(conn, kind, future, max(0.0, deadline - time.monotonic()))
            if isinstance(found, list):  # late or failed: the last one known stays
                kept[kind] = found
                with self._lock:
                    # closed and dead connections' listings go (a re-run `%%mcp server` makes a new connection each time)
                    self._listings = {k: v for k, v in self._listings.items() if v[0].state in ("connecting", "open")}
                    self._listings[(id(conn), kind)] = (conn, time.monotonic(), found)
        return [kept.get(k, []) for k in kinds]

    def _start(
        self, conn: Connection, kind: str, make: Callable[[], Coroutine[Any, Any, Any]]
    ) -> concurrent.futures.Future[Any] | None:
        """``make()`` running on the session's loop: the one already under way for this listing, else a new one."""
        runtime = self.session.runtime
        if not runtime.running or runtime.in_loop_thread():
            return None
        key = (id(conn), kind)
        with self._lock:
            pending = self._pending.get(key)
            if pending is None or pending[0] is not conn or _failed(pending[1]):
                self._pending = {k: v for k, v in self._pending.items() if v[0].state in ("connecting", "open")}
                pending = self._pending[key] = (conn, runtime.submit(make()))
        return pending[1]

    def _collect(
        self, conn: Connection, kind: str, future: concurrent.futures.Future[Any] | None, timeout: float
    ) -> Any:
        """Wait ``timeout`` for a listing; a late one keeps running for the next Tab, a finished one is let go."""
        if future is None:
            return None
        try:
            result = future.result(timeout)
        except concurrent.futures.TimeoutError:
            return None
        except Exception:  # noqa: BLE001 - a listing that failed offers nothing; the next Tab asks again
            return None
        with self._lock:
            pending = self._pending.get((id(conn), kind))
            if pending is not None and pending[1] is future:
                del self._pending[(id(conn), kind)]
        return result

    @staticmethod
    def _has_capability(conn: Connection, name: str) -> bool:
        client = conn.client
        capabilities = client.session.server_capabilities if client is not None else None
        return capabilities is not None and getattr(capabilities, name, None) is not None

    def _server_complete(
        self, conn: Connection, ref: Any, argument: str, value: str, context: dict[str, str]
    ) -> list[str]:
        """The server's ``completion/complete`` values, within ``COMPLETE_TIMEOUT``; nothing without the capability."""
        runtime = self.session.runtime
        if not self._has_capability(conn, "completions") or not runtime.running or runtime.in_loop_thread():
            return []
        client = conn.client
        if client is None:
            return []
        future = runtime.submit(
            client.complete(ref, {"name": argument, "value": value}, context_arguments=context or None)
        )
        try:
            result = future.result(COMPLETE_TIMEOUT)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return []
        except Exception:  # noqa: BLE001 - a server that fails to complete offers nothing, quietly
            return []
        return [v for v in result.completion.values if isinstance(v, str)]


# ---------------------------------------------------------------------- helpers
def _lister(conn: Connection, kind: Listed) -> Callable[[], Coroutine[Any, Any, Any]]:
    """``conn.list_all(kind)`` made later, on demand (only when no listing is already under way)."""
    return lambda: conn.list_all(kind)


MAX_ITEMS = 200  # completions offered at once: a server with 100,000 tools or enum values must not flood the menu
MAX_TEXT = 200  # characters of one completion


def shown_items(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The completions fit to offer: server-controlled names with line breaks or control characters, or
    absurdly long, are left out (they would be typed into the cell as they are), and at most ``MAX_ITEMS``.

    So is a name starting with ``-`` (quoted or not) that is not one of the parser's own flags: the
    subcommand reads such a word as its flag (a received flow id ``--trust=sha256:…`` is consent to
    another record), as ``core.text.mcp_line`` never writes one either."""
    fit = [
        (text, kind)
        for text, kind in items
        if len(text) <= MAX_TEXT and text.isprintable() and (kind == "flag" or not text.lstrip("'\"").startswith("-"))
    ]
    return fit[:MAX_ITEMS]


def _failed(future: concurrent.futures.Future[Any]) -> bool:
    """A finished listing that gave no result: ask again rather than keep its failure."""
    return future.done() and (future.cancelled() or future.exception() is not None)


def _split(text: str) -> list[str]:
    """The words before the one being typed, as the magic reads them (quotes, ``{{`` outside '...'), forgiving an open quote.

    A ``{expr}`` is left as typed, never evaluated: Tab must not run code.
    """
    read = expand_braces(text, None)
    try:
        return shlex.split(read)
    except ValueError:
        return read.split()


def _word_start(text: str) -> int:
    """Where the word being typed starts: after the last space outside quotes (``language='new zea``)."""
    return max((i + 1 for i, c in unquoted(text) if c.isspace()), default=0)


def _found(current: str, names: Iterable[str], kind: str) -> Found:
    """The names that start with what is typed, each encoded for the line (flow ids come from received notebooks)."""
    typed = typed_word(current)
    return Found(current, [(line_word(n), kind) for n in sorted(names) if n.startswith(typed)])


def _argument_names(names: Iterable[str], typed: dict[str, str], current: str) -> list[tuple[str, str]]:
    """``name=`` for the arguments not typed yet that start with ``current``; a name holding ``=`` cannot be typed, so it is not offered."""
    return [
        (line_word(n) + "=", "argument") for n in names if n not in typed and "=" not in n and n.startswith(current)
    ]


def _choices_of(action: argparse.Action) -> list[str] | None:
    """An argparse action's choices, or those its metavar spells (``{list,add,remove,reset}``)."""
    if action.choices:
        return [str(c) for c in action.choices]
    metavar = action.metavar if isinstance(action.metavar, str) else None
    found = _METAVAR_CHOICES.match(metavar or "")
    return found.group(1).split(",") if found else None


def schema_values(prop: dict[str, Any], root: dict[str, Any], depth: int = 0) -> list[str]:
    """The values a property's schema names, as the raw text of ``key=value`` (not encoded for the line yet):
    ``enum``, ``const``, alternatives, booleans.

    Follows local ``$ref`` (``#/$defs/...``, how pydantic writes an ``Enum``) and ``oneOf`` /
    ``anyOf`` / ``allOf`` (``Optional[Literal[...]]``, titled ``oneOf`` of ``const``), in order.
    """
    if depth > 8:
        return []
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        if isinstance(target, dict):
            prop = {**target, **{k: v for k, v in prop.items() if k != "$ref"}}
    values: list[str] = []
    if "const" in prop:
        values.append(_text_of(prop["const"]))
    for item in prop.get("enum") or []:
        values.append(_text_of(item))
    for key in ("oneOf", "anyOf", "allOf"):
        for alternative in prop.get(key) or []:
            if isinstance(alternative, dict):
                values += schema_values(alternative, root, depth + 1)
    types = prop.get("type")
    if (
        (types == "boolean" or (isinstance(types, list) and "boolean" in types))
        and "enum" not in prop
        and "const" not in prop
    ):
        values += ["true", "false"]
    return list(dict.fromkeys(v for v in values if v is not None))


def _text_of(value: Any) -> str:
    """A schema value as typed after ``key=``: a string as it is, anything else as JSON (``3``, ``null``, objects)."""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def template_variable(uri_template: str, typed: str) -> tuple[str, str, str, dict[str, str]] | None:
    """Which variable of ``uri_template`` the text ``typed`` is in: (name, text before it, its value so far, earlier values).

    RFC 6570 simple and reserved expressions (``{var}``, ``{+var}``); a simple value stops at ``/``.
    ``None`` when the text does not follow the template or ends in one of its fixed parts.
    """
    parts = _TEMPLATE_PART.split(uri_template)  # literal, var, literal, var, ..., literal
    pattern = "^"
    names: list[str] = []
    for i in range(1, len(parts), 2):
        pattern += re.escape(parts[i - 1])
        expression = parts[i]
        reserved = expression.startswith(("+", "#"))
        name = expression.lstrip("+#./;?&").split(",")[0].rstrip("*")
        if not name or expression[:1] in (".", "/", ";", "?", "&"):
            return None  # label, path, parameter and query expressions are not offered
        found = re.match(pattern + "(.*)$" if reserved else pattern + "([^/]*)$", typed)
        if found is not None:
            groups = found.groups()
            context = dict(zip(names, groups[:-1], strict=True))
            value = groups[-1]
            return name, typed[: len(typed) - len(value)], value, context
        pattern += "(.*?)" if reserved else "([^/]*?)"
        names.append(name)
    return None


# ---------------------------------------------------------------------- registration
def register(ipython: Any, session: Session, parsers: Mapping[str, Parser] | None = None) -> None:
    """Add the ``%mcp`` completer for ``session`` to ``ipython``'s completer (again: replaces the old one)."""
    completer = getattr(ipython, "Completer", None)
    if completer is None:  # a shell without completion (plain InteractiveShell in some tests)
        return
    unregister(ipython)
    mcp = McpCompleter(session, parsers)
    completer.custom_matchers.append(mcp.matcher)


def completer_of(ipython: Any) -> McpCompleter | None:
    """The ``McpCompleter`` registered in ``ipython``, if any (to look at its state, or call ``complete`` directly)."""
    for matcher in getattr(getattr(ipython, "Completer", None), "custom_matchers", []):
        if getattr(matcher, "matcher_identifier", None) == MATCHER_ID:
            found = getattr(matcher, "mcp_completer", None)
            if isinstance(found, McpCompleter):
                return found
    return None


def unregister(ipython: Any) -> None:
    """Remove the ``%mcp`` completer (``%unload_ext``); nothing to do when none is registered."""
    completer = getattr(ipython, "Completer", None)
    if completer is None:
        return
    completer.custom_matchers[:] = [
        m for m in completer.custom_matchers if getattr(m, "matcher_identifier", None) != MATCHER_ID
    ]
