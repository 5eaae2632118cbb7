"""JupyterLab in Debian's Chromium, for the browser tests: one way to start each, shared.

Chromium is Debian's ``/usr/bin/chromium``; when missing, ``make chromium`` installs it (the same
target ``make test`` runs first). Playwright only drives it: never ``playwright install``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .conftest import REPO_ROOT, free_port

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def ensure_chromium() -> str:
    """Debian's Chromium, installed through ``make chromium`` when it is missing (never skipped)."""
    if not Path(CHROMIUM).exists():
        subprocess.run(["make", "-C", str(REPO_ROOT), "chromium"], check=True)
    assert Path(CHROMIUM).exists(), "make chromium did not install /usr/bin/chromium"
    return CHROMIUM


def notebook(cells: list[str]) -> dict[str, Any]:
    """A notebook of code cells with the ids ``cell-0``, ``cell-1`` ... (what the tests click into)."""
    return {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"cell-{i}", "metadata": {}, "outputs": [], "source": src}
            for i, src in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def quiet_settings(root: Path) -> None:
    """Quiet JupyterLab: no news toast, no update check (they would cover the page in screenshots)."""
    notify = root / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notify.parent.mkdir(parents=True, exist_ok=True)
    notify.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))


@contextmanager
def running_lab(base: Path, notebooks: dict[str, dict[str, Any]] | None = None) -> Iterator[tuple[str, Path]]:
    """JupyterLab on a free port serving ``base/root`` (with ``notebooks`` written there); yields (url, root).

    Its config, IPython, runtime, settings and workspaces folders are private to ``base``; a clean
    shutdown at the end also stops the kernels it started.
    """
    root, settings, workspaces = base / "root", base / "settings", base / "workspaces"
    for d in (root, settings, workspaces, base / "config", base / "ipython", base / "runtime"):
        d.mkdir()
    quiet_settings(settings)
    for name, nb in (notebooks or {}).items():
        (root / name).write_text(json.dumps(nb))
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "IPYTHONDIR": str(base / "ipython"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    log_path = base / "lab.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "jupyterlab", "--allow-root", "--no-browser", "--ip", "127.0.0.1", f"--port={port}",
            "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
            f"--ServerApp.root_dir={root}", f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={workspaces}",
        ],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{log_path.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=1) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter lab not answering:\n{log_path.read_text(errors='replace')}")
            time.sleep(0.2)
        yield url, root
    finally:
        try:  # a clean shutdown also stops the kernels it started
            urllib.request.urlopen(urllib.request.Request(f"{url}/api/shutdown", method="POST"), timeout=5).close()
            proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


@contextmanager
def chromium_page(profile: Path, width: int = 1100, height: int = 900) -> Iterator[Any]:
    """A Playwright page in headless Debian Chromium with a fresh profile folder."""
    from playwright.sync_api import sync_playwright

    executable = ensure_chromium()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=executable, headless=True, args=CHROMIUM_FLAGS, viewport={"width": width, "height": height}
        )
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()
