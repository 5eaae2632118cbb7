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

# What each scenario asks of a client, as the magics a notebook user would type. A scenario whose
# suite hands the calls to make (``toolCalls`` in ``MCP_CONFORMANCE_CONTEXT``) gets them as ``%%mcp call``
# cells with the arguments as the JSON body, after these lines (``context_calls``).
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
    # SEP-2322: an input-required flow echoing requestState (answered with the form's defaults), one that
    # sends none, an unrelated call that must carry neither, and a result without resultType (complete)
    "sep-2322-client-request-state": [
        "tools conformance", "call conformance.test_mrtr_echo_state --accept-defaults",
        "call conformance.test_mrtr_no_state --accept-defaults", "call conformance.test_mrtr_unrelated",
        "call conformance.test_mrtr_no_result_type",
    ],
    # SEP-2243: Mcp-Method and Mcp-Name on every kind of request (names and URIs with characters to encode)
    "http-standard-headers": [
        "tools conformance", "resources conformance", "prompts conformance", "call conformance.test_headers",
        "call conformance.my-hyphenated-tool", "read conformance 'file:///path/to/file%20name.txt'",
        "read conformance 'https://example.com/resource?id=123'", "prompt conformance.test_prompt",
    ],
    # tools with invalid x-mcp-header declarations are dropped (and said so); the valid one is still called
    "http-invalid-tool-headers": ["tools conformance", "call conformance.valid_tool region=us-west1"],
    # SEP-2640 skills: listing reads no file; loading one reads its SKILL.md, which the server tampered with
    # (digest, size or frontmatter): the notebook refuses it and reads none of its other files
    "sep-2640-client-no-prefetch": ["skills conformance"],
    "sep-2640-client-verify-digest": ["skills conformance", "skill conformance.pdf-processing"],
    "sep-2640-client-verify-size": ["skills conformance", "skill conformance.pdf-processing"],
    "sep-2640-client-verify-frontmatter": ["skills conformance", "skill conformance.pdf-processing"],
}  # fmt: skip


def echo_schema(ip: Any) -> list[tuple[str, str]]:
    """json-schema-2020-12-preservation: the focal tool's input schema, as this client kept it, sent back verbatim."""
    session = ip.magics_manager.registry["MCPMagics"].session
    tools = session.runtime.run(session.registry.get("conformance").tools())
    schema = tools["json_schema_2020_12_tool"].input_schema
    return [("call conformance.json_schema_echo", json.dumps({"schema": schema}))]


# Scenarios whose calls need what the client received first (a user would read it in Python).
AFTER_LISTING: dict[str, Callable[[Any], list[tuple[str, str]]]] = {
    "json-schema-2020-12-preservation": echo_schema,
}


def context_calls(context: dict[str, Any]) -> list[tuple[str, str]]:
    """The calls the suite asks for by name and exact arguments, as ``%%mcp call`` cells with a JSON body."""
    return [
        (f"call conformance.{call['name']}", json.dumps(call.get("arguments") or {}))
        for call in context.get("toolCalls") or []
        if isinstance(call, dict) and isinstance(call.get("name"), str)
    ]


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
    if context.get("valid_jwt"):  # workload identity: the job's ready-made token, in a variable as CI gives it
        os.environ["CONFORMANCE_WORKLOAD_TOKEN"] = context["valid_jwt"]
        flags += ["--assertion-env", "CONFORMANCE_WORKLOAD_TOKEN"]
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
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if scenario.startswith("auth/"):
        flags = sign_in_flags(scenario, context, url)
    lines: list[str | tuple[str, str]] = [
        f"connect conformance {flags} {url}".replace("  ", " "),
        *SCENARIOS.get(scenario, ["tools conformance"]),
        *context_calls(context),
    ]
    for line in lines:
        show(ip, line, say)
    for cell in AFTER_LISTING.get(scenario, lambda _ip: [])(ip):
        show(ip, cell, say)
    show(ip, "disconnect conformance", say)


def show(ip: Any, line: str | tuple[str, str], say: Callable[[str], None]) -> None:
    """Run one ``%mcp`` line (or a ``%%mcp`` cell: the line and its body) and say what it showed."""
    if isinstance(line, tuple):
        say(f"%%mcp {line[0]}\n{line[1]}")
        result = ip.run_cell_magic("mcp", line[0], line[1])
    else:
        from mcp_notebook.wire.skills import SkillRefused

        say(f"%mcp {line}")
        try:
            result = ip.run_line_magic("mcp", line)
        except SkillRefused as refused:  # what the cell shows a user; the scenario judges what was read
            say(f"SkillRefused: {refused}")
            return
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
