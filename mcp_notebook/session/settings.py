"""A session's settings, as traitlets (``SessionSettings``), and how one call runs (``CallOptions``).

Settings live in one place only: ``MCPMagics`` inherits ``SessionSettings``, so ``%config
MCPMagics.max_rounds = 5`` (or ``ipython_config.py``) is the setting itself; a ``Session`` keeps a
reference and reads them when it needs them. Each trait's help says what it bounds and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from traitlets import Any as TAny
from traitlets import Bool, Dict, Enum, Float, Int, TraitError, Unicode, observe, validate
from traitlets.config import Configurable

from ..core.limits import Limits
from ..forms.model import Answers
from ..sampling.router import ModelRouter
from ..wire.task_handles import TaskOptions

__all__ = ["PAGE_WAIT", "CallOptions", "SessionSettings"]

PAGE_WAIT = 2.5
"""Seconds the kernel waits by default for the page's answer to its hello (``SessionSettings.page_wait``)."""


class SessionSettings(Configurable):
    """The settings of a session, as traitlets (``MCPMagics`` inherits them: ``%config MCPMagics.NAME``)."""

    max_rounds = Int(
        10,
        help="Most input-required rounds one call may take before it stops: rounds with questions and rounds the server "
        "answers 'not ready' (a request state, no question; retried after 50 ms, doubling to 250 ms) alike. At 10 a "
        "'not ready' wait ends after about 2 s.",
    ).tag(config=True)
    flow_timeout = TAny(
        None, allow_none=True, help="Default wall-clock limit of a flow in seconds (None: no limit)."
    ).tag(config=True)
    connect_timeout = TAny(
        30.0, allow_none=True,
        help="Seconds a connection may take to open (start or reach the server and finish the handshake; None: no limit). "
        "A server that accepts the connection but never answers would otherwise hold the cell forever. A --timeout given "
        "to %mcp connect (the read timeout) bounds the handshake instead.",
    ).tag(config=True)  # fmt: skip
    interactive = TAny(
        None,
        allow_none=True,
        help="True/False forces interactive or headless; None decides per cell (a front end that allows stdin is interactive).",
    ).tag(config=True)
    log_level = Enum(
        ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"],
        "info",
        allow_none=True,
        help="Server log messages at or above this level are shown with the flow.",
    ).tag(config=True)
    models = Dict(
        {},
        help="Models for sampling by name, e.g. {'gpt': {'provider': 'openai', 'model': 'gpt-4o-mini', 'api_key_env': 'OPENAI_API_KEY', 'cost': 0.3}}; "
        "the settings of %mcp model add (provider, model, base_url, api_key_env, cost, speed, intelligence, timeout, function).",
    ).tag(config=True)
    default_model = Unicode(
        None,
        allow_none=True,
        help="The model that answers when no hint or priority picks another (%mcp model use NAME).",
    ).tag(config=True)
    review = Enum(
        ["remote", "ask", "always", "never"], "remote",
        help="Review of sampling in interactive runs: remote (the default: ask when the model is on another machine, i.e. openai or "
        "anthropic not on a loopback address; echo, callable, human and local models answer without review), ask (edit every "
        "request and reply), always (show both, don't wait), never. Headless runs never review.",
    ).tag(config=True)  # fmt: skip
    warm_up = Bool(
        True,
        help="Right after %load_ext, import in the background what the first call needs (the MCP SDK, jsonschema: "
        "about 2 s in a fresh kernel), so that the first call does not wait for them (set it in an IPython profile).",
    ).tag(config=True)
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
    sign_in_timeout = Float(
        600.0, min=5.0,
        help="Seconds a sign-in (OAuth) may wait for you to finish at the authorization server before the request that "
        "needed it fails. The SDK has no limit of its own: without one a closed tab would hold the call forever.",
    ).tag(config=True)  # fmt: skip
    device_sign_in = Enum(
        ["auto", "always", "never"], "auto",
        help="When to sign in with a code typed at the authorization server's page (the OAuth device grant, RFC 8628) "
        "instead of a redirect back to the notebook, where the authorization server offers it: 'auto' when the redirect "
        "cannot come back by itself (no labextension relays it: VS Code, Colab, a remote kernel), 'always', or 'never'.",
    ).tag(config=True)  # fmt: skip
    oauth_client_metadata_url = Unicode(
        None, allow_none=True,
        help="An https URL of this client's OAuth Client ID Metadata Document, used as the client id where the authorization "
        "server supports it (else dynamic registration). Its redirect_uris must include this notebook's callback.",
    ).tag(config=True)  # fmt: skip
    oauth_client_name = Unicode(
        "mcp-notebook", help="The client name shown by authorization servers when you sign in."
    ).tag(config=True)
    max_form_fields = Int(
        200, min=1,
        help="Most fields one elicitation form renders as widgets (each tick box of a multi-select counts as one). "
        "Widgets are built on the kernel thread, about 2 ms a field: a larger form is offered as a JSON editor instead "
        "of freezing the kernel for seconds.",
    ).tag(config=True)  # fmt: skip

    page_wait = Float(
        PAGE_WAIT, min=0.0,
        help="Seconds the kernel waits, counted from %load_ext's hello, for JupyterLab's extension to answer before it "
        "decides that no page with the extension is there (VS Code, Colab, a front end without it): records then go "
        "into cell outputs, and an interactive sign-in waits at most this long for the page. A change applies to a wait "
        "under way. Raise it for a slow page; a kernel that never has one (a script, tests) can lower it.",
    ).tag(config=True)  # fmt: skip

    # the router these settings feed (set by the session); models added with %mcp model add live only there
    router: ModelRouter | None = None

    def _namespace(self) -> dict[str, Any] | None:
        shell = getattr(self, "shell", None)  # a mixin: ``MCPMagics`` (a ``Magics``) has a shell, settings alone none
        return shell.user_ns if shell is not None else None

    @validate("models")
    def _check_models(self, proposal: Any) -> Any:
        try:
            ModelRouter.build(proposal["value"], self._namespace())
        except ValueError as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]

    @validate("default_model")
    def _check_default_model(self, proposal: Any) -> Any:
        name = proposal["value"]
        known = self.router.models if self.router is not None else ModelRouter().models
        if name is not None and name not in known and name not in self.models:
            raise TraitError(f"no model named {name!r} (configured: {', '.join(known)})")
        return name

    @property
    def limits(self) -> Limits:
        """The size bounds a new flow renders with (a flow keeps the ``Limits`` it started with).

        Made once and again after a ``%config`` change of one of them: a map starts a flow per row.
        """
        limits = self._limits
        if limits is None:
            limits = self._limits = Limits(
                max_result_chars=self.max_result_chars, max_inline_bytes=self.max_inline_bytes,
                max_schema_depth=self.max_schema_depth, max_form_fields=self.max_form_fields,
            )  # fmt: skip
        return limits

    _limits: Limits | None = None

    @observe("max_result_chars", "max_inline_bytes", "max_schema_depth", "max_form_fields")
    def _limits_changed(self, _change: Any) -> None:
        self._limits = None


@dataclass(frozen=True)
class CallOptions:
    """How one call (or resume) runs: its preset answers and flags (``%mcp call`` / ``resume`` options)."""

    answers: Answers = field(default_factory=Answers)
    timeout: float | None = None
    save: bool = True
    trace: bool = False
    output: str | None = None  # bind the result to this variable of the namespace when done (-o VAR)
    trust: bool = False  # resume a record that needs consent without asking
    consented: str | None = (
        None  # with ``trust``: the content digest the person consented to (``None``: the record passed itself)
    )
    task: TaskOptions | None = None  # run as a task (--task, --ttl); a tool that requires one does anyway

    def fresh_answers(self) -> Answers:
        return replace(
            self.answers,
            fields=dict(self.answers.fields),
            raw=dict(self.answers.raw),
            decline=list(self.answers.decline),
        )
