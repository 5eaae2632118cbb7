"""Sampling: ``sampling/createMessage`` answered by a model the user configured, with human review.

Whatever the server's generation (a ``CreateMessageRequest`` inside ``input_requests`` on
2026-07-28, a back-channel request on 2025), every request comes through ``answer_sampling``:

1. **route**: ``ModelRouter.choose`` picks a configured model. The request's model hints are
   substrings tried in order against each model's name and model id (the default model first,
   then the others in the order they were added); when no hint matches, the cost / speed /
   intelligence priorities pick the best-scoring *rated* model (one added with ``--cost``,
   ``--speed`` or ``--intelligence``); otherwise the default model answers. The cell says which
   model answered and why.
2. **review** (``ModelRouter.review``): ``ask`` shows the request (server, messages, system prompt,
   preferences, maxTokens) for editing, then Send or Deny; then the reply, for editing, then
   Return or Deny. ``always`` shows both without waiting; ``never`` shows neither. ``remote``, the
   default, is ``ask`` for a model the request leaves this machine for (``ModelConfig.leaves_machine``:
   openai or anthropic, unless its base URL is a loopback address such as a local Ollama) and
   ``never`` for the others: the offline ``echo``, a ``callable`` in the notebook, ``human`` (the
   person typing the reply is the reviewer). Review guards what leaves the machine; asking for
   ``echo`` only taught people to click Send (a Run All of tutorial 03 left nine panels). Headless
   runs never review.
3. **answer**: the provider's result goes back to the server. A provider failure or a denial
   becomes ``ErrorData``: a 2025 server receives it as its request's error; on 2026-07-28 the
   flow stops with the reason (there is no error answer inside ``input_responses``).

Ratings and priorities are on MCP's 0..1 scale. A model's ``cost`` is how expensive it is (1: the
most), ``speed`` how fast and ``intelligence`` how capable (1: the most); a request scores each
rated model ``costPriority·(1-cost) + speedPriority·speed + intelligencePriority·intelligence``
(an unrated axis counts 0.5). Unrated models (like the built-in ``echo``) are left out of
priority routing so a request that prefers "cheap" does not land on the offline echo model.

Keys never live here: a ``ModelConfig`` holds the *name* of the environment variable.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .providers import PROVIDERS, create_message
from .providers.base import SamplingContext, SamplingDeclined, SamplingError

if TYPE_CHECKING:
    from mcp.types import CreateMessageRequestParams

    from .reviewer import Asking, Reviewer

__all__ = [
    "REVIEW_POLICIES",
    "Choice",
    "ModelConfig",
    "ModelRouter",
    "Reviewed",
    "SamplingDeclined",
    "SamplingError",
    "answer_sampling",
]

REVIEW_POLICIES = ("remote", "ask", "always", "never")
DEFAULT_TIMEOUT = 60.0  # seconds a hosted model may take; `--timeout` changes it per model
DECLINED_CODE = -1  # the MCP spec's example code for "User rejected sampling request"
FAILED_CODE = -32603  # JSON-RPC "internal error": the client could not produce an answer


@dataclass
class ModelConfig:
    """One configured model. ``api_key_env`` is a variable *name*; the key is read only when calling."""

    name: str
    provider: str = "echo"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    function: Callable[..., Any] | None = None
    cost: float | None = None
    speed: float | None = None
    intelligence: float | None = None
    timeout: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        kind = PROVIDERS.get(self.provider)
        if kind is None:
            raise ValueError(f"unknown provider {self.provider!r}; expected one of {', '.join(PROVIDERS)}")
        for axis in ("cost", "speed", "intelligence"):
            value = getattr(self, axis)
            if value is not None and not 0 <= float(value) <= 1:
                raise ValueError(f"--{axis} must be between 0 and 1, not {value}")
        kind.configure(self)  # the provider's own rules (providers/): a MODEL, its key variable, a function
        if self.timeout <= 0:
            raise ValueError("--timeout must be positive")

    @property
    def leaves_machine(self) -> bool:
        """Whether a request to this model goes to another machine: a hosted provider (openai, anthropic), not on a loopback address.

        ``echo``, ``callable`` and ``human`` answer inside this kernel. A hosted provider's official
        endpoint (no base URL) is remote; ``localhost``, 127.0.0.0/8 and ``::1`` are this machine (a
        local Ollama, vLLM or LM Studio), unless a proxy that httpx would use takes the request
        elsewhere. Any other name is remote, ``*.localhost`` and names that resolve here included:
        nothing is looked up, and a resolver need not keep ``*.localhost`` on this machine.
        """
        import urllib.request

        if not PROVIDERS[self.provider].hosted:
            return False
        if self.base_url is None:
            return True
        parts = urlsplit(self.base_url)
        host = (parts.hostname or "").rstrip(".").lower()
        if host != "localhost":
            try:
                if not ipaddress.ip_address(host).is_loopback:
                    return True
            except ValueError:
                return True
        proxies = urllib.request.getproxies()  # the environment's proxies, as httpx reads them (trust_env)
        return bool(proxies.get(parts.scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(host)

    @property
    def rated(self) -> bool:
        return any(v is not None for v in (self.cost, self.speed, self.intelligence))

    def describe(self) -> str:
        """``name (provider model)`` for notes and review panels (just ``echo`` for the built-in one)."""
        what = self.model or (getattr(self.function, "__name__", "") if self.function else "")
        detail = " ".join(
            p for p in (self.provider if self.provider != self.name else "", what if what != self.name else "") if p
        )
        return f"{self.name} ({detail})" if detail else self.name


@dataclass
class Choice:
    """The model picked for one request and the reason shown in the cell."""

    config: ModelConfig
    why: str


@dataclass
class Reviewed:
    """What the user decided at a review checkpoint; ``value`` is the (possibly edited) request or reply."""

    approved: bool
    value: Any = None
    model: str | None = None  # request review: the model the user picked
    edited: list[str] = field(default_factory=list)  # what was changed, for the note


@dataclass
class ModelRouter:
    """Configured models, the default, and the review policy; picks one model per request."""

    models: dict[str, ModelConfig] = field(default_factory=lambda: {"echo": ModelConfig("echo", "echo")})
    default: str = "echo"
    review: str = "remote"
    from_config: set[str] = field(default_factory=set)  # names set through %config MCPMagics.models

    def add(self, config: ModelConfig) -> None:
        self.models[config.name] = config

    def remove(self, name: str) -> None:
        if name not in self.models:
            raise KeyError(self._unknown(name))
        if name == self.default:
            raise ValueError(f"{name!r} is the default model; choose another with %mcp model use NAME first")
        del self.models[name]
        self.from_config.discard(name)

    def use(self, name: str) -> None:
        if name not in self.models:
            raise KeyError(self._unknown(name))
        self.default = name

    def set_review(self, policy: str) -> None:
        if policy not in REVIEW_POLICIES:
            raise ValueError(f"review policy must be one of {', '.join(REVIEW_POLICIES)}, not {policy!r}")
        self.review = policy

    @staticmethod
    def build(table: dict[str, Any], namespace: dict[str, Any] | None = None) -> dict[str, ModelConfig]:
        """Models from a ``%config MCPMagics.models`` table; raises ``ValueError`` naming the bad entry.

        ``table`` maps a name to ``{"provider": ..., "model": ..., "base_url": ..., "api_key_env": ...,
        "cost": ..., "speed": ..., "intelligence": ..., "timeout": ..., "function": callable or its name}``.
        """
        allowed = {"provider", "model", "base_url", "api_key_env", "cost", "speed", "intelligence", "timeout"}
        built: dict[str, ModelConfig] = {}
        for name, spec in table.items():
            if isinstance(spec, ModelConfig):
                built[name] = spec
                continue
            if not isinstance(spec, dict):
                raise ValueError(f"MCPMagics.models[{name!r}] must be a dict of settings, not {type(spec).__name__}")
            spec = dict(spec)
            function = spec.pop("function", None)
            if isinstance(function, str):
                function = (namespace or {}).get(function)
            unknown = set(spec) - allowed
            if unknown:
                raise ValueError(
                    f"MCPMagics.models[{name!r}] has unknown settings: {', '.join(sorted(unknown))} (known: {', '.join(sorted(allowed | {'function'}))})"
                )
            try:
                built[name] = ModelConfig(str(name), function=function, **spec)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"MCPMagics.models[{name!r}]: {exc}") from None
        return built

    def configure(self, built: dict[str, ModelConfig]) -> None:
        """Replace the models that came from configuration with ``built`` (others stay)."""
        for name in self.from_config - set(built):
            if name != self.default:
                self.models.pop(name, None)
        self.models.update(built)
        self.from_config = set(built)

    def _unknown(self, name: str) -> str:
        return f"no model named {name!r} (configured: {', '.join(self.models)})"

    # ------------------------------------------------------------------ routing
    def choose(self, params: CreateMessageRequestParams) -> Choice:
        """The model for a request and why: a hint substring, else the priorities, else the default."""
        prefs = params.model_preferences
        ordered = [self.models[self.default]] + [c for n, c in self.models.items() if n != self.default]
        hints = [h.name for h in ((prefs.hints if prefs is not None else None) or []) if h.name]
        for hint in hints:
            wanted = hint.lower()
            for config in ordered:
                if wanted in config.name.lower() or wanted in (config.model or "").lower():
                    return Choice(config, f"model hint {hint!r}")
        weights = {
            axis: float(value)
            for axis, value in (
                ("cost", prefs.cost_priority if prefs is not None else None),
                ("speed", prefs.speed_priority if prefs is not None else None),
                ("intelligence", prefs.intelligence_priority if prefs is not None else None),
            )
            if value
        }
        rated = [c for c in ordered if c.rated]
        unmatched = f"no model matches the hints {', '.join(repr(h) for h in hints)}; " if hints else ""
        if weights and rated:
            scored = [(self.score(c, weights), -i, c) for i, c in enumerate(rated)]
            best_score, _, best = max(scored)
            wanted = ", ".join(f"{axis} {value:g}" for axis, value in weights.items())
            return Choice(
                best,
                f"{unmatched}priorities {wanted}: best score {best_score:.2f} of {len(rated)} rated model{'s' if len(rated) > 1 else ''}",
            )
        if weights:
            return Choice(
                self.models[self.default],
                f"{unmatched}default model (priorities given, but no model is rated: add one with --cost/--speed/--intelligence)",
            )
        return Choice(self.models[self.default], f"{unmatched}default model")

    @staticmethod
    def score(config: ModelConfig, weights: dict[str, float]) -> float:
        def rating(value: float | None) -> float:
            return 0.5 if value is None else float(value)

        return (
            weights.get("cost", 0.0) * (1 - rating(config.cost))
            + weights.get("speed", 0.0) * rating(config.speed)
            + weights.get("intelligence", 0.0) * rating(config.intelligence)
        )

    async def sample(self, params: Any, ctx: SamplingContext | None = None) -> tuple[Any, str]:
        """Answer one request without review; returns the SDK result and a note naming the model and why."""
        choice = self.choose(params)
        result = await create_message(choice.config, params, ctx or SamplingContext())
        return result, f"{choice.config.describe()}: {choice.why}"


# ---------------------------------------------------------------------- one request, end to end
def _least_review(policy: str, choice: Choice, ui: Reviewer | None) -> str:
    """``policy`` raised to the administrator's least review: ``ask`` for every request, or for those that leave the machine (``remote``).

    Nothing in the notebook lowers it (``%config MCPMagics.review``, ``%mcp model review``): it is read
    from the policy file at each request. A request it wants reviewed with nobody to review it (a
    headless run) is refused before it reaches a model. The person typing a ``human`` reply reviews it.
    """
    from ..core.policy import current_policy

    least = current_policy().least_review()
    if least is None or choice.config.provider == "human" or policy == "ask":
        return policy
    level, path = least
    if level == "remote" and not choice.config.leaves_machine:
        return policy
    if ui is None or not ui.interactive:
        raise SamplingError(
            f"the administrator's policy ({path}) wants a person to review {'every sampling request' if level == 'ask' else 'a request that leaves this machine'}, "
            "and this run has nobody to review it (headless); nothing was sent to the model"
        )
    return "ask"


async def answer_sampling(router: ModelRouter, ui: Reviewer | None, flow: Asking, key: str, params: Any) -> Any:
    """Route, review and answer one sampling request; returns the result or ``ErrorData``.

    ``ui`` is the flow's ``FlowUI`` (``None``: headless, nobody reviews); only an interactive one reviews.
    Every outcome leaves a note in the cell.
    """
    from mcp.types import ErrorData

    choice = router.choose(params)
    label = f"sampling {key!r}"
    if params.include_context not in (None, "none"):
        flow.notes.append(
            f"{label}: the server asked to include context ({params.include_context}); answered without it "
            "(this client does not share other conversations)"
        )
    policy = router.review if ui is not None and ui.interactive else "never"
    if policy == "remote":
        policy = "ask" if choice.config.leaves_machine else "never"
    if choice.config.provider == "human":
        policy = "never"  # the person typing the reply is the reviewer
    assert ui is not None or policy == "never"  # "ask" and "always" need a person: without one the policy is "never"
    edits: list[str] = []
    try:
        policy = _least_review(policy, choice, ui)  # the administrator's least review (core/policy.py)
        if policy == "ask" and ui is not None:
            decision = await flow.waiting_for(ui.review_request(flow, key, params, choice, list(router.models)))
            if not decision.approved:
                raise SamplingDeclined("the request was denied at review, before it reached a model")
            params = decision.value
            picked = router.models.get(decision.model or "")
            if picked is not None and picked is not choice.config:
                choice = Choice(picked, "picked at review")
            edits += [f"request {what}" for what in decision.edited]
        elif policy == "always" and ui is not None:
            ui.show_sampling(flow, key, params, choice, None)
        result = await create_message(choice.config, params, SamplingContext(flow=flow, key=key, ui=ui))
        if policy == "ask" and ui is not None:
            decision = await flow.waiting_for(ui.review_reply(flow, key, params, result, choice))
            if not decision.approved:
                raise SamplingDeclined(f"the reply of {choice.config.name} was denied at review")
            result = decision.value
            edits += [f"reply {what}" for what in decision.edited]
        elif policy == "always" and ui is not None:
            ui.show_sampling(flow, key, params, choice, result)
    except SamplingDeclined as exc:
        flow.notes.append(f"{label}: you declined ({exc})")
        return ErrorData(code=DECLINED_CODE, message=f"The user declined the sampling request: {exc}")
    except SamplingError as exc:
        flow.notes.append(f"{label} failed with {choice.config.describe()}: {exc}")
        return ErrorData(code=FAILED_CODE, message=f"The client's model {choice.config.name!r} failed: {exc}")
    reviewed = "; you edited " + ", ".join(edits) if edits else ("; reviewed" if policy == "ask" else "")
    stop = f", stop reason {result.stop_reason}" if result.stop_reason else ""
    reported = f" as {result.model!r}" if result.model not in (choice.config.name, choice.config.model) else ""
    flow.notes.append(f"{label} answered by {choice.config.describe()}{reported}{stop} — {choice.why}{reviewed}")
    return result
