"""Binder's configuration builds a working environment: a fresh venv from exactly binder/'s files.

repo2docker installs ``binder/requirements.txt`` and then runs ``binder/postBuild`` from the
repository root; this test does the same in a new venv (no Node on the way: the wheel carries
the prebuilt extension) and checks the package imports and JupyterLab lists the extension.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

from .conftest import REPO_ROOT


def test_binder_configuration_builds_a_working_environment(tmp_path: Path) -> None:
    checkout = tmp_path / "repo"
    shutil.copytree(
        REPO_ROOT,
        checkout,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "node_modules", ".conformance", "__pycache__", "*.egg-info", ".pytest_cache", "lib"
        ),
    )
    env_dir = tmp_path / "binder-env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / "bin"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(env_dir)}
    env.pop("PYTHONPATH", None)

    def run(*args: str, cwd: Path = checkout) -> str:
        done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{args} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout + done.stderr

    run(str(bin_dir / "python"), "-m", "pip", "install", "-q", "-r", "binder/requirements.txt")
    run("bash", "binder/postBuild")
    imported = run(
        str(bin_dir / "python"),
        "-c",
        "import mcp_notebook, mcp_notebook.magics; print(mcp_notebook.__file__)",
        cwd=tmp_path,
    )
    assert str(env_dir) in imported  # the installed copy, not the checkout
    listing = run(str(bin_dir / "jupyter"), "labextension", "list")
    assert "mcp-notebook" in listing and "enabled" in listing and "OK" in listing
    assert sys.executable not in imported
