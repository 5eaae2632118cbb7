"""Issue 39 item 1: the docs site builds with warnings as errors, and says what the code says.

``make docs`` runs the same command. The command reference is generated from the parsers ``%mcp`` uses, so
every subcommand and every flag of ``build_parsers()`` is on the page; the tutorials are rendered with their
saved outputs (one page per notebook); the Python API is documented from the docstrings of the public names.
"""

from __future__ import annotations

import html
import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO_ROOT


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "html"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q", "docs", str(out)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, f"the docs build failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    assert "WARNING" not in done.stderr, done.stderr
    return out


def test_every_page_is_built(built: Path) -> None:
    pages = {p.relative_to(built).as_posix() for p in built.rglob("*.html")}
    wanted = {
        "index.html", "install.html", "quickstart.html", "guide/index.html", "guide/calling-tools.html",
        "guide/forms.html", "guide/sampling.html", "guide/saved-flows.html", "guide/sign-in.html",
        "guide/tasks.html", "guide/apps.html", "guide/data.html", "guide/prototyping.html", "guide/replay.html",
        "reference/commands.html", "reference/api.html", "security.html", "frontends.html",
        "troubleshooting.html", "contributing.html", "architecture.html", "tutorials/index.html",
    }  # fmt: skip
    assert wanted - pages == set()


def test_tutorials_render_with_their_saved_outputs(built: Path) -> None:
    for notebook in sorted((REPO_ROOT / "notebooks").glob("*.ipynb")):
        page = (built / "tutorials" / "notebooks" / f"{notebook.stem}.html").read_text()
        saved = [
            "".join(output["text"])
            for cell in json.loads(notebook.read_text())["cells"]
            for output in cell.get("outputs", [])
            if output.get("output_type") == "stream" and "".join(output["text"]).strip()
        ]
        first = saved[0].strip().splitlines()[0] if saved else None
        assert first is None or html.escape(first, quote=False) in page, (notebook.name, first)


def test_command_reference_is_generated_from_the_parsers(built: Path) -> None:
    from mcp_notebook.magics.grammar import build_parsers

    page = html.unescape((built / "reference" / "commands.html").read_text())
    for name, parser in build_parsers().items():
        assert f'id="mcp-{name}"' in page, name
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert option in page, (name, option)
    assert "page_wait" in page and "max_result_chars" in page  # the settings, from the traitlets


def test_python_api_is_documented_from_the_docstrings(built: Path) -> None:
    import mcp_notebook

    page = (built / "reference" / "api.html").read_text()
    for name in mcp_notebook.__all__:
        assert f'id="mcp_notebook.{name}"' in page, name
