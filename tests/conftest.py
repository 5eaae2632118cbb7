"""Shared fixtures: demo servers as real processes (stdio and streamable HTTP).

Tests talk to `mcp_notebook.demo` over the real transports, so these helpers
start it the way a user would (`python -m mcp_notebook.demo ...`) from the
repository root, which is what makes the package importable in the child.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from mcp import StdioServerParameters

from .support.ready_process import stop

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from mcp_notebook.session.session import Session

REPO_ROOT = Path(__file__).resolve().parent.parent

# the browser tests' fixtures (shared JupyterLab and Notebook 7, page, front): one plugin for tests/browser and
# the browser modules of tests/security, so a session-scoped server is defined once (support/lab_fixtures.py)
pytest_plugins = ("tests.support.lab_fixtures",)

# ---------------------------------------------------------------------- tiers
# Every test gets its tier from where it lives (and, for a unit module that starts real kernels, from what
# it uses), so a new test cannot forget it. `make check` runs the tiers that need no browser, no third-party
# server and no fresh venv; `make test` runs them all. The markers are registered in pyproject.toml.
_FOLDER_TIERS = {
    "browser": "browser",
    "kernel": "kernel",
    "conformance": "conformance",
    "peers": "peers",
    "hub": "slow",
}
_FILE_TIERS = {
    "tests/security/test_browser_hostile.py": "browser",
    "tests/security/test_browser_app_leaks.py": "browser",
    "tests/support/test_app_servers.py": "peers",  # the ext-apps examples on Node 22 from .peers/npm
    "tests/support/test_task_servers.py": "peers",  # fastmcp-tasks from .peers/venv-tasks
    "tests/test_binder.py": "slow",  # a fresh venv from binder/'s files
    "tests/test_docs.py": "slow",  # builds the docs site (Sphinx, every tutorial page)
}
# a unit module that starts a real kernel (nbclient, jupyter_client, the kernel harness) is in the kernel tier
_STARTS_KERNELS = ("kernel_harness", "KernelManager", "start_new_kernel", "NotebookClient", "nbclient", "kernel_setup")
_kernel_modules: dict[Path, bool] = {}


def _tier_of(path: Path) -> str | None:
    if path.suffix == ".ipynb":
        return "nbval"
    relative = path.relative_to(REPO_ROOT).as_posix()
    if relative in _FILE_TIERS:
        return _FILE_TIERS[relative]
    parts = relative.split("/")
    if len(parts) > 2 and parts[0] == "tests" and parts[1] in _FOLDER_TIERS:
        return _FOLDER_TIERS[parts[1]]
    if path not in _kernel_modules:
        source = path.read_text(encoding="utf-8") if path.suffix == ".py" else ""
        _kernel_modules[path] = any(word in source for word in _STARTS_KERNELS)
    return "kernel" if _kernel_modules[path] else None


# The longest modules start first, so that none of them is what the other workers wait for at the end: pytest-xdist
# (`--dist loadfile --no-loadscope-reorder`, as the Makefile runs it) hands out modules in collection order, and by
# default it would order them by their number of tests, which put the one-test classroom (two minutes, thirty kernels)
# last. Longest first, from `make test`'s timings (scripts/slowest.py); a module not listed keeps its place after them.
_LONGEST_FIRST = (
    "tests/hub/test_classroom.py",
    "tests/conformance/test_conformance.py",
    "tests/wire/test_tasks.py",
    "tests/auth/test_server_extension.py",
    "tests/test_binder.py",
    "tests/mapping/test_map.py",
    "tests/auth/test_sign_in.py",
    "notebooks/10-corners.ipynb",
    "tests/test_readme.py",
    "tests/test_docs.py",
    "tests/test_demo.py",
    "tests/browser/test_tutorials.py",
    "tests/browser/test_sign_in.py",
    "tests/browser/test_apps.py",
    "tests/browser/test_execution_state.py",
    "tests/browser/test_reload.py",
    "tests/browser/test_frontends.py",
)


def _start_rank(item: pytest.Item) -> int:
    relative = Path(str(item.path)).relative_to(REPO_ROOT).as_posix()
    return _LONGEST_FIRST.index(relative) if relative in _LONGEST_FIRST else len(_LONGEST_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        tier = _tier_of(Path(str(item.path)))
        if tier is not None:
            item.add_marker(getattr(pytest.mark, tier))
    items.sort(key=_start_rank)  # stable: a module's tests stay together and in their order


# the shared ``ip``, ``session`` and ``kernel`` fixtures (and their variants), defined in support/fixtures.py
from .support.fixtures import (  # noqa: E402, F401 - fixtures are found by name in this module
    fresh_kernel,
    ip,
    kernel,
    kernel_setup,
    make_session,
    own_session,
    session_servers,
    session_views,
    undo_each_test,
)

StartHttpServer = Callable[..., str]
"""`start_http_server(name="demo", keys_env=None, workers=1, stateless=False, env=None) -> url`."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stdio_params(name: str = "demo", *extra_args: str) -> StdioServerParameters:
    """Parameters that spawn a demo server over stdio, importable from the repository root."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_notebook.demo", name, *extra_args], cwd=str(REPO_ROOT)
    )


def _wait_until_listening(proc: subprocess.Popen[bytes], port: int, log: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"demo server exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"demo server not listening on {port} after {timeout}s:\n{log.read_text(errors='replace')}")


@pytest.fixture(scope="module")
def start_http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StartHttpServer]:
    """Factory: start a demo server over streamable HTTP on a free port and return its `/mcp` URL.

    `keys_env` names the variable with a shared request-state key; when it is not set
    a random key is generated for the child. `workers > 1` runs uvicorn's
    multi-process mode (stateless). Output goes to a temp file that is shown if the
    server fails to start. Every server is stopped when the module's tests finish.
    """
    procs: list[subprocess.Popen[bytes]] = []

    def start(
        name: str = "demo",
        keys_env: str | None = None,
        workers: int = 1,
        stateless: bool = False,
        env: dict[str, str] | None = None,
    ) -> str:
        port = free_port()
        child_env = {**os.environ, **(env or {})}
        args = [sys.executable, "-m", "mcp_notebook.demo", name, "--transport", "http", "--port", str(port)]
        if keys_env:
            child_env.setdefault(keys_env, secrets.token_hex(32))
            args += ["--keys-env", keys_env]
        if workers > 1:
            args += ["--workers", str(workers)]
        if stateless:
            args.append("--stateless")
        log = tmp_path_factory.mktemp("http-server") / f"{name}-{port}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                args, cwd=REPO_ROOT, env=child_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        procs.append(proc)
        _wait_until_listening(proc, port, log)
        return f"http://127.0.0.1:{port}/mcp"

    try:
        yield start
    finally:
        for proc in procs:
            stop(proc)  # in its own session: SIGKILL reaches its uvicorn workers too


@pytest.fixture(scope="module")
def http_demo_server(request: pytest.FixtureRequest, start_http_server: StartHttpServer) -> str:
    """URL of one streamable-HTTP demo server shared by the module.

    The server name defaults to "demo"; choose another with indirect
    parametrization: `@pytest.mark.parametrize("http_demo_server", ["echo"], indirect=True)`.
    """
    return start_http_server(getattr(request, "param", "demo"))


def get_shell() -> InteractiveShell:
    """The process's one IPython shell (``start_ipython`` returns it only on its first call)."""
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    shell: InteractiveShell = start_ipython() or get_ipython()
    if "mcp_notebook" not in shell.extension_manager.loaded:  # a second %load_ext prints "already loaded"
        shell.run_line_magic("load_ext", "mcp_notebook")
    shell.run_line_magic("config", "MCPMagics.interactive = False")
    return shell


def session_of(shell: InteractiveShell) -> Session:
    """The ``Session`` that the shell's ``%mcp`` magics own (what ``mcp_notebook.connect`` uses there too)."""
    session: Session = shell.magics_manager.registry["MCPMagics"].session
    return session
