"""Elicitation requests as ipywidgets forms, inline in the cell that asked.

Built from ``forms.model.FormModel`` (the schema logic lives there, shared with headless runs, so
both send identical content for identical values). One widget per field kind:

=================================  ==========================================================
string (email, uri, date-time)     ``Text`` (placeholder and hint from the format/lengths)
string ``format: date``            ``DatePicker`` (sent as ``YYYY-MM-DD``)
integer / number                   ``Text`` typed to int / float (empty means "no answer";
                                   out-of-range values are shown as errors, never clamped)
boolean                            ``Checkbox``
enum / oneOf / enumNames           ``Dropdown`` of titles (a "—" entry when optional or unset)
array of enum / anyOf              one ``Checkbox`` per choice (``SelectMultiple`` beyond 12)
anything else                      a JSON ``Textarea`` with a note saying why
=================================  ==========================================================

Titles are labels, descriptions help text under the field with the constraints in words,
required fields carry a red ``*``, defaults and ``--answer`` presets are prefilled. On Accept the
values are typed and checked with ``jsonschema`` against the requested schema; problems appear
next to their fields and nothing is sent until the form is valid. Decline and Cancel send at
once. All questions of one round share one panel, each with its own choice, sent together.

URL-mode requests show the whole URL as the server sent it, then the host the browser will open
(read the WHATWG way by ``urls.read_url``, so ``\\`` or ``user@`` tricks cannot change it), with
warnings for userinfo, rewritten text, punycode ``xn--`` and look-alike names; the link (http and
https only, to the normalized URL) opens in a new tab on the user's click and the kernel never
fetches it; then Done (accept) / Decline / Cancel.

After sending, the panel turns into a summary naming the action and the fields, never the
values, and every input widget is closed so no answer stays in saved widget state.

Why this module is long: one widget per field kind of ``model.py`` and the URL-mode panel, which
all share the form's validation and layout.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from ..core.json_value import read_json
from ..core.limits import Limits
from ..core.redact import is_secret_name
from .model import CHECKBOX_LIMIT, Answers, FieldSpec, FormModel, Question, wire_problem

__all__ = ["ElicitationPanel", "FieldWidget", "in_send_order", "summary_html", "url_html"]

# Coloured text is the theme's accent mixed with the page's text colour: the bare accent (orange on Light's
# white, red on Dark's grey) is under WCAG AA's 4.5:1; mixed towards the text colour it reads in every theme.
_RED = "color-mix(in srgb, var(--jp-error-color1, #d32f2f) 75%, var(--jp-ui-font-color0, #000))"
_MUTED = "var(--jp-ui-font-color2, #616161)"
_WARN = "color-mix(in srgb, var(--jp-warn-color0, #e65100) 70%, var(--jp-ui-font-color0, #000))"
_LINK_STYLE = "color:var(--jp-content-link-color, #1976d2);text-decoration:underline;font-weight:600"
_REQUIRED = f'<span style="color:{_RED}" title="required">*</span>'
_CHECKBOX_LIMIT = CHECKBOX_LIMIT  # more choices than this: a SelectMultiple list instead of checkboxes
_ACTION_WORDS = {"accept": "accepted", "decline": "declined", "cancel": "cancelled"}


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", name)


def _small(text: str, colour: str = _MUTED) -> str:
    return f'<small style="color:{colour}">{html.escape(text)}</small>'


def _new_hint(spec: FieldSpec) -> str:
    """The constraint hint, unless the description already says it ("1 to 40 characters")."""
    hint, said = spec.hint, spec.description.lower()
    numbers = re.findall(r"-?\d+(?:\.\d+)?", hint)
    if not hint or hint.lower() in said or (numbers and all(n in said for n in numbers)):
        return ""
    return hint


class FieldWidget:
    """One field: label, input widget, help text and an inline error line.

    ``input`` is the widget a person edits (for a checkbox multi-select, the box holding one
    ``Checkbox`` per choice, also in ``choices``). ``value()`` reads it typed; ``set()`` puts a
    value in the way a person would (ticks boxes, picks the option), for scripts and tests.
    """

    def __init__(self, spec: FieldSpec, initial: Any = None, on_edit: Callable[[], None] | None = None) -> None:
        self.spec = spec
        self.on_edit = on_edit
        self.choices: list[tuple[Any, w.Checkbox]] = []
        self.input = self._make_input(spec, initial)
        self.input.add_class("mcp-input")
        if "description" in self.input.keys and not self.input.description:
            # the input's accessible name (a <label for> in ipywidgets 8, plain text); the bold label left of it is what shows
            self.input.description = spec.label
            self.input.style.description_width = "0px"
            # the empty label keeps its 8px right margin: shift and widen so the input stays where it was
            self.input.layout.margin = "2px 2px 2px -6px"
            if self.input.layout.width == "340px":
                self.input.layout.width = "348px"
        label = html.escape(spec.label) + (" " + _REQUIRED if spec.required else "")
        if spec.kind == "boolean":  # the box's own label (right of it) names it; the left column keeps only the star
            label = _REQUIRED if spec.required else ""
        self.label = w.HTML(f"<b>{label}</b>", layout=w.Layout(width="170px", flex="0 0 auto"))
        help_text = " — ".join(part for part in (spec.description, _new_hint(spec)) if part)
        self.help = w.HTML(
            _small(help_text), layout=w.Layout(margin="0 0 0 174px", display=None if help_text else "none")
        )
        self.error = w.HTML("", layout=w.Layout(margin="0 0 0 174px", display="none"))
        self.error.add_class("mcp-error")
        self.box = w.VBox([w.HBox([self.label, self.input]), self.help, self.error], layout=w.Layout(margin="3px 0"))
        self.box.add_class("mcp-field")
        self.box.add_class(f"mcp-field-{_slug(spec.name)}")
        for control in [box for _, box in self.choices] or [self.input]:
            control.observe(self._edited, names="value")

    def _edited(self, _change: Any) -> None:
        """A field being edited drops its old error (it is checked again on Accept)."""
        if self.error.value:
            self.show_error(None)
        if self.on_edit is not None:
            self.on_edit()

    def _make_input(self, spec: FieldSpec, initial: Any) -> w.Widget:
        """The input for one field. Typed inputs send their value once, when the field is left
        (``continuous_update=False``): ipywidgets' page keeps one state update of a model in flight
        and holds the next until the kernel answers, while a button's click goes at once, so on a
        busy kernel Accept overtook the last keystrokes and the server got ``a`` for ``ada@example.com``.
        Leaving the field (the click does) sends the whole value before the click."""
        layout = w.Layout(width="340px")
        if spec.kind == "boolean":
            return w.Checkbox(
                value=initial if isinstance(initial, bool) else False,
                description=spec.label,
                indent=False,
                layout=w.Layout(width="auto"),
            )
        if spec.kind in ("integer", "number"):
            text = "" if initial is None or isinstance(initial, bool) else str(initial)
            return w.Text(value=text, placeholder=spec.hint, layout=layout, continuous_update=False)
        if spec.kind == "choice":
            options: list[tuple[str, Any]] = [(label, value) for value, label in spec.options]
            values = [value for _, value in options]
            if not spec.required or initial not in values:
                options.insert(0, ("— choose —" if spec.required else "—", None))
            return w.Dropdown(options=options, value=initial if initial in values else None, layout=layout)
        if spec.kind == "multi":
            chosen = set(initial) if isinstance(initial, (list, tuple)) else set()
            if len(spec.options) > _CHECKBOX_LIMIT:
                pairs = [(label, value) for value, label in spec.options]
                picked = tuple(value for _, value in pairs if value in chosen)
                return w.SelectMultiple(options=pairs, value=picked, rows=min(8, len(pairs)), layout=layout)
            for value, label in spec.options:
                box = w.Checkbox(
                    value=value in chosen,
                    description=label,
                    indent=False,
                    layout=w.Layout(width="auto", margin="0 12px 0 0"),
                )
                self.choices.append((value, box))
            return w.Box([b for _, b in self.choices], layout=w.Layout(flex_flow="row wrap", width="340px"))
        if spec.format == "date":
            value = None
            if isinstance(initial, dt.date):
                value = initial
            elif isinstance(initial, str):
                try:
                    value = dt.date.fromisoformat(initial[:10])
                except ValueError:
                    value = None
            return w.DatePicker(value=value, layout=w.Layout(width="auto"))
        placeholder = {"email": "name@example.com", "uri": "https://…", "date-time": "2026-07-28T09:30:00Z"}.get(
            spec.format or "", ""
        )
        if is_secret_name(spec.name):  # typed, not shown (nor left on screen for a shoulder or a screenshot)
            return w.Password(value="" if initial is None else str(initial), layout=layout, continuous_update=False)
        return w.Text(
            value="" if initial is None else str(initial),
            placeholder=placeholder,
            layout=layout,
            continuous_update=False,
        )

    def value(self) -> Any:
        """The typed value; ``None`` means "send nothing" (an empty optional field)."""
        spec = self.spec
        if spec.kind == "multi":
            if self.choices:
                picked = [value for value, box in self.choices if box.value]
            else:
                picked = list(self.input.value)
            if not picked and not spec.required and not spec.has_default:
                return None
            return picked
        raw = self.input.value
        if isinstance(raw, str):
            if spec.kind != "text":
                raw = raw.strip()
            if raw == "":
                return "" if spec.has_default and spec.default == "" else None
        if raw is None:
            return None
        return spec.coerce(raw)

    def set(self, value: Any) -> None:
        """Fill the field as a person would: type the text, pick the option, tick the boxes."""
        spec = self.spec
        if spec.kind == "multi":
            wanted = set(spec.coerce(value) or [])
            if self.choices:
                for option, box in self.choices:
                    box.value = option in wanted
            else:
                self.input.value = tuple(v for v, _ in spec.options if v in wanted)
        elif spec.kind == "boolean":
            self.input.value = bool(spec.coerce(value))
        elif spec.kind == "choice":
            self.input.value = spec.coerce(value)
        elif isinstance(self.input, w.DatePicker):
            self.input.value = (
                value if isinstance(value, dt.date) or value is None else dt.date.fromisoformat(str(value))
            )
        else:
            self.input.value = "" if value is None else str(value)

    def show_error(self, message: str | None) -> None:
        self.error.value = _small(f"⚠ {message}", _RED) if message else ""
        self.error.layout.display = None if message else "none"


class _QuestionBox:
    """One elicitation request inside the panel: who asks, what, its fields and its choice."""

    def __init__(
        self,
        server: str,
        question: Question,
        answers: Answers,
        several: bool,
        on_edit: Callable[[], None] | None = None,
    ) -> None:
        self.question = question
        self.server = server
        self.form: FormModel | None = question.form
        message = _bounded(getattr(question.params, "message", "") or "", question.form)
        verb = "asks you to open a page" if question.is_url else "asks"
        self.header = w.HTML(
            f'<div style="margin-bottom:4px"><b>{html.escape(server)}</b> {verb}:</div>'
            f'<div style="font-size:1.05em;margin-bottom:6px;white-space:pre-wrap">{html.escape(message)}</div>'
            + (f'<div class="mcp-context">{_small(question.context, _WARN)}</div>' if question.context else "")
        )
        self.header.add_class("mcp-asker")
        self.fields: list[FieldWidget] = []
        self.json_editor: w.Textarea | None = None
        self.form_error = w.HTML("", layout=w.Layout(display="none"))
        self.form_error.add_class("mcp-error")
        children: list[w.Widget] = [self.header]
        if question.is_url:
            children.append(w.HTML(url_html(str(question.params.url))))
        elif self.form is not None and self.form.supported:
            initial = self.form.initial(answers)
            self.fields = [FieldWidget(spec, initial.get(spec.name), on_edit) for spec in self.form.fields]
            children.extend(f.box for f in self.fields)
        elif self.form is not None and not self.form.checkable:  # too deep: no editor, nothing walks the schema
            children.append(w.HTML(_small(f"Not shown as a form: {self.form.reason}. Decline or cancel it.")))
        elif self.form is not None:
            note = (
                f"This form uses a schema outside MCP's form subset: {self.form.reason}. "
                "Write the answer as JSON; it is checked against the server's schema before it is sent."
            )
            if self.form.limited:
                note = f"Not shown as a form: {self.form.reason}. Write the answer as JSON; it is checked against the server's schema before it is sent."
            schema = _schema_preview(self.form)
            self.json_editor = w.Textarea(
                value=json.dumps(self.form.initial(answers), indent=2, ensure_ascii=False),
                layout=w.Layout(width="520px", height="140px"),
                continuous_update=False,
            )
            self.json_editor.add_class("mcp-json")

            def edited(_change: Any) -> None:
                self._show_form_error("")
                if on_edit is not None:
                    on_edit()

            self.json_editor.observe(edited, names="value")
            children.extend(
                [
                    w.HTML(
                        f"{_small(note)}<details><summary><small>the requested schema</small></summary><pre>{html.escape(schema)}</pre></details>"
                    ),
                    self.json_editor,
                ]
            )
        children.append(self.form_error)
        self.choice: w.ToggleButtons | None = None  # several questions: each has its own choice
        if several:
            accept_word = "Done" if question.is_url else "Accept"
            self.choice = w.ToggleButtons(
                options=[(accept_word, "accept"), ("Decline", "decline"), ("Cancel", "cancel")], value="accept"
            )
            children.append(self.choice)
        self.box = w.VBox(
            children, layout=w.Layout(border="1px solid var(--jp-border-color2, #ccc)", padding="8px", margin="4px 0")
        )
        self.box.add_class("mcp-question")

    def collect(self, action: str) -> Any:
        """The ``ElicitResult`` for ``action``, or ``None`` when the form is invalid (errors shown)."""
        from mcp.types import ElicitResult

        if action != "accept" or self.question.is_url or self.form is None:
            return ElicitResult(action=action)  # type: ignore[arg-type]
        content: dict[str, Any] = {}
        problems: dict[str, str] = {}
        if self.json_editor is not None:
            try:
                content = read_json(self.json_editor.value or "{}")
            except ValueError as exc:
                self._show_form_error(f"not valid JSON: {exc}")
                return None
            if not isinstance(content, dict):
                self._show_form_error("the answer must be a JSON object ({...})")
                return None
        for fw in self.fields:
            try:
                value = fw.value()
            except ValueError as exc:
                problems[fw.spec.name] = str(exc)
                continue
            if value is not None:
                content[fw.spec.name] = value
        if not problems:
            problems = self.form.validate(content)
        else:  # show the schema's verdict on the other fields too
            checked = self.form.validate({k: v for k, v in content.items() if k not in problems})
            problems.update({k: v for k, v in checked.items() if k not in problems})
        for fw in self.fields:
            fw.show_error(problems.get(fw.spec.name))
        shown = {fw.spec.name for fw in self.fields}
        rest = {k: v for k, v in problems.items() if k not in shown}
        self._show_form_error("; ".join(f"{k}: {v}" if k else v for k, v in rest.items()))
        if problems:
            return None
        try:
            return ElicitResult(action="accept", content=content)
        except ValueError as exc:  # pydantic: a value the protocol cannot carry
            self._show_form_error(wire_problem(next(iter(content.values()), None)) or str(exc))
            return None

    def _show_form_error(self, message: str) -> None:
        self.form_error.value = _small(f"⚠ {message}", _RED) if message else ""
        self.form_error.layout.display = None if message else "none"


class ElicitationPanel:
    """Every elicitation of one round in one panel; ``on_done(results)`` fires once, when valid.

    ``results`` maps each question's key to its ``ElicitResult``. One question: Accept (Done
    for URL mode) / Decline / Cancel buttons. Several: a choice per question and one
    "Send answers" button.
    """

    def __init__(
        self, server: str, questions: list[Question], answers: Answers, on_done: Callable[[dict[str, Any]], None]
    ) -> None:
        self.server = server
        self.on_done = on_done
        several = len(questions) > 1
        self.status = w.HTML("", layout=w.Layout(margin="0 0 0 8px", width="auto"))
        self.boxes = [_QuestionBox(server, q, answers, several, self._edited) for q in questions]
        if several:
            send = w.Button(description="Send answers", button_style="primary", icon="paper-plane")
            send.on_click(lambda _: self.submit(None))
            self.buttons = [send]
        else:
            is_url = bool(questions) and questions[0].is_url
            accept = w.Button(description="Done" if is_url else "Accept", button_style="primary", icon="check")
            decline = w.Button(description="Decline", icon="times")
            cancel = w.Button(description="Cancel", icon="ban")
            accept.on_click(lambda _: self.submit("accept"))
            decline.on_click(lambda _: self.submit("decline"))
            cancel.on_click(lambda _: self.submit("cancel"))
            self.buttons = [accept, decline, cancel]
        for button in self.buttons:
            button.add_class(f"mcp-{_slug(button.description.lower())}")
        self.widget = w.VBox([b.box for b in self.boxes] + [w.HBox([*self.buttons, self.status])])
        self.widget.add_class("mcp-elicitation")
        self.widget.add_class("mcp-notebook-form")  # the labextension marks it stale when its kernel restarts
        in_send_order(self.widget)
        self.sent = False
        self.results: dict[str, Any] | None = None
        self._lock = threading.Lock()  # a click (widget subshell or main shell) and a clearing (kernel thread) may meet

    def _edited(self) -> None:
        if self.status.value:
            self.status.value = ""

    def field(self, name: str, question: int = 0) -> FieldWidget:
        """The widget of field ``name`` in the ``question``-th request."""
        for fw in self.boxes[question].fields:
            if fw.spec.name == name:
                return fw
        raise KeyError(name)

    def button(self, description: str) -> w.Button:
        return next(b for b in self.buttons if b.description == description)

    def check(self) -> bool:
        """Mark what does not fit without sending anything (presets that did not fit); True when all fits."""
        with self._lock:
            invalid = sum(box.collect("accept") is None for box in self.boxes)
            if invalid:
                self.status.value = _small("⚠ the preset answers do not fit: fix the marked fields", _RED)
            return not invalid

    def submit(self, action: str | None) -> bool:
        """Collect, validate and hand the answers on; returns False when something is invalid.

        ``action`` applies to every question; ``None`` takes each question's own choice.
        """
        with self._lock:
            return self._submit(action)

    def _submit(self, action: str | None) -> bool:
        if self.sent:
            return False
        results: dict[str, Any] = {}
        invalid = 0
        for box in self.boxes:
            result = box.collect(action or (box.choice.value if box.choice is not None else "accept"))
            if result is None:
                invalid += 1
            else:
                results[box.question.key] = result
        if invalid:
            self.status.value = _small("⚠ nothing sent: fix the marked fields", _RED)
            return False
        self.sent = True
        self.results = results
        for button in self.buttons:
            button.disabled = True
        old = list(self.widget.children)
        self.widget.children = [w.HTML(summary_html(self.server, results, [b.question for b in self.boxes]))]
        for child in old:
            _close_tree(child)
        self.on_done(results)
        return True


def _bounded(text: str, form: FormModel | None) -> str:
    """A server's message cut at ``max_result_chars`` (the form's limits; the defaults for URL mode)."""
    most = (form.limits if form is not None else Limits()).max_result_chars
    return text if len(text) <= most else f"{text[:most]}\n… {len(text) - most:,} more characters not shown"


def _schema_preview(form: FormModel) -> str:
    """The requested schema as indented JSON, cut at ``max_result_chars`` (a huge one is only described)."""
    if form.limited == "size":
        return "(too large to show here)"
    text = json.dumps(form.schema, indent=2, ensure_ascii=False, default=str)
    most = form.limits.max_result_chars
    return text if len(text) <= most else f"{text[:most]}\n… {len(text) - most:,} more characters not shown"


def in_send_order(*widgets: w.Widget) -> None:
    """Have the kernel handle the page's messages to these widgets (and all inside them) in the order sent.

    ipykernel 7.4 hands a page's message to a widget to the subshell that widget last published from
    (``BaseComm._reply_subshell_for``). A text field that has echoed one edit therefore has its next edit
    handled on the page's widget subshell, while a button, which never publishes, has its click handled
    on the main shell: two threads, and on a busy kernel the click of Accept was read before the edit
    typed just before it (the form was refused for ``ada@`` although the field said ``ada@example.com``).
    Routed as the message's own header says, every message of a form goes to one thread, in order: the
    subshell JupyterLab and Notebook 7 keep for widgets (their default, one subshell per comm target; with
    the setting "one subshell per comm" each widget has its own and the order is not kept), or the main
    shell for a front end without subshells. Kernels without the hook (ipykernel 6 to 7.3) route by the
    header already. ``tests/forms/test_widgets_send_order.py`` fails if an ipykernel upgrade changes the hook.
    """
    for widget in widgets:
        comm = widget.comm
        if comm is not None and callable(getattr(comm, "_reply_subshell_for", None)):  # ipykernel >= 7.4 only
            comm._reply_subshell_for = _as_sent
        in_send_order(*(getattr(widget, "children", ()) or ()))


def _as_sent(_data: Any, subshell_id: str | None) -> str | None:
    return subshell_id  # the subshell named in the message's own header


def _close_tree(widget: w.Widget) -> None:
    """Close a widget and everything inside it (their state, values included, leaves the page)."""
    for child in getattr(widget, "children", ()) or ():
        _close_tree(child)
    widget.close()


def summary_html(server: str, results: dict[str, Any], questions: list[Question] | None = None) -> str:
    """What was done, without the values (outputs are saved with the notebook)."""
    messages = {q.key: _bounded(getattr(q.params, "message", "") or "", q.form) for q in questions or []}
    parts = []
    for key, result in results.items():
        action = _ACTION_WORDS.get(result.action, result.action)
        fields = sorted((result.content or {}).keys())
        detail = f" — fields: {', '.join(fields)}" if fields else ""
        message = messages.get(key) or key
        parts.append(f"<div>✔ <b>{html.escape(action)}</b>: {html.escape(message)}{html.escape(detail)}</div>")
    return (
        f'<div class="mcp-summary" style="color:{_MUTED};font-size:0.95em">'
        f"<div>answers sent to <b>{html.escape(server)}</b></div>{''.join(parts)}</div>"
    )


def url_html(
    url: str,
    note: str = "(the kernel never opens it; press Done when you have finished there)",
    label: str = "Open in a new tab ↗",
) -> str:
    """The URL as the server sent it, the host the browser will open, warnings; a link the user clicks.

    The host and the link come from ``urls.read_url`` (the browser's WHATWG reading), never
    from the raw text: a server cannot make the highlighted host differ from the one opened.
    """
    from ..core.urls import read_url, visible

    read = read_url(url)
    sent = f'<div class="mcp-url" style="font-family:var(--jp-code-font-family,monospace);word-break:break-all">{html.escape(visible(url))}</div>'
    if read is None:  # no link at all for text the browser cannot read as a URL
        return (
            sent
            + f'<div class="mcp-url-warning" style="color:{_RED}">⚠ This is not an address a browser can open, so no link is offered.</div>'
        )
    if read.hostname:
        port = html.escape(f":{read.port}") if read.port else ""
        reads = f" (reads as {html.escape(read.display_host)}{port})" if read.display_host != read.hostname else ""
        opens = (
            f'<div class="mcp-opens">Opens: <b class="mcp-domain" style="background:color-mix(in srgb,var(--jp-warn-color1,#f57c00) 25%,var(--jp-layout-color1,#fff));color:var(--jp-ui-font-color1,#000);padding:0 2px">'
            f"{html.escape(read.hostname)}</b>{port}{reads}</div>"
        )
    else:
        opens = ""
    warn = "".join(
        f'<div class="mcp-url-warning{" mcp-punycode" if w.kind == "punycode" else ""}" style="color:{_RED}">⚠ {html.escape(w.text)}</div>'
        for w in read.warnings
    )
    link = ""
    if read.linkable:  # a javascript: or file: URL must not be one click away
        link = (
            f'<a class="mcp-open-link" href="{html.escape(read.href, quote=True)}" target="_blank" rel="noopener noreferrer" '
            f'style="{_LINK_STYLE}">{html.escape(label)}</a> ' + _small(note)
        )
    return f"{sent}{opens}{warn}{link}"
