"""``%mcp serve NAME``: serve a notebook-defined server over streamable HTTP (a bearer token unless --no-auth on loopback)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ...core.text import mcp_line
from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser("serve", "Serve a notebook-defined server over streamable HTTP in the background.")
    p.add_argument("name")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    p.add_argument("--keys-env", metavar="VAR", help="seal request state with the key in $VAR, so it survives restarts")
    p.add_argument(
        "--no-auth",
        action="store_true",
        help="no bearer token (loopback hosts only: any local process can then call it)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another Host name clients use to reach it (e.g. a DNS name)",
    )
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...prototype import LOOPBACK

    ns, _ = magic.parsers["serve"].parse(words)
    if ns.no_auth and ns.host not in LOOPBACK:
        raise UsageError(
            f"--no-auth is only allowed on a loopback host (127.0.0.1, localhost, ::1), not {ns.host}: "
            "anyone who can reach the port could call this notebook's server"
        )
    if ns.host not in LOOPBACK:
        print(
            f"Warning: serving on {ns.host} lets other machines call this notebook's server with its token, "
            "which plain HTTP sends unencrypted. Prefer 127.0.0.1 unless you mean it."
        )
    if ns.no_auth:
        print(
            f"Warning: --no-auth: any process on this machine can call {ns.name!r}, and through its tools reach this kernel."
        )
    served = magic.session.prototypes.serve(
        ns.name, ns.host, ns.port, ns.keys_env, no_auth=ns.no_auth, allowed_hosts=ns.allow_host
    )
    sealed = f", request state sealed with ${ns.keys_env}" if ns.keys_env else ""
    auth = " (no authentication)" if served.token is None else " (bearer token required)"
    print(f"Serving {ns.name!r} at {served.url}{auth}{sealed}. Stop with {mcp_line('%mcp', 'stop', ns.name)}.")
    if served.token is not None:
        # Never printed: outputs are saved with the notebook, and notebooks get shared.
        print(
            "Clients send 'Authorization: Bearer TOKEN'. The token is .token of what this returns "
            f"(served = {mcp_line('%mcp', 'serve', ns.name)}; served.token); %mcp connect from this notebook adds it by itself."
        )
    return served
