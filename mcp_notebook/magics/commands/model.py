"""``%mcp model add|use|remove|list``: the models that answer sampling requests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ...core.text import mcp_line
from ..parser import Parser, check_choice

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "model",
        "Models that answer sampling requests: %mcp model add NAME PROVIDER [MODEL] [options] | use NAME | remove NAME | list. "
        f"PROVIDER: {_providers_help()}.",
    )
    p.add_argument("action", nargs="?", default="list", metavar="{add,use,remove,list}")
    p.add_argument("name", nargs="?")
    p.add_argument("provider", nargs="?")
    p.add_argument("model", nargs="?")
    p.add_argument("--base-url", metavar="URL", help="the endpoint, e.g. http://localhost:11434/v1 for Ollama")
    p.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding the API key (default for the official endpoints: OPENAI_API_KEY / ANTHROPIC_API_KEY); the key is never shown or saved",
    )
    p.add_argument(
        "--cost",
        type=float,
        metavar="X",
        help="how expensive the model is, 0..1 (matched against a request's costPriority)",
    )
    p.add_argument("--speed", type=float, metavar="X", help="how fast it is, 0..1 (speedPriority)")
    p.add_argument("--intelligence", type=float, metavar="X", help="how capable it is, 0..1 (intelligencePriority)")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="how long to wait for a hosted model (default 60)")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...notebook.display import Table

    ns, _ = magic.parsers["model"].parse(words)
    check_choice("model", ns.action, ["add", "use", "remove", "list"])
    if ns.action == "add":
        if not ns.name or not ns.provider:
            raise UsageError(
                "%mcp model add NAME PROVIDER [MODEL] [--base-url URL] [--api-key-env VAR] [--cost X --speed X --intelligence X]"
            )
        magic.session.add_model(ns.name, ns.provider, ns.model, base_url=ns.base_url, api_key_env=ns.api_key_env,
                               cost=ns.cost, speed=ns.speed, intelligence=ns.intelligence, timeout=ns.timeout)  # fmt: skip
    elif ns.action in ("use", "remove"):
        if not ns.name:
            raise UsageError(f"{mcp_line('%mcp', 'model', ns.action, 'NAME')} (see %mcp model list)")
        (magic.session.use_model if ns.action == "use" else magic.session.remove_model)(ns.name)
    router = magic.session.router

    def rating(value: float | None) -> str:
        return "" if value is None else f"{value:g}"

    rows = [
        [
            ("* " if n == router.default else "  ") + n,
            c.provider,
            c.model or "",
            c.base_url or "",
            c.api_key_env or "",
            rating(c.cost),
            rating(c.speed),
            rating(c.intelligence),
        ]
        for n, c in router.models.items()
    ]
    columns = ["name", "provider", "model", "base url", "key from env", "cost", "speed", "intelligence"]
    table = Table(columns, rows, title=f"models (* answers by default; review: {router.review})")
    table.asked = ns.action in (
        None,
        "list",
    )  # after add/use/remove: its confirmation, shown as the cell's last line only
    return table


def _providers_help() -> str:
    """The providers as ``%mcp model --help`` lists them, each in its own module's words (``Provider.described``)."""
    from ...sampling.providers import PROVIDERS

    return ", ".join(f"{p.name} ({p.described})" if p.described else p.name for p in PROVIDERS.values())
