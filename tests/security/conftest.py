"""Fixtures of the security tests: the hostile server over streamable HTTP.

Started the way a user would run it (``python -m tests.security.hostile --transport http``) from
the repository root, with the same helpers the demo servers' fixtures use.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

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
