"""``%mcp prompt [SERVER.]NAME key=value ...``: get a prompt, its arguments checked against the ones it declares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..args import check_prompt_arguments, parse_body, parse_json_object, parse_pairs
from ..listings import declared_arguments
from ..parser import Parser, flow_args, name_and_pairs

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser("prompt", "Get a prompt: %mcp prompt [SERVER.]NAME key=value ...")
    p.add_argument("prompt")
    p.add_argument("--json", metavar="JSON", help="arguments as a JSON object")
    flow_args(p)
    name_and_pairs(p, "[SERVER.]NAME [key=value ...]")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    ns, extra = magic.parsers["prompt"].parse(words, intermixed_pairs=True)
    conn, name = magic.session.resolve(ns.prompt)
    arguments: dict[str, Any] = parse_json_object(ns.json) if ns.json else {}
    if cell is not None:
        arguments = {**parse_body(cell), **arguments}
    arguments.update(parse_pairs(extra))
    check_prompt_arguments(f"{conn.name}.{name}", declared_arguments(magic.session, conn, name), arguments)
    return magic.run_flow("prompts/get", conn, name, arguments, ns)
