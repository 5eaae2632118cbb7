"""Human review of sampling: the request before it goes, the reply before it returns (ipywidgets).

Three panels, each shown inside the flow's live area in the cell that made the call:

* ``RequestReview``: which server asks, the model picked and why, preferences, maxTokens,
  temperature, stop sequences, tools; the system prompt and every text message editable; the
  model selectable; **Send** or **Deny**.
* ``ReplyReview``: the model's reply (text editable, tool calls editable as JSON); **Return** or **Deny**.
* ``HumanReply``: the request, and a box where the user types the reply (the ``human`` provider).

Threads: the flow runs on the runtime loop and never touches widgets. ``ask_on_main`` builds a
panel on the kernel's main thread (``PanelHost.to_kernel``, in the view's ``panel_area``) and
awaits a ``core.threads.Reply`` that the panel's buttons give: button callbacks may run on the main
thread or on a subshell thread (JupyterLab 4.6 sends comms over subshells). With the ``always`` policy, ``sampling_bundle`` is displayed as a plain output in the
cell (it stays after the flow has settled) and nobody waits.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import ipywidgets as w

from ..core.json_value import read_json
from ..core.text import content_text, esc, plain_text
from ..core.threads import Reply
from ..forms.widgets import in_send_order
from ..sampling.router import Choice, Reviewed

if TYPE_CHECKING:
    from ..sampling.router import ModelConfig

__all__ = [
    "HumanReply",
    "PanelHost",
    "ReplyReview",
    "RequestReview",
    "ask_on_main",
    "edit_reply",
    "edit_request",
    "request_html",
    "reply_html",
    "sampling_bundle",
    "show_on_main",
]

_BOX = {"border": "1px solid var(--jp-border-color2, #ccc)", "padding": "6px", "margin": "4px 0"}
_WIDE = {"width": "95%"}
_LABEL = {"description_width": "110px"}


# ---------------------------------------------------------------------- read-only renderings
def _blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [content]


def facts(params: Any, choice: Choice | None = None) -> list[tuple[str, str]]:
    """The request's settings as (label, value) rows, skipping what is unset."""
    rows: list[tuple[str, str]] = []
    if choice is not None:
        rows.append(("model", f"{choice.config.describe()} — {choice.why}"))
    prefs = params.model_preferences
    if prefs is not None:
        parts = []
        if prefs.hints:
            parts.append("hints " + ", ".join(repr(h.name) for h in prefs.hints if h.name))
        for axis in ("cost", "speed", "intelligence"):
            value = getattr(prefs, f"{axis}_priority")
            if value is not None:
                parts.append(f"{axis} {value:g}")
        if parts:
            rows.append(("preferences", "; ".join(parts)))
    rows.append(("maxTokens", str(params.max_tokens)))
    if params.temperature is not None:
        rows.append(("temperature", f"{params.temperature:g}"))
    if params.stop_sequences:
        rows.append(("stop sequences", ", ".join(repr(s) for s in params.stop_sequences)))
    if params.include_context not in (None, "none"):
        rows.append(("include context", f"{params.include_context} (answered without context)"))
    if params.tools:
        choice_mode = (
            f" (tool choice: {params.tool_choice.mode})" if params.tool_choice and params.tool_choice.mode else ""
        )
        rows.append(
            (
                "tools",
                ", ".join(f"{t.name}" + (f": {t.description}" if t.description else "") for t in params.tools)
                + choice_mode,
            )
        )
    if params.metadata:
        rows.append(("metadata", json.dumps(params.metadata, ensure_ascii=False, sort_keys=True)))
    return rows


