"""A hostile server against every HTML the notebook builds: nothing it sends may become markup.

The hostile server (``tests/security/hostile.py``) puts script in every string and byte it
controls. These tests run the magics headless against it over the three transports (in-process,
stdio, streamable HTTP) and both protocol generations, and build the interactive widgets (live
view, forms, sampling review) from the questions it really sends. Every ``text/html`` output and
every HTML widget value goes through ``find_leaks``, a static check with the standard library's
``HTMLParser``: no event-handler attribute, no script-capable tag, no ``javascript:`` or
script-capable ``data:`` URL, no payload inside a ``<style>``.

The tests also check the real outcome: each call ran and its hostile text reached the output
as *text* (escaped in the HTML, so the parsed text shows ``<script>...`` literally).

A leak is reported with the tag that leaked, the ``[where]`` marker of the hostile string it
came from (``[tool-title]``, ``[log-data]``...) and the HTML around it.
"""

from __future__ import annotations

import re
import shlex
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

import ipywidgets as w
import pytest
from IPython.utils.capture import capture_output

from ..conftest import REPO_ROOT, get_shell
from .hostile import BAD_BASE64, EVIL_URL, FLAG, HOSTILE, HOSTILE_TOOL_NAME, HOSTILE_VALUE, JS_URL, PAYLOADS, h

# ---------------------------------------------------------------------- the static check
SCRIPT_TAGS = {
    "script",
    "iframe",
    "object",
    "embed",
    "frame",
    "frameset",
    "applet",
    "base",
    "meta",
    "link",
    "form",
    "portal",
}
URL_ATTRS = {
    "href",
    "src",
    "xlink:href",
    "action",
    "formaction",
    "data",
    "poster",
    "background",
    "srcset",
    "ping",
    "codebase",
}
BAD_URLS = (
    "javascript:",
    "vbscript:",
    "data:text/html",
    "data:image/svg",
    "data:application/xhtml",
    "data:text/xml",
    "data:application/xml",
)
_MARKER = re.compile(r"\[([a-z0-9-]+)\]")


def _url_key(value: str) -> str:
    """A URL as a browser compares its scheme: without ASCII whitespace and controls, lowercased."""
    return "".join(c for c in value if ord(c) > 0x20).lower()


