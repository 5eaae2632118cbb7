"""``%mcp tools|prompts|resources`` rows (``magics/listings.py``): one failing part never aborts the rest.

A real in-process server (the SDK's low-level ``Server``) whose resource list works and whose
template list fails, as the conformance suite's header server's malformed answer did: the
resources are listed, and the templates' failure is a row that says what went wrong.
"""

from __future__ import annotations

from typing import Any

from mcp import MCPError
from mcp.server.lowlevel import Server
from mcp.types import ListResourcesResult, ListResourceTemplatesResult, Resource

from mcp_notebook.magics.listings import listing_rows
from mcp_notebook.session.session import Session


def _server() -> Server[Any]:
    async def resources(_ctx: Any, _params: Any) -> ListResourcesResult:
        return ListResourcesResult(resources=[Resource(uri="file:///notes.txt", name="Notes", mimeType="text/plain")])

    async def templates(_ctx: Any, _params: Any) -> ListResourceTemplatesResult:
        raise MCPError(code=-32603, message="the template index is down")

    return Server("half", on_list_resources=resources, on_list_resource_templates=templates)


def test_a_failed_template_list_leaves_the_resources_listed() -> None:
    session = Session()
    try:
        session.connect("half", _server())
        rows = listing_rows(session, "resources", "half")
        assert rows[0] == ["half", "", "", "", rows[0][4]] and rows[0][4].startswith(
            "(could not list its resource templates: "
        )
        assert "the template index is down" in rows[0][4]
        assert rows[1] == ["half", "file:///notes.txt", "Notes", "text/plain", ""]
        assert len(rows) == 2  # no "offers no resources" row: it offers one
    finally:
        session.close()
