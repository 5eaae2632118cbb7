"""MCP Apps (``io.modelcontextprotocol/ui``) as the wire sees them: the advertisement, a tool's App, the checks.

What a connection says it renders (``advertisement``: the extension with the one MIME type the page
renders), what a tool's ``_meta.ui`` names (``ui_of``: its ``ui://`` page; ``visibility_of``: who may
call it, the known words only), and the checks every server value passes before it goes anywhere
(``checked_csp``: plain origins only, bounded; ``checked_permissions``: the known names). The App's
host, which shows it in a cell and answers the page, is ``notebook.apps``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.types import Tool

__all__ = [
    "APPS_EXTENSION", "APP_MIME", "CSP_KEYS", "PERMISSIONS", "advertisement", "checked_csp", "checked_permissions", "ui_of",
    "visibility_note", "visibility_of",
]  # fmt: skip


APPS_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME = "text/html;profile=mcp-app"
MAX_DOMAINS = 32
DOMAIN = re.compile(
    r"^(?:https|wss)://[A-Za-z0-9*.-]+(?::\d{1,5})?$|^(?:http|ws)://(?:localhost|127\.0\.0\.1|\[::1\])(?::\d{1,5})?$"
)
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")


def advertisement() -> Any:
    """The client extension that tells servers this client renders Apps (and which MIME type)."""
    from mcp.client.extension import advertise

    return advertise(APPS_EXTENSION, {"mimeTypes": [APP_MIME]})


VISIBILITY = ("model", "app")  # who may see a tool (MCP Apps ``_meta.ui.visibility``); other words are not ours to read
MAX_VISIBILITY_ITEMS = 16  # a server's visibility list is read this far and no further


def visibility_of(tool: Tool | None) -> list[str] | None:
    """A tool's ``_meta.ui.visibility`` as the known words it names, in order (``None``: it says nothing: both).

    Server text: only ``"model"`` and ``"app"`` are kept (anything else, markup included, is dropped),
    from the first ``MAX_VISIBILITY_ITEMS`` entries; a value that is not a list says nothing. Read with
    or without a ``resourceUri``: a tool an App calls need not have an App of its own.
    """
    meta = tool.meta if tool is not None else None
    ui = meta.get("ui") if isinstance(meta, dict) else None
    raw = ui.get("visibility") if isinstance(ui, dict) else None
    if not isinstance(raw, list):
        return None
    known = [v for v in raw[:MAX_VISIBILITY_ITEMS] if isinstance(v, str) and v in VISIBILITY]
    return list(dict.fromkeys(known))


def visibility_note(tool: Tool | None) -> str | None:
    """What a listing says about who may call ``tool``, when the model may not (``None``: nothing to say)."""
    seen = visibility_of(tool)
    if seen is None or "model" in seen:
        return None
    return "for Apps only" if "app" in seen else "hidden from the model and from Apps"


def ui_of(tool: Tool | None) -> tuple[str, list[str]] | None:
    """A tool's App: its ``ui://`` resource URI and visibility (``None``: the tool has no App).

    Reads ``_meta.ui.resourceUri`` (and the older flat ``_meta["ui/resourceUri"]``); visibility
    (``visibility_of``) defaults to ``["model", "app"]``.
    """
    meta = tool.meta if tool is not None else None
    if not isinstance(meta, dict):
        return None
    found = meta.get("ui")
    ui: dict[str, Any] = found if isinstance(found, dict) else {}
    uri = ui.get("resourceUri", meta.get("ui/resourceUri"))
    if not isinstance(uri, str) or not uri.startswith("ui://") or len(uri) > 2000:
        return None
    seen = visibility_of(tool)
    return uri, ["model", "app"] if seen is None else seen


def checked_csp(value: Any) -> dict[str, list[str]]:
    """The resource's ``_meta.ui.csp`` domains that are plain origins (https/wss, or local http/ws); others are dropped."""
    csp = value if isinstance(value, dict) else {}
    out: dict[str, list[str]] = {}
    for key in CSP_KEYS:
        items = csp.get(key)
        if isinstance(items, list):
            out[key] = [d for d in items if isinstance(d, str) and len(d) <= 200 and DOMAIN.match(d)][:MAX_DOMAINS]
    return out


def checked_permissions(value: Any) -> dict[str, dict[str, Any]]:
    permissions = value if isinstance(value, dict) else {}
    return {name: {} for name in PERMISSIONS if isinstance(permissions.get(name), dict)}