class _LeakFinder(HTMLParser):
    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.source = source
        self.leaks: list[str] = []
        self._in_style = False
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", source)]

    def _leak(self, what: str) -> None:
        line, col = self.getpos()
        offset = self._line_starts[line - 1] + col
        markers = _MARKER.findall(self.source[max(0, offset - 2000) : offset])
        snippet = self.source[max(0, offset - 60) : offset + 140].replace("\n", "\\n")
        where = f" (nearest marker before it: [{markers[-1]}])" if markers else ""
        self.leaks.append(f"{what}{where}; near {snippet!r}")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SCRIPT_TAGS:
            self._leak(f"<{tag}> tag")
        if tag == "style":
            self._in_style = True
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self._leak(f"<{tag}> has event attribute {name}={value!r}")
            elif name == "srcdoc":
                self._leak(f"<{tag}> has srcdoc")
            elif name in URL_ATTRS and _url_key(value).startswith(BAD_URLS):
                self._leak(f"<{tag}> {name}={value[:60]!r}")
            elif name == "style" and (
                FLAG in value or "javascript:" in _url_key(value) or "expression(" in value.lower()
            ):
                self._leak(f"<{tag}> style={value[:60]!r}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style and (FLAG in data or "javascript:" in _url_key(data) or "expression(" in data.lower()):
            self._leak("payload inside <style>")


def find_leaks(html: str) -> list[str]:
    """Every way ``html`` could run script: event attributes, script tags, script URLs, payload in a style."""
    finder = _LeakFinder(html)
    finder.feed(html)
    finder.close()
    return finder.leaks


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_text(html: str) -> str:
    """What a person reads: the text of ``html`` (escaped payloads read as ``<script>...``)."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


def test_find_leaks_catches_each_shape() -> None:
    """The check itself: every payload unescaped is caught; every payload escaped is not."""
    import html as html_module

    for payload in PAYLOADS:
        if payload.startswith("javascript:"):
            assert find_leaks(f'<a href=" {payload}">x</a>'), payload
            assert find_leaks(f'<a href="JaVa\tScRiPt:{payload[11:]}">x</a>'), payload
        elif payload.startswith("'"):
            assert find_leaks(f"<div title='{payload}'>x</div>"), payload
        else:
            assert find_leaks(f'<div title="{payload}">x</div>') or find_leaks(f"<pre>{payload}</pre>"), payload
        assert not find_leaks(f'<pre title="{html_module.escape(payload)}">{html_module.escape(payload)}</pre>'), (
            payload
        )
    assert find_leaks(f'<img src="data:image/png;base64,{BAD_BASE64}">')
    assert find_leaks('<a href="data:text/html;base64,PGI+">x</a>')
    assert find_leaks('<img src="data:image/svg+xml;base64,PGI+">')
    assert find_leaks("<style>.x{background:url(javascript:window.__pwned=1)}</style>")
    assert not find_leaks("<style>.mcpnb{color:red}</style><a href='https://example.com'>ok</a>")
    assert html_text("<pre>&lt;script&gt;</pre>") == "<script>"


# ---------------------------------------------------------------------- outputs of the magics
@dataclass
class Ran:
    """What running some magic lines showed: display bundles, stdout, returned values' bundles, errors."""

    bundles: list[dict[str, Any]] = field(default_factory=list)
    stdout: str = ""
    errors: list[str] = field(default_factory=list)

    @property
    def htmls(self) -> list[str]:
        return [b["text/html"] for b in self.bundles if isinstance(b.get("text/html"), str)]

    @property
    def text(self) -> str:
        """The readable text of every HTML output."""
        return "\n".join(html_text(x) for x in self.htmls)

    def leaks(self) -> list[str]:
        return [leak for x in self.htmls for leak in find_leaks(x)]


def run_magics(shell: Any, lines: list[str], *, expect_error: bool = False) -> Ran:
    ran = Ran()
    with capture_output() as cap:
        for line in lines:
            try:
                value = shell.run_line_magic("mcp", line)
            except Exception as exc:  # noqa: BLE001 - shown as text; recorded
                ran.errors.append(f"{line}: {type(exc).__name__}: {exc}")
                continue
            if value is not None:
                data, _ = shell.display_formatter.format(value)
                ran.bundles.append(data)
    ran.bundles = [o.data for o in cap.outputs] + ran.bundles
    ran.stdout = cap.stdout
    if not expect_error:
        assert not ran.errors, ran.errors
    return ran


TRANSPORTS = ["inproc-auto", "inproc-legacy", "stdio-auto", "stdio-legacy", "http-auto", "http-legacy"]


@pytest.fixture(scope="module")
def shell() -> Any:
    sh = get_shell()
    sh.run_line_magic("config", "MCPMagics.interactive = False")
    return sh


@dataclass
class Connected:
    name: str
    transport: str
    connect: Ran


@pytest.fixture(scope="module", params=TRANSPORTS)
def connected(request: pytest.FixtureRequest, shell: Any) -> Iterator[Connected]:
    """``%mcp connect`` to the hostile server over one transport and protocol generation."""
    transport, protocol = request.param.split("-")
    name = f"hostile_{transport}_{protocol}"
    if transport == "inproc":
        target = "tests.security.hostile:server"
    elif transport == "stdio":
        target = f"--cwd {shlex.quote(str(REPO_ROOT))} -- {shlex.quote(sys.executable)} -m tests.security.hostile"
    else:
        target = request.getfixturevalue("hostile_http_url")
    if transport == "stdio":  # --cwd goes before the command
        line = f"connect {name} --protocol {protocol} {target}"
    else:
        line = f"connect {name} {target} --protocol {protocol}"
    ran = run_magics(shell, [line])
    try:
        yield Connected(name, request.param, ran)
    finally:
        run_magics(shell, [f"disconnect {name}"], expect_error=True)


def test_connect_says_so_in_plain_text(connected: Connected) -> None:
    assert f"Connected {connected.name!r}" in connected.connect.stdout
    assert "[server-name]" in connected.connect.stdout  # the server's own name, as plain text
    assert not connected.connect.leaks()


@dataclass
class Case:
    lines: list[str]
    shown: list[str] = field(default_factory=list)  # h(tag) shown whole, as text
    markers: list[str] = field(default_factory=list)  # text that must be shown (escaped)
    error: bool = False  # the last line fails (headless cannot answer)
    tool_error: bool = False  # the last line's tool answers isError: its report shows, then the cell fails


CASES: dict[str, Case] = {
    "servers": Case(
        ["servers"], markers=[h("server-name")[:70]]
    ),  # a name is one line of at most 80 characters: its start, escaped
    "tools": Case(
        ["tools {n}"],
        shown=["echo-title", "content-title", "form-title", "url-title", "named-title"],
        markers=["[tool-description]", "[form-tool-description]", HOSTILE_TOOL_NAME],
    ),
    "prompts": Case(["prompts {n}"], shown=["prompt-title"], markers=["[prompt-description]"]),
    "resources": Case(
        ["resources {n}"],
        shown=["resource-name", "blob-name", "template-name"],
        markers=["[resource-description]", "[template-description]"],
    ),
    "call-echo": Case(["call {n}.hostile_echo"], shown=["echo-result", "arg-default"]),
    "call-echo-user-text": Case(
        ['call {n}.hostile_echo --json \'{{"text": "<b>bold</b>"}}\''], markers=["<b>bold</b>"], shown=["echo-result"]
    ),
    "call-named": Case(["call '{n}." + HOSTILE_TOOL_NAME + "'"], shown=["named-result"], markers=[HOSTILE_TOOL_NAME]),
    "call-content": Case(
        ["call {n}.hostile_content"],
        shown=["result-text", "embedded-text", "link-title", "link-description"],
        markers=["[structured-value]", "[structured-key]"],
    ),
    "call-content-trace": Case(
        ["call {n}.hostile_content --trace"],
        shown=["result-text"],
        markers=["[structured-key]", "hostile://blob/page.html"],
    ),
    "call-error": Case(["call {n}.hostile_error"], shown=["tool-error"], markers=["Tool error"], tool_error=True),
    "call-error-blocks": Case(
        ["call {n}.hostile_error_blocks"], shown=["error-result-text"], markers=["Tool error"], tool_error=True
    ),
    "call-records": Case(
        ["call {n}.hostile_records"],
        markers=["[record-key] " + PAYLOADS[0], "[record-value] " + PAYLOADS[1], "[record-name] ", "[record-nested] "],
    ),
    "read-markdown": Case(
        ["read {n} hostile://markdown"],
        markers=[
            "[markdown-heading] " + PAYLOADS[0],
            "[markdown-text] ",
            "[markdown-raw-block]",
            "[markdown-cell] " + PAYLOADS[1],
        ],
    ),
    "call-progress": Case(
        ["call {n}.hostile_progress"],
        shown=["progress-result", "log-info-1", "log-error"],
        markers=["[log-data]", "[logger-name]"],
    ),
    "call-form": Case(
        ["call {n}.hostile_form --accept-defaults"],
        shown=["form-result"],
        markers=["[field-default]", HOSTILE_VALUE, "[elicit-message]"],
    ),  # the answer summary names the question
    "call-form-answered": Case(
        ["call {n}.hostile_form --accept-defaults --answer 'text=<img src=x onerror=\"window.__pwned=1\">'"],
        shown=["form-result"],
        markers=['<img src=x onerror=\\"window.__pwned=1\\">'],
    ),
    "call-url": Case(["call {n}.hostile_url"], markers=["[url-message-evil]", EVIL_URL], error=True),
    "call-url-javascript": Case(
        ["call {n}.hostile_url which=javascript"], markers=["[url-message-js]", JS_URL], error=True
    ),
    "call-sample": Case(["call {n}.hostile_sample"], shown=["sample-result"], markers=["echo: [sampling-message]"]),
    "prompt": Case(
        ["prompt {n}.hostile_prompt"], shown=["prompt-user", "prompt-assistant"], markers=["[prompt-description]"]
    ),
    "read-text": Case(["read {n} hostile://text"], shown=["resource-text"]),
    "read-blob": Case(["read {n} hostile://blob"], markers=["hostile://blob"]),
    "read-template": Case(["read {n} hostile://item/%3Cb%3E"], shown=["template-text"]),
    "log": Case(
        ["call {n}.hostile_progress", "log {n}"],
        shown=["log-info-1", "log-info-2", "log-error", "logger-name"],
        markers=["[log-data]"],
    ),
    "trace": Case(
        ["call {n}.hostile_form --accept-defaults", "trace"],
        markers=["[elicit-message]", "[form-result]", "[field-title]"],
    ),
    "trace-url": Case(["call {n}.hostile_url which=evil", "trace"], markers=["[url-message-evil]"], error=True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_magic_output_is_inert(shell: Any, connected: Connected, case: str) -> None:
    spec = CASES[case]
    lines = [line.format(n=connected.name) for line in spec.lines]
    ran = run_magics(shell, lines, expect_error=True)
    if spec.error:
        assert len(ran.errors) == 1 and "hostile_url" in ran.errors[0], ran.errors
        assert "a headless run cannot open links" in ran.errors[0]
    elif spec.tool_error:  # the error names the call, and none of the server's text (the report shows that, escaped)
        assert len(ran.errors) == 1 and "reported a tool error (isError)" in ran.errors[0], ran.errors
        assert "<" not in ran.errors[0].split(": ", 1)[1] and "[tool-error]" not in ran.errors[0], ran.errors
        assert '<span class="badge error">error</span>' in ran.htmls[-1]
    else:
        assert not ran.errors, ran.errors
    assert ran.htmls, f"{case}: no HTML output at all"
    leaks = ran.leaks()
    assert not leaks, f"{connected.transport} {case}: {len(leaks)} leak(s):\n" + "\n".join(leaks)
    text = ran.text
    for tag in spec.shown:
        assert h(tag) in text, f"{case}: {h(tag)[:40]!r}... not shown as text"
    for marker in spec.markers:  # a raised error is shown once, by IPython, as plain text (not in the report)
        assert marker in text or (spec.error and marker in ran.errors[0]), f"{case}: {marker!r} not shown"
    # escaped, not dropped: the payload reads as text wherever a hostile string is shown whole
    if spec.shown:
        assert PAYLOADS[0] in text


# ---------------------------------------------------------------------- interactive widgets
def _widget_children(widget: w.Widget) -> Iterator[w.Widget]:
    for name in widget.keys:
        if name in ("layout", "style"):
            continue
        value = getattr(widget, name, None)
        if isinstance(value, w.Widget):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, w.Widget))


def widget_html(root: w.Widget) -> list[tuple[str, str]]:
    """``(where, html)`` for every string of the tree a browser renders as HTML."""
    found: list[tuple[str, str]] = []
    seen: set[int] = set()

    def walk(widget: w.Widget) -> None:
        if id(widget) in seen:
            return
        seen.add(id(widget))
        kind = type(widget).__name__
        if isinstance(widget, (w.HTML, w.HTMLMath)):
            found.append((f"{kind}.value", widget.value))
        description = getattr(widget, "description", "")
        if description and getattr(widget, "description_allow_html", False):
            found.append((f"{kind}.description (allow_html)", description))
        if isinstance(widget, w.Output):
            for output in widget.outputs:
                html = (output.get("data") or {}).get("text/html")
                if isinstance(html, str):
                    found.append((f"{kind}.outputs", html))
        for child in _widget_children(widget):
            walk(child)

    walk(root)
    return found


def widget_text(root: w.Widget) -> str:
    """What a person reads in the tree: HTML as text, plus labels, options and values shown as text."""
    parts: list[str] = []
    seen: set[int] = set()

    def walk(widget: w.Widget) -> None:
        if id(widget) in seen:
            return
        seen.add(id(widget))
        if isinstance(widget, (w.HTML, w.HTMLMath)):
            parts.append(html_text(widget.value))
        parts.append(str(getattr(widget, "description", "") or ""))
        if isinstance(widget, (w.Dropdown, w.SelectMultiple, w.ToggleButtons)):
            parts.extend(str(label) for label in widget._options_labels)
        if isinstance(widget, (w.Text, w.Textarea)):
            parts.append(widget.value)
        for child in _widget_children(widget):
            walk(child)

    walk(root)
    return "\n".join(parts)


def widget_leaks(root: w.Widget) -> list[str]:
    return [f"{where}: {leak}" for where, html in widget_html(root) for leak in find_leaks(html)]


PRESS = ("Accept", "Done", "Send answers", "Send", "Return", "Send reply")


class AutoPilot:
    """The live view's ``MainThread`` stand-in, with a thread of its own like the kernel's loop.

    Updates queue up until ``start()`` (the magic is still running until then, as in a kernel),
    then run one by one. After each, the widget tree is photographed and the first enabled
    Accept/Done/Send/Return button is pressed, like a person who agrees to everything."""

    def __init__(self, view: Any) -> None:
        import queue

        self.view = view
        self.loop = None
        self.snapshots: list[tuple[list[tuple[str, str]], str]] = []
        self.pressed: list[str] = []
        self.failures: list[str] = []
        self.queue: queue.Queue[Any] = queue.Queue()
        self.thread = threading.Thread(target=self._work, name="autopilot-main", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.queue.put(None)
        self.thread.join(timeout=10)

    def call(self, fn: Any, *args: Any) -> None:
        self.queue.put((fn, args))

    def _work(self) -> None:
        while (item := self.queue.get()) is not None:
            fn, args = item
            try:
                fn(*args)
                self.snap()
                button = self._button(self.view.box)
                if button is not None:
                    self.pressed.append(button.description)
                    button.click()
                    self.snap()
            except Exception as exc:  # noqa: BLE001 - reported by the test
                import traceback

                self.failures.append("".join(traceback.format_exception(exc)))

    def snap(self) -> None:
        self.snapshots.append((widget_html(self.view.box), widget_text(self.view.box)))

    def _button(self, root: w.Widget) -> w.Button | None:
        for child in _widget_children(root):
            if isinstance(child, w.Button) and child.description in PRESS and not child.disabled:
                return child
            found = self._button(child)
            if found is not None:
                return found
        return None

    def leaks(self) -> list[str]:
        return [f"{where}: {leak}" for htmls, _ in self.snapshots for where, html in htmls for leak in find_leaks(html)]

    @property
    def text(self) -> str:
        return "\n".join(text for _, text in self.snapshots)


@dataclass
class Interactive:
    pilot: AutoPilot
    flow: Any
    outputs: list[dict[str, Any]]

    @property
    def output_htmls(self) -> list[str]:
        return [o["text/html"] for o in self.outputs if isinstance(o.get("text/html"), str)]


def run_interactive(conn_name: str, tool: str, arguments: dict[str, Any] | None = None) -> Interactive:
    """Call ``tool`` with the real live view (as ``%mcp call`` in JupyterLab builds it), agreeing to everything."""
    from IPython import get_ipython

    from mcp_notebook.forms.model import Answers
    from mcp_notebook.notebook.live_view import LiveView

    hub = get_ipython().magics_manager.registry["MCPMagics"].session
    conn = hub.registry.get(conn_name)
    hub.router.set_review("ask")  # review every sampling request, even echo's (the default reviews only remote models)
    with capture_output() as cap:
        view = LiveView(f"{conn_name}.{tool}")
        pilot = AutoPilot(view)
        view.main = pilot
        flow = hub.start("tools/call", conn, tool, arguments or {}, answers=Answers(), ui=view, view=view, save=False)
        view.attach(flow)
        flow.shown = True
        pilot.start()  # the magic has returned: the kernel's loop runs the view's updates now
        try:
            flow.result(timeout=60)
        except Exception:  # noqa: BLE001 - the test looks at flow.error
            pass
        deadline = time.monotonic() + 10
        while not view._closed and time.monotonic() < deadline:  # the settled report replaces the view
            time.sleep(0.02)
        pilot.stop()
        hub.router.set_review(hub.settings.review)
    assert not pilot.failures, pilot.failures
    return Interactive(pilot, flow, [o.data for o in cap.outputs])


INTERACTIVE: dict[str, tuple[dict[str, Any], set[str], list[str], list[str]]] = {
    # tool: (arguments, buttons a person presses, shown in the widgets, shown in the settled report);
    # "tag" means h("tag") shown whole; anything else is literal text ("[tag]": just the marker, where
    # the string is shown inside a repr)
    "hostile_form": (
        {},
        {"Accept"},
        [
            "elicit-message",
            "field-title",
            "field-description",
            "oneof-title-1",
            "oneof-title-2",
            "enumnames-1",
            "anyof-title-2",
            "flag-title",
            "count-description",
            "date-title",
            "plain-many-title",
        ],
        ["form-result"],
    ),
    # 2026-07-28 asks both URLs in one round ("Send answers"); 2025 asks one at a time ("Done")
    "hostile_url": ({}, {"Send answers", "Done"}, ["url-message-evil", "url-message-js"], ["url-result"]),
    "hostile_sample": (
        {},
        {"Send", "Return"},
        ["sampling-message", "sampling-system", "[sampling-hint]", "[sampling-stop]"],
        ["sample-result"],
    ),
    "hostile_progress": ({}, set(), ["progress-1", "log-info-1"], ["progress-result"]),
    "hostile_content": ({}, set(), [], ["result-text", "link-title"]),
    HOSTILE_TOOL_NAME: ({}, set(), [HOSTILE_TOOL_NAME], ["named-result"]),
}


@pytest.mark.parametrize("tool", list(INTERACTIVE))
def test_interactive_widgets_are_inert(shell: Any, connected: Connected, tool: str) -> None:
    arguments, pressed, shown, settled = INTERACTIVE[tool]
    run = run_interactive(connected.name, tool, arguments)
    assert set(run.pilot.pressed) <= pressed and bool(run.pilot.pressed) == bool(pressed), run.pilot.pressed
    leaks = run.pilot.leaks() + [leak for x in run.output_htmls for leak in find_leaks(x)]
    assert not leaks, f"{connected.transport} {tool}: {len(leaks)} leak(s):\n" + "\n".join(leaks)
    assert run.flow.error is None, run.flow.error
    assert run.flow.value is not None and not getattr(run.flow.value, "is_error", False)
    text = run.pilot.text
    for tag in shown:
        want = h(tag) if re.fullmatch(r"[a-z0-9-]+", tag) else tag
        assert want in text, f"{tool}: {want[:40]!r}... not shown in the widgets"
    report = "\n".join(html_text(x) for x in run.output_htmls)
    for tag in settled:
        assert h(tag) in report, f"{tool}: {h(tag)[:40]!r}... not in the settled report"


def test_live_progress_and_log_are_text(shell: Any, connected: Connected) -> None:
    run = run_interactive(connected.name, "hostile_progress", {"steps": 2})
    text = run.pilot.text
    assert h("progress-1") in text and h("progress-2") in text  # the progress line, as text
    assert h("log-info-1") in text and "[log-error]" in text  # the live log, as text
    assert not run.pilot.leaks()


def test_url_panel_highlights_the_host_a_browser_opens(shell: Any, connected: Connected) -> None:
    """WHATWG parsing (every browser) opens evil.example for ``https://evil.example\\@accounts.google.com/``:
    a backslash ends the host in http(s) URLs. The highlighted domain must be that one."""
    run = run_interactive(connected.name, "hostile_url", {"which": "evil"})
    htmls = [html for snapshot, _ in run.pilot.snapshots for _, html in snapshot if "mcp-url" in html]
    assert htmls, "no URL panel was shown"
    domains = set(re.findall(r'class="mcp-domain"[^>]*>([^<]*)<', htmls[0]))
    assert domains == {"evil.example"}, f"highlighted {domains} for {EVIL_URL!r}; a browser opens evil.example"


def test_javascript_url_is_never_a_link(shell: Any, connected: Connected) -> None:
    run = run_interactive(connected.name, "hostile_url", {"which": "javascript"})
    htmls = [html for snapshot, _ in run.pilot.snapshots for _, html in snapshot if "mcp-url" in html]
    assert htmls and all("<a " not in x for x in htmls)
    assert JS_URL in "\n".join(html_text(x) for x in htmls)  # shown whole, as text


# ---------------------------------------------------------------------- widgets built directly
def _hostile_question(schema: dict[str, Any], message: str, key: str) -> Any:
    from mcp.types import ElicitRequestFormParams

    from mcp_notebook.forms.model import FormModel, Question

    return Question(
        key, ElicitRequestFormParams(message=message, requested_schema=schema), FormModel.from_schema(schema, message)
    )


HOSTILE_SCHEMA_NAMES: dict[str, Any] = {
    "type": "object",
    "properties": {
        HOSTILE_VALUE: {"type": "string", "description": h("raw-description"), "default": h("raw-default")},
        "<img src=x onerror=window.__pwned=1>": {"type": "boolean", "title": h("raw-bool-title")},
        "pick": {"type": "string", "enum": [HOSTILE_VALUE, "b"], "enumNames": [h("raw-enumnames"), "b"]},
    },
    "required": [HOSTILE_VALUE],
}

HOSTILE_SCHEMA_UNSUPPORTED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "nested": {
            "type": "object",
            "title": h("nested-title"),
            "properties": {HOSTILE_VALUE: {"type": "string", "default": h("nested-default")}},
        }
    },
}


@pytest.mark.parametrize("schema", ["names", "unsupported", "several"])
def test_panel_from_hostile_schema(schema: str) -> None:
    from mcp_notebook.forms.model import Answers
    from mcp_notebook.forms.widgets import ElicitationPanel

    if schema == "names":
        questions = [_hostile_question(HOSTILE_SCHEMA_NAMES, h("raw-message"), h("raw-key"))]
    elif schema == "unsupported":
        questions = [_hostile_question(HOSTILE_SCHEMA_UNSUPPORTED, h("raw-message"), h("raw-key"))]
    else:
        questions = [
            _hostile_question(HOSTILE_SCHEMA_NAMES, h("raw-message"), "a"),
            _hostile_question(HOSTILE_SCHEMA_UNSUPPORTED, h("raw-message-2"), "b"),
        ]
    results: dict[str, Any] = {}
    panel = ElicitationPanel(h("server"), questions, Answers(fields={HOSTILE_VALUE: h("preset")}), results.update)
    leaks = widget_leaks(panel.widget)
    text = widget_text(panel.widget)
    assert h("server") in text and h("raw-message") in text
    if schema != "unsupported":
        assert h("raw-description") in text and h("raw-bool-title") in text and h("raw-enumnames") in text
        assert h("preset") in text  # the preset answer, as a text box value
    if schema != "names":
        assert "[nested-title]" in text  # the schema in the JSON editor's <pre>, as text
    button = "Send answers" if schema == "several" else "Decline"
    for b in _walk_buttons(panel.widget):
        if b.description == button:
            b.click()
            break
    assert panel.sent and results
    leaks += widget_leaks(panel.widget)  # the summary that replaces the form
    assert not leaks, "\n".join(leaks)
    assert h("raw-message") in widget_text(panel.widget)


def _walk_buttons(root: w.Widget) -> Iterator[w.Button]:
    for child in _widget_children(root):
        if isinstance(child, w.Button):
            yield child
        yield from _walk_buttons(child)


def test_summary_and_refusal_html() -> None:
    from mcp.types import ElicitResult

    from mcp_notebook.forms.widgets import summary_html
    from mcp_notebook.notebook.live_view import refused_html

    questions = [_hostile_question(HOSTILE_SCHEMA_NAMES, h("summary-message"), h("summary-key"))]
    summary = summary_html(
        h("summary-server"), {h("summary-key"): ElicitResult(action="accept", content={HOSTILE_VALUE: "x"})}, questions
    )
    summary += summary_html(h("summary-server"), {h("other-key"): ElicitResult(action="decline")})
    refused = refused_html(h("refused-label"))
    leaks = find_leaks(summary) + find_leaks(refused)
    assert not leaks, "\n".join(leaks)
    assert h("summary-message") in html_text(summary) and h("other-key") in html_text(summary)
    assert HOSTILE_VALUE in html_text(summary)  # a field *name*, shown as text
    assert h("refused-label") in html_text(refused)


def test_resume_offer_from_hostile_record() -> None:
    """A saved record's strings came from a server (and a notebook): the offer shows them as text."""
    from mcp_notebook.flows.record import SavedFlow
    from mcp_notebook.notebook.live_view import ResumeOffer

    record = {
        "id": h("record-id"),
        "server": {"name": h("record-server"), "target": JS_URL},
        "method": "tools/call",
        "name": h("record-name"),
        "round": h("record-round"),
    }
    with capture_output():
        offer = ResumeOffer(
            SavedFlow.from_dict({**record, "pending": {}}),
            [h("record-question")],
            h("record-age"),
            lambda: None,
            lambda: None,
        )
    try:
        leaks = widget_leaks(offer.box)
        assert not leaks, "\n".join(leaks)
        text = widget_text(offer.box)
        for tag in ("record-id", "record-server", "record-name", "record-question", "record-age"):
            assert h(tag) in text, tag
    finally:
        offer.box.close()


def test_record_review_and_confirm_panel_from_hostile_record() -> None:
    """A received notebook's record is shown whole before it may run: every string of it as text."""
    from mcp_notebook.flows.record import SavedFlow
    from mcp_notebook.notebook.consent import ConfirmResume, RecordReview

    record = {
        "id": h("planted-id"),
        "server": {
            "name": h("planted-server"),
            "target": f"-- touch {h('planted-command')}",
            "cwd": h("planted-cwd"),
            "env": [h("planted-env")],
        },
        "method": "tools/call",
        "name": h("planted-tool"),
        "arguments": {h("planted-key"): h("planted-value")},
        "withheld": [h("planted-withheld")],
    }
    http_record = {
        **record,
        "server": {
            "name": h("planted-server"),
            "target": JS_URL,
            "bearer_env": h("planted-token-var"),
            "headers": [h("planted-header")],
        },
    }
    for rec in (record, http_record):
        bundle = RecordReview(
            SavedFlow.from_dict({**rec, "round": 1, "pending": {}}), [h("planted-concern")]
        )._repr_mimebundle_()
        assert not find_leaks(bundle["text/html"]), find_leaks(bundle["text/html"])
        for tag in ("planted-id", "planted-server", "planted-tool", "planted-concern", "planted-withheld"):
            assert h(tag) in html_text(bundle["text/html"]) and h(tag) in bundle["text/plain"], tag
    ran: list[str] = []
    with capture_output():
        panel = ConfirmResume(
            SavedFlow.from_dict({**record, "round": 1, "pending": {}}),
            [h("planted-concern")],
            lambda: ran.append("ran"),
        )
    try:
        leaks = widget_leaks(panel.box)
        assert not leaks, "\n".join(leaks)
        text = widget_text(panel.box)
        for tag in ("planted-command", "planted-cwd", "planted-env", "planted-concern"):
            assert h(tag) in text, tag
        for tag in ("planted-key", "planted-value"):  # inside the arguments' JSON (quotes escaped there)
            assert f"[{tag}] <script>" in text, tag
        assert ran == []  # shown, not run
    finally:
        panel.box.close()


def _sampling_params() -> Any:
    from mcp.types import (
        CreateMessageRequestParams,
        ImageContent,
        ModelHint,
        ModelPreferences,
        SamplingMessage,
        TextContent,
    )

    return CreateMessageRequestParams(
        messages=[
            SamplingMessage(role="user", content=TextContent(type="text", text=h("review-message"))),
            SamplingMessage(
                role="user",
                content=[ImageContent(type="image", data=BAD_BASE64, mime_type='image/png" onerror="window.__pwned=1')],
            ),
        ],
        max_tokens=50,
        system_prompt=h("review-system"),
        model_preferences=ModelPreferences(hints=[ModelHint(name=h("review-hint"))]),
        stop_sequences=[h("review-stop")],
        metadata={h("review-meta-key"): h("review-meta")},
    )


def _sampling_result() -> Any:
    from mcp.types import CreateMessageResult, TextContent

    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text=h("review-reply")),
        model=h("review-model"),
        stop_reason=h("review-stop-reason"),
    )