def _facts_html(rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><td><b>{esc(k)}</b></td><td>{esc(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def request_html(server: str, key: str, params: Any, choice: Choice | None = None) -> str:
    """The whole request, read-only."""
    messages = "".join(
        f"<div><b>{esc(m.role)}</b><pre>{esc(content_text(m.content))}</pre></div>" for m in params.messages
    )
    system = f"<div><b>system prompt</b><pre>{esc(params.system_prompt)}</pre></div>" if params.system_prompt else ""
    return (
        f'<div class="mcpnb"><div class="hdr"><b>{esc(server)}</b> asks for a model reply (<code>{esc(key)}</code>)</div>'
        f"{_facts_html(facts(params, choice))}{system}{messages}</div>"
    )


def reply_html(result: Any) -> str:
    """The model's reply, read-only."""
    stop = f", stop reason {esc(result.stop_reason)}" if result.stop_reason else ""
    body = "".join(f"<pre>{esc(content_text(b))}</pre>" for b in _blocks(result.content))
    return f'<div class="mcpnb"><div class="hdr">reply from <b>{esc(result.model)}</b>{stop}</div>{body}</div>'


def sampling_bundle(server: str, key: str, params: Any, choice: Choice, result: Any | None) -> dict[str, str]:
    """What the ``always`` policy shows: the request (before sending) or the reply (after)."""
    if result is None:
        plain = f"{server} asks for a model reply ({key}); sending to {choice.config.name} — {choice.why}"
        return {"text/plain": plain_text(plain), "text/html": request_html(server, key, params, choice)}
    text = content_text(result.content)
    return {"text/plain": plain_text(f"reply from {result.model}: {text}"), "text/html": reply_html(result)}


# ---------------------------------------------------------------------- edits (pure)
def edit_request(
    params: Any, *, system: str | None, texts: dict[tuple[int, int], str], max_tokens: int | None
) -> tuple[Any, list[str]]:
    """``params`` with the user's edits (text blocks by (message, block) index); and what changed."""
    edited: list[str] = []
    messages = []
    for i, message in enumerate(params.messages):
        blocks = _blocks(message.content)
        new = []
        for j, block in enumerate(blocks):
            if block.type == "text" and (i, j) in texts and texts[(i, j)] != block.text:
                block = block.model_copy(update={"text": texts[(i, j)]})
            new.append(block)
        if new != blocks:
            edited.append(f"message {i + 1}")
            message = message.model_copy(update={"content": new if isinstance(message.content, list) else new[0]})
        messages.append(message)
    update: dict[str, Any] = {"messages": messages}
    if system is not None and (system or None) != params.system_prompt:
        update["system_prompt"] = system or None
        edited.insert(0, "system prompt")
    if max_tokens is not None and int(max_tokens) != params.max_tokens:
        update["max_tokens"] = int(max_tokens)
        edited.append("maxTokens")
    return params.model_copy(update=update), edited


def edit_reply(result: Any, *, texts: dict[int, str], tool_inputs: dict[int, dict[str, Any]]) -> tuple[Any, list[str]]:
    """``result`` with the user's edits (by block index); and what changed."""
    blocks = _blocks(result.content)
    new = []
    edited: list[str] = []
    for k, block in enumerate(blocks):
        if block.type == "text" and k in texts and texts[k] != block.text:
            block = block.model_copy(update={"text": texts[k]})
            edited.append("text")
        elif block.type == "tool_use" and k in tool_inputs and tool_inputs[k] != block.input:
            block = block.model_copy(update={"input": tool_inputs[k]})
            edited.append(f"tool call {block.name}")
        new.append(block)
    if not edited:
        return result, []
    return result.model_copy(update={"content": new if isinstance(result.content, list) else new[0]}), edited


# ------------------------------------- panels (built on the kernel thread; clicks on the widget subshell)
class _Panel:
    """A bordered box that turns into a one-line summary once the user has acted."""

    widget: w.VBox

    def __init__(self, deliver: Callable[[Any], None]) -> None:
        self.deliver = deliver
        self.done = False
        self._inputs: list[w.Widget] = []
        self._lock = threading.Lock()  # a click (widget subshell) and the flow's dismissal (kernel thread) may meet

    def _finish(self, value: Any, summary: str) -> None:
        with self._lock:
            if self.done:
                return
            self.done = True
        old = list(self._inputs)
        self.widget.children = [w.HTML(f"<small>{summary}</small>")]
        for widget in old:
            widget.close()
        self.deliver(value)

    def dismiss(self, summary: str = "no longer needed (the flow ended)") -> None:
        """The flow stopped waiting (cancelled): leave a note instead of live buttons."""
        with self._lock:
            if self.done:
                return
            self.done = True
        self.widget.children = [w.HTML(f"<small>{esc(summary)}</small>")]
        for widget in self._inputs:
            widget.close()

    def _track(self, *widgets: w.Widget) -> None:
        self._inputs.extend(widgets)
        in_send_order(*widgets)  # an edit, then Send: handled in that order


def _textarea(value: str, description: str) -> w.Textarea:
    rows = min(12, max(2, value.count("\n") + 1 + len(value) // 90))
    return w.Textarea(
        value=value,
        description=description,
        rows=rows,
        layout=w.Layout(**_WIDE),
        style=_LABEL,
        continuous_update=False,  # one update when the field is left: see forms/widgets.py, _make_input
    )


class RequestReview(_Panel):
    """Checkpoint one: see and edit the request; Send or Deny."""

    def __init__(
        self, server: str, key: str, params: Any, choice: Choice, models: list[str], deliver: Callable[[Any], None]
    ) -> None:
        super().__init__(deliver)
        self.params = params
        head = w.HTML(
            f'<div class="mcpnb"><b>{esc(server)}</b> asks for a model reply (<code>{esc(key)}</code>). '
            "Check it, edit it if you like, then <b>Send</b> it to the model or <b>Deny</b> it.</div>"
        )
        rows = [r for r in facts(params) if r[0] not in ("maxTokens",)]
        info = w.HTML(_facts_html(rows))
        options = models if choice.config.name in models else [choice.config.name, *models]
        self.model = w.Dropdown(options=options, value=choice.config.name, description="model", style=_LABEL)
        why = w.HTML(f"<small>&nbsp;{esc(choice.config.describe())}: {esc(choice.why)}</small>")
        self.system = _textarea(params.system_prompt or "", "system")
        self.texts: dict[tuple[int, int], w.Textarea] = {}
        message_widgets: list[w.Widget] = []
        for i, message in enumerate(params.messages):
            blocks = _blocks(message.content)
            for j, block in enumerate(blocks):
                label = f"#{i + 1} {message.role}" + (f" ({j + 1})" if len(blocks) > 1 else "")
                if block.type == "text":
                    area = _textarea(block.text, label)
                    self.texts[(i, j)] = area
                    message_widgets.append(area)
                else:
                    message_widgets.append(w.HTML(f"<small><b>{esc(label)}</b> {esc(content_text(block))}</small>"))
        self.max_tokens = w.BoundedIntText(
            value=params.max_tokens, min=1, max=10_000_000, description="maxTokens", style=_LABEL
        )
        send = w.Button(
            description="Send", button_style="primary", icon="paper-plane", tooltip="Send this request to the model"
        )
        deny = w.Button(description="Deny", icon="times", tooltip="Answer the server that you declined")
        send.on_click(lambda _: self.send())
        deny.on_click(lambda _: self.deny())
        self._track(self.model, self.system, *self.texts.values(), self.max_tokens, send, deny)
        self.widget = w.VBox(
            [
                head,
                info,
                w.HBox([self.model, why]),
                self.system,
                *message_widgets,
                self.max_tokens,
                w.HBox([send, deny]),
            ],
            layout=w.Layout(**_BOX),
        )
        self.widget.add_class("mcp-review-request")

    def send(self) -> None:
        params, edited = edit_request(
            self.params,
            system=self.system.value,
            texts={k: area.value for k, area in self.texts.items()},
            max_tokens=self.max_tokens.value,
        )
        model = self.model.value
        note = f"request sent to {esc(model)}" + (f" (you edited {esc(', '.join(edited))})" if edited else "")
        self._finish(Reviewed(True, params, model=model, edited=edited), note)

    def deny(self) -> None:
        self._finish(Reviewed(False), "request <b>denied</b>; the server is told you declined")


class ReplyReview(_Panel):
    """Checkpoint two: see and edit the reply; Return or Deny."""

    def __init__(self, server: str, key: str, result: Any, choice: Choice, deliver: Callable[[Any], None]) -> None:
        super().__init__(deliver)
        self.result = result
        stop = f", stop reason {esc(result.stop_reason)}" if result.stop_reason else ""
        reported = f"model {esc(result.model)}" if result.model != choice.config.name else ""
        detail = ", ".join(p for p in (reported, stop.lstrip(", ")) if p)
        head = w.HTML(
            f'<div class="mcpnb">Reply from <b>{esc(choice.config.describe())}</b>{f" ({detail})" if detail else ""} for '
            f"<b>{esc(server)}</b> (<code>{esc(key)}</code>). Edit it if you like, then <b>Return</b> it to the server "
            "or <b>Deny</b> it.</div>"
        )
        self.texts: dict[int, w.Textarea] = {}
        self.tools: dict[int, w.Textarea] = {}
        children: list[w.Widget] = [head]
        blocks = _blocks(result.content)
        texts = sum(1 for b in blocks if b.type == "text")
        for k, block in enumerate(blocks):
            if block.type == "text":
                area = _textarea(
                    block.text, "reply" if texts == 1 or not self.texts else f"reply {len(self.texts) + 1}"
                )
                self.texts[k] = area
                children.append(area)
            elif block.type == "tool_use":
                area = _textarea(json.dumps(block.input, indent=2, ensure_ascii=False), f"tool {block.name}")
                self.tools[k] = area
                children.append(area)
            else:
                children.append(w.HTML(f"<small>{esc(content_text(block))}</small>"))
        self.error = w.HTML("")
        ret = w.Button(
            description="Return", button_style="primary", icon="reply", tooltip="Return this reply to the server"
        )
        deny = w.Button(description="Deny", icon="times", tooltip="Answer the server that you declined")
        ret.on_click(lambda _: self.send())
        deny.on_click(lambda _: self.deny())
        self._track(*self.texts.values(), *self.tools.values(), ret, deny)
        self.widget = w.VBox([*children, self.error, w.HBox([ret, deny])], layout=w.Layout(**_BOX))
        self.widget.add_class("mcp-review-reply")

    def send(self) -> bool:
        inputs: dict[int, dict[str, Any]] = {}
        for k, area in self.tools.items():
            try:
                value = read_json(area.value or "{}")
            except ValueError as exc:
                self.error.value = f'<small style="color:var(--jp-error-color1,#d32f2f)">{esc(area.description)}: not valid JSON ({esc(exc)})</small>'
                return False
            if not isinstance(value, dict):
                self.error.value = f'<small style="color:var(--jp-error-color1,#d32f2f)">{esc(area.description)}: the input must be a JSON object</small>'
                return False
            inputs[k] = value
        result, edited = edit_reply(self.result, texts={k: a.value for k, a in self.texts.items()}, tool_inputs=inputs)
        self._finish(
            Reviewed(True, result, edited=edited),
            "reply returned" + (f" (you edited {esc(', '.join(edited))})" if edited else ""),
        )
        return True

    def deny(self) -> None:
        self._finish(Reviewed(False), "reply <b>denied</b>; the server is told you declined")


class HumanReply(_Panel):
    """The ``human`` provider: the request, and a box for the user's reply."""

    def __init__(self, server: str, key: str, params: Any, config: ModelConfig, deliver: Callable[[Any], None]) -> None:
        super().__init__(deliver)
        info = w.HTML(
            request_html(server, key, params) + "<div><small>You are the model: write the reply.</small></div>"
        )
        self.reply = _textarea("", "your reply")
        send = w.Button(description="Send reply", button_style="primary", icon="paper-plane")
        decline = w.Button(description="Decline", icon="times", tooltip="Answer the server that you declined")
        send.on_click(lambda _: self._finish(self.reply.value, "reply sent"))
        decline.on_click(lambda _: self._finish(None, "<b>declined</b>; the server is told so"))
        self._track(self.reply, send, decline)
        self.widget = w.VBox([info, self.reply, w.HBox([send, decline])], layout=w.Layout(**_BOX))
        self.widget.add_class("mcp-human-reply")


# ---------------------------------------------------------------------- crossing threads
@runtime_checkable
class PanelHost(Protocol):
    """Where panels go: the flow's live view (``live_view.LiveView`` implements it)."""

    def to_kernel(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the kernel's loop in the view's cell (any thread)."""
        ...

    def panel_area(self) -> w.VBox | None:
        """The box panels are added to (kernel thread); ``None`` once the view has settled."""
        ...


async def ask_on_main(view: PanelHost, make: Callable[[Callable[[Any], None]], _Panel]) -> Any:
    """Show ``make(deliver)`` in the view (kernel thread) and wait on this loop for the user's answer."""
    reply: Reply[Any] = Reply()  # given by a button callback (kernel or subshell thread), awaited here
    holder: list[_Panel] = []

    def deliver(value: Any) -> None:
        reply.offer(value)  # a second answer (a double click) is dropped

    def dismiss_all() -> None:
        for panel in holder:
            panel.dismiss()

    def mount() -> None:
        area = view.panel_area()
        if area is None:
            return
        panel = make(deliver)
        holder.append(panel)
        area.children = (*area.children, panel.widget)

    view.to_kernel(mount)
    try:
        return await reply
    finally:
        if not reply.done:  # the wait was cancelled: the flow ended before the user acted
            view.to_kernel(dismiss_all)


def show_on_main(view: PanelHost, bundle: dict[str, str]) -> None:
    """Display ``bundle`` as an output of the flow's cell (it stays after the flow settles)."""
    from IPython.display import display

    view.to_kernel(lambda: display(bundle, raw=True))
