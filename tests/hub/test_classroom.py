"""Thirty students on one JupyterHub, one shared MCP server, the administrator's policy in force (issue 40, item 3);
and two students through the page in Chromium, one signing in with OAuth under ``/user/NAME/`` (issue 40, item 2).

A real hub on 127.0.0.1 (tests/hub/classroom.py): the dummy authenticator, the simple local spawner,
configurable-http-proxy, one single-user server and one kernel per student, reached through the
proxy. One demo server runs with two uvicorn workers sharing a ``RequestStateSecurity`` key, so a
round answered on one worker is continued on the other. The hub is started once for this module
(``hub``) and shared by both tests; the suite's OAuth server (tests/support/oauth_server.py) runs
beside it, allowed by the policy.

``test_thirty_students_run_the_form_flow_at_once``: each student runs tutorial 02's form flow
(``%mcp call demo.ask_everything`` with preset answers, headless), at the same time. Every flow ends
with its result, and each student's result carries that student's own answers (a round's state never
crossed to another student); no kernel sees a flow waiting or a record it did not make; the policy,
set by the spawner's ``JUPYTER_CONFIG_PATH``, refuses a URL it does not list, naming its file, in
every kernel.

``test_students_answer_the_form_in_their_own_pages``: ada and grace each sign in at the hub's login
form in their own Chromium context, open their own JupyterLab at ``/user/NAME/lab`` through the
proxy (the repository's labextension and the widget manager loaded there), run tutorial 02's call
and answer its form by typing and picking in the page, both forms open at once; each cell ends with
that student's own answers and neither page shows the other's flow. Then ada signs in to an MCP
server that requires OAuth: the authorization server sends her tab to her own server's callback,
``/user/ada/mcp-notebook/oauth/callback`` through the hub's proxy (the server extension is loaded in
the single-user server), and the call's result arrives in her cell; grace's kernel keeps no sign-in
and no token of hers is on disk.

Bounded: the class has 15 minutes, the page test 5; the hub, its servers, the kernels, the demo and
OAuth servers are stopped after the module (one process session each). The page test uses Chromium
but stays in this folder's slow tier (tests/conftest.py), not the browser tier: the browser tier runs
in a pytest run of its own under `make test`, which would start a second hub. `make check` runs
neither; `make test` installs what they need (make hub-deps, make chromium).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from ..browser.test_sign_in import CALLBACK, SIGNED_IN_PAGE, sign_in_in_a_tab
from ..support.browser import Front, chromium_pages, load_extension, notebook, quiet_settings
from ..support.oauth_server import OAuthServer, running_oauth_server
from .classroom import ANSWERS, Classroom, installed, teach

STUDENTS = 30


@dataclass(frozen=True)
class Hub:
    room: Classroom
    oauth: OAuthServer


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """One classroom for the module, with the OAuth test server allowed by its policy; everything stopped after."""
    missing = installed()
    assert missing is None, missing
    with running_oauth_server(consent="click") as oauth:
        room = Classroom(tmp_path_factory.mktemp("hub") / "classroom", also_allowed=[oauth.issuer])
        with room:
            yield Hub(room, oauth)
    assert room.procs == []  # everything it started is stopped


@pytest.mark.timeout(1200)
def test_thirty_students_run_the_form_flow_at_once(hub: Hub) -> None:
    room = hub.room
    solo, lessons, wall = teach(room, STUDENTS, bounded=900)
    assert [f"{x.user}: {x.error}" for x in [solo, *lessons] if x.error] == []
    for lesson in [solo, *lessons]:
        assert {k: lesson.answers.get(k) for k in ANSWERS} == {**ANSWERS, "size": "l"}, lesson.answers  # Large's value
        assert lesson.answers["name"] == lesson.user  # its own answers, never another student's
        assert lesson.waiting == 0 and lesson.records == []  # nothing left waiting, nothing of anyone else's
        assert lesson.refused.startswith("ConnectionFailed: Not connecting 'elsewhere': the administrator's policy")
        assert str(room.policy_file) in lesson.refused
    assert len(lessons) == STUDENTS and wall < 900


# ---------------------------------------------------------------------- students through the page
PAGE_ANSWERS = {"ada": (37, "Large", "l"), "grace": (44, "Small", "s")}  # age, size's label, size's value
LESSON = "lesson.ipynb"


def log_in(page: Any, hub_url: str, user: str) -> None:
    """The hub's login form, as a person fills it (the dummy authenticator takes any password)."""
    page.goto(f"{hub_url}/hub/login")
    page.locator("#username_input").fill(user)
    page.locator("#password_input").fill(f"{user}-password")
    with page.expect_navigation():
        page.locator("#login_submit").click()
    assert "/hub/login" not in page.url, f"{user} was not signed in at the hub: {page.url}"


def answer_form(front: Front, cell: Any, user: str) -> None:
    """Type this student's name and age, pick their size, Accept: tutorial 02's form, by hand."""
    from playwright.sync_api import expect

    age, size, _ = PAGE_ANSWERS[user]
    form = cell.locator(".mcp-elicitation")
    form.locator(".mcp-field-name input").press_sequentially(user, delay=20)
    age_input = form.locator(".mcp-field-age input")
    age_input.click()
    front.page.keyboard.press("Control+A")
    age_input.press_sequentially(str(age), delay=20)
    form.locator(".mcp-field-size select").select_option(label=size)
    form.get_by_role("button", name="Accept").click()
    expect(cell.locator(".jp-OutputArea").first).to_contain_text(f'"name": "{user}"', timeout=60_000)


