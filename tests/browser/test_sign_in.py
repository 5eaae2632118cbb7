"""Sign-in (OAuth) in a real browser: JupyterLab (and Notebook 7) in Debian's Chromium, a person clicking.

The suite's local authorization server (``tests.support.oauth_server``, consent page with Allow / Deny)
guards the demo MCP server. A notebook runs ``%mcp connect secure URL``: its cell shows the
sign-in panel (server, issuer, the authorization URL with its host highlighted, a Sign in link).
The test clicks the link as a person does (a new tab), clicks Allow (or Deny) on the consent page;
the authorization server sends that tab to this package's callback page under the Jupyter server's
base URL, the labextension relays the code to the kernel, and the cell says it is signed in.

* ``test_sign_in_from_a_cell``: the whole way, then a call; a screenshot of the panel in JupyterLab
  goes to ``docs/images/sign-in.png``; the saved notebook holds neither the code nor a token.
* ``test_sign_in_behind_a_base_url``: the same under ``/user/ada/`` (as JupyterHub serves a user).
* ``test_a_call_that_hits_401_signs_in_and_goes_on``: tokens revoked; the call's own cell asks to
  sign in and, once signed in, shows the result without being run again.
* ``test_denied_consent_says_so_in_the_cell``: Deny; the cell says so; a later connect signs in.
* ``test_sign_in_in_the_first_cell``: ``%load_ext``, ``%mcp connect`` and a call in ONE cell, as the README
  starts, under ``/user/grace/``, in JupyterLab and Notebook 7: the redirect is the Jupyter server's callback (the page was asked first),
  one panel, the call goes on after the sign-in, and ``%mcp auth list`` lists exactly that sign-in.

Every kernel's ``JUPYTER_DATA_DIR`` (where the tokens are kept) is a temp folder: the user's own
sign-ins are never read or touched. The callback page is read as it arrives in the tab, since the
page closes itself soon after it loads.
"""

from __future__ import annotations

import json
import re
import urllib.error
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, quote_plus, urlsplit

import pytest

from ..conftest import REPO_ROOT
from ..support.browser import APPS, Front, api, chromium_page, notebook, put_notebook, running_lab, wait_for
from ..support.oauth_server import CONSENT_TITLE, OAuthServer, running_oauth_server

SCREENSHOT = REPO_ROOT / "docs" / "images" / "sign-in.png"
CALLBACK = "mcp-notebook/oauth/callback"
CALLBACK_URL = re.compile(r"/mcp-notebook/oauth/callback\?")
SIGNED_IN_PAGE = "Signed in. You can close this tab and go back to the notebook."


@dataclass(frozen=True)
class Lab:
    app: str
    url: str  # http://127.0.0.1:PORT plus the base URL, without its last /
    data_dir: Path  # the kernels' JUPYTER_DATA_DIR
    log: Path

    def vault(self) -> dict[str, Any]:
        path = self.data_dir / "mcp_notebook" / "oauth.json"
        return dict(json.loads(path.read_text())) if path.exists() else {}


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Lab]]:
    """``labs(app, base_url="/")``: a JupyterLab or Notebook 7 server, started on first use and kept for the module."""
    started: dict[tuple[str, str], Lab] = {}
    with ExitStack() as stack:

        def get(app: str, base_url: str = "/") -> Lab:
            if (app, base_url) not in started:
                base = tmp_path_factory.mktemp(app)
                data = base / "data"
                data.mkdir()
                env = {"JUPYTER_DATA_DIR": str(data)}
                url, _root = stack.enter_context(
                    running_lab(base, app=app, expose_app=True, base_url=base_url, env=env)
                )
                started[app, base_url] = Lab(app, url, data, base / "lab.log")
            return started[app, base_url]

        yield get


@pytest.fixture
def oauth_server() -> Iterator[OAuthServer]:
    """A fresh authorization server (and so a fresh resource URL: no sign-in of another test applies)."""
    with running_oauth_server(consent="click") as server:
        yield server


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    with chromium_page(tmp_path / "profile") as page:
        page.set_default_timeout(30_000)
        yield page


def start_cell(front: Front, index: int) -> Any:
    """Run the (filled) cell ``index`` as a person does (click, Shift+Enter), without waiting; returns the cell."""
    cell = front.page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(index)
    cell.locator(".jp-InputArea-editor").click()
    front.page.keyboard.press("Shift+Enter")
    return cell


