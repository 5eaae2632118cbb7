"""Elicitation forms, unit level: real widgets, a real flow engine, a real in-process server.

Every test builds the form the user would see (``ElicitationPanel`` from the requested schema),
sets widget values the way a person does (types text, picks an option, ticks boxes), presses the
button, and asserts the exact content the server received, types included. The server is a
low-level MCP ``Server`` defined here that asks with the schema it is given and echoes what
came back as JSON: on 2026-07-28 it returns the question (``InputRequiredResult``), on the 2025
generation it asks over the back-channel, so both generations meet the same form.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import html
import http.server
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import ipywidgets as w
import pytest
from mcp.server import Server
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    InputRequiredResult,
    ListToolsResult,
    TextContent,
    Tool,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from mcp_notebook.errors import FlowError
from mcp_notebook.flows.ui import HeadlessUI
from mcp_notebook.forms.model import Answers, FormModel, Question, wire_problem
from mcp_notebook.forms.widgets import ElicitationPanel, FieldWidget, url_html
from mcp_notebook.session.session import Session

GENERATIONS = ["auto", "legacy"]  # auto negotiates 2026-07-28 in-process; legacy is 2025-11-25


# ---------------------------------------------------------------------- the echoing server
async def _list_tools(ctx: Any, params: Any) -> ListToolsResult:
    anything = {"type": "object"}
    return ListToolsResult(
        tools=[
            Tool(name="ask", input_schema=anything),  # {schema, message}: one form
            Tool(name="ask_many", input_schema=anything),  # {schemas: [...]}: several forms in one round
            Tool(name="ask_url", input_schema=anything),  # {url, message}: URL mode
        ]
    )


async def _call_tool(ctx: Any, params: Any) -> CallToolResult | InputRequiredResult:
    args = params.arguments or {}
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    if params.name == "ask_url":
        ask = ElicitRequestURLParams(message=args["message"], url=args["url"])
        requests = {"open": ask}
    elif params.name == "ask_many":
        requests = {
            f"q{i}": ElicitRequestFormParams(message=f"question {i}", requested_schema=s)
            for i, s in enumerate(args["schemas"])
        }
    else:
        requests = {
            "q": ElicitRequestFormParams(message=args.get("message", "Please fill in"), requested_schema=args["schema"])
        }
    answers: dict[str, Any] = {}
    if modern:
        got = params.input_responses or {}
        if not got:
            return InputRequiredResult(input_requests={k: ElicitRequest(params=p) for k, p in requests.items()})
        answers = got
    else:
        for key, p in requests.items():
            if isinstance(p, ElicitRequestURLParams):
                answers[key] = await ctx.session.elicit_url(p.message, p.url, "e-1", related_request_id=ctx.request_id)
            else:
                answers[key] = await ctx.session.elicit_form(
                    p.message, p.requested_schema, related_request_id=ctx.request_id
                )
    echoed = {k: {"action": a.action, "content": a.content} for k, a in answers.items()}
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(echoed))])


ECHO_FORMS = Server("forms", on_list_tools=_list_tools, on_call_tool=_call_tool)


# ---------------------------------------------------------------------- a person at the form
class PersonAtTheForm(HeadlessUI):
    """A person at the form (``FlowUI.ask``): builds the real panel and lets ``fill`` act on it like a person.

    ``fill(panel)`` sets widget values and presses buttons. Panels are kept for inspection.
    """

    def __init__(self, fill: Callable[[ElicitationPanel], None]) -> None:
        self.fill = fill
        self.panels: list[ElicitationPanel] = []

    async def ask(self, flow: Any, questions: list[Question], answers: Answers) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[dict[str, Any]] = loop.create_future()
        panel = ElicitationPanel(flow.conn.name, questions, answers, lambda results: done.set_result(results))
        self.panels.append(panel)
        self.fill(panel)
        assert panel.sent, "the person left the form without sending it"
        return await done


@pytest.fixture(scope="module")
def hub() -> Iterator[Session]:
    h = Session()
    for generation in GENERATIONS:
        h.connect(f"forms_{generation}", ECHO_FORMS, protocol=generation)
    yield h
    h.close()


def run(
    hub: Session,
    generation: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    fill: Callable[[ElicitationPanel], None] | None = None,
    answers: Answers | None = None,
) -> tuple[dict[str, Any], PersonAtTheForm | None]:
    """Call ``tool`` and return what the server received (per question key) and the UI."""
    ui = PersonAtTheForm(fill) if fill is not None else None
    conn = hub.registry.get(f"forms_{generation}")
    flow = hub.start("tools/call", conn, tool, arguments, answers=answers or Answers(), ui=ui, save=False)
    result = flow.result(timeout=30)
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text), ui


def received(
    hub: Session, generation: str, schema: dict[str, Any], fill: Callable[[ElicitationPanel], None] | None, **kw: Any
) -> dict[str, Any]:
    """The one answer the server got for a one-question form (``fill=None``: headless)."""
    got, _ = run(hub, generation, "ask", {"schema": schema, "message": "Please fill in"}, fill=fill, **kw)
    return got["q"]


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def press(panel: ElicitationPanel, description: str) -> None:
    panel.button(description).click()


def errors_of(panel: ElicitationPanel) -> dict[str, str]:
    return {fw.spec.name: fw.error.value for box in panel.boxes for fw in box.fields if fw.error.value}


# ---------------------------------------------------------------------- one test per field kind
def _type(fw: FieldWidget, text: str) -> None:
    fw.input.value = text


def _tick(fw: FieldWidget, *labels: str) -> None:
    for _value, box in fw.choices:
        if box.description in labels:
            box.value = True


KINDS: dict[str, tuple[dict[str, Any], Callable[[FieldWidget], None], Any]] = {
    # kind: (property schema, what the person does, what the server must receive)
    "string": ({"type": "string"}, lambda f: _type(f, "Ada Lovelace"), "Ada Lovelace"),
    "email": ({"type": "string", "format": "email"}, lambda f: _type(f, "ada@example.com"), "ada@example.com"),
    "uri": (
        {"type": "string", "format": "uri"},
        lambda f: _type(f, "https://example.com/x?y=1"),
        "https://example.com/x?y=1",
    ),
    "date": (
        {"type": "string", "format": "date"},
        lambda f: setattr(f.input, "value", dt.date(1815, 12, 10)),
        "1815-12-10",
    ),
    "date-time": (
        {"type": "string", "format": "date-time"},
        lambda f: _type(f, "2026-07-28T09:30:00Z"),
        "2026-07-28T09:30:00Z",
    ),
    "integer": ({"type": "integer"}, lambda f: _type(f, "42"), 42),
    "number": ({"type": "number"}, lambda f: _type(f, "0.25"), 0.25),
    "boolean": ({"type": "boolean"}, lambda f: setattr(f.input, "value", True), True),
    "enum": ({"type": "string", "enum": ["red", "green", "blue"]}, lambda f: setattr(f.input, "label", "blue"), "blue"),
    "oneOf": (
        {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        lambda f: setattr(f.input, "label", "Large"),
        "l",
    ),
    "enumNames": (
        {"type": "string", "enum": ["free", "pro"], "enumNames": ["Free tier", "Pro tier"]},
        lambda f: setattr(f.input, "label", "Pro tier"),
        "pro",
    ),
    "multi-enum": (
        {"type": "array", "items": {"type": "string", "enum": ["cheese", "ham", "olives"]}},
        lambda f: _tick(f, "olives", "cheese"),
        ["cheese", "olives"],
    ),
    "multi-anyOf": (
        {
            "type": "array",
            "items": {"anyOf": [{"const": "wifi", "title": "Wi-Fi"}, {"const": "parking", "title": "Parking space"}]},
        },
        lambda f: _tick(f, "Parking space"),
        ["parking"],
    ),
    "multi-long-list": (
        {"type": "array", "items": {"type": "string", "enum": [f"opt{i}" for i in range(20)]}},
        lambda f: setattr(f.input, "label", ("opt3", "opt17")),
        ["opt3", "opt17"],
    ),
}


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_field_kind_sends_typed_value(hub: Session, kind: str, generation: str) -> None:
    prop, act, expected = KINDS[kind]

    def fill(panel: ElicitationPanel) -> None:
        act(panel.field("x"))
        press(panel, "Accept")

    answer = received(hub, generation, obj(x=prop), fill)
    assert answer == {"action": "accept", "content": {"x": expected}}
    assert type(answer["content"]["x"]) is type(expected)


def test_widgets_fit_the_kinds() -> None:
    schema = obj(**{k.replace("-", "_"): p for k, (p, _, _) in KINDS.items()})
    panel = ElicitationPanel("s", [_question(schema)], Answers(), lambda r: None)
    widget_of = {fw.spec.name: type(fw.input) for fw in panel.boxes[0].fields}
    assert widget_of == {
        "string": w.Text, "email": w.Text, "uri": w.Text, "date": w.DatePicker, "date_time": w.Text, "integer": w.Text,
        "number": w.Text, "boolean": w.Checkbox, "enum": w.Dropdown, "oneOf": w.Dropdown, "enumNames": w.Dropdown,
        "multi_enum": w.Box, "multi_anyOf": w.Box, "multi_long_list": w.SelectMultiple,
    }  # fmt: skip
    assert panel.field("email").input.placeholder == "name@example.com"
    assert [label for label, _ in panel.field("oneOf").input.options] == [
        "—",
        "Small",
        "Large",
    ]  # titles shown, optional
    assert [box.description for _, box in panel.field("multi_anyOf").choices] == ["Wi-Fi", "Parking space"]


def _question(schema: dict[str, Any], message: str = "Please fill in", key: str = "q") -> Question:
    return Question(
        key, ElicitRequestFormParams(message=message, requested_schema=schema), FormModel.from_schema(schema, message)
    )


def test_labels_help_required_and_defaults() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "title": "Your name",
                "description": "As on your passport",
                "minLength": 1,
                "maxLength": 40,
            },
            "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 36},
            "ratio": {"type": "number", "default": 0.5},
            "day": {"type": "string", "format": "date", "default": "2026-07-28"},
            "ok": {"type": "boolean", "default": True},
            "size": {"type": "string", "enum": ["s", "m"], "default": "m"},
            "tags": {
                "type": "array",
                "items": {"enum": ["a", "b", "c"]},
                "default": ["b"],
                "minItems": 1,
                "maxItems": 2,
            },
        },
        "required": ["name", "size"],
    }
    panel = ElicitationPanel("my-server", [_question(schema, "Who are you?")], Answers(), lambda r: None)
    header = panel.boxes[0].header.value
    assert "my-server" in header and "Who are you?" in header
    name = panel.field("name")
    assert "Your name" in name.label.value and 'title="required"' in name.label.value
    assert "As on your passport" in name.help.value and "1–40 characters" in name.help.value
    assert 'title="required"' not in panel.field("age").label.value
    assert "a whole number from 0 to 150" in panel.field("age").help.value
    assert "choose 1 to 2" in panel.field("tags").help.value
    assert panel.field("age").input.value == "36"
    assert panel.field("ratio").input.value == "0.5"
    assert panel.field("day").input.value == dt.date(2026, 7, 28)
    assert panel.field("ok").input.value is True
    assert panel.field("size").input.value == "m" and panel.field("size").input.options[0] == (
        "s",
        "s",
    )  # required + default: no blank
    assert [v for v, box in panel.field("tags").choices if box.value] == ["b"]


def test_presets_prefill_the_form(hub: Session) -> None:
    seen: dict[str, Any] = {}

    def fill(panel: ElicitationPanel) -> None:
        seen.update(
            name=panel.field("name").input.value,
            n=panel.field("n").input.value,
            tags=[v for v, b in panel.field("tags").choices if b.value],
        )
        press(panel, "Accept")

    schema = obj(name={"type": "string"}, n={"type": "integer"}, tags={"type": "array", "items": {"enum": ["a", "b"]}})
    answer = received(hub, "auto", schema, fill, answers=Answers(fields={"name": "Bo", "n": "7", "tags": "a,b"}))
    assert seen == {"name": "Bo", "n": "7", "tags": ["a", "b"]}
    assert answer["content"] == {"name": "Bo", "n": 7, "tags": ["a", "b"]}


# ---------------------------------------------------------------------- one test per constraint
CONSTRAINTS: dict[str, tuple[dict[str, Any], Callable[[FieldWidget], None], str, Callable[[FieldWidget], None], Any]] = {
    # constraint: (property, bad input, message shown, good input at the boundary, value received)
    "minLength": ({"type": "string", "minLength": 3}, lambda f: _type(f, "ab"), "at least 3 characters", lambda f: _type(f, "abc"), "abc"),
    "maxLength": ({"type": "string", "maxLength": 3}, lambda f: _type(f, "abcd"), "at most 3 characters", lambda f: _type(f, "abc"), "abc"),
    "minimum-integer": ({"type": "integer", "minimum": 1}, lambda f: _type(f, "0"), "must be ≥ 1", lambda f: _type(f, "1"), 1),
    "maximum-integer": ({"type": "integer", "maximum": 150}, lambda f: _type(f, "151"), "must be ≤ 150", lambda f: _type(f, "150"), 150),
    "minimum-number": ({"type": "number", "minimum": 0.5}, lambda f: _type(f, "0.49"), "must be ≥ 0.5", lambda f: _type(f, "0.5"), 0.5),
    "maximum-number": ({"type": "number", "maximum": 1}, lambda f: _type(f, "1.01"), "must be ≤ 1", lambda f: _type(f, "1"), 1),
    "integer-type": ({"type": "integer"}, lambda f: _type(f, "4.5"), "expected a whole number", lambda f: _type(f, "4"), 4),
    "number-type": ({"type": "number"}, lambda f: _type(f, "lots"), "expected a number", lambda f: _type(f, "-3e2"), -300.0),
    "email-format": ({"type": "string", "format": "email"}, lambda f: _type(f, "ada-at-example"), "not a valid e-mail address",
                     lambda f: _type(f, "a@b.io"), "a@b.io"),
    "uri-format": ({"type": "string", "format": "uri"}, lambda f: _type(f, "not a uri"), "not a valid URI", lambda f: _type(f, "urn:isbn:0451450523"),
                   "urn:isbn:0451450523"),
    "date-time-format": ({"type": "string", "format": "date-time"}, lambda f: _type(f, "2026-13-01T00:00"), "not a valid date and time",
                         lambda f: _type(f, "2026-12-01T00:00:00+01:00"), "2026-12-01T00:00:00+01:00"),
    "minItems": ({"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 2}, lambda f: _tick(f, "a"), "choose at least 2",
                 lambda f: _tick(f, "a", "c"), ["a", "c"]),
    "maxItems": ({"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 1}, lambda f: _tick(f, "a", "b"), "choose at most 1",
                 lambda f: setattr(f.choices[1][1], "value", False), ["a"]),
}  # fmt: skip


@pytest.mark.parametrize("constraint", list(CONSTRAINTS))
def test_constraint_blocks_until_fixed(hub: Session, constraint: str) -> None:
    prop, bad, message, good, expected = CONSTRAINTS[constraint]
    shown: list[str] = []

    def fill(panel: ElicitationPanel) -> None:
        bad(panel.field("x"))
        press(panel, "Accept")
        assert not panel.sent  # nothing went to the server
        shown.append(errors_of(panel).get("x", ""))
        shown.append(panel.status.value)
        good(panel.field("x"))
        press(panel, "Accept")

    answer = received(hub, "auto", obj(x=prop), fill)
    assert message in shown[0]
    assert "nothing sent" in shown[1]
    assert answer == {"action": "accept", "content": {"x": expected}}
    assert type(answer["content"]["x"]) is type(expected)


@pytest.mark.parametrize("kind", ["string", "email", "integer", "number", "enum", "oneOf", "date"])
def test_required_field_blocks_until_filled(hub: Session, kind: str) -> None:
    prop, act, expected = KINDS[kind]
    schema = {**obj(x=prop), "required": ["x"]}
    shown: list[dict[str, str]] = []

    def fill(panel: ElicitationPanel) -> None:
        press(panel, "Accept")
        shown.append(errors_of(panel))
        act(panel.field("x"))
        press(panel, "Accept")

    answer = received(hub, "auto", schema, fill)
    assert "required" in shown[0]["x"]
    assert answer["content"] == {"x": expected}


def test_required_multi_select_sends_empty_list_when_allowed(hub: Session) -> None:
    schema = {**obj(x={"type": "array", "items": {"enum": ["a", "b"]}}), "required": ["x"]}
    assert received(hub, "auto", schema, lambda p: press(p, "Accept"))["content"] == {"x": []}


def test_several_errors_shown_at_once_and_cleared(hub: Session) -> None:
    schema = {
        **obj(a={"type": "string", "format": "email"}, b={"type": "integer", "maximum": 3}, c={"type": "string"}),
        "required": ["c"],
    }
    snapshots: list[dict[str, str]] = []

    def fill(panel: ElicitationPanel) -> None:
        _type(panel.field("a"), "nope")
        _type(panel.field("b"), "x")
        press(panel, "Accept")
        snapshots.append(errors_of(panel))
        _type(panel.field("a"), "a@b.co")
        _type(panel.field("b"), "3")
        _type(panel.field("c"), "ok")
        press(panel, "Accept")

    answer = received(hub, "auto", schema, fill)
    assert set(snapshots[0]) == {"a", "b", "c"}
    assert answer["content"] == {"a": "a@b.co", "b": 3, "c": "ok"}


def test_empty_optional_fields_are_not_sent(hub: Session) -> None:
    schema = obj(s={"type": "string"}, n={"type": "number"}, c={"type": "string", "enum": ["x"]}, m={"type": "array", "items": {"enum": ["x"]}},
                 d={"type": "string", "format": "date"}, flag={"type": "boolean"})  # fmt: skip
    answer = received(hub, "auto", schema, lambda p: press(p, "Accept"))
    assert answer["content"] == {"flag": False}  # an unchecked box is an answer: false


# ---------------------------------------------------------------------- decline / cancel
@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("button", ["Decline", "Cancel"])
def test_decline_and_cancel_reach_the_server(hub: Session, generation: str, button: str) -> None:
    schema = {**obj(x={"type": "string", "minLength": 5}), "required": ["x"]}

    def fill(panel: ElicitationPanel) -> None:
        _type(panel.field("x"), "no")  # invalid, but declining needs no valid form
        press(panel, button)

    answer = received(hub, generation, schema, fill)
    assert answer == {"action": "decline" if button == "Decline" else "cancel", "content": None}


# ---------------------------------------------------------------------- several elicitations, one panel
def test_several_elicitations_one_panel_each_with_its_choice(hub: Session) -> None:
    schemas = [obj(a={"type": "string"}), {**obj(b={"type": "integer"}), "required": ["b"]}, obj(c={"type": "boolean"})]

    def fill(panel: ElicitationPanel) -> None:
        assert len(panel.boxes) == 3 and [b.description for b in panel.buttons] == ["Send answers"]
        assert ["question 0" in b.header.value for b in panel.boxes] == [True, False, False]
        _type(panel.field("a", 0), "alpha")
        panel.boxes[1].choice.value = "decline"  # its required field may stay empty
        panel.boxes[2].choice.value = "cancel"
        press(panel, "Send answers")

    got, ui = run(hub, "auto", "ask_many", {"schemas": schemas}, fill=fill)
    assert got == {
        "q0": {"action": "accept", "content": {"a": "alpha"}},
        "q1": {"action": "decline", "content": None},
        "q2": {"action": "cancel", "content": None},
    }
    assert ui is not None and len(ui.panels) == 1


def test_one_invalid_question_holds_back_the_whole_round(hub: Session) -> None:
    schemas = [obj(a={"type": "string"}), {**obj(b={"type": "integer"}), "required": ["b"]}]
    sent_first: list[bool] = []

    def fill(panel: ElicitationPanel) -> None:
        _type(panel.field("a", 0), "alpha")
        press(panel, "Send answers")
        sent_first.append(panel.sent)
        _type(panel.field("b", 1), "2")
        press(panel, "Send answers")

    got, _ = run(hub, "auto", "ask_many", {"schemas": schemas}, fill=fill)
    assert sent_first == [False]
    assert got == {
        "q0": {"action": "accept", "content": {"a": "alpha"}},
        "q1": {"action": "accept", "content": {"b": 2}},
    }


def test_back_channel_questions_each_get_the_same_form(hub: Session) -> None:
    """A 2025 server asks one question at a time over the back-channel: one panel each."""
    schemas = [obj(a={"type": "string"}), obj(b={"type": "integer"})]

    def fill(panel: ElicitationPanel) -> None:
        name = panel.boxes[0].fields[0].spec.name
        _type(panel.field(name), "x" if name == "a" else "5")
        press(panel, "Accept")

    got, ui = run(hub, "legacy", "ask_many", {"schemas": schemas}, fill=fill)
    assert got == {"q0": {"action": "accept", "content": {"a": "x"}}, "q1": {"action": "accept", "content": {"b": 5}}}
    assert ui is not None and len(ui.panels) == 2


# ---------------------------------------------------------------------- after sending
def test_summary_names_action_and_fields_never_values(hub: Session) -> None:
    schema = obj(secret={"type": "string"}, pin={"type": "integer"})
    panels: list[ElicitationPanel] = []

    def fill(panel: ElicitationPanel) -> None:
        panels.append(panel)
        _type(panel.field("secret"), "hunter2-swordfish")
        _type(panel.field("pin"), "8086")
        inputs = [fw.input for fw in panel.boxes[0].fields]
        press(panel, "Accept")
        assert all(i.comm is None for i in inputs)  # closed: their values leave the widget state

    received(hub, "auto", schema, fill)
    (summary,) = panels[0].widget.children
    text = summary.value
    assert "accepted" in text and "pin, secret" in text and "forms_auto" in text and "Please fill in" in text
    assert "hunter2" not in text and "8086" not in text
    assert all(b.disabled for b in panels[0].buttons)
    assert panels[0].submit("accept") is False  # a second press sends nothing


def test_declined_summary() -> None:
    results: dict[str, Any] = {}
    panel = ElicitationPanel("srv", [_question(obj(x={"type": "string"}))], Answers(), results.update)
    _type(panel.field("x"), "typed but declined")
    panel.button("Decline").click()
    assert results["q"].action == "decline" and results["q"].content is None
    assert "declined" in panel.widget.children[0].value and "typed but" not in panel.widget.children[0].value


# ---------------------------------------------------------------------- URL mode
class _CountingHandler(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:  # noqa: N802 - http.server's method name
        type(self).hits += 1
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def counting_site() -> Iterator[str]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _CountingHandler)
    _CountingHandler.hits = 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/authorize?state=abc"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("generation", GENERATIONS)
def test_url_mode_done_accepts_and_the_kernel_never_fetches(hub: Session, generation: str, counting_site: str) -> None:
    seen: list[str] = []

    def fill(panel: ElicitationPanel) -> None:
        assert [b.description for b in panel.buttons] == ["Done", "Decline", "Cancel"]
        seen.append(panel.boxes[0].box.children[1].value)
        press(panel, "Done")

    got, _ = run(hub, generation, "ask_url", {"url": counting_site, "message": "Sign in to continue"}, fill=fill)
    assert got == {"open": {"action": "accept", "content": None}}
    assert '<b class="mcp-domain"' in seen[0] and ">127.0.0.1</b>" in seen[0]
    assert f'href="{counting_site.replace("&", "&amp;")}" target="_blank"' in seen[0]
    assert _CountingHandler.hits == 0


def test_url_html_highlights_domain_and_warns_on_punycode() -> None:
    plain = url_html("https://login.example.com/path?q=1")
    assert ">https://login.example.com/path?q=1</div>" in plain  # the whole URL as sent
    assert 'Opens: <b class="mcp-domain"' in plain and ">login.example.com</b>" in plain
    assert "punycode" not in plain and "mcp-url-warning" not in plain
    spoof = url_html("https://xn--pple-43d.com/login")
    assert "punycode" in spoof and "аpple.com" in spoof  # the Cyrillic 'а' spelled out
    script = url_html("javascript:alert(1)")
    assert "<a " not in script and "Unusual scheme" in script


# ---------------------------------------------------------------------- outside the subset: JSON editor
FALLBACKS = {
    "$ref": (  # on the wire only type/properties/required survive: "$defs" is lost, the "$ref" cannot be followed
        {"type": "object", "$defs": {"C": {"enum": ["x", "y"]}}, "properties": {"c": {"$ref": "#/$defs/C", "type": "string"}}, "required": ["c"]},
        "uses a reference ($ref)",
        {"c": 5},
        "must be text",
        {"c": "y"},
    ),
    "local-$ref": (  # a reference inside what arrives is followed and checked
        obj(a={"type": "string", "enum": ["x", "y"]}, b={"$ref": "#/properties/a"}),
        "uses a reference ($ref)",
        {"b": "z"},
        "not one of the choices",
        {"a": "x", "b": "y"},
    ),
    "unknown-type": (
        obj(when={"type": ["string", "null"], "default": "now"}),
        "type [\"string\", \"null\"]",
        {"when": 3},
        "must be text or empty",
        {"when": None},
    ),
    "free-list": (
        obj(tags={"type": "array", "items": {"type": "string"}, "maxItems": 2}),
        "list without a fixed set of choices",
        {"tags": ["a", "b", "c"]},
        "at most 2",
        {"tags": ["a", "b"]},
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(FALLBACKS))
def test_schema_outside_the_subset_gets_a_json_editor(hub: Session, case: str) -> None:
    schema, reason, bad, message, good = FALLBACKS[case]
    shown: list[str] = []

    def fill(panel: ElicitationPanel) -> None:
        box = panel.boxes[0]
        assert box.json_editor is not None and not box.fields
        shown.append(html.unescape(box.box.children[1].value))  # the note
        box.json_editor.value = "{not json"
        press(panel, "Accept")
        shown.append(box.form_error.value)
        box.json_editor.value = json.dumps(bad)
        press(panel, "Accept")
        shown.append(box.form_error.value)
        box.json_editor.value = json.dumps(good)
        press(panel, "Accept")

    answer = received(hub, "auto", schema, fill)
    assert "outside MCP's form subset" in shown[0] and reason in shown[0]
    assert "not valid JSON" in shown[1]
    assert message in shown[2]
    assert answer == {"action": "accept", "content": good}


def test_nested_object_cannot_be_sent_but_can_be_declined(hub: Session) -> None:
    schema = obj(address={"type": "object", "properties": {"city": {"type": "string"}}})
    shown: list[str] = []

    def fill(panel: ElicitationPanel) -> None:
        box = panel.boxes[0]
        shown.append(box.box.children[1].value)
        box.json_editor.value = json.dumps({"address": {"city": "Paris"}})  # type: ignore[union-attr]
        press(panel, "Accept")
        shown.append(box.form_error.value)
        press(panel, "Decline")

    answer = received(hub, "auto", schema, fill)
    assert "nested object" in shown[0]
    assert "cannot be sent" in shown[1]
    assert answer == {"action": "decline", "content": None}


def test_json_editor_prefilled_with_defaults_and_presets() -> None:
    schema = {
        "type": "object",
        "$defs": {},
        "properties": {"a": {"type": "string", "default": "d"}, "b": {"type": "integer"}},
    }
    panel = ElicitationPanel("s", [_question(schema)], Answers(fields={"b": 2}), lambda r: None)
    assert json.loads(panel.boxes[0].json_editor.value) == {"a": "d", "b": 2}  # type: ignore[union-attr]


# ---------------------------------------------------------------------- headless and a person send the same
def _everything_schema() -> dict[str, Any]:
    from mcp.server.elicitation import render_elicitation_schema

    from mcp_notebook.demo import Everything

    return render_elicitation_schema(Everything)


EVERYTHING_VALUES = {
    "name": "Grace", "email": "grace@navy.mil", "homepage": "https://example.org/cobol", "birthday": "1906-12-09",
    "meeting": "2026-07-28T10:00:00Z", "age": 85, "ratio": 0.75, "subscribe": False, "color": "red", "size": "l", "tier": "pro",
    "toppings": ["ham", "olives"], "extras": ["wifi", "parking"],
}  # fmt: skip


def _fill_like_a_person(panel: ElicitationPanel, values: dict[str, Any]) -> None:
    """Type, pick and tick each value through the widgets (what the user sees, titles included)."""
    for name, value in values.items():
        fw = panel.field(name)
        if isinstance(fw.input, w.DatePicker):
            fw.input.value = dt.date.fromisoformat(value)
        elif isinstance(fw.input, w.Dropdown):
            fw.input.label = dict(fw.spec.options)[value]
        elif fw.choices:
            for option, box in fw.choices:
                box.value = option in value
        elif isinstance(fw.input, w.Checkbox):
            fw.input.value = value
        else:
            fw.input.value = str(value)


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("mode", ["every-value", "defaults"])
def test_headless_and_person_send_identical_content(hub: Session, generation: str, mode: str) -> None:
    schema = _everything_schema()
    values = EVERYTHING_VALUES if mode == "every-value" else {"name": "Grace"}

    def fill(panel: ElicitationPanel) -> None:
        _fill_like_a_person(panel, values)
        press(panel, "Accept")

    person = received(hub, generation, schema, fill)
    headless_answers = Answers(fields=dict(values), accept_defaults=mode == "defaults")
    headless = received(hub, generation, schema, None, answers=headless_answers)
    assert person == headless
    if mode == "every-value":
        assert person["content"] == EVERYTHING_VALUES
    else:
        assert (
            person["content"]["age"] == 36
            and person["content"]["extras"] == []
            and person["content"]["subscribe"] is True
        )


def test_demo_ask_everything_person_and_headless_agree() -> None:
    """The demo's real `Resolve` tool (pydantic on the server side) gets the same from both."""
    h = Session()
    h.connect("demo_forms", "mcp_notebook.demo:demo")
    try:
        conn = h.registry.get("demo_forms")
        ui = PersonAtTheForm(lambda p: (_fill_like_a_person(p, EVERYTHING_VALUES), press(p, "Accept")))
        person = h.start("tools/call", conn, "ask_everything", {}, ui=ui, save=False).result(timeout=30)
        headless = h.start(
            "tools/call", conn, "ask_everything", {}, answers=Answers(fields=dict(EVERYTHING_VALUES)), save=False
        ).result(timeout=30)
        assert person.content[0].text == headless.content[0].text
        assert json.loads(person.content[0].text)["toppings"] == ["ham", "olives"]
    finally:
        h.close()


