"""Fixtures of the security tests: the hostile server over streamable HTTP.

Started the way a user would run it (``python -m tests.security.hostile --transport http``) from
the repository root, with the same helpers the demo servers' fixtures use.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.core import policy as policy_module
from mcp_notebook.core.policy import POLICY_FILE

from ..conftest import REPO_ROOT, _wait_until_listening, free_port
from ..support.ready_process import stop as _stop


@pytest.fixture(scope="session")
def hostile_http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The ``/mcp`` URL of the hostile server over streamable HTTP on a free port."""
    port = free_port()
    log = tmp_path_factory.mktemp("hostile-http") / f"hostile-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.security.hostile", "--transport", "http", "--port", str(port)],
            cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        _wait_until_listening(proc, port, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(proc)


Write = Callable[[dict[str, Any]], Path]
"""``set_policy(data) -> the policy file``."""


@pytest.fixture
def set_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Write:
    """Put ``mcp_notebook_policy.json`` in a shared config directory (as a hub's spawner names it)."""
    hub = tmp_path / "hub-etc"
    hub.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(hub))
    monkeypatch.setattr(policy_module, "_AT_START", "")

    def write(data: dict[str, Any]) -> Path:
        path = hub / POLICY_FILE
        path.write_text(json.dumps(data))
        return path

    return write
