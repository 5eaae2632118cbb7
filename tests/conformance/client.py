"""The notebook as a client under the official MCP conformance suite.

``npx @modelcontextprotocol/conformance client --command "python tests/conformance/client.py"
--scenario NAME`` starts a scenario's test server, then runs this script with the server's URL as
the last argument and the scenario's name in ``MCP_CONFORMANCE_SCENARIO``. The script does what a
notebook user would: it starts an IPython shell, loads the extension, goes headless
(``%config MCPMagics.interactive = False``) and runs ``%mcp`` magics against the URL. Elicitation
forms are answered by the same form model a person fills (here with ``--accept-defaults``).

Exit status 0 when every magic succeeded; the suite judges the protocol side itself.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

# What each scenario asks of a client, as the magics a notebook user would type.
SCENARIOS: dict[str, list[str]] = {
    # the handshake (protocol version, clientInfo), then a first request
    "initialize": ["tools conformance"],
    # list the tools, call add_numbers with typed arguments (numbers, not strings)
    "tools_call": ["tools conformance", "call conformance.add_numbers a=5 b=3"],
    # a form whose every field has a default: accept it with the defaults (SEP-1034)
    "elicitation-sep1034-client-defaults": ["call conformance.test_client_elicitation_defaults --accept-defaults"],
    # a tool whose response stream the server closes; the client reconnects with Last-Event-ID
    "sse-retry": ["tools conformance", "call conformance.test_reconnection"],
    # auth/*: connecting signs in (the 401 on initialize); then a first request with the token
    "auth/scope-step-up": ["tools conformance", "call conformance.test-tool"],
}


# The suite's CIMD scenario wants a client id that is a URL (the SDK's own driver uses this one).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def sign_in_flags(scenario: str, context: dict[str, Any], url: str) -> str:
    """The ``%mcp connect`` sign-in flags a user would give for this scenario's server.

    The suite hands pre-registered credentials in ``MCP_CONFORMANCE_CONTEXT``; secrets go into
    environment variables and the flags name them, as a user would (never the value on the line).
    """
    flags = []
    if context.get("client_id"):
        flags += ["--client-id", context["client_id"]]
    if context.get("client_secret"):
        os.environ["CONFORMANCE_CLIENT_SECRET"] = context["client_secret"]
        flags += ["--client-secret-env", "CONFORMANCE_CLIENT_SECRET"]
    if context.get("private_key_pem"):
        os.environ["CONFORMANCE_PRIVATE_KEY"] = context["private_key_pem"]
        flags += ["--private-key-env", "CONFORMANCE_PRIVATE_KEY"]
    if scenario.startswith("auth/client-credentials"):
        flags.append("--client-credentials")
    if context.get("idp_id_token"):  # cross-app access: an enterprise user's ID token and their IdP
        os.environ["CONFORMANCE_ID_TOKEN"] = context["idp_id_token"]
        flags += ["--id-token-env", "CONFORMANCE_ID_TOKEN", "--idp-token-endpoint", context["idp_token_endpoint"]]
        flags += ["--idp-client-id", context["idp_client_id"]] if context.get("idp_client_id") else []
        flags += ["--issuer", authorization_server(url)]
    return " ".join(flags)


def authorization_server(url: str) -> str:
    """The MCP server's authorization server, from its protected-resource metadata (RFC 9728).

    An enterprise user is told which authorization server their MCP server uses; the suite does not
    say, so the driver reads it where an administrator would look it up.
    """
    import httpx2

    parts = httpx2.URL(url)
    metadata = httpx2.get(
        f"{parts.scheme}://{parts.netloc.decode()}/.well-known/oauth-protected-resource{parts.path}", timeout=10
    ).json()
    return str(metadata["authorization_servers"][0])


def run(url: str, scenario: str, say: Callable[[str], None] = print) -> None:
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython()
    ip.run_line_magic("load_ext", "mcp_notebook")
    ip.run_line_magic("config", "MCPMagics.interactive = False")
    flags = ""
    if scenario.startswith("auth/"):
        # A terminal user signing in: the notebook opens "the browser" (BROWSER, a stand-in that follows
        # the suite's auto-approving redirects) and its loopback catcher takes the code.
        here = os.path.dirname(os.path.abspath(__file__))
        os.environ["BROWSER"] = (
            f"{sys.executable} {os.path.join(os.path.dirname(here), 'support', 'follow_redirects.py')} %s"
        )
        ip.run_line_magic("config", f"MCPMagics.oauth_client_metadata_url = {CLIENT_METADATA_URL!r}")
        ip.run_line_magic("config", "MCPMagics.sign_in_timeout = 25.0")
        flags = sign_in_flags(scenario, json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}"), url)
    lines = [
        f"connect conformance {flags} {url}".replace("  ", " "),
        *SCENARIOS.get(scenario, ["tools conformance"]),
        "disconnect conformance",
    ]
    for line in lines:
        say(f"%mcp {line}")
        result = ip.run_line_magic("mcp", line)
        if result is not None and hasattr(result, "_repr_mimebundle_"):
            say(result._repr_mimebundle_().get("text/plain", ""))
        elif result is not None and hasattr(result, "result"):
            say(repr(result.result()))


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: client.py [ARGS...] SERVER_URL  (scenario name in MCP_CONFORMANCE_SCENARIO)", file=sys.stderr)
        return 2
    url, scenario = argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        run(url, scenario)
    except Exception as exc:  # noqa: BLE001 - report in one line, fail the run
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
