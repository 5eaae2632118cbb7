"""Sphinx configuration: MyST markdown pages, the tutorials as rendered notebooks, the PyData theme.

Sphinx with MyST-NB and the PyData theme is what the Jupyter projects closest to this one use (jupysql,
ipywidgets, JupyterLab): the tutorials render with the outputs they were saved with (nothing is executed
here: tests/ runs them under nbval and in Chromium), the command reference is generated from the parsers
``%mcp`` uses (_ext/mcp_reference.py), the Python API from the docstrings. ``make docs`` builds with
warnings as errors.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import mcp_notebook  # noqa: E402 - after the path set-up above

project = "mcp-notebook"
author = "the mcp-notebook contributors"
copyright = "2026, the mcp-notebook contributors"
release = version = mcp_notebook.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx_copybutton",
    "mcp_reference",
]

exclude_patterns = ["_build", "**/.ipynb_checkpoints", "tutorials/notebooks/conftest.py", "**/*.trace.json"]
root_doc = "index"
smartquotes = False  # --flags and 'quotes' in the reference stay as typed on a %mcp line

# MyST: fenced ```{directive} blocks, colon fences for admonitions, heading anchors for links into a page
myst_enable_extensions = ["colon_fence", "deflist", "attrs_inline"]
myst_heading_anchors = 3

# the tutorials are shown as saved: tests/ executes them (nbval, and Run All in JupyterLab)
nb_execution_mode = "off"
nb_merge_streams = True
# what the tutorials' outputs carry besides HTML and text: the flow records (application/vnd.mcp-notebook.*)
# are data for the extension, and an App's output needs the page's extension; their text/html twin is shown
nb_mime_priority_overrides = [
    ("html", "application/vnd.mcp-notebook.flow+json", None),
    ("html", "application/vnd.mcp-notebook.app+json", None),
    ("html", "application/vnd.mcp-notebook.void+json", None),
]
suppress_warnings = ["mystnb.unknown_mime_type"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}


html_theme = "pydata_sphinx_theme"
html_title = "mcp-notebook"
html_static_path: list[str] = []
html_theme_options = {
    "github_url": "https://github.com/mcp-notebook/mcp-notebook",
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
# the single pages have no section to navigate: no empty left sidebar there
html_sidebars = {
    page: []
    for page in ("index", "install", "quickstart", "security", "frontends", "troubleshooting", "contributing", "architecture")
}
html_sidebars["reference/*"] = []
html_context = {
    "github_user": "mcp-notebook",
    "github_repo": "mcp-notebook",
    "github_version": "main",
    "doc_path": "docs",
}


def _inline_attachments(app: object, docname: str, source: list[str]) -> None:
    """A notebook's cell attachments (``![...](attachment:NAME)``) as data URIs, which Sphinx writes out as images.

    MyST-NB does not resolve Jupyter's cell attachments; tutorial 09 shows its screenshot through one.
    """
    import json

    if not source[0].lstrip().startswith("{") or "attachment:" not in source[0]:
        return
    notebook = json.loads(source[0])
    for cell in notebook.get("cells", []):
        text = "".join(cell.get("source", []))
        for name, bundle in (cell.get("attachments") or {}).items():
            for mime, data in bundle.items():
                text = text.replace(f"attachment:{name}", f"data:{mime};base64,{''.join(data)}")
        cell["source"] = text
    source[0] = json.dumps(notebook)


def setup(app: object) -> None:
    app.connect("source-read", _inline_attachments)  # type: ignore[attr-defined]
