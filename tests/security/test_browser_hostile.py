"""The hostile server in a real JupyterLab: nothing it sends runs in the page or writes a file.

JupyterLab in Debian's Chromium (driven by Playwright, as in ``tests/browser/test_forms.py``)
opens a notebook that loads the extension, connects the hostile server in the kernel, lists its
tools, prompts and resources, calls every hostile tool (results with hostile images, audio,
blobs and links; an error; progress and logs), and leaves three interactive panels open: the
hostile elicitation form, the URL-mode form (a look-alike and a ``javascript:`` URL) and the
sampling review. JupyterLab runs scripts in trusted outputs, and these outputs are trusted (the
session made them), so any markup that leaks would run.

Before the page loads, ``window.__pwned = 0``; every payload sets it to 1, and one of them (the
canary) would also PUT ``pwned.txt`` through the contents API. At the end:

* ``window.__pwned`` is still 0 (after hovering every output element, for ``onmouseover``);
* no element in an output area carries an ``on*`` attribute, a script-capable tag or URL;
* the contents API saw no write except the test notebook's own saves, and no file appeared in
  the server's root (``pwned.txt`` least of all);
* the saved notebook's HTML outputs pass the static check of ``test_hostile.py``;
* the hostile text is really on the page, as text.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..support.browser import LAB_ONLY, Front, chromium_page
from ..support.browser import notebook as _notebook
from ..support.lab_fixtures import SharedLab
from .hostile import EVIL_URL, HOSTILE_TOOL_NAME, PAYLOADS, h
from .test_hostile import find_leaks

NOTEBOOK = "hostile.ipynb"

CELLS = [
    "%load_ext mcp_notebook",
    "%mcp connect h tests.security.hostile:server",
    "%mcp servers",
    "%mcp tools h",
    "%mcp prompts h",
    "%mcp resources h",
    "%mcp call h.hostile_content",
    "%mcp call h.hostile_error",
    "%mcp call h.hostile_error_blocks",
    "%mcp call h.hostile_progress",
    "%mcp prompt h.hostile_prompt",
    "%mcp read h hostile://blob",
    "%mcp read h hostile://text",
    f"%mcp call 'h.{HOSTILE_TOOL_NAME}'",
    "%mcp call h.hostile_records",  # a table of hostile keys and values
    "%mcp read h hostile://markdown",  # hostile markdown, rendered
    "%mcp review ask",  # review every sampling request (the default reviews only those that leave the machine)
    "%mcp call h.hostile_form --background",  # left waiting while the next cells run
    "%mcp call h.hostile_url --background",
    "%mcp call h.hostile_sample --background",
    "%mcp call h.hostile_echo --wait --trace",
    "%mcp log h",
]
# the form, the URL-mode form and the sampling review: left open in the page
FORM, URL_FORM, SAMPLE = (
    CELLS.index(f"%mcp call h.{tool} --background") for tool in ("hostile_form", "hostile_url", "hostile_sample")
)
LAST = len(CELLS) - 1
TOOL_ERRORS = (CELLS.index("%mcp call h.hostile_error"), CELLS.index("%mcp call h.hostile_error_blocks"))

# What a leak looks like in the live DOM: the same rules as the static check.
DOM_LEAKS = """() => {
  const bad = [];
  const tags = new Set(['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'FRAME', 'FRAMESET', 'APPLET', 'BASE', 'META', 'FORM', 'PORTAL']);
  const urlAttrs = new Set(['href', 'src', 'xlink:href', 'action', 'formaction', 'data', 'poster', 'background', 'srcset']);
  const badUrl = /^(javascript:|vbscript:|data:text\\/html|data:image\\/svg|data:application\\/xhtml|data:text\\/xml|data:application\\/xml)/;
  for (const el of document.querySelectorAll('.jp-OutputArea *')) {
    const where = el.outerHTML.slice(0, 200);
    if (tags.has(el.tagName.toUpperCase())) bad.push(`<${el.tagName.toLowerCase()}> in an output: ${where}`);
    for (const a of el.attributes) {
      const key = a.value.replace(/[\\u0000-\\u0020]/g, '').toLowerCase();
      if (a.name.startsWith('on')) bad.push(`${a.name} attribute: ${where}`);
      else if (a.name === 'srcdoc') bad.push(`srcdoc attribute: ${where}`);
      else if (urlAttrs.has(a.name) && badUrl.test(key)) bad.push(`${a.name}=${a.value.slice(0, 60)}: ${where}`);
    }
  }
  return bad;
}"""

HOVER_EVERYTHING = """() => {
  for (const el of document.querySelectorAll('.jp-OutputArea *')) {
    for (const type of ['mouseover', 'mouseenter', 'focus', 'click']) {
      if (type === 'click' && (el.tagName === 'A' || el.tagName === 'BUTTON' || el.closest('button'))) continue;
      el.dispatchEvent(new Event(type, {bubbles: true}));
    }
  }
}"""


@dataclass
class Lab:
    url: str
    root: Path  # the served root
    folder: str  # this test's folder in it, where the notebook is

    @property
    def notebook(self) -> str:
        return f"{self.folder}/{NOTEBOOK}"


@pytest.fixture(scope="module")
def page(served: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """This module's page, wider than the others' (``support/lab_fixtures.py``)."""
    with chromium_page(tmp_path_factory.mktemp("chromium-profile"), width=1200, height=900) as page:
        yield page


@pytest.fixture
def lab(front: Front, shared_labs: Callable[[str], SharedLab]) -> Lab:
    """The shared JupyterLab (``support/lab_fixtures.py``) and this test's folder in its root."""
    return Lab(front.url, shared_labs("lab").root, front.folder)


def _files(lab: Lab) -> set[str]:
    """Every file and folder under the served root (relative), checkpoints of the test notebook aside."""
    checkpoints = os.path.join(lab.folder, ".ipynb_checkpoints")
    out = set()
    for dirpath, dirnames, filenames in os.walk(lab.root):
        for name in dirnames + filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), lab.root)
            if rel == checkpoints or rel == os.path.join(checkpoints, "hostile-checkpoint.ipynb"):
                continue
            out.add(rel)
    return out


