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
    packages = {f"mcp_notebook.{d.name}" for d in PACKAGE.iterdir() if (d / "__init__.py").exists() and d.name != "core"}
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
                assert not any(n == "mcp_notebook" or (n.startswith("mcp_notebook.") and not n.startswith("mcp_notebook.core")) for n in names), ast.unparse(node)
