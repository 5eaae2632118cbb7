"""Elicitation requests as ipywidgets forms, inline in the cell that asked.

Built from ``form_model.FormModel`` (the schema logic lives there, shared with headless runs).
All questions of one round share one panel; each has its own Accept / Decline / Cancel choice.
Values are validated with ``jsonschema`` before anything is sent, errors shown next to the
field. URL-mode requests show the whole URL with its domain highlighted and are opened only by
the user's click (an ordinary link), never fetched by the kernel. After sending, the panel turns
into a summary naming actions and fields, never the values.
"""

from __future__ import annotations

import datetime as dt
import html
import json
from typing import Any, Callable
from urllib.parse import urlparse

import ipywidgets as w

from .answering import Question
from .form_model import Answers, FieldSpec, FormModel

__all__ = ["ElicitationPanel", "FieldWidget", "url_html"]

_REQUIRED = '<span style="color:#d32f2f" title="required">*</span>'


class FieldWidget:
    """One field: label, input widget, help text and an inline error line."""

    def __init__(self, spec: FieldSpec, initial: Any = None) -> None:
        self.spec = spec
        self.input = self._make_input(spec, initial)
        label = html.escape(spec.label) + (" " + _REQUIRED if spec.required else "")
        self.label = w.HTML(f"<b>{label}</b>", layout=w.Layout(width="160px"))
        self.help = w.HTML(f"<small>{html.escape(spec.description)}</small>" if spec.description else "")
        self.error = w.HTML("")
        self.box = w.VBox([w.HBox([self.label, self.input]), self.help, self.error], layout=w.Layout(margin="2px 0"))
        self.box.add_class("mcp-field")

    @staticmethod
    def _make_input(spec: FieldSpec, initial: Any) -> w.Widget:
        desc = {"description_allow_html": False}
        layout = w.Layout(width="320px")
        if spec.kind == "boolean":
            return w.Checkbox(value=bool(initial) if initial is not None else False, indent=False, **desc)
        if spec.kind == "integer":
            value = initial if isinstance(initial, int) else (int(spec.minimum) if spec.minimum is not None else 0)
            if spec.minimum is not None or spec.maximum is not None:
                return w.BoundedIntText(value=value, min=int(spec.minimum if spec.minimum is not None else -(2**53)), max=int(spec.maximum if spec.maximum is not None else 2**53), layout=layout)
            return w.IntText(value=value, layout=layout)
        if spec.kind == "number":
            value = float(initial) if isinstance(initial, (int, float)) else float(spec.minimum or 0)
            if spec.minimum is not None or spec.maximum is not None:
                return w.BoundedFloatText(value=value, min=spec.minimum if spec.minimum is not None else -1e300, max=spec.maximum if spec.maximum is not None else 1e300, layout=layout)
            return w.FloatText(value=value, layout=layout)
        if spec.kind == "choice":
            options = [(label, value) for value, label in spec.options]
            if not spec.required or initial is None:
                options = [("—", None)] + options
            return w.Dropdown(options=options, value=initial if initial in [v for _, v in options] else None, layout=layout)
        if spec.kind == "multi":
            options = [(label, value) for value, label in spec.options]
            chosen = tuple(v for v in (initial or []) if v in [o[1] for o in options])
            return w.SelectMultiple(options=options, value=chosen, rows=min(6, max(2, len(options))), layout=layout)
        if spec.format == "date":
            try:
                value = dt.date.fromisoformat(initial) if isinstance(initial, str) else None
            except ValueError:
                value = None
            return w.DatePicker(value=value, layout=layout)
        placeholder = {"email": "name@example.com", "uri": "https://…", "date-time": "2026-11-30T10:00:00Z"}.get(spec.format or "", "")
        return w.Text(value="" if initial is None else str(initial), placeholder=placeholder, layout=layout)

    def value(self) -> Any:
        """The typed value, ``None`` for an empty optional field."""
        raw = self.input.value
        if self.spec.kind == "multi":
            return list(raw)
        if raw is None or raw == "":
            return None
        return self.spec.coerce(raw)

    def show_error(self, message: str | None) -> None:
        self.error.value = f'<small style="color:#d32f2f">{html.escape(message)}</small>' if message else ""


