"""``%mcp call [SERVER.]TOOL key=value ...`` (or ``%%mcp call`` with a JSON/YAML body): call a tool in this cell."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import FlowError
from ..args import build_arguments, parse_body, parse_json_object, parse_pairs
from ..parser import Parser, flow_args, name_and_pairs

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "call",
        "Call a tool: %mcp call [SERVER.]TOOL key=value ... (or a JSON cell body with %%mcp call). A result the tool marks isError is shown as an error and fails the cell, so Run All stops there.",
    )
    p.add_argument("tool")
    p.add_argument("--json", metavar="JSON", help="arguments as a JSON object (key=value words override)")
    p.add_argument(
        "--task", action="store_true",
        help="run as a task where the server offers tasks: the call returns at once and is followed by polling; it is saved so "
        "a new kernel can pick it up (%%mcp resume ID). A tool that requires a task runs as one anyway",
    )  # fmt: skip
    p.add_argument(
        "--ttl",
        type=float,
        metavar="SECONDS",
        help="how long the server should keep the task and its result (2025-11-25 servers; they may choose otherwise)",
    )
    p.add_argument(
        "--frame", action="store_true",
        help="give the result as a pandas DataFrame (df = %%mcp call ... --frame): its structured content's list of "
        "records, or the one such list an object holds; anything else is refused, naming its shape",
    )  # fmt: skip
    flow_args(p)
    name_and_pairs(p, "[SERVER.]TOOL [key=value ...]")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    ns, extra = magic.parsers["call"].parse(words, intermixed_pairs=True)
    conn, tool = magic.session.resolve(ns.tool)
    json_args = parse_json_object(ns.json) if ns.json else {}
    if cell is not None:
        json_args = {**parse_body(cell), **json_args}
    pairs, label = parse_pairs(extra), f"{conn.name}.{tool}"
    try:
        schema = magic.session.tool_schema_sync(conn, tool)
    except FlowError as exc:
        if exc.kind not in ("sign_in_required", "sign_in_pending") or not magic.is_interactive() or ns.wait:
            raise

        async def prepare() -> dict[str, Any]:  # after the sign-in this call's cell shows
            return build_arguments(label, await magic.session.tool_schema(conn, tool), pairs, json_args)

        return magic.run_flow("tools/call", conn, tool, {}, ns, prepare=prepare)
    arguments = build_arguments(label, schema, pairs, json_args)
    return magic.run_flow("tools/call", conn, tool, arguments, ns)