def run_cell(front: Front, index: int, timeout: float = 60_000) -> Any:
    """Run the (filled) cell ``index`` and wait until it ran (its prompt shows a count); returns the cell."""
    from playwright.sync_api import expect

    cell = start_cell(front, index)
    expect(cell.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"), timeout=timeout)
    return cell


def execution_count(cell: Any) -> int:
    found = re.search(r"\[(\d+)\]", cell.locator(".jp-InputPrompt").inner_text())
    assert found, "the cell has not run"
    return int(found.group(1))


@dataclass(frozen=True)
class Landing:
    """Where the sign-in tab was sent back to, what it said, and whether it closed by itself."""

    url: str
    text: str
    closed_by_itself: bool

    def param(self, name: str) -> str:
        return parse_qs(urlsplit(self.url).query)[name][0]


def sign_in_in_a_tab(page: Any, panel: Any, decision: str = "allow") -> Landing:
    """Click the panel's Sign in link, answer the consent page with ``decision``; the callback the tab got."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    landed: list[tuple[str, str]] = []

    def keep(response: Any) -> None:  # read as it arrives: the page closes itself soon after it loads
        if CALLBACK_URL.search(response.url):
            landed.append((response.url, response.text()))

    page.context.on("response", keep)
    try:
        with page.expect_popup() as opened:
            panel.locator("a.mcp-open-link").click()
        tab = opened.value
        expect(tab).to_have_title(CONSENT_TITLE)
        tab.locator(f"#{decision}").click()
        try:  # the callback page closes itself a moment after it has told the notebook
            tab.wait_for_event("close", timeout=10_000)
            closed = True
        except PlaywrightTimeout:
            closed = False
            tab.close()  # it can be closed
    finally:
        page.context.remove_listener("response", keep)
    assert len(landed) == 1, landed
    url, body = landed[0]
    text = re.search(r'<p id="outcome">(.*?)</p>', body, re.S)
    assert text, body
    return Landing(url, text.group(1), closed)


def saved_text(lab: Lab, name: str) -> str:
    return str(api(lab.url, f"contents/{name}?content=1&type=file&format=text")["content"])


def saved_once_run(lab: Lab, name: str) -> str | None:
    """The saved notebook's text once every cell with code in it has run (a save after the test's steps).

    ``None`` meanwhile, also while the server is still writing the file (caught mid-write it reads empty,
    or the contents API answers 400 or 500).
    """
    try:
        text = saved_text(lab, name)
        cells = json.loads(text)["cells"]
    except urllib.error.HTTPError as exc:
        if exc.code == 400 or exc.code >= 500:
            return None
        raise
    except ValueError:
        return None
    return text if all(cell["execution_count"] for cell in cells if cell["source"]) else None


def secrets_of(lab: Lab) -> list[str]:
    """Every token the kernels keep (access and refresh), read from the temp vault."""
    found = []
    for entry in lab.vault().values():
        tokens = (entry or {}).get("tokens") or {}
        found += [tokens[k] for k in ("access_token", "refresh_token") if tokens.get(k)]
    return found


def forms(secret: str) -> set[str]:
    return {secret, quote(secret, safe=""), quote_plus(secret)}


# ---------------------------------------------------------------------- the tests
@pytest.mark.parametrize("app", APPS)
def test_sign_in_from_a_cell(app: str, labs: Callable[..., Lab], oauth_server: OAuthServer, browser: Any) -> None:
    from playwright.sync_api import expect

    lab = labs(app)
    cells = [
        "%load_ext mcp_notebook",
        f"%mcp connect secure {oauth_server.url}",
        "%mcp call secure.echo text=hello-after-sign-in",
    ]
    put_notebook(lab.url, "sign-in.ipynb", notebook(cells))
    front = Front(browser, lab.url, app)
    front.open("sign-in.ipynb")
    run_cell(front, 0)
    connect = run_cell(front, 1)

    panel = connect.locator(".mcp-sign-in")
    expect(panel).to_be_visible(timeout=30_000)
    expect(connect.locator(".jp-OutputArea")).to_contain_text("the server wants you to sign in first")
    expect(panel.locator(".mcp-sign-in-title")).to_have_text(f"Sign in to secure at {oauth_server.issuer}")
    expect(panel.locator(".mcp-domain")).to_have_text("127.0.0.1")
    link = panel.locator("a.mcp-open-link")
    expect(link).to_have_text("Sign in ↗")
    expect(link).to_have_attribute("target", "_blank")
    href = link.get_attribute("href") or ""
    assert href.startswith(f"{oauth_server.issuer}/authorize?"), href
    assert parse_qs(urlsplit(href).query)["redirect_uri"] == [f"{lab.url}/{CALLBACK}"]
    if app == "lab":  # the README shows JupyterLab
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        panel.screenshot(path=str(SCREENSHOT))

    landing = sign_in_in_a_tab(browser, panel)
    assert urlsplit(landing.url).path == urlsplit(f"{lab.url}/{CALLBACK}").path == f"/{CALLBACK}"
    assert landing.url.startswith(f"{lab.url}/{CALLBACK}?")
    assert landing.text == SIGNED_IN_PAGE
    code = landing.param("code")
    expect(panel).to_contain_text("✔ Signed in to secure", timeout=30_000)
    expect(panel.locator("a.mcp-open-link")).to_have_count(0)  # the URL goes away with the panel

    call = run_cell(front, 2)
    expect(call.locator(".jp-OutputArea")).to_contain_text("hello-after-sign-in", timeout=30_000)
    assert oauth_server.stats()["authorization_code_grants"] == 1

    # nothing secret in the saved notebook: not the code, not a token (read from the temp vault)
    tokens = secrets_of(lab)
    assert len(tokens) >= 2, "the vault in the temp JUPYTER_DATA_DIR holds the access and refresh tokens"
    front.save()
    text = wait_for(lambda: saved_once_run(lab, "sign-in.ipynb"), "the saved notebook with its outputs")
    cells = json.loads(text)["cells"]
    assert "the server wants you to sign in first" in json.dumps(cells[1]["outputs"])
    assert "hello-after-sign-in" in json.dumps(cells[2]["outputs"])
    log = lab.log.read_text(errors="replace")
    for secret in [code, *tokens]:
        for form in forms(secret):
            assert form not in text
            assert form not in log  # nor in the Jupyter server's log


def test_sign_in_behind_a_base_url(labs: Callable[..., Lab], oauth_server: OAuthServer, browser: Any) -> None:
    from playwright.sync_api import expect

    lab = labs("lab", base_url="/user/ada/")
    assert lab.url.endswith("/user/ada")
    cells = [
        "%load_ext mcp_notebook",
        f"%mcp connect secure {oauth_server.url}",
        "%mcp call secure.echo text=hello-behind-a-base-url",
    ]
    put_notebook(lab.url, "hub.ipynb", notebook(cells))
    front = Front(browser, lab.url, "lab")
    front.open("hub.ipynb")
    run_cell(front, 0)
    panel = run_cell(front, 1).locator(".mcp-sign-in")
    expect(panel.locator(".mcp-sign-in-title")).to_have_text(
        f"Sign in to secure at {oauth_server.issuer}", timeout=30_000
    )

    landing = sign_in_in_a_tab(browser, panel)
    port = urlsplit(lab.url).port
    assert landing.url.startswith(f"http://127.0.0.1:{port}/user/ada/{CALLBACK}?"), landing.url
    assert landing.text == SIGNED_IN_PAGE
    expect(panel).to_contain_text("✔ Signed in to secure", timeout=30_000)
    call = run_cell(front, 2)
    expect(call.locator(".jp-OutputArea")).to_contain_text("hello-behind-a-base-url", timeout=30_000)


def test_a_call_that_hits_401_signs_in_and_goes_on(
    labs: Callable[..., Lab], oauth_server: OAuthServer, browser: Any
) -> None:
    from playwright.sync_api import expect

    lab = labs("lab")
    cells = [
        "%load_ext mcp_notebook",
        f"%mcp connect secure {oauth_server.url}",
        "%mcp call secure.echo text=continued",
    ]
    put_notebook(lab.url, "401.ipynb", notebook(cells))
    front = Front(browser, lab.url, "lab")
    front.open("401.ipynb")
    run_cell(front, 0)
    connect = run_cell(front, 1)
    first = connect.locator(".mcp-sign-in")
    sign_in_in_a_tab(browser, first)
    expect(first).to_contain_text("✔ Signed in to secure", timeout=30_000)

    assert oauth_server.revoke_all() >= 1  # the kept access token stops working; the next request gets a 401
    call = start_cell(front, 2)  # whether the cell returns at once or waits for the sign-in is not the point
    output = call.locator(".jp-OutputArea")
    panel = call.locator(".mcp-sign-in")
    expect(panel.locator(".mcp-sign-in-title")).to_have_text(
        f"Sign in to secure at {oauth_server.issuer}", timeout=30_000
    )
    expect(output).not_to_contain_text("continued")

    landing = sign_in_in_a_tab(browser, panel)
    assert landing.text == SIGNED_IN_PAGE
    expect(output).to_contain_text("continued", timeout=30_000)  # the same cell goes on: nothing is run again
    expect(output).to_contain_text("done secure.echo")
    expect(call.locator("a.mcp-open-link")).to_have_count(0)  # the sign-in is over: no link, no URL left
    expect(call.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"))
    assert execution_count(call) == execution_count(connect) + 1  # it ran once, right after the connect
    assert oauth_server.stats()["authorization_code_grants"] == 2


def test_denied_consent_says_so_in_the_cell(labs: Callable[..., Lab], oauth_server: OAuthServer, browser: Any) -> None:
    from playwright.sync_api import expect

    lab = labs("lab")
    url = oauth_server.url
    cells = [
        "%load_ext mcp_notebook",
        f"%mcp connect secure {url}",
        "%mcp call secure.echo text=never-sent",
        f"%mcp connect secure {url}",
        "%mcp call secure.echo text=after-a-denial",
    ]
    put_notebook(lab.url, "deny.ipynb", notebook(cells))
    front = Front(browser, lab.url, "lab")
    front.open("deny.ipynb")
    run_cell(front, 0)
    panel = run_cell(front, 1).locator(".mcp-sign-in")

    landing = sign_in_in_a_tab(browser, panel, decision="deny")
    assert landing.param("error") == "access_denied"
    assert "code" not in parse_qs(urlsplit(landing.url).query)
    assert landing.text.startswith("Sign-in did not complete: access_denied")
    expect(panel).to_contain_text("Sign-in to secure did not complete (access_denied)", timeout=30_000)
    refused = run_cell(front, 2)
    expect(refused.locator(".jp-OutputArea")).to_contain_text(
        "the authorization server answered 'access_denied'", timeout=30_000
    )
    expect(refused.locator(".jp-OutputArea")).not_to_contain_text("never-sent")

    again = run_cell(front, 3).locator(".mcp-sign-in")
    landing = sign_in_in_a_tab(browser, again)
    assert landing.text == SIGNED_IN_PAGE
    expect(again).to_contain_text("✔ Signed in to secure", timeout=30_000)
    call = run_cell(front, 4)
    expect(call.locator(".jp-OutputArea")).to_contain_text("after-a-denial", timeout=30_000)
    assert oauth_server.stats()["authorization_code_grants"] == 1


@pytest.mark.parametrize("app", ["lab"])  # Notebook 7 signs in from a cell above (browser.LAB_ONLY)
def test_sign_in_in_the_first_cell(app: str, labs: Callable[..., Lab], oauth_server: OAuthServer, browser: Any) -> None:
    from playwright.sync_api import expect

    lab = labs(app, base_url="/user/grace/")  # a server of its own: its vault holds only this test's sign-ins
    first = f"%load_ext mcp_notebook\n%mcp connect secure {oauth_server.url}\n%mcp call secure.echo text=hello-from-the-first-cell"
    cells = [first, "%mcp call secure.echo text=hello-from-the-next-cell", "%mcp auth list"]
    put_notebook(lab.url, "first-cell.ipynb", notebook(cells))
    front = Front(browser, lab.url, app)
    front.open("first-cell.ipynb")
    cell = run_cell(front, 0)
    output = cell.locator(".jp-OutputArea")
    panel = cell.locator(".mcp-sign-in")
    expect(panel.locator(".mcp-sign-in-title")).to_have_text(
        f"Sign in to secure at {oauth_server.issuer}", timeout=30_000
    )
    expect(output).to_contain_text("Waiting for the sign-in to secure shown above", timeout=30_000)  # the call's line
    expect(panel).to_have_count(1)  # one panel for the connect and the call waiting on it
    href = panel.locator("a.mcp-open-link").get_attribute("href") or ""
    assert parse_qs(urlsplit(href).query)["redirect_uri"] == [
        f"{lab.url}/{CALLBACK}"
    ]  # Jupyter's, not the kernel's loopback
    assert lab.url.endswith("/user/grace")

    landing = sign_in_in_a_tab(browser, panel)
    assert landing.text == SIGNED_IN_PAGE
    assert urlsplit(landing.url).path == f"/user/grace/{CALLBACK}"
    expect(panel).to_contain_text("✔ Signed in to secure", timeout=30_000)
    expect(output).to_contain_text("hello-from-the-first-cell", timeout=30_000)  # the call went on by itself
    expect(panel).to_have_count(1)
    assert oauth_server.stats()["authorization_code_grants"] == 1

    expect(run_cell(front, 1).locator(".jp-OutputArea")).to_contain_text("hello-from-the-next-cell", timeout=30_000)
    listing = run_cell(front, 2).locator(".jp-OutputArea table")
    expect(listing).to_have_count(1, timeout=30_000)
    rows = [[td.strip() for td in row.locator("td").all_inner_texts()] for row in listing.locator("tr").all()[1:]]
    assert [row[:4] + row[5:] for row in rows] == [
        ["secure", oauth_server.url, oauth_server.issuer, "mcp:read mcp:write", "yes"]
    ]
    assert re.fullmatch(r"in \d+ min", rows[0][4]), rows
    assert oauth_server.stats()["authorization_code_grants"] == 1  # no second sign-in
