"""Binder's configuration builds a working environment, and the wheel is the package as users install it.

repo2docker installs ``binder/requirements.txt`` and then runs ``binder/postBuild`` from the
repository root; this module does the same in a new venv (no Node on the way: the wheel carries
the prebuilt extension) and checks the package imports and JupyterLab lists the extension.

Issue 39 item 4: the same venv (one fresh venv for both, to keep the time) then gets the wheel built
from the clone, as ``pip install mcp-notebook`` would bring it: its contents (the LICENSE, the
labextension bundle once, the server extension's config, ``ipykernel>=7.4`` declared, Project-URLs),
``jupyter labextension list``, ``jupyter server extension list``, ``pip check``, and one call of a tool
with a question, from a folder outside the clone.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import REPO_ROOT

Run = Callable[..., str]


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Run]:
    """(the clone, the venv, run): a fresh venv built from binder/'s files, shared by the module's tests."""
    tmp_path = tmp_path_factory.mktemp("binder")
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
    return checkout, env_dir, run


def test_binder_configuration_builds_a_working_environment(binder_env: tuple[Path, Path, Run], tmp_path: Path) -> None:
    checkout, env_dir, run = binder_env
    bin_dir = env_dir / "bin"
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


def test_the_wheel_as_users_install_it(binder_env: tuple[Path, Path, Run], tmp_path: Path) -> None:
    checkout, env_dir, run = binder_env
    bin_dir = env_dir / "bin"
    python = str(bin_dir / "python")
    run(python, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), ".")
    (wheel,) = (tmp_path / "dist").glob("mcp_notebook-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    bundles = [n for n in names if n.endswith("/static/style.js")]
    assert bundles == ["mcp_notebook-0.1.0.data/data/share/jupyter/labextensions/mcp-notebook/static/style.js"]
    assert not any(n.startswith("mcp_notebook/labextension/") for n in names)  # the bundle once, as shared data
    assert "mcp_notebook-0.1.0.data/data/etc/jupyter/jupyter_server_config.d/mcp_notebook.json" in names
    requires = [
        line.removeprefix("Requires-Dist: ") for line in metadata.splitlines() if line.startswith("Requires-Dist: ")
    ]
    assert "ipykernel>=7.4" in requires and "httpx2>=2.10" in requires
    assert not any(
        r.split(";")[0].strip().startswith(("httpx>", "httpx ", "uvicorn", "starlette"))
        for r in requires
        if "extra ==" not in r
    )
    assert "License-Expression: BSD-3-Clause" in metadata
    assert "Project-URL: Documentation, https://mcp-notebook.readthedocs.io" in metadata

    run(python, "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", str(wheel))
    run(python, "-m", "pip", "check")  # raises on any broken requirement
    labextensions = run(str(bin_dir / "jupyter"), "labextension", "list")
    assert re.search(r"mcp-notebook v0\.1\.0 \S*enabled\S* \S*OK", labextensions), labextensions
    server_extensions = run(str(bin_dir / "jupyter"), "server", "extension", "list")
    assert re.search(r"mcp_notebook \S*enabled", server_extensions), server_extensions
    assert re.search(r"mcp_notebook 0\.1\.0 \S*OK", server_extensions), server_extensions
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    called = run(
        python,
        "-c",
        "import mcp_notebook\n"
        "mcp_notebook.connect('demo', 'mcp_notebook.demo:demo')\n"
        "flow = mcp_notebook.call('demo.provision_db', {'name': 'orders'}, answers={'region': 'eu-west-1'}, accept_defaults=True)\n"
        "print(flow.result().content[0].text, '|', mcp_notebook.__file__)",
        cwd=outside,
    )
    text, _, where = called.strip().splitlines()[-1].partition(" | ")
    assert text == "Provisioned 'orders' in eu-west-1 (size small)."
    assert where.startswith(str(env_dir)), where  # the installed wheel, not the clone
