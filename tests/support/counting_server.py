"""A stdio demo server that writes down every ``tools/call`` it receives: did a resume send the first round again?

``python -m tests.support.counting_server LOG``: the demo's ``provision_db`` (region, then confirm),
with request-state keys from ``MCPNB_COUNT_KEY`` (every process started with the same key accepts
the others' state, as a restarted server must), and a middleware (``MCPServer(middleware=...)``)
that appends one JSON line per ``tools/call`` to ``LOG``: whether it carried a request state, and
the keys of its input responses. Each kernel starts its own process; the log is shared.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer, RequestStateSecurity

from mcp_notebook.demo import provision_db

KEY_ENV = "MCPNB_COUNT_KEY"


def build(log: str) -> MCPServer[Any]:
    async def count(ctx: Any, call_next: Any) -> Any:
        if ctx.method == "tools/call" and ctx.request_id is not None:
            params = ctx.params or {}
            line = {
                "state": params.get("requestState") is not None,
                "responses": sorted(params.get("inputResponses") or {}),
            }
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line) + "\n")
        return await call_next(ctx)

    server: MCPServer[Any] = MCPServer(
        "counting", request_state_security=RequestStateSecurity(keys=[os.environ[KEY_ENV]]), middleware=[count]
    )
    server.tool(name="provision_db")(provision_db)
    return server


def calls(log: str) -> list[dict[str, Any]]:
    """The ``tools/call`` requests written down so far, oldest first."""
    if not os.path.exists(log):
        return []
    with open(log, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def main() -> None:
    server = build(sys.argv[1])
    anyio.run(server.run_stdio_async)


if __name__ == "__main__":
    main()