def _menu(page: Any, top: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel").get_by_text(top, exact=True).click()
    page.locator(".lm-Menu-itemLabel").get_by_text(item, exact=True).click()


def _joined(value: Any) -> str:
    """nbformat stores multi-line strings as lists of lines."""
    return "".join(value) if isinstance(value, list) else str(value)


def _saved_outputs(lab: Lab) -> list[dict[str, Any]]:
    try:
        nb = json.loads((lab.root / lab.notebook).read_text())
    except ValueError:  # being written
        return []
    return [o for c in nb["cells"] for o in c.get("outputs", [])]


@LAB_ONLY
def test_hostile_server_in_jupyterlab(lab: Lab, page: Any) -> None:
    from playwright.sync_api import expect

    document = _notebook(CELLS)
    for (
        index
    ) in TOOL_ERRORS:  # an isError result fails its cell; tagged as the tutorials tag theirs, so Run All goes on
        document["cells"][index]["metadata"]["tags"] = ["raises-exception"]
    (lab.root / lab.notebook).write_text(json.dumps(document))
    before = _files(lab)

    writes: list[str] = []  # every non-GET request to the contents API, as "METHOD path"

    def watch(route: Any) -> None:
        request = route.request
        if request.method not in ("GET", "HEAD"):
            writes.append(f"{request.method} {urllib.parse.unquote(urllib.parse.urlsplit(request.url).path)}")
        route.continue_()

    page.route(re.compile(r".*/api/contents(/.*|\?.*|$)"), watch)
    page.add_init_script("window.__pwned = 0")
    page.set_default_timeout(30_000)

    page.goto(f"{lab.url}/lab/tree/{lab.notebook}")
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=60_000)
    assert page.evaluate("window.__pwned") == 0
    _menu(page, "Run", "Run All Cells")

    cells = page.locator(".jp-Notebook .jp-Cell")
    # the last cell ran: every cell before it has its output
    expect(cells.nth(LAST).locator(".jp-OutputArea")).to_contain_text(h("log-info-1"), timeout=90_000)
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=60_000)

    # the real outcome: the calls ran and their hostile text is on the page, as text
    expect(cells.nth(2)).to_contain_text(h("server-name")[:70])  # a name is one line of at most 80 characters
    expect(cells.nth(3)).to_contain_text(h("echo-title"))
    expect(cells.nth(4)).to_contain_text(h("prompt-title"))
    expect(cells.nth(5)).to_contain_text(h("resource-name"))
    expect(cells.nth(6)).to_contain_text(h("result-text"), timeout=30_000)
    expect(cells.nth(6)).to_contain_text(h("link-title"))
    expect(cells.nth(7)).to_contain_text(h("tool-error"))
    expect(cells.nth(8)).to_contain_text(h("error-result-text"))
    for index in (
        TOOL_ERRORS
    ):  # an isError result: a red "error" badge, and the cell failed (Run All went on: tagged raises-exception)
        badge = cells.nth(index).locator(".mcpnb .badge")
        expect(badge).to_have_text("error")
        # the theme's error colour (JupyterLab Light's --jp-error-color1) edges it; its fill is that colour mixed into
        # the page's background so the text keeps its contrast in every theme (issue 37, item 5)
        expect(badge).to_have_css("border-top-color", "rgb(211, 47, 47)")
        expect(cells.nth(index).locator("[data-mime-type='application/vnd.jupyter.stderr']")).to_contain_text(
            "reported a tool error (isError)"
        )
    expect(cells.nth(9)).to_contain_text(h("progress-result"))
    expect(cells.nth(10)).to_contain_text(h("prompt-user"))
    expect(cells.nth(12)).to_contain_text(h("resource-text"))
    expect(cells.nth(13)).to_contain_text(h("named-result"))
    records = cells.nth(CELLS.index("%mcp call h.hostile_records"))
    expect(records.locator("table.records th").first).to_contain_text("[record-key] " + PAYLOADS[0])  # a key, as text
    expect(records.locator("table.records")).to_contain_text("[record-value] " + PAYLOADS[1])
    markdown = cells.nth(CELLS.index("%mcp read h hostile://markdown")).locator(".md")
    expect(markdown.locator("h1")).to_contain_text("[markdown-heading] " + PAYLOADS[0])
    expect(markdown).to_contain_text('<div onclick="window.__pwned=1">[markdown-raw-block]</div>')  # raw HTML, as text
    expect(markdown.locator("a")).to_have_count(1)  # the beacon image as a link; every script link stays text
    expect(markdown.locator("a")).to_have_attribute("href", "https://evil.example/beacon.png")
    expect(cells.nth(LAST - 1)).to_contain_text(h("echo-result"))

    form = cells.nth(FORM).locator(".mcp-elicitation")
    expect(form).to_be_visible(timeout=30_000)
    expect(form.locator(".mcp-asker")).to_contain_text(h("elicit-message"))
    expect(form).to_contain_text(h("field-title"))
    expect(form).to_contain_text(h("field-description"))
    expect(form).to_contain_text(h("anyof-title-2"))  # a checkbox's label, as text
    expect(form.locator("select").first).to_contain_text(h("oneof-title-1"))  # a dropdown's option, as text

    url_form = cells.nth(URL_FORM).locator(".mcp-elicitation")
    expect(url_form).to_be_visible(timeout=30_000)
    expect(url_form).to_contain_text(h("url-message-evil"))
    expect(url_form).to_contain_text(h("url-message-js"))

    review = cells.nth(SAMPLE).locator(".mcp-review-request")
    expect(review).to_be_visible(timeout=30_000)
    expect(review).to_contain_text("[sampling-hint]")
    expect(review.locator("textarea").first).to_have_value(h("sampling-system"))  # editable, as plain text

    # Every check below is collected, so one run reports every kind of failure at once.
    problems: list[str] = []

    # the highlighted host is the one the browser opens (its own WHATWG parser says which)
    opens = page.evaluate("(u) => new URL(u).hostname", EVIL_URL)
    assert opens == "evil.example"
    domains = [d.strip() for d in url_form.locator(".mcp-domain").all_text_contents()]
    if not domains or any(d != opens for d in domains):
        problems.append(f"URL form highlights {domains} for {EVIL_URL!r}; the browser opens {opens}")
    for href in url_form.locator("a[href]").evaluate_all("(els) => els.map(e => e.href)"):
        scheme = urllib.parse.urlsplit(href).scheme
        if scheme not in ("http", "https") or page.evaluate("(u) => new URL(u).hostname", href) != opens:
            problems.append(f"URL form links to {href!r}")

    # give image errors, SVG loads and the like every chance (every image in an output loaded or failed),
    # then hover and focus everything
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea img, .jp-OutputArea image')].every(i => !('complete' in i) || i.complete)",
        timeout=30_000,
    )
    page.evaluate(HOVER_EVERYTHING)
    page.wait_for_timeout(1_000)

    problems += [f"live DOM: {leak}" for leak in page.evaluate(DOM_LEAKS)]
    if page.evaluate("window.__pwned") != 0:
        problems.append("window.__pwned was set: a payload ran in the page (before saving)")

    # saved outputs (what a shared notebook carries) pass the static check
    _menu(page, "File", "Save Notebook")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(o.get("output_type") != "stream" for o in _saved_outputs(lab)):
        page.wait_for_timeout(250)  # not time.sleep: the route handler runs while Playwright waits
    saved = [_joined(o["data"]["text/html"]) for o in _saved_outputs(lab) if "text/html" in o.get("data", {})]
    assert saved, "the saved notebook has no HTML outputs"
    assert any("&lt;script&gt;window.__pwned=1&lt;/script&gt;" in x for x in saved)  # escaped, not dropped
    problems += [f"saved output: {leak}" for x in saved for leak in find_leaks(x)]

    page.wait_for_timeout(1_000)  # a canary's fetch would have landed by now
    if page.evaluate("window.__pwned") != 0:
        problems.append("window.__pwned was set: a payload ran in the page")
    own = re.compile(rf"^/api/contents/{re.escape(lab.notebook)}(/checkpoints(/[^/]+)?)?$")
    problems += [
        f"contents API write the user did not make: {wr}" for wr in writes if not own.match(wr.split(" ", 1)[1])
    ]
    if (lab.root / "pwned.txt").exists():
        problems.append("the canary wrote pwned.txt")
    if _files(lab) != before:
        problems.append(f"new files in the server root: {sorted(_files(lab) - before)}")
    assert any(wr.startswith("PUT ") for wr in writes), "the notebook's own save was not seen (is the route watching?)"
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems)
