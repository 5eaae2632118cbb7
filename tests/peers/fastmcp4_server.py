"""A small FastMCP 4 server that tests/peers/test_servers.py runs over stdio as a real peer.

It runs on the Python of ``.peers/venv`` (FastMCP 4 and the ``mcp`` it wants), never on the
package's own venv: ``.peers/venv/bin/python tests/peers/fastmcp4_server.py``. Its tools:

- ``add``: a plain tool.
- ``book_table``: asks with ``ctx.elicit`` (two fields). FastMCP 4 sends that over the 2025
  back-channel only, so the test connects with ``--protocol legacy``.
- ``summarize``: sampling. FastMCP 4 has no ``ctx.sample`` any more (server-initiated sampling is
  deprecated); on 2026-07-28 a tool asks with its guard pattern instead: it returns an
  ``InputRequiredResult`` holding a ``sampling/createMessage`` request and reads the model's reply
  from ``ctx.input_responses`` when the client calls again.
- ``report``: sends a log message with structured data (``extra``), then returns.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastmcp import Context, FastMCP
from mcp.types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)

SUMMARY_SYSTEM = "You summarize text in one short sentence."

server = FastMCP("fastmcp4-peer")


@server.tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@dataclass
class Booking:
    guests: int
    name: str


@server.tool
async def book_table(restaurant: str, ctx: Context) -> str:
    """Book a table; asks who it is for and how many come."""
    answer = await ctx.elicit(f"Who is the table at {restaurant} for?", Booking)
    if answer.action == "accept":
        return f"Booked {restaurant} for {answer.data.guests} under {answer.data.name}."
    return f"No booking ({answer.action})."


@server.tool
async def summarize(text: str, ctx: Context) -> str | InputRequiredResult:
    """Summarize ``text`` with the client's model (asked for in the result, 2026-07-28 style)."""
    reply = (ctx.input_responses or {}).get("summary")
    if not isinstance(reply, CreateMessageResult):
        ask = CreateMessageRequest(
            params=CreateMessageRequestParams(
                messages=[SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))],
                system_prompt=SUMMARY_SYSTEM,
                max_tokens=60,
            )
        )
        return InputRequiredResult(input_requests={"summary": ask})
    content = reply.content
    said = content.text if isinstance(content, TextContent) else str(content)
    return f"Summary by {reply.model}: {said}"


@server.tool
async def report(table: str, ctx: Context) -> str:
    """Log a message with structured data about ``table``, then say so."""
    await ctx.log(
        f"checked {table}",
        level="warning",
        logger_name="fastmcp4-peer",
        extra={"table": table, "rows": 3, "columns": ["id", "name"]},
    )
    return f"Reported on {table}."


if __name__ == "__main__":
    server.run(transport="stdio", show_banner=False)
