"""The house's floors, as ``make test`` checks them with ``lint-imports`` (contracts in pyproject.toml).

``core`` is the ground floor: its contract forbids every other part of the package by name, so a
module added later must join that list, or ``core`` could start importing it unseen. This test
keeps the list whole.
"""

from __future__ import annotations

import tomllib

from .conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "mcp_notebook"


def _contract(contract_id: str) -> dict[str, object]:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c.get("id") == contract_id)


def test_the_core_contract_forbids_every_part_outside_core() -> None:
    modules = {f"mcp_notebook.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    packages = {
        f"mcp_notebook.{d.name}" for d in PACKAGE.iterdir() if (d / "__init__.py").exists() and d.name != "core"
    }
    forbidden = _contract("core-ground-floor")["forbidden_modules"]
    assert isinstance(forbidden, list)
    assert set(forbidden) == modules | packages
    assert _contract("core-ground-floor")["source_modules"] == ["mcp_notebook.core"]


def test_core_modules_import_only_the_standard_library_and_packages() -> None:
    """What the contract checks, read from the files themselves: no ``from ..`` import leaves ``core``."""
    import ast

    for path in (PACKAGE / "core").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                assert node.level == 1, f"{path.name} imports from outside core: {ast.unparse(node)}"
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                assert not any(
                    n == "mcp_notebook" or (n.startswith("mcp_notebook.") and not n.startswith("mcp_notebook.core"))
                    for n in names
                ), ast.unparse(node)


def test_every_subpackage_has_a_floor() -> None:
    """A new subpackage must take its place in the floors contract, or nothing would check what it imports."""
    layers = _contract("floors")["layers"]
    assert isinstance(layers, list)
    named = {name.strip() for layer in layers for name in layer.split("|")}
    packages = {f"mcp_notebook.{d.name}" for d in PACKAGE.iterdir() if (d / "__init__.py").exists()}
    assert named == packages


def test_the_engine_imports_no_display_of_ipython() -> None:
    """Below the notebook side nothing shows anything: no ``IPython.display`` import, function-local ones included."""
    import ast

    for part in ("core", "auth", "wire", "sampling", "flows", "session"):
        for path in (PACKAGE / part).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module is not None:
                    assert not node.module.startswith("IPython.display"), f"{part}/{path.name}: {ast.unparse(node)}"
                    assert not (node.module == "IPython" and any(a.name == "display" for a in node.names)), (
                        f"{part}/{path.name}: {ast.unparse(node)}"
                    )
                if isinstance(node, ast.Import):
                    assert not any(a.name.startswith(("IPython.display", "ipywidgets")) for a in node.names), (
                        f"{part}/{path.name}: {ast.unparse(node)}"
                    )


def test_a_headless_session_calls_a_tool_without_loading_widgets_or_ipython() -> None:
    """The Session runs in plain Python (a script, a Dask worker): a whole call, and neither ipywidgets nor IPython is imported."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from mcp_notebook.session.session import Session\n"
        "from mcp_notebook.forms.model import Answers\n"
        "s = Session()\n"
        "conn = s.connect('prov', 'mcp_notebook.demo:provisioner')\n"
        "flow = s.start('tools/call', conn, 'provision', {'name': 'orders'}, answers=Answers(fields={'region': 'eu-west-1', 'size': 'small', 'confirm': True}))\n"
        "result = flow.result(timeout=60)\n"
        "print(flow.state.value, result.is_error)\n"
        "print(sorted(m for m in ('ipywidgets', 'IPython', 'IPython.display') if m in sys.modules))\n"
        "s.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["done False", "[]"]


def test_every_noqa_says_why() -> None:
    """A silenced rule is a decision: ``# noqa: CODE - reason`` (ruff's BLE001 marks the package's boundaries this way)."""
    import re

    bare = re.compile(r"#\s*noqa(?!: [A-Z0-9, ]+ - \S)")
    found = [
        f"{path.relative_to(REPO_ROOT)}:{number}"
        for folder in ("mcp_notebook", "tests", "bench", "scripts")
        for path in (REPO_ROOT / folder).rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if bare.search(line) and "bare.search" not in line
    ]
    assert found == []


def test_unit_tests_mirror_the_package() -> None:
    """``tests/<subpackage>/test_<module>.py`` tests ``mcp_notebook/<subpackage>/<module>.py``: a unit test lives by its module."""
    floors = {d.name for d in PACKAGE.iterdir() if (d / "__init__.py").exists()}
    strays = []
    for folder in floors:
        for test in (REPO_ROOT / "tests" / folder).glob("test_*.py"):
            stem = test.stem.removeprefix("test_")
            modules = {p.stem for p in (PACKAGE / folder).glob("*.py")} | {
                p.name for p in (PACKAGE / folder).iterdir() if p.is_dir()
            }
            if not any(stem == m or stem.startswith(m + "_") for m in modules):
                strays.append(str(test.relative_to(REPO_ROOT)))
    assert strays == []
    assert all((REPO_ROOT / "tests" / folder).is_dir() for folder in floors)
