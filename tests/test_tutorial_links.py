"""The tutorials' images and links resolve where they are opened.

``make lab`` serves ``notebooks/`` as JupyterLab's root, so a relative link that climbs out of it
(``../docs/images/...``) is a 404 there (issue 21 item 9, tutorial 09's image). Images live in the
cell as attachments (they travel with the notebook: JupyterLab, Notebook 7, Binder, GitHub); a
relative link must stay inside ``notebooks/``.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from .conftest import REPO_ROOT

NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("[0-9]*.ipynb"))
TARGET = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)")  # markdown links and images: their target


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_markdown_targets_resolve_under_the_notebooks_root(path: Path) -> None:
    root = path.parent.resolve()
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        source = "".join(cell["source"])
        for target in TARGET.findall(source):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            if target.startswith("attachment:"):
                name = target[len("attachment:") :]
                assert name in cell.get("attachments", {}), f"{path.name}: attachment {name!r} is not in its cell"
                assert set(cell["attachments"][name]) <= {"image/png", "image/jpeg", "image/gif"}
                continue
            resolved = (root / target.split("#")[0]).resolve()
            assert resolved.is_relative_to(root), f"{path.name}: {target} is outside notebooks/ (a 404 under make lab)"
            assert resolved.exists(), f"{path.name}: {target} does not exist"


def test_tutorial_09_shows_the_map_screenshot_as_an_attachment() -> None:
    cells = json.loads((REPO_ROOT / "notebooks" / "09-notebook-native.ipynb").read_text())["cells"]
    [cell] = [c for c in cells if "attachment:map-questions.png" in "".join(c["source"])]
    png = cell["attachments"]["map-questions.png"]["image/png"]
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")