def test_headless_refuses_what_the_form_refuses(hub: Session) -> None:
    schema = obj(age={"type": "integer", "maximum": 150})
    with pytest.raises(FlowError) as info:
        run(hub, "auto", "ask", {"schema": schema}, answers=Answers(fields={"age": 200}))
    assert "age: must be ≤ 150" in str(info.value)


# ---------------------------------------------------------------------- the model on its own
def test_model_reasons_for_unsupported_schemas() -> None:
    cases = {
        "nested object": obj(a={"type": "object"}),
        "reference ($ref)": {"type": "object", "properties": {"a": {"$ref": "#/x"}}},
        'type "null"': obj(a={"type": "null"}),
        "combines sub-schemas (anyOf)": {"type": "object", "anyOf": [{}], "properties": {}},
        "not an object": {"type": "array"},
    }
    for reason, schema in cases.items():
        model = FormModel.from_schema(schema)
        assert not model.supported and reason in model.reason, (reason, model.reason)
    assert FormModel.from_schema(
        obj(ip={"type": "string", "format": "ipv4"})
    ).supported  # other formats: text, still checked
    assert FormModel.from_schema(obj(ip={"type": "string", "format": "ipv4"})).validate({"ip": "999.1.1.1"}) == {
        "ip": "not a valid ipv4"
    }


