"""Listings and long results stay readable (``notebook/table.py``, ``notebook/result_view.py``): the values and the HTML they give.

A listing hides its empty columns, aligns text left, folds a long description to its first line
(the rest on hover and expand), and puts more than 20 rows in a bounded scroll area with a count;
a long text result sits in a bounded, scrollable box headed by its size. Every colour of ours comes
from JupyterLab's CSS variables, and the labextension carries the same rules as the outputs' own
``<style>`` (which JupyterLab's sanitizer drops from a notebook reopened untrusted).
"""

from __future__ import annotations

import re

from mcp.types import CallToolResult, TextContent

from mcp_notebook.notebook.result_view import ResultView
from mcp_notebook.notebook.style import OUTPUT_CSS, STYLE, badge
from mcp_notebook.notebook.table import Table

from ..conftest import REPO_ROOT


def html_of(obj: object) -> str:
    return str(obj._repr_mimebundle_()["text/html"])  # type: ignore[attr-defined]


def test_empty_columns_are_hidden_and_text_is_left_aligned() -> None:
    table = Table(["server", "tool", "title", "description"], [["a", "add", "", "Adds."], ["a", "sub", "", ""]])
    html = html_of(table)
    assert re.findall(r"<th[^>]*>(.*?)</th>", html) == ["server", "tool", "description"]  # no empty 'title' column
    assert html.count("<td style='text-align:left'>") == 6  # JupyterLab right-aligns cells by default
    plain = table._repr_mimebundle_()["text/plain"].splitlines()
    assert plain[0].split() == ["server", "tool", "description"]
    assert table.columns == ["server", "tool", "title", "description"]  # the data keeps every column
    assert table.rows[0] == ["a", "add", "", "Adds."]


def test_a_long_description_is_folded_to_its_first_line() -> None:
    long = "Adds two numbers. " + "More detail. " * 20 + "\nSecond line."
    html = html_of(Table(["tool", "description"], [["add", long], ["sub", "Short."]]))
    fold = re.search(
        r'<details class="fold"><summary title="([^"]*)">([^<]*)</summary><div>([^<]*)</div></details>', html
    )
    assert fold is not None
    hover, first, whole = fold.groups()
    assert first.startswith("Adds two numbers.") and first.endswith("…") and len(first) == 80
    assert "Second line." in whole and whole == long  # expanded: the whole text
    assert hover.startswith("Adds two numbers.")
    assert "<td style='text-align:left'>Short.</td>" in html  # a short cell is not folded


def test_more_than_twenty_rows_scroll_in_a_bounded_area_with_a_count() -> None:
    rows = [["srv", f"tool{i}"] for i in range(45)]
    bundle = Table(["server", "tool"], rows)._repr_mimebundle_()
    assert '<div class="scroll" style="max-height:32em;overflow-y:auto"><table>' in bundle["text/html"]
    assert '<div class="note">45 rows</div>' in bundle["text/html"]
    assert bundle["text/plain"].splitlines()[-1] == "(45 rows)"
    small = Table(["server", "tool"], rows[:20])._repr_mimebundle_()
    assert 'class="scroll"' not in small["text/html"] and "rows" not in small["text/plain"]


def test_a_long_text_result_sits_in_a_bounded_box_with_its_size() -> None:
    text = "\n".join(f"line {i}" for i in range(3000))
    html = html_of(ResultView(CallToolResult(content=[TextContent(type="text", text=text)])))
    assert f'<div class="hdr">3,000 lines · {len(text):,} characters (scroll inside the box)</div>' in html
    assert '<pre class="box" style="max-height:30em;overflow:auto">line 0\nline 1\n' in html
    short = html_of(ResultView(CallToolResult(content=[TextContent(type="text", text="hello")])))
    assert "<pre>hello</pre>" in short and 'class="box"' not in short


def test_a_cut_text_result_says_how_much_is_shown() -> None:
    text = "x" * 250_000
    bundle = ResultView(CallToolResult(content=[TextContent(type="text", text=text)]))._repr_mimebundle_()
    assert "1 lines · 250,000 characters, the first 100,000 shown (scroll inside the box)" in bundle["text/html"]
    # the shown part, and the whole folded (under WHOLE_TIMES)
    assert len(bundle["text/html"]) < 100_000 + 250_000 + 5_000
    assert '<details class="whole"><summary>show all 1 line (250,000 characters)</summary>' in bundle["text/html"]
    assert len(bundle["text/plain"]) < 101_000  # the plain text stays cut
    assert "[output cut at 100,000 characters: 150,000 more characters not shown" in bundle["text/plain"]


def test_badges_take_their_colour_from_the_theme() -> None:
    assert badge("waiting") == '<span class="badge waiting">waiting</span>'
    assert badge("<b>odd</b>") == '<span class="badge">&lt;b&gt;odd&lt;/b&gt;</span>'


def test_every_colour_comes_from_a_jupyterlab_variable() -> None:
    """A literal colour appears only as a ``var(--jp-…, fallback)`` for a page without JupyterLab's variables."""
    bare = re.sub(r"var\(--[a-z0-9-]+,[^()]*\)", "", OUTPUT_CSS)
    assert not re.findall(r"#[0-9a-fA-F]{3,6}\b|rgba?\(", bare), bare
    for name in ("index.css", "apps.css", "output.css"):
        css = (REPO_ROOT / "labextension" / "style" / name).read_text()
        bare = re.sub(r"var\(--[a-z0-9-]+,\s*[^()]*\)", "", re.sub(r"/\*.*?\*/", "", css, flags=re.S))
        assert not re.findall(r"#[0-9a-fA-F]{3,6}\b|rgba?\(", bare), name


def _rules(css: str) -> list[str]:
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"\s+", " ", css)
    css = re.sub(r"\s*([{};,])\s*", r"\1", css)
    css = re.sub(r":\s+", ":", css)
    return [rule.strip().replace(";}", "}") for rule in re.findall(r"[^{}]+\{[^{}]*\}", css)]


def test_the_labextension_styles_outputs_as_their_own_style_does() -> None:
    """Reopened untrusted, an output loses its ``<style>``: the extension's ``output.css`` must carry the same rules."""
    assert STYLE == f"<style>{OUTPUT_CSS}</style>"
    shipped = (REPO_ROOT / "labextension" / "style" / "output.css").read_text()
    assert _rules(shipped) == _rules(OUTPUT_CSS)
    assert "@import url('./output.css');" in (REPO_ROOT / "labextension" / "style" / "index.css").read_text()
