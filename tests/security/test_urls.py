"""Issue 9, finding 5: the host a URL elicitation highlights is the host the browser opens.

``urls.read_url`` reads a URL the WHATWG way (ada); ``forms.url_html`` shows the URL as sent, the
host it opens, warnings, and a link only to http(s). The table is checked three ways: against
expected values, as HTML (escaped, no live markup, the link's href), and against what Debian's
Chromium itself parses (``new URL(s).host``), driven by Playwright on ``about:blank``.
"""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any, NamedTuple

import pytest

from mcp_notebook.core.urls import read_url, visible
from mcp_notebook.forms.widgets import _LINK_STYLE as LINK_STYLE
from mcp_notebook.forms.widgets import url_html

from ..support.browser import CHROMIUM_FLAGS, ensure_chromium


class Case(NamedTuple):
    text: str
    host: str | None  # WHATWG host (with a non-default port); None: no URL at all
    display_host: str | None  # the Unicode name shown next to it
    kinds: frozenset[str]  # the warnings expected
    href: str | None  # the link's href; None: no link


def case(text: str, host: str | None, display: str | None, kinds: str, href: str | None) -> Case:
    return Case(text, host, display, frozenset(kinds.split()), href)


CASES = {
    "backslash": case(
        "https://evil.example\\@accounts.google.com/login",
        "evil.example",
        "evil.example",
        "rewritten",
        "https://evil.example/@accounts.google.com/login",
    ),
    "userinfo": case(
        "https://accounts.google.com@evil.example/",
        "evil.example",
        "evil.example",
        "userinfo",
        "https://accounts.google.com@evil.example/",
    ),
    "user and password": case(
        "https://user:pw@example.com", "example.com", "example.com", "userinfo", "https://user:pw@example.com/"
    ),
    "cyrillic a": case(
        "https://аpple.com/", "xn--pple-43d.com", "аpple.com", "punycode confusable", "https://xn--pple-43d.com/"
    ),
    "punycode": case(
        "https://xn--pple-43d.com/", "xn--pple-43d.com", "аpple.com", "punycode confusable", "https://xn--pple-43d.com/"
    ),
    "all look-alike": case(
        "https://ѕсоре.com/", "xn--e1argc3h.com", "ѕсоре.com", "punycode confusable", "https://xn--e1argc3h.com/"
    ),
    "plain idn": case(
        "https://münchen.de/", "xn--mnchen-3ya.de", "münchen.de", "punycode", "https://xn--mnchen-3ya.de/"
    ),
    "japanese": case("https://例え.jp/", "xn--r8jz45g.jp", "例え.jp", "punycode", "https://xn--r8jz45g.jp/"),
    "normalized": case("https://EXAMPLE.com:443/a/../b", "example.com", "example.com", "", "https://example.com/b"),
    "javascript": case("javascript:alert(1)", "", "", "scheme", None),
    "file": case("file:///etc/passwd", "", "", "scheme", None),
    "loopback with port": case("http://127.0.0.1:8000/x", "127.0.0.1:8000", "127.0.0.1", "", "http://127.0.0.1:8000/x"),
    "short ipv4": case("http://127.1/", "127.0.0.1", "127.0.0.1", "rewritten", "http://127.0.0.1/"),
    "ipv6": case("http://[0:0::1]:80/", "[::1]", "[::1]", "", "http://[::1]/"),
    "escaped host": case(
        "https://%65vil.example/", "evil.example", "evil.example", "rewritten", "https://evil.example/"
    ),
    "no slashes": case("https:evil.example", "evil.example", "evil.example", "rewritten", "https://evil.example/"),
    "tab in host": case(
        "https://acc\tounts.google.com/",
        "accounts.google.com",
        "accounts.google.com",
        "invisible",
        "https://accounts.google.com/",
    ),
    "bidi override": case(
        "https://example.com/\u202etxt.exe",
        "example.com",
        "example.com",
        "invisible",
        "https://example.com/%E2%80%AEtxt.exe",
    ),
    "odd host": case("https://a*b.com/", "a*b.com", "a*b.com", "odd-host", None),
    "quote in host": case('https://a"b.com/', 'a"b.com', 'a"b.com', "odd-host", None),
    "space": case("https://exa mple.com", None, None, "", None),
    "no scheme": case("example.com/login", None, None, "", None),
    "markup": case(
        "https://example.com/\"><script>alert(1)</script>'",
        "example.com",
        "example.com",
        "",
        "https://example.com/%22%3E%3Cscript%3Ealert(1)%3C/script%3E'",
    ),
    "markup in query": case(
        'https://example.com/?q="onmouseover="alert(1)',
        "example.com",
        "example.com",
        "",
        "https://example.com/?q=%22onmouseover=%22alert(1)",
    ),
}


