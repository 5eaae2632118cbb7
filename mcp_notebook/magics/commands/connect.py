"""``%mcp connect NAME TARGET`` (a URL, a server object, module:attr, or ``-- COMMAND ARGS``), and ``--from-config``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ...auth.sdk_provider import OAuthOptions
from ...core.text import plain_text
from ..args import parse_pairs
from ..hints import connect_notes
from ..parser import Parser, headers_of

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "connect",
        "Connect NAME to an MCP server: an http(s) URL, a server object in the notebook, module:attr, or -- COMMAND ARGS (stdio). "
        "Or --from-config [PATH] [NAME ...] [--all] [--trust-project]: the servers of Claude Desktop's, VS Code's and "
        "jupyter-mcp-manager's user configs, then of .mcp.json and .vscode/mcp.json from the notebook's folder up to the project root "
        "(the nearest .git, never above home); listed, the ones named (or all) connected, ${env:VAR} read from the environment. "
        "A project file's entry is used only once you approved it as shown (asked in the cell; headless: --trust-project), "
        "again after the file changes; your own entries keep their names.",
    )  # fmt: skip
    p.add_argument("name", nargs="?")
    p.add_argument("target", nargs="?", help="URL, object name or module:attr (stdio: put the command after --)")
    p.add_argument("--header", action="append", default=[], metavar="K:V", help="HTTP header (never saved)")
    p.add_argument(
        "--bearer-env", metavar="VAR", help="send 'Authorization: Bearer $VAR' (the token is read from the environment)"
    )
    p.add_argument(
        "--protocol",
        default="auto",
        choices=["auto", "legacy", "2026-07-28"],
        help="protocol generation (default: auto)",
    )
    p.add_argument("--cwd", help="working directory of a stdio server")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="environment variable for a stdio server")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="per-request read timeout")
    p.add_argument(
        "--client-id", metavar="ID", help="sign in as this pre-registered OAuth client (else the server's registration)"
    )
    p.add_argument(
        "--client-secret-env", metavar="VAR", help="the OAuth client's secret, read from environment variable VAR"
    )
    p.add_argument(
        "--scope", metavar="SCOPES", help="OAuth scopes to ask for when signing in (space-separated, quoted)"
    )
    p.add_argument(
        "--client-credentials",
        action="store_true",
        help="sign in as a machine (OAuth client credentials: --client-id with --client-secret-env or --private-key-env)",
    )
    p.add_argument(
        "--private-key-env",
        metavar="VAR",
        help="PEM private key of a private_key_jwt client, from environment variable VAR",
    )
    p.add_argument(
        "--id-token-env",
        metavar="VAR",
        help="enterprise sign-in (cross-app access): your identity provider's ID token, from VAR",
    )
    p.add_argument(
        "--idp-token-endpoint",
        metavar="URL",
        help="enterprise sign-in: the identity provider's token endpoint (token exchange)",
    )
    p.add_argument(
        "--idp-client-id", metavar="ID", help="enterprise sign-in: this client's id at the identity provider"
    )
    p.add_argument(
        "--issuer",
        metavar="URL",
        help="pin sign-in to this authorization server (issuer URL): a client secret, key or workload token goes nowhere else",
    )
    p.add_argument(
        "--assertion-env",
        metavar="VAR",
        help="workload identity: a ready-made JWT (GitHub OIDC, cloud, CI) in VAR, exchanged by the jwt-bearer grant (with --client-id)",
    )
    p.add_argument(
        "--assertion-file",
        metavar="PATH",
        help="workload identity: a JWT in a file, read at each exchange (a Kubernetes projected token; with --client-id)",
    )
    p.add_argument(
        "--no-sign-in", action="store_true", help="never start an OAuth sign-in for this server (a 401 is an error)"
    )
    p.add_argument(
        "--from-config",
        nargs="?",
        const="",
        metavar="PATH",
        help="read MCP configs (the user's, then this notebook's folder up to the project root; or PATH); list them, or connect the NAMEs given",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="with --from-config: connect every server found that is yours or approved (the others are listed)",
    )
    p.add_argument(
        "--trust-project", action="store_true",
        help="with --from-config: approve the named project entries (.mcp.json, .vscode/mcp.json) as they are now, without asking; "
        "read what they run first: --from-config alone lists them",
    )  # fmt: skip
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    if "--from-config" in words and "--" not in words:
        return _from_config(magic, words)
    command: list[str] = []
    if "--" in words:
        i = words.index("--")
        words, command = words[:i], words[i + 1 :]
    ns, _ = magic.parsers["connect"].parse(words)
    if not ns.name:
        raise UsageError("missing NAME: %mcp connect NAME TARGET (or --from-config to use the configs you have)")
    if command and ns.target:
        raise UsageError("give either a TARGET or -- COMMAND, not both")
    if not command and not ns.target:
        raise UsageError("missing TARGET: a URL, an object name, module:attr, or -- COMMAND ARGS")
    oauth = None
    sign_in_flags = (
        ns.client_id,
        ns.client_secret_env,
        ns.scope,
        ns.client_credentials,
        ns.private_key_env,
        ns.id_token_env,
        ns.idp_token_endpoint,
        ns.idp_client_id,
        ns.issuer,
        ns.assertion_env,
        ns.assertion_file,
    )
    if any(sign_in_flags):
        oauth = OAuthOptions(*sign_in_flags)
    conn = magic.session.connect(
        ns.name, command or ns.target, headers=headers_of(ns.header) or None, bearer_env=ns.bearer_env, protocol=ns.protocol,
        cwd=ns.cwd, env=parse_pairs(ns.env) if ns.env else {}, namespace=magic.session.namespace or None, read_timeout=ns.timeout,
        oauth=oauth, sign_in=not ns.no_sign_in, interactive=magic.is_interactive(),
    )  # fmt: skip
    request = conn.sign_in.pending if conn.sign_in is not None and conn.state == "connecting" else None
    if request is not None and conn.sign_in is not None:  # a person signs in here; the connection opens after
        from IPython.display import display

        from ...core.threads import KernelLoop
        from ...notebook.sign_in_view import SignInPanel

        print(
            f"Connecting {conn.name!r} to {conn.target.describe()}: the server wants you to sign in first. Calls wait for it."
        )
        if conn.sign_in.claim_panel(request):  # one panel per sign-in: calls waiting on it say so instead
            display(SignInPanel(request, conn.sign_in, call=KernelLoop().call).widget)
        return None
    who = (
        conn.server_name or "an unnamed server"
    )  # its own name, never the connection's (that would read as the server's)
    print(
        plain_text(f"Connected {conn.name!r} to {who} at {conn.target.describe()} (protocol {conn.protocol_version}).")
    )
    for note in connect_notes(conn):
        print(plain_text(note))
    return None


def _from_config(magic: Magic, words: list[str]) -> Any:
    """``%mcp connect --from-config [PATH] [NAME ...] [--all] [--trust-project]``: list the servers found, connect the ones named."""
    import os

    from ...notebook.display import Table
    from ...session.from_config import COLUMNS, connect_from_config

    if "-h" in words or "--help" in words:
        magic.parsers["connect"].parse(["--help"])
    flags = ("--from-config", "--all", "--trust-project")
    rest = [w for w in words if w not in flags]
    unknown = [w for w in rest if w.startswith("-")]
    if unknown:
        raise UsageError(f"--from-config takes [PATH] [NAME ...] [--all] [--trust-project], not {unknown[0]}")
    first = rest[0] if rest else ""
    is_path = bool(first) and (os.path.exists(os.path.expanduser(first)) or first.endswith(".json") or os.sep in first)
    path, names = (first, rest[1:]) if is_path else (None, rest)
    if names and "--all" in words:
        raise UsageError("--from-config: name the servers to connect, or --all, not both")
    rows, notes = connect_from_config(
        magic.session,
        path,
        names,
        "--all" in words,
        interactive=magic.is_interactive(),
        trust_project="--trust-project" in words,
    )
    return Table(
        COLUMNS,
        rows,
        title="MCP server configs (values of ${env:VAR} are never shown or saved)",
        empty="No MCP config files found.",
        notes=notes,
    )
