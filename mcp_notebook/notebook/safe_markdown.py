"""Markdown a server sent (a ``text/markdown`` resource), as HTML that cannot carry markup of its own.

A notebook shows a cell's own outputs as *trusted* HTML: JupyterLab does not sanitize them and
runs their scripts. So a server's markdown is never handed to the page's markdown renderer (it
passes raw HTML through to that same trusted output) but rendered here, with ``markdown-it-py``
(CommonMark, the parser the Jupyter and MyST tools use) set up so nothing the server wrote becomes
markup:

* raw HTML is off: ``<script>``, ``<img onerror=...>``, ``<div>`` blocks and inline tags come out
  escaped, as text;
* a link is a link only to an absolute ``http``, ``https`` or ``mailto`` address (no
  ``javascript:``, ``data:``, ``file:``, nor relative paths, which would resolve against the
  Jupyter server's own pages); anything else stays the literal markdown text. Links open in a new
  tab without a referrer, and their title shows where they go (the text may claim another place);
* an image is never fetched (a remote image is a beacon that tells the server who read the
  result, and when): it becomes a link to the image named by its alt text;
* nesting is bounded (markdown-it's ``maxNesting``), and so is the HTML: what the renderer makes of
  the (already size-bounded) source is dropped for the escaped source when it grows more than
  ``GROWTH`` times larger (reference links can repeat one long URL many times).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

__all__ = ["GROWTH", "render_markdown", "safe_link"]

"""The MIME types rendered as markdown."""
GROWTH = 8
"""Most HTML characters per source character (plus a fixed allowance) before the source is shown escaped instead."""
_SCHEMES = ("http://", "https://", "mailto:")


def safe_link(url: str) -> bool:
    """Whether ``url`` may be a link target: an absolute ``http``/``https``/``mailto`` address, no control characters."""
    lowered = url.strip().lower()
    return lowered.startswith(_SCHEMES) and not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url)


class _SafeMarkdown(MarkdownIt):
    """CommonMark with tables and strikethrough, raw HTML off and links restricted (``safe_link``)."""

    def __init__(self) -> None:
        super().__init__("commonmark", {"html": False, "linkify": False, "typographer": False})
        self.enable(["table", "strikethrough"])
        self.add_render_rule("link_open", _link_open)
        self.add_render_rule("image", _image)

    def validateLink(self, url: str) -> bool:  # noqa: N802 - markdown-it's own name
        return safe_link(url)


def _link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    token.attrSet("title", str(token.attrGet("href") or ""))
    token.attrSet("target", "_blank")
    token.attrSet("rel", "noopener noreferrer nofollow")
    return self.renderToken(tokens, idx, options, env)


def _image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """An image as a link to it, never an ``<img>`` (the page would fetch it)."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    label = html.escape(f"[image: {alt or src}]")
    href = html.escape(src, quote=True)
    return f'<a href="{href}" title="{href}" target="_blank" rel="noopener noreferrer nofollow">{label}</a>'


_MD = _SafeMarkdown()


def _expected_size(tokens: Sequence[Token]) -> int:
    """About how many characters the HTML of ``tokens`` takes, counted before anything is rendered.

    Parsing is cheap whatever the source; rendering is not when one long reference URL is used
    thousands of times (each use writes it twice, as ``href`` and ``title``): a 100 KB source could
    take gigabytes. So the estimate comes first, and a source over the budget is never rendered.
    """
    size = 0
    for token in tokens:
        size += len(token.content) + 16
        for child in token.children or ():
            size += len(child.content) + 16
            target = child.attrGet("href") or child.attrGet("src")
            if target:
                size += 3 * len(str(target))  # href, title, and the label of an image
    return size


def render_markdown(text: str) -> str:
    """``text`` (markdown, already cut to its budget) as inert HTML; the escaped text in a ``<pre>`` when it would grow too large."""
    budget = GROWTH * len(text) + 4096
    tokens = _MD.parse(text)
    if _expected_size(tokens) > budget:
        return f"<pre>{html.escape(text)}</pre>"
    rendered: Any = _MD.renderer.render(tokens, _MD.options, {})
    if len(rendered) > budget:
        return f"<pre>{html.escape(text)}</pre>"
    return str(rendered)