class Page(HTMLParser):
    """What the HTML really contains: tags with attributes, the highlighted host, the text."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.texts: list[str] = []
        self._in_domain = False
        self.domain = ""
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_domain = tag == "b" and "mcp-domain" in (dict(attrs).get("class") or "")

    def handle_endtag(self, tag: str) -> None:
        self._in_domain = False

    def handle_data(self, data: str) -> None:
        self.texts.append(data)
        if self._in_domain:
            self.domain += data

    def classes(self) -> set[str]:
        return {c for _, attrs in self.tags for c in (attrs.get("class") or "").split()}

    def links(self) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.tags if tag == "a"]


@pytest.mark.parametrize("name", CASES)
def test_read_url(name: str) -> None:
    want = CASES[name]
    got = read_url(want.text)
    if want.host is None:
        assert got is None
        return
    assert got is not None
    assert (got.host, got.display_host, got.kinds) == (want.host, want.display_host, want.kinds)
    assert got.linkable == (want.href is not None)
    if want.href is not None:
        assert got.href == want.href
    assert got.has_userinfo == ("userinfo" in want.kinds)
    assert all(w.text and w.text[-1] == "." for w in got.warnings)


def test_warnings_name_the_host_that_opens() -> None:
    backslash = read_url("https://evil.example\\@accounts.google.com/login")
    assert backslash is not None
    (rewritten,) = backslash.warnings
    assert "opens evil.example, not accounts.google.com" in rewritten.text and "backslash" in rewritten.text
    userinfo = read_url("https://accounts.google.com@evil.example/")
    assert userinfo is not None and "the browser opens evil.example" in userinfo.warnings[0].text
    lookalike = read_url("https://аpple.com/")
    assert lookalike is not None
    assert any("looks like apple.com" in w.text and "Cyrillic and Latin" in w.text for w in lookalike.warnings)


@pytest.mark.parametrize("name", CASES)
def test_url_html(name: str) -> None:
    want = CASES[name]
    markup = url_html(want.text)
    page = Page(markup)
    tags = [tag for tag, _ in page.tags]
    assert "script" not in tags and "<script" not in markup.lower()
    assert not [k for _, attrs in page.tags for k in attrs if k.lower().startswith("on")]  # no event handler
    assert visible(want.text) in "".join(page.texts)  # the whole URL, as sent, as text
    links = page.links()
    if want.href is None:
        assert links == []
    else:
        assert links == [
            {
                "class": "mcp-open-link",
                "href": want.href,
                "target": "_blank",
                "rel": "noopener noreferrer",
                "style": LINK_STYLE,
            }
        ]
    hostname = (want.host or "").rsplit(":", 1)[0] if want.host and not want.host.endswith("]") else want.host
    assert page.domain == (hostname or "")  # the highlighted host is the one the browser opens
    warned = "mcp-url-warning" in page.classes()
    assert warned == bool(want.kinds or want.host is None)
    assert ("mcp-punycode" in page.classes()) == ("punycode" in want.kinds)


def test_markup_is_escaped_not_live() -> None:
    markup = url_html('https://example.com/"><script>alert(1)</script>')
    assert "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in markup
    assert 'href="https://example.com/%22%3E%3Cscript%3Ealert(1)%3C/script%3E"' in markup


# ---------------------------------------------------------------------- the browser's own reading
@pytest.fixture(scope="module")
def blank_page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = ensure_chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.goto("about:blank")
            yield page
        finally:
            browser.close()


CHROMIUM_HOST = "s => { try { return new URL(s).host } catch (e) { return null } }"
CHROMIUM_HREF = "s => { try { return new URL(s).href } catch (e) { return null } }"
# More spellings a server might try, compared with Chromium only.
EDGES = [
    "https:\\\\evil.example",
    "https:/evil.example",
    "https:///evil.example",
    "https://a@b@c/",
    "https://a%40b@c/",
    "https://example.com%2f@evil.example/",
    "https://evil.example;@accounts.google.com",
    "https://evil.example#@accounts.google.com",
    "https://evil.example?@accounts.google.com",
    "https://[::ffff:127.0.0.1]/",
    "https://0x7f000001/",
    "https://0177.0.0.1/",
    "https://0x.0x.0/",
    "https://1.2.3.4.5/",
    "https://1.2.3.256/",
    "https://ex%2eample.com/",
    "https://ＥＸＡＭＰＬＥ.com",
    "https://exa\u00admple.com",
    "https://exa\u200bmple.com",
    "https://a\u3002b.com",
    "https://ⓔxample.com",
    "https://faß.de",
    "https://xn--zz.com",
    " HTTP://EXAMPLE.COM:0080 ",
    "ws://x.com",
    "foo://evil.example/",
    "javascript://evil.example/%0aalert(1)",
    "blob:https://evil.example/uuid",
    "data:text/html,hi",
    "https://a<b.com",
    "https://a|b.com",
    "https://ex\u0000ample.com",
]
# Chromium is laxer than the standard here. Both are harmless: ada refuses (no URL, so no link) or
# the host is one no link is offered for; a link never points to a host Chromium reads otherwise.
CHROMIUM_LAXER = {"https://exa mple.com": "exa%20mple.com", "https://a*b.com/": "a%2Ab.com"}


@pytest.mark.parametrize("text", [c.text for c in CASES.values()] + EDGES)
def test_the_host_is_the_one_chromium_opens(blank_page: Any, text: str) -> None:
    chromium = blank_page.evaluate(CHROMIUM_HOST, text)
    got = read_url(text)
    if text in CHROMIUM_LAXER:
        assert chromium == CHROMIUM_LAXER[text]
        assert got is None or not got.linkable
        return
    assert (got.host if got is not None else None) == chromium
    if got is not None:
        assert blank_page.evaluate(CHROMIUM_HREF, text) == got.href