def answers_in(cell: Any) -> dict[str, Any]:
    """The answers ``demo.ask_everything`` returned (its sorted JSON), read from the cell's output."""
    text = cell.locator(".jp-OutputArea").first.inner_text()
    found = re.search(r"\{.*\}", text, re.S)
    assert found, text
    return dict(json.loads(found.group(0)))


@pytest.mark.timeout(300)
def test_students_answer_the_form_in_their_own_pages(hub: Hub, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    room, oauth = hub.room, hub.oauth
    users = list(PAGE_ANSWERS)
    for user in users:  # each student's home before their server starts: a quiet JupyterLab, an empty notebook
        home = room.folder / "home" / user
        quiet_settings(home / ".jupyter" / "lab" / "user-settings")
        (home / LESSON).write_text(json.dumps(notebook([""] * 5)))
    asyncio.run(room.enroll(users))  # before they log in (a login would create them first)
    with ThreadPoolExecutor(1) as pool, chromium_pages(tmp_path, len(users)) as pages:
        spawning = pool.submit(asyncio.run, room.spawn(users, timeout=180, enroll=False))  # while Chromium starts
        fronts: dict[str, Front] = {}
        for user, page in zip(users, pages, strict=True):
            page.set_default_timeout(60_000)
            log_in(page, room.url, user)
            fronts[user] = Front(page, f"{room.url}/user/{user}", "lab")
        spawning.result()
        for front in fronts.values():  # both pages load at once
            front.page.goto(front.notebook_url(LESSON))
        for user, front in fronts.items():
            front.wait_idle(LESSON, timeout=180_000)
            assert front.page.url.startswith(f"{room.url}/user/{user}/lab/"), front.page.url

        # tutorial 02's call in both pages; both forms wait at once, each page shows its own only
        cells = {}
        for front in fronts.values():
            load_extension(front, 0)
            front.run_in_cell(1, f"%mcp connect demo {room.demo_url}")
            cells[front] = front.run_in_cell(2, "%mcp call demo.ask_everything", wait=False)
        for front, cell in cells.items():
            expect(cell.locator(".mcp-elicitation")).to_be_visible(timeout=60_000)
            expect(cell.locator(".mcp-elicitation .mcp-asker")).to_contain_text("demo asks")
            expect(front.page.locator(".mcp-elicitation")).to_have_count(1)
        ada, grace = fronts["ada"], fronts["grace"]
        answer_form(ada, cells[ada], "ada")
        expect(cells[grace].locator(".mcp-elicitation")).to_be_visible()  # grace's flow still waits for her
        expect(cells[grace].locator(".jp-OutputArea").first).not_to_contain_text('"name"')
        answer_form(grace, cells[grace], "grace")
        for user, front in fronts.items():
            age, _, size = PAGE_ANSWERS[user]
            said = answers_in(cells[front])
            assert (said["name"], said["age"], said["size"]) == (user, age, size), said
            other = next(u for u in users if u != user)
            expect(front.page.locator(".jp-NotebookPanel:visible")).not_to_contain_text(f'"name": "{other}"')
            expect(front.page.locator(".mcp-elicitation")).to_have_count(0)  # answered: no form is left open

        # ada signs in to an MCP server that requires OAuth: the callback is her own server's, through the proxy
        connect = ada.run_in_cell(3, f"%mcp connect secure {oauth.url}")
        panel = connect.locator(".mcp-sign-in")
        expect(panel.locator(".mcp-sign-in-title")).to_have_text(f"Sign in to secure at {oauth.issuer}", timeout=60_000)
        callback = f"{room.url}/user/ada/{CALLBACK}"
        href = panel.locator("a.mcp-open-link").get_attribute("href") or ""
        assert parse_qs(urlsplit(href).query)["redirect_uri"] == [callback]
        landing = sign_in_in_a_tab(ada.page, panel)
        assert landing.url.startswith(f"{callback}?"), landing.url
        assert landing.text == SIGNED_IN_PAGE  # the server extension answered under /user/ada/
        expect(panel).to_contain_text("✔ Signed in to secure", timeout=60_000)
        call = ada.run_in_cell(4, "%mcp call secure.echo text=hello-ada-through-the-hub")
        expect(call.locator(".jp-OutputArea")).to_contain_text("hello-ada-through-the-hub", timeout=60_000)
        assert oauth.stats()["authorization_code_grants"] == 1

        # no sign-in crossed: grace's kernel keeps none, and the only tokens on disk are in ada's home
        listing = grace.run_in_cell(3, "%mcp auth list")
        expect(listing.locator(".jp-OutputArea")).to_contain_text("No sign-ins kept.", timeout=60_000)
    vaults = sorted(p.relative_to(room.folder / "home").parts[0] for p in room.folder.glob("home/*/**/oauth.json"))
    assert vaults == ["ada"]
    assert "mcp_notebook | extension was successfully loaded" in (room.folder / "hub.log").read_text(errors="replace")
    for user in users:
        asyncio.run(room.api("DELETE", f"/hub/api/users/{user}/server"))
