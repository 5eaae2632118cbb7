"""``docs/architecture.md`` names every module of the package, and every path it names exists.

The document is the map a newcomer reads before the code: a module it leaves out is one nobody
finds, and a path it names after a move sends the reader nowhere. So this test reads it the way a
reader does:

* a module ``mcp_notebook/<floor>/<module>.py`` is named when its "Layout" entry (the bullet of
  ``<floor>/`` and what is indented under it) mentions ``<module>.py``, or when the document
  anywhere writes its path (``<floor>/<module>.py``, ``mcp_notebook/<floor>/<module>.py``) or its
  dotted name (``mcp_notebook.<floor>.<module>``); a top module (``errors.py``) by its own bullet.
  An ``__init__.py`` that holds only its docstring needs no entry (the document says what they hold);
* every path it writes exists: a bare ``<module>.py`` inside a floor's entry is a module of that
  floor (or of a folder below it), ``<floor>/...`` and ``mcp_notebook/...`` are read from the
  package, and ``tests/...``, ``bench/...``, ``scripts/...``, ``labextension/...``, ``notebooks/...``
  and ``jupyter-config/...`` from the repository root (a pattern such as ``test_<module>.py`` is not a path).
"""

from __future__ import annotations

import ast
import re

import mcp_notebook

from .conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "mcp_notebook"
DOC = REPO_ROOT / "docs" / "architecture.md"
ROOT_FOLDERS = ("tests", "bench", "scripts", "labextension", "notebooks", "jupyter-config", "docs")

CODE = re.compile(r"`([^`\n]+)`")
FLOOR_BULLET = re.compile(r"^- `(\w+)/`")
TOP_BULLET = re.compile(r"^- `(\w+\.py)`")
PUBLIC = set(mcp_notebook.__all__)


def floors() -> set[str]:
    return {d.name for d in PACKAGE.iterdir() if (d / "__init__.py").exists()}


def modules() -> set[str]:
    """The package's modules as paths under ``mcp_notebook/``, without the ``__init__.py`` that only hold a docstring."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        if path.name == "__init__.py" and path.parent != PACKAGE:
            body = ast.parse(path.read_text()).body
            if all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in body):
                continue
        found.add(path.relative_to(PACKAGE).as_posix())
    return found


def layout_entries(text: str) -> dict[str, str]:
    """The "Layout" section's entries: a floor's (``core``) or a top module's (``errors.py``) text, by name."""
    section = text.split("\n## Layout\n", 1)[1].split("\nOther folders:", 1)[0]
    entries: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in section.splitlines():
        if line.startswith("- "):
            match = FLOOR_BULLET.match(line) or TOP_BULLET.match(line)
            current = entries.setdefault(match.group(1), []) if match else None
        elif not line.strip() or not line.startswith(" "):
            current = None  # a paragraph or a fence between the bullets
        if current is not None:
            current.append(line)
    return {name: "\n".join(lines) for name, lines in entries.items()}


def package_path(token: str) -> str | None:
    """``core/threads.py`` or ``mcp_notebook/core/threads.py`` as a path under the package; None for other tokens."""
    token = token.removeprefix("mcp_notebook/")
    first = token.split("/", 1)[0]
    if "/" in token and first in floors() and re.fullmatch(r"[\w/]+(\.py)?/?", token):
        if not token.endswith((".py", "/")) and (PACKAGE / f"{token}.py").exists():
            return f"{token}.py"  # ``wire/configs``, the module
        return token
    return None


def dotted_path(token: str) -> str | None:
    """``mcp_notebook.core.threads`` (or a name in it) as the path of its module; None when it names no module."""
    if not re.fullmatch(r"mcp_notebook(\.\w+)+", token):
        return None
    parts = token.split(".")[1:]
    if parts[0] in PUBLIC:
        return "__init__.py"  # the plain API: ``mcp_notebook.map``
    for end in range(len(parts), 0, -1):
        stem = "/".join(parts[:end])
        if (PACKAGE / f"{stem}.py").exists():
            return f"{stem}.py"
        if (PACKAGE / stem / "__init__.py").exists():
            return f"{stem}/__init__.py"
    return parts[0]  # names nothing: reported as missing


def test_every_module_is_named() -> None:
    text = DOC.read_text()
    entries = layout_entries(text)
    named = {name for name in entries if name.endswith(".py")}
    for floor, entry in entries.items():
        if floor.endswith(".py"):
            continue
        for token in CODE.findall(entry):
            if re.fullmatch(r"\w+\.py", token):
                named |= {p.relative_to(PACKAGE).as_posix() for p in (PACKAGE / floor).rglob(token)}
    for token in CODE.findall(text):
        path = package_path(token) or dotted_path(token)
        if path is not None:
            named.add(path)
    missing = sorted(modules() - named)
    assert missing == [], f"docs/architecture.md names no entry for: {missing}"


def test_every_path_it_names_exists() -> None:
    text = DOC.read_text()
    gone = []
    for floor, entry in layout_entries(text).items():
        if floor.endswith(".py"):
            if not (PACKAGE / floor).exists():
                gone.append(floor)
            continue
        for token in CODE.findall(entry):
            if re.fullmatch(r"\w+\.py", token) and not any((PACKAGE / floor).rglob(token)):
                gone.append(f"{floor}/ ... {token}")
    for token in CODE.findall(text):
        path = package_path(token) or dotted_path(token)
        if path is not None and not (PACKAGE / path).exists():
            gone.append(token)
        elif path is None and token.split("/", 1)[0] in ROOT_FOLDERS and "/" in token:
            if re.fullmatch(r"[\w./-]+", token) and not (REPO_ROOT / token).exists():
                gone.append(token)
    assert gone == [], f"docs/architecture.md names paths that do not exist: {gone}"


def test_the_reading_of_entries_paths_and_dotted_names() -> None:
    """The reading above finds what it is meant to: an entry for ``core/text.py`` and a path under a floor."""
    entries = layout_entries(
        "\n## Layout\n\n- `core/` (ground):\n  - `text.py`: words.\n- `errors.py`: errors.\n\nOther folders:\n"
    )
    assert entries == {"core": "- `core/` (ground):\n  - `text.py`: words.", "errors.py": "- `errors.py`: errors."}
    assert package_path("mcp_notebook/notebook/display.py") == "notebook/display.py"
    assert package_path("support/fixtures.py") is None  # tests/support: not the package's
    assert package_path("wire/configs") == "wire/configs.py"  # a module named without its suffix
    assert dotted_path("mcp_notebook.core.threads.to_loop") == "core/threads.py"
    assert dotted_path("mcp_notebook.demo") == "demo.py"
    assert dotted_path("mcp_notebook.map") == "__init__.py"  # the plain API, not mapping/map.py's path
    assert dotted_path("mcp_notebook.moved_away") == "moved_away"  # reported as missing
