"""``%mcp auth [list]`` / ``%mcp auth logout NAME|--all``: the OAuth sign-ins kept for you (never in a notebook)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "auth", "OAuth sign-ins kept for you (in your Jupyter data folder, never in notebooks): list them, or sign out."
    )
    p.add_argument("action", choices=["list", "logout"], nargs="?", default="list")
    p.add_argument("server", nargs="?", help="a connection name or a server URL (logout)")
    p.add_argument("--all", action="store_true", help="logout: forget every sign-in")
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...notebook.display import Table

    ns, _ = magic.parsers["auth"].parse(words)
    vault = magic.session.vault
    if ns.action == "logout":
        if ns.all:
            print(f"Signed out everywhere: forgot {vault.clear()} sign-in(s).")
            return None
        if not ns.server:
            raise UsageError("say which: %mcp auth logout NAME (a connection or a server URL), or --all")
        url = magic.session.registry.get(ns.server).target.url if ns.server in magic.session.registry else ns.server
        if not vault.remove(url):
            raise UsageError(f"no sign-in kept for {url!r}. See %mcp auth list.")
        print(f"Signed out of {url}: its tokens are forgotten (the next call signs in again).")
        return None
    names = {c.target.url: c.name for c in magic.session.registry if c.target.kind == "http"}
    rows = [
        [
            names.get(e["resource"], ""),
            e["resource"],
            e["issuer"],
            e["scope"],
            _expiry(e["expires_at"]),
            "yes" if e["refreshable"] else "no",
        ]
        for e in vault.entries()
    ]
    return Table(
        ["connection", "server", "issuer", "scope", "expires", "refreshable"],
        rows,
        title=f"Sign-ins kept in {vault.path}",
        empty="No sign-ins kept.",
    )


def _expiry(at: float | None) -> str:
    """When an access token expires, relative to now ("in 5 min", "expired 2 h ago")."""
    import time

    if at is None:
        return "unknown"
    left = at - time.time()
    span = abs(left)
    text = f"{span:.0f} s" if span < 120 else f"{span / 60:.0f} min" if span < 7200 else f"{span / 3600:.0f} h"
    return f"in {text}" if left >= 0 else f"expired {text} ago (refreshed on next use)"