def test_wire_problem() -> None:
    assert (
        wire_problem("a")
        == wire_problem(1)
        == wire_problem(1.5)
        == wire_problem(True)
        == wire_problem(None)
        == wire_problem(["a"])
        == ""
    )
    assert wire_problem({"a": 1}) and wire_problem([1, 2])


def test_answer_text_field_keeps_the_text_as_typed() -> None:
    """``--answer value=1.50``: a string field gets "1.50", a number field 1.5 (issue 11, item 9)."""
    from mcp_notebook.magics.grammar import build_parsers, call_options

    ns, _ = build_parsers()["call"].parse(
        ["s.t", "--answer", "value=1.50", "--answer", "n=1.50", "--answer", "code=1e3", "--answer", "flag=true"]
    )
    options = call_options(ns)
    assert options.answers.fields == {"value": 1.5, "n": 1.5, "code": 1000.0, "flag": True}
    model = FormModel.from_schema(
        obj(value={"type": "string"}, n={"type": "number"}, code={"type": "string"}, flag={"type": "string"})
    )
    assert model.headless_content(options.answers) == {"value": "1.50", "n": 1.5, "code": "1e3", "flag": "true"}
    assert model.headless_content(options.fresh_answers()) == {"value": "1.50", "n": 1.5, "code": "1e3", "flag": "true"}
    panel = ElicitationPanel("s", [_question(model.schema, "?")], options.answers, lambda r: None)
    assert panel.field("value").input.value == "1.50"


