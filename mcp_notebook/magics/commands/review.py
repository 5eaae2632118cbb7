"""``%mcp review [remote | ask | always | never]``: whether you see sampling requests and replies first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser, check_choice

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "review",
        "Review of sampling in interactive runs: %mcp review [remote | ask | always | never]. remote (the default): ask only when "
        "the request leaves this machine (an openai or anthropic model not on a loopback address); echo, callable, human and "
        "local models such as Ollama on 127.0.0.1 answer without review. ask: see and edit every request, then Send or Deny; "
        "then the reply, then Return or Deny. always: show both without waiting. never: show neither. Headless runs never review.",
    )
    p.add_argument("policy", nargs="?", metavar="{remote,ask,always,never}")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    ns, _ = magic.parsers["review"].parse(words)
    check_choice("review", ns.policy, ["remote", "ask", "always", "never"])
    if ns.policy:
        magic.review = ns.policy
    meaning = {
        "remote": "the default: a request to a model on another machine (openai or anthropic, not on a loopback address) waits "
        "for you to review it, then its reply; echo, callable, human and local models answer without review",
        "ask": "you see each sampling request and may edit it, then Send or Deny; then the reply, then Return or Deny",
        "always": "each request and reply is shown in the cell; nothing waits for you",
        "never": "requests go to the model and replies to the server without being shown",
    }[magic.session.router.review]
    print(f"Sampling review: {magic.session.router.review} ({meaning}). Headless runs never review.")
