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
    # what Binder clones: the files git knows (tracked, or new and not ignored), none of what the local
    # set-up wrote beside them (the venv, node packages, the editable install's labextension/install.json,
    # which a wheel built from here would hold twice)
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = REPO_ROOT / name
        if source.is_file():  # a tracked file deleted in the work tree is not in a clone of it either
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
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