def test_inputs_are_labelled_with_their_titles() -> None:
    schema = obj(
        name={"type": "string", "title": "Full name"},
        age={"type": "integer", "title": "Age"},
        plan={"type": "string", "enum": ["a", "b"], "title": "Plan"},
        day={"type": "string", "format": "date", "title": "Day"},
        ok={"type": "boolean", "title": "Newsletter"},
    )
    panel = ElicitationPanel("s", [_question(schema, "?")], Answers(), lambda r: None)
    for field, title in [("name", "Full name"), ("age", "Age"), ("plan", "Plan"), ("day", "Day")]:
        control = panel.field(field).input
        assert (control.description, control.description_allow_html, control.style.description_width) == (
            title,
            False,
            "0px",
        )
        assert title in panel.field(field).label.value  # the visible label is unchanged
    ok = panel.field("ok")
    assert ok.input.description == "Newsletter" and "Newsletter" not in ok.label.value


def test_form_names_the_running_calls_when_the_asker_is_unknown() -> None:
    """Issue 11 item 2: the context line is ours, escaped, shown above the fields; no presets prefill."""
    from dataclasses import replace

    schema = {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}
    question = replace(
        _question(schema, "Which colour?"), context="2 calls are running on this server (s.<b>x</b> (1), s.y (2))"
    )
    panel = ElicitationPanel("s", [question], Answers(), lambda r: None)
    header = panel.boxes[0].header.value
    assert (
        "2 calls are running on this server (s.&lt;b&gt;x&lt;/b&gt; (1), s.y (2))" in header
        and "<b>x</b>" not in header
    )
    assert header.index("Which colour?") < header.index("2 calls are running")
    assert panel.field("colour").input.value == ""


def test_the_json_editor_refuses_nan_and_says_what_to_write(hub: Session) -> None:
    """Issue 36 item 6: ``NaN`` typed in the JSON editor passed every check and reached the server as ``null``."""
    schema = obj(x={"type": ["number", "null"]})
    shown: list[str] = []

    def fill(panel: ElicitationPanel) -> None:
        box = panel.boxes[0]
        assert box.json_editor is not None
        box.json_editor.value = '{"x": NaN}'
        press(panel, "Accept")
        shown.append(html.unescape(box.form_error.value))
        box.json_editor.value = '{"x": 1.5}'
        press(panel, "Accept")

    answer = received(hub, "auto", schema, fill)
    assert "NaN is not a finite number" in shown[0] and "write a finite number, or null" in shown[0]
    assert answer == {"action": "accept", "content": {"x": 1.5}}