class _QuestionBox:
    """One elicitation request inside the panel."""

    def __init__(self, server: str, question: Question, answers: Answers, several: bool) -> None:
        self.question = question
        self.form = question.form
        head = f"<b>{html.escape(server)}</b> asks: {html.escape(question.params.message)}"
        self.header = w.HTML(head)
        self.fields: list[FieldWidget] = []
        self.json_editor: w.Textarea | None = None
        self.form_error = w.HTML("")
        children: list[w.Widget] = [self.header]
        if question.is_url:
            children.append(w.HTML(url_html(question.params.url)))
        elif self.form is not None and self.form.supported:
            initial = self.form.initial(answers)
            self.fields = [FieldWidget(spec, initial.get(spec.name)) for spec in self.form.fields]
            children.extend(f.box for f in self.fields)
        elif self.form is not None:
            note = f"This form uses a schema outside MCP's form subset ({self.form.reason}); edit the answer as JSON."
            self.json_editor = w.Textarea(value=json.dumps(self.form.initial(answers), indent=2), layout=w.Layout(width="480px", height="120px"))
            children.extend([w.HTML(f"<small>{html.escape(note)}</small>"), self.json_editor])
        children.append(self.form_error)
        self.choice = w.ToggleButtons(options=[("Accept" if not question.is_url else "Done", "accept"), ("Decline", "decline"), ("Cancel", "cancel")], value="accept")
        if several:
            children.append(self.choice)
        self.box = w.VBox(children, layout=w.Layout(border="1px solid var(--jp-border-color2, #ccc)", padding="6px", margin="4px 0"))

    def collect(self, action: str) -> Any:
        """The ``ElicitResult`` for ``action``, or ``None`` when the form is invalid (errors shown)."""
        from mcp.types import ElicitResult

        if action != "accept" or self.question.is_url or self.form is None:
            return ElicitResult(action=action)  # type: ignore[arg-type]
        content: dict[str, Any] = {}
        problems: dict[str, str] = {}
        if self.json_editor is not None:
            try:
                content = json.loads(self.json_editor.value or "{}")
            except ValueError as exc:
                self.form_error.value = f'<small style="color:#d32f2f">not valid JSON: {html.escape(str(exc))}</small>'
                return None
        for field in self.fields:
            try:
                value = field.value()
            except ValueError as exc:
                problems[field.spec.name] = str(exc)
                continue
            if value is not None and not (field.spec.kind == "multi" and not value and not field.spec.required):
                content[field.spec.name] = value
        if not problems:
            problems = self.form.validate(content)
        for field in self.fields:
            field.show_error(problems.get(field.spec.name))
        form_level = problems.get("") or ("; ".join(f"{k}: {v}" for k, v in problems.items()) if self.json_editor is not None else "")
        self.form_error.value = f'<small style="color:#d32f2f">{html.escape(form_level)}</small>' if form_level else ""
        if problems:
            return None
        return ElicitResult(action="accept", content=content)


class ElicitationPanel:
    """Every elicitation of one round in one panel; ``on_done(results)`` fires once, when valid."""

    def __init__(self, server: str, questions: list[Question], answers: Answers, on_done: Callable[[dict[str, Any]], None]) -> None:
        self.on_done = on_done
        several = len(questions) > 1
        self.boxes = [_QuestionBox(server, q, answers, several) for q in questions]
        if several:
            send = w.Button(description="Send answers", button_style="primary", icon="paper-plane")
            send.on_click(lambda _: self.submit(None))
            buttons = [send]
        else:
            is_url = questions[0].is_url
            accept = w.Button(description="Done" if is_url else "Accept", button_style="primary", icon="check")
            decline = w.Button(description="Decline", icon="times")
            cancel = w.Button(description="Cancel", icon="ban")
            accept.on_click(lambda _: self.submit("accept"))
            decline.on_click(lambda _: self.submit("decline"))
            cancel.on_click(lambda _: self.submit("cancel"))
            buttons = [accept, decline, cancel]
        self.buttons = buttons
        self.widget = w.VBox([b.box for b in self.boxes] + [w.HBox(buttons)])
        self.widget.add_class("mcp-elicitation")
        self.sent = False

    def submit(self, action: str | None) -> bool:
        """Collect, validate and hand the answers on; returns False when something is invalid."""
        if self.sent:
            return False
        results: dict[str, Any] = {}
        for box in self.boxes:
            result = box.collect(action or box.choice.value)
            if result is None:
                return False
            results[box.question.key] = result
        self.sent = True
        for button in self.buttons:
            button.disabled = True
        self.widget.children = [w.HTML(summary_html(results))]
        self.on_done(results)
        return True


def summary_html(results: dict[str, Any]) -> str:
    """What was done, without the values (outputs are saved with the notebook)."""
    parts = []
    for key, result in results.items():
        fields = sorted((result.content or {}).keys())
        detail = f" ({', '.join(fields)})" if fields else ""
        parts.append(f"{html.escape(key)}: <b>{html.escape(result.action)}</b>{html.escape(detail)}")
    return "<small>sent — " + "; ".join(parts) + "</small>"


def url_html(url: str) -> str:
    """The whole URL, its domain highlighted, a warning for punycode; a plain link the user clicks."""
    parsed = urlparse(url)
    host = parsed.hostname or ""
    start = url.find(host) if host else -1
    if start >= 0:
        shown = html.escape(url[:start]) + f'<b style="background:#fff3cd">{html.escape(host)}</b>' + html.escape(url[start + len(host):])
    else:
        shown = html.escape(url)
    warn = ""
    if any(label.startswith("xn--") for label in host.split(".")):
        warn = '<div style="color:#d32f2f">⚠ This domain is written in punycode (xn--): it may imitate another site. Check it carefully.</div>'
    if parsed.scheme not in ("https", "http"):
        warn += f'<div style="color:#d32f2f">⚠ Unusual scheme {html.escape(parsed.scheme)!s}.</div>'
    return (
        f'<div style="font-family:monospace;word-break:break-all">{shown}</div>{warn}'
        f'<a href="{html.escape(url, quote=True)}" target="_blank" rel="noopener noreferrer">Open in a new tab ↗</a>'
        " <small>(the kernel never opens it; press Done when finished)</small>"
    )