def test_sampling_review_panels_and_bundles() -> None:
    from mcp_notebook.notebook.review import (
        HumanReply,
        ReplyReview,
        RequestReview,
        reply_html,
        request_html,
        sampling_bundle,
    )
    from mcp_notebook.sampling.router import Choice, ModelConfig

    params, result = _sampling_params(), _sampling_result()
    choice = Choice(ModelConfig("echo", "echo"), h("review-why"))
    delivered: list[Any] = []
    panels = [
        RequestReview(h("review-server"), h("review-key"), params, choice, ["echo"], delivered.append),
        ReplyReview(h("review-server"), h("review-key"), result, choice, delivered.append),
        HumanReply(h("review-server"), h("review-key"), params, ModelConfig("me", "human"), delivered.append),
    ]
    htmls = [
        request_html(h("review-server"), h("review-key"), params, choice),
        reply_html(result),
        sampling_bundle(h("review-server"), h("review-key"), params, choice, None)["text/html"],
        sampling_bundle(h("review-server"), h("review-key"), params, choice, result)["text/html"],
    ]
    leaks = [leak for x in htmls for leak in find_leaks(x)]
    for panel in panels:
        leaks += widget_leaks(panel.widget)
    assert not leaks, "\n".join(leaks)
    text = "\n".join(html_text(x) for x in htmls) + "\n".join(widget_text(p.widget) for p in panels)
    for tag in ("review-message", "review-system", "review-server", "review-reply", "review-model", "review-why"):
        assert h(tag) in text, tag
    # deny / decline / send: the summaries that replace the panels stay inert too
    panels[0].deny()
    panels[1].deny()
    for b in _walk_buttons(panels[2].widget):
        if b.description == "Decline":
            b.click()
    leaks = [leak for p in panels for leak in widget_leaks(p.widget)]
    assert not leaks, "\n".join(leaks)
    assert len(delivered) == 3


def test_payloads_are_what_the_docs_say() -> None:
    assert FLAG == "__pwned" and all(FLAG in p for p in PAYLOADS)
    assert all(p in HOSTILE for p in PAYLOADS)


def test_a_hostile_www_authenticate_challenge_is_only_text(shell: Any) -> None:
    """A 401's ``WWW-Authenticate`` is the server's text: it reaches the error message as given, never HTML."""
    import http.server

    from mcp_notebook.errors import FlowError

    challenge = 'Bearer realm="<script>window.__pwned=1</script><img src=x onerror=window.__pwned=1>"'

    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.send_response(401)
            self.send_header("WWW-Authenticate", challenge)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_DELETE = do_POST  # noqa: N815 - http.server's method names

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with capture_output() as shown, pytest.raises(FlowError) as info:
            shell.run_line_magic("mcp", f"connect hostile_auth http://127.0.0.1:{server.server_port}/mcp")
    finally:
        server.shutdown()
        server.server_close()
    error = info.value
    assert error.kind == "auth_required" and error.details["status"] == 401
    assert error.details["www_authenticate"] == challenge and challenge in str(error)  # text, as sent
    for output in shown.outputs:
        html = output.data.get("text/html", "")
        assert not find_leaks(html), find_leaks(html)
