"""Re-execute the tutorial notebooks in place, so their saved outputs are what nbval compares.

Run after a change that alters what a tutorial shows: ``.venv/bin/python scripts/refresh_notebooks.py [NAME...]``.
Runs headless (nbclient), exactly as the test suite does.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbclient
import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PLACEHOLDER = "/path/to/mcp-notebook"  # saved outputs name no machine's folders
SERVE_TOKEN = re.compile(r"\(token: [A-Za-z0-9_\-]+\)")  # a served server's bearer token is never saved


def scrub(value: object, root: str) -> object:
    """Replace the checkout's absolute path and any ``%mcp serve`` token in every saved output string."""
    if isinstance(value, str):
        return SERVE_TOKEN.sub("(token: TOKEN)", value.replace(root, PLACEHOLDER))
    if isinstance(value, list):
        return [scrub(v, root) for v in value]
    if isinstance(value, dict):
        return {k: scrub(v, root) for k, v in value.items()}
    return value


def refresh(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    client.execute()
    root = str(NOTEBOOKS.parent)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.from_dict(scrub(out, root)) for out in cell.outputs]
    nbformat.write(nb, path)
    print(f"refreshed {path.name}")


def main(names: list[str]) -> int:
    paths = [NOTEBOOKS / n for n in names] if names else sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
    for path in paths:
        refresh(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
