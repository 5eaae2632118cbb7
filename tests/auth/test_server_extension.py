"""OAuth sign-in, the browser half: the Jupyter Server extension and the labextension's relay.

* A real ``jupyter server`` (base URL ``/user/ada/`` as under JupyterHub, a token) with the
  extension enabled by the config the package ships: the callback page (text, escaping, headers,
  the BroadcastChannel message), Jupyter's authentication in front of both endpoints, the result
  endpoint answering once, and a server log that never holds a code.
* Real JupyterLab in Chromium: a kernel waits for a state (``Frontend.await_oauth``); the callback
  opened in a second tab reaches it through the BroadcastChannel and the comm; a callback the page
  never sees (a plain HTTP GET) reaches it through the relay's poll of the result endpoint, while
  the cell that waits for it blocks the kernel's main thread (as a ``%mcp`` line waiting for a
  sign-in does). ``page_url`` in the kernel is the server's base URL as the browser sees it.
"""

from __future__ import annotations

import html
import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import httpx2
import pytest

from mcp_notebook.auth.server_extension import CallbackResults
from mcp_notebook.flows.store import Store
from mcp_notebook.notebook.frontend import Frontend, _answers_where_sent, checked_page_url

from ..conftest import REPO_ROOT, free_port
from ..support.browser import APPS, Front, chromium_page, notebook, running_lab, wait_for
from ..support.kernel_harness import Kernel

TOKEN = "T" + secrets.token_hex(8)
BASE = "/user/ada/"
AUTH = {"Authorization": f"token {TOKEN}"}
SIGNED_IN = "Signed in. You can close this tab and go back to the notebook."


def state() -> str:
    return secrets.token_urlsafe(32)


def script_message(body: str) -> dict[str, Any]:
    """The JSON the callback page posts on its BroadcastChannel, parsed back."""
    found = re.search(r"var message = (.*);\n", body)
    assert found, body
    return dict(json.loads(found.group(1)))


# ---------------------------------------------------------------------- the memory of callbacks
def test_results_are_bounded_expire_and_are_taken_once() -> None:
    now = [0.0]
    results = CallbackResults(max_entries=3, ttl=10, clock=lambda: now[0])
    for i in range(5):
        results.put(f"state-{i:04}", {"code": str(i)})
    assert (
        len(results) == 3 and results.take("state-0000") is None and results.take("state-0001") is None
    )  # the oldest went
    assert results.take("state-0002") == {"code": "2"} and results.take("state-0002") is None  # once
    results.put("state-0003", {"code": "3 again"})  # a later callback for a state replaces it, as the newest
    results.put("state-0005", {"code": "5"})
    results.put("state-0006", {"code": "6"})
    assert results.take("state-0004") is None and results.take("state-0003") == {"code": "3 again"}
    now[0] = 10.5
    assert results.take("state-0005") is None and len(results) == 0  # expired


# ---------------------------------------------------------------------- the kernel's side of the comm
class FakeComm:
    """What ``Frontend`` sees of a comm: ``send``, and ipykernel 7's routing hook."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self._closed = False

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)

    def on_msg(self, callback: Any) -> None:
        pass

    def on_close(self, callback: Any) -> None:
        pass

    def close(self) -> None:
        self._closed = True

    def _reply_subshell_for(self, data: Any, default: Any) -> Any:
        return "the subshell this comm last sent from"


def connected(page_url: Any = "http://127.0.0.1:8888/user/ada/") -> tuple[Frontend, FakeComm]:
    fe = Frontend(Store())
    fe._comm, fe.status = FakeComm(), "pending"
    fe.handle({"op": "restore", "v": 1, "reason": "hello", "flows": {}, "path": "nb.ipynb", "page_url": page_url})
    return fe, fe._comm


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        ("http://127.0.0.1:8888/", True),
        ("https://hub.example.org/user/ada/", True),
        ("http://[::1]:8888/user/ada%20b/", True),
        ("http://127.0.0.1:8888/user/ada", False),  # not ending in /
        ("javascript:alert(1)//", False),
        ("file:///home/ada/", False),
        ("https:///no-host/", False),
        ("https://hub.example.org/user/ada/?next=/", False),
        ("https://hub.example.org/#/", False),
        ("https://ada:secret@hub.example.org/", False),
        ("https://hub.example.org:99999/", False),
        ("https://hub.example.org/a b/", False),
        ("https://hub.example.org/\n/", False),
        (None, False),
        (["http://127.0.0.1:8888/"], False),
    ],
)
def test_page_url_is_a_plain_http_base_url(value: Any, kept: bool) -> None:
    assert checked_page_url(value) == (value if kept else None)
    assert connected(value)[0].page_url == (value if kept else None)


def test_page_url_follows_the_latest_restore() -> None:
    fe, _comm = connected("http://127.0.0.1:8888/")
    fe.handle({"op": "restore", "reason": "reconnect", "flows": {}, "page_url": "https://hub.example.org/user/ada/"})
    assert fe.page_url == "https://hub.example.org/user/ada/"
    fe.handle({"op": "restore", "reason": "reconnect", "flows": {}})  # a front end that does not say
    assert fe.page_url is None


def test_await_oauth_delivers_once_and_only_the_fields() -> None:
    fe, comm = connected()
    got: list[dict[str, Any]] = []
    s = state()
    assert fe.await_oauth(s, got.append) is True
    assert comm.sent == [{"op": "oauth_wait", "state": s}]
    fe.handle({"op": "ack", "id": None, "state": s})
    fe.handle({"op": "oauth", "state": "someone-elses-state", "code": "no"})
    assert got == []
    fe.handle({"op": "oauth", "state": s, "code": "abc", "iss": 5, "error": None, "extra": "dropped"})
    fe.handle({"op": "oauth", "state": s, "code": "again"})  # a second page relays it too: ignored
    assert got == [{"state": s, "code": "abc", "iss": None, "error": None, "error_description": None}]
    assert fe.take_warnings() == []


def test_cancel_close_and_a_broken_deliver() -> None:
    fe, comm = connected()
    got: list[dict[str, Any]] = []
    s, t = state(), state()
    fe.await_oauth(s, got.append)
    fe.cancel_oauth(s)
    fe.cancel_oauth(s)  # once is enough
    fe.cancel_oauth(t)  # never awaited: nothing to tell
    assert comm.sent[1:] == [{"op": "oauth_cancel", "state": s}]
    fe.handle({"op": "oauth", "state": s, "code": "late"})
    assert got == []

    def broken(answer: dict[str, Any]) -> None:
        raise RuntimeError(answer["code"])

    fe.await_oauth(t, broken)
    fe.handle({"op": "oauth", "state": t, "code": "abc"})  # the comm handler survives the caller's bug
    fe.await_oauth(s, got.append)
    fe.close()
    fe.handle({"op": "oauth", "state": s, "code": "after close"})
    assert got == []


def test_await_oauth_says_when_nothing_can_relay() -> None:
    fe = Frontend(Store())
    assert fe.await_oauth(state(), print) is False  # no kernel, no comm
    fe, comm = connected()
    fe.status = "pending"  # hello sent, no restore yet (nbclient never answers)
    assert fe.await_oauth(state(), print) is False
    fe, comm = connected()
    fe._on_close({})  # JupyterLab without the extension closed the comm
    assert fe.await_oauth(state(), print) is False and comm.sent == []
    for bad in ("short", "has space in it", "x" * 257, "", 5):
        with pytest.raises(ValueError):
            connected()[0].await_oauth(bad, print)  # type: ignore[arg-type]


def test_a_reloaded_page_is_told_what_is_awaited() -> None:
    fe, comm = connected()
    s = state()
    fe.await_oauth(s, print)
    comm.sent.clear()
    fe.handle({"op": "restore", "reason": "reconnect", "flows": {}, "page_url": "http://127.0.0.1:8888/"})
    assert comm.sent == [{"op": "oauth_wait", "state": s}]


def test_oauth_answers_are_handled_on_the_subshell_they_came_on() -> None:
    comm = FakeComm()
    _answers_where_sent(comm)
    assert comm._reply_subshell_for({"op": "oauth", "state": "s"}, "front end's subshell") == "front end's subshell"
    assert (
        comm._reply_subshell_for({"op": "ack", "id": "f1"}, "front end's subshell")
        == "the subshell this comm last sent from"
    )
    assert _answers_where_sent(object()) is False  # a comm without the hook: nothing to do


def test_the_page_is_heard_as_its_answer_is_routed() -> None:
    """The routing hook (ipykernel's shell-channel thread) notes the page's restore before the busy main shell handles it."""
    fe = Frontend(Store())
    comm = FakeComm()
    fe._comm, fe.status = comm, "pending"
    heard: list[Any] = []

    def note(data: Any) -> None:
        heard.append(data)
        fe._heard(data)

    fe._hooked = _answers_where_sent(comm, heard=note)
    assert fe._hooked and fe.await_oauth(state(), print) is False  # nothing heard yet: nothing relays
    route = comm._reply_subshell_for(
        {"op": "restore", "page_url": "http://127.0.0.1:8888/user/ada/", "flows": {}}, None
    )
    assert (
        route == "the subshell this comm last sent from"
    )  # routed as before: the main shell handles it after the cell
    assert heard == [{"op": "restore", "page_url": "http://127.0.0.1:8888/user/ada/", "flows": {}}]
    assert (fe.page_url, fe.status) == (
        "http://127.0.0.1:8888/user/ada/",
        "pending",
    )  # the records wait for the main shell
    assert fe.wait_for_page(0.01) is True
    s = state()
    assert fe.await_oauth(s, print) is True and comm.sent == [
        {"op": "oauth_wait", "state": s}
    ]  # the relay is up already

    def broken(data: Any) -> None:
        raise RuntimeError("a bug in the note")

    other = FakeComm()
    _answers_where_sent(other, heard=broken)
    assert (
        other._reply_subshell_for({"op": "oauth", "state": "s"}, "front end's subshell") == "front end's subshell"
    )  # routing survives


def test_a_page_that_never_answers_is_waited_for_once() -> None:
    fe = Frontend(Store())
    assert fe.wait_for_page(5) is False  # no comm at all (no kernel): nothing to wait for
    fe._comm, fe.status = FakeComm(), "pending"
    started = time.monotonic()
    assert (
        fe.wait_for_page(5) is False
    )  # no routing hook (a kernel without it): the answer comes after the cell, so no wait
    assert time.monotonic() - started < 2  # the wait it must not do is 5 s; a loaded machine may stall a moment
    fe._hooked = True
    started = time.monotonic()
    assert fe.wait_for_page(0.3) is False
    assert fe.wait_for_page(5) is False  # not again
    assert 0.3 <= time.monotonic() - started < 2
    closed = Frontend(Store())
    closed._comm, closed.status, closed._hooked = FakeComm(), "pending", True
    closed._heard({})  # JupyterLab without the extension closes the comm: heard, no page URL
    assert closed.wait_for_page(5) is True and closed.page_url is None and closed.await_oauth(state(), print) is False
    bad = Frontend(Store())
    bad._comm, bad.status, bad._hooked = FakeComm(), "pending", True
    bad._heard({"op": "restore", "page_url": "javascript:alert(1)//"})
    assert bad.wait_for_page(5) is True and bad.page_url is None


def test_a_real_kernel_gets_the_answer_while_its_cell_blocks(tmp_path: Path) -> None:
    """Over a real kernel's comms, the front end played by the test on a subshell of its own, as JupyterLab does."""
    k = Kernel(cwd=str(tmp_path))
    try:
        k.execute("%load_ext mcp_notebook")
        opened = [
            m for m in k.messages if m["msg_type"] == "comm_open" and m["content"].get("target_name") == "mcp_notebook"
        ]
        comm_id = opened[0]["content"]["comm_id"]
        k._comm_msg(
            comm_id,
            {
                "op": "restore",
                "v": 1,
                "reason": "hello",
                "flows": {},
                "path": "nb.ipynb",
                "page_url": "https://hub.example.org/user/ada/",
            },
        )
        shown = k.text_of_cell(
            k.execute(
                "fe = get_ipython().magics_manager.registry['MCPMagics'].session.frontend\nprint(fe.status, fe.page_url)"
            )
        )
        assert shown.strip() == "connected https://hub.example.org/user/ada/"

        request = k.kc.session.msg("create_subshell_request", {})
        k.kc.control_channel.send(request)
        subshell = None
        while subshell is None:
            reply = k.kc.get_control_msg(timeout=10)
            if reply["parent_header"].get("msg_id") == request["header"]["msg_id"]:
                subshell = reply["content"]["subshell_id"]

        s = state()
        cell = k.execute(
            "import threading\ngot, done = [], threading.Event()\n"
            f"asked = fe.await_oauth({s!r}, lambda answer: (got.append(answer), done.set()))\n"
            "print(f'DELIVERED {asked} {done.wait(20)} {got}')",  # one write: the subshell's output may come between two
            wait=False,
        )
        k.wait_for(
            lambda: [
                m
                for m in k.messages
                if m["msg_type"] == "comm_msg" and m["content"]["data"] == {"op": "oauth_wait", "state": s}
            ],
            what="oauth_wait",
        )
        for code in ("abc", "a second relay"):
            msg = k.kc.session.msg(
                "comm_msg",
                {
                    "comm_id": comm_id,
                    "data": {
                        "op": "oauth",
                        "state": s,
                        "code": code,
                        "iss": None,
                        "error": None,
                        "error_description": None,
                    },
                },
            )
            msg["header"]["subshell_id"] = subshell
            k.kc.shell_channel.send(msg)
        k.wait_idle(cell, timeout=30)
        expected = {"state": s, "code": "abc", "iss": None, "error": None, "error_description": None}
        assert k.text_of_cell(cell).strip() == f"DELIVERED True True [{expected!r}]"
    finally:
        k.close()


# ---------------------------------------------------------------------- a real Jupyter server
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """``jupyter server`` from this environment, enabled by the shipped config; logging at debug level."""
    base = tmp_path_factory.mktemp("jupyter-server")
    for name in ("root", "config", "runtime"):
        (base / name).mkdir()
    port = free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(base / "config"), "JUPYTER_RUNTIME_DIR": str(base / "runtime")}
    log_path = base / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
                "--ServerApp.port_retries=0", f"--ServerApp.base_url={BASE}", f"--IdentityProvider.token={TOKEN}",
                f"--ServerApp.root_dir={base / 'root'}", "--ServerApp.log_level=DEBUG",
            ],
            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT,
        )  # fmt: skip
    origin = f"http://127.0.0.1:{port}"
    try:

        def up() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter server exited:\n{log_path.read_text(errors='replace')}")
            try:
                return httpx2.get(f"{origin}{BASE}api/status", headers=AUTH).status_code == 200
            except httpx2.HTTPError:
                return False

        wait_for(up, "jupyter server to answer", timeout=60)
        yield {"log": log_path, "origin": origin}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


CODES: list[str] = []  # every code sent to the server: none may reach its log


def get(
    server: dict[str, Any], path: str, params: dict[str, str], headers: dict[str, str] | None = None
) -> httpx2.Response:
    """One request with no cookies (Jupyter's login cookie would stand in for the token)."""
    return httpx2.get(server["origin"] + path, params=params, headers=headers or {}, timeout=10)


def result(server: dict[str, Any], s: str, headers: dict[str, str] | None = AUTH) -> httpx2.Response:
    return get(server, f"{BASE}mcp-notebook/oauth/result", {"state": s}, headers)


def callback(
    server: dict[str, Any], path: str = f"{BASE}mcp-notebook/oauth/callback", auth: bool = True, **params: str
) -> httpx2.Response:
    if "code" in params:
        CODES.append(params["code"])
    return get(server, path, params, AUTH if auth else None)


def test_callback_shows_the_outcome_and_posts_it(server: dict[str, Any]) -> None:
    s = state()
    reply = callback(server, code="code-" + secrets.token_hex(8), state=s)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/html")
    assert reply.headers["cache-control"] == "no-store" and reply.headers["referrer-policy"] == "no-referrer"
    assert "default-src 'none'" in ",".join(reply.headers.get_list("content-security-policy"))
    body = reply.text
    assert "<title>mcp-notebook sign-in</title>" in body and SIGNED_IN in body
    assert 'new BroadcastChannel("mcp-notebook-oauth")' in body and "window.close()" in body
    assert script_message(body) == {
        "state": s,
        "code": CODES[-1],
        "iss": None,
        "error": None,
        "error_description": None,
    }

    s = state()
    reply = callback(server, error="access_denied", error_description="The user said no", state=s)
    assert reply.status_code == 200 and "Sign-in did not complete: access_denied (The user said no)" in reply.text
    assert SIGNED_IN not in reply.text
    assert script_message(reply.text) == {
        "state": s,
        "code": None,
        "iss": None,
        "error": "access_denied",
        "error_description": "The user said no",
    }


def test_only_a_signed_in_user_under_the_base_url_gets_there(server: dict[str, Any]) -> None:
    secret = "code-" + secrets.token_hex(8)
    reply = callback(server, auth=False, code=secret, state=state())
    assert reply.status_code in (302, 403)
    if reply.status_code == 302:
        assert reply.headers["location"].startswith(f"{BASE}login")
    assert result(server, state(), headers=None).status_code == 403
    assert result(server, state(), headers={"Authorization": "token wrong"}).status_code == 403
    assert (
        callback(
            server, path="/mcp-notebook/oauth/callback", code="code-" + secrets.token_hex(8), state=state()
        ).status_code
        == 404
    )


@pytest.mark.parametrize("bad", [None, "", "short", "has space in it", "semi;colon-state", "x" * 257, "ünïcödé-state"])
def test_a_bad_state_is_refused(server: dict[str, Any], bad: str | None) -> None:
    params = {"code": "code-" + secrets.token_hex(8)} | ({} if bad is None else {"state": bad})
    reply = callback(server, **params)
    assert reply.status_code == 400 and reply.headers["content-type"].startswith("text/plain")
    assert "no valid state" in reply.text and "<" not in reply.text


def test_hostile_values_reach_the_page_only_escaped(server: dict[str, Any]) -> None:
    hostile = {
        "code": "</script><script>alert(1)</script>",
        "iss": "https://as.example/\u2028\u2029</SCRIPT>",
        "error": '<img src=x onerror="alert(2)">',
        "error_description": "</p><script>alert(3)</script> & <!-- \u2028",
    }
    s = state()
    body = callback(server, state=s, **hostile).text
    for value in hostile.values():
        assert value not in body
    assert "<script>alert" not in body and "<img" not in body and "</SCRIPT>" not in body
    assert html.escape(f"Sign-in did not complete: {hostile['error']} ({hostile['error_description']})") in body
    script = body.split("<script", 1)[1]
    assert "\u2028" not in script and "\u2029" not in script and script.count("</script>") == 1
    assert script_message(body) == {"state": s, **hostile}  # the JSON parses back to what was sent


def test_result_is_handed_out_once(server: dict[str, Any]) -> None:
    s = state()
    secret = "code-" + secrets.token_hex(8)
    callback(server, code=secret, state=s, iss="https://as.example")
    first = result(server, s)
    assert first.status_code == 200 and first.headers["cache-control"] == "no-store"
    assert first.json() == {
        "state": s,
        "code": secret,
        "iss": "https://as.example",
        "error": None,
        "error_description": None,
    }
    again = result(server, s)
    assert again.status_code == 404 and again.json() == {"error": "unknown state"}
    assert result(server, state()).status_code == 404
    assert result(server, "a b").status_code == 404 and result(server, "").status_code == 404


def test_no_code_reaches_the_log(server: dict[str, Any]) -> None:
    """Codes sent to every endpoint, answered 200, 302, 400 and 404, are not in the (debug level) log; nor those of the tests above."""
    callback(server, code="code-" + secrets.token_hex(8), state=state())
    callback(server, auth=False, code="code-" + secrets.token_hex(8), state=state())
    callback(server, code="code-" + secrets.token_hex(8), state="bad")
    callback(server, path="/mcp-notebook/oauth/callback", code="code-" + secrets.token_hex(8), state=state())
    log = server["log"]
    wait_for(
        lambda: log.read_text(errors="replace").count("mcp-notebook/oauth/callback?") >= 4, "the requests in the log"
    )
    time.sleep(0.3)
    text = log.read_text(errors="replace")
    assert (
        "mcp-notebook: OAuth sign-in callback at /user/ada/mcp-notebook/oauth/callback" in text
    )  # enabled by the shipped config
    assert (
        "200 GET /user/ada/mcp-notebook/oauth/callback?code=[secret]&state=[secret]" in text
    )  # the requests are there, scrubbed
    for code in CODES:
        for form in {code, quote(code, safe=""), quote_plus(code)}:
            assert form not in text


# ---------------------------------------------------------------------- the relay, in a browser
@pytest.fixture(scope="module", params=APPS)
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """JupyterLab, then Notebook 7, under ``/user/ada/`` with a token; yields (app, url)."""
    nb = notebook([""] * 6)
    with running_lab(
        tmp_path_factory.mktemp("lab"),
        {"oauth.ipynb": nb},
        app=request.param,
        expose_app=True,
        base_url=BASE,
        token=TOKEN,
    ) as (url, _root):
        yield request.param, url


def type_and_run(front: Front, index: int, source: str) -> Any:
    """Type ``source`` into the empty cell ``index`` and run it, without waiting for it to end."""
    cell = front.page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(index)
    cell.locator(".jp-InputArea-editor").click()
    front.page.keyboard.insert_text(source)
    front.page.keyboard.press("Shift+Enter")
    return cell


def test_the_callback_reaches_the_waiting_kernel(lab: tuple[str, str], tmp_path: Path) -> None:
    from playwright.sync_api import expect

    app, url = lab
    with chromium_page(tmp_path / "profile") as page:
        console: list[str] = []
        page.on("console", lambda message: console.append(message.text))
        front = Front(page, url, app)
        page.goto(
            f"{front.notebook_url('oauth.ipynb')}?token={TOKEN}"
        )  # logs in: the cookie comes back with the callback
        front.wait_idle("oauth.ipynb")
        front.run_in_cell(0, "%load_ext mcp_notebook")
        out = front.run_in_cell(
            1,
            "fe = get_ipython().magics_manager.registry['MCPMagics'].session.frontend\nprint('PAGE_URL', fe.page_url, fe.status)",
        )
        page_url = f"{url}/"  # http://127.0.0.1:PORT/user/ada/
        expect(out.locator(".jp-OutputArea")).to_contain_text(f"PAGE_URL {page_url} connected")

        # the callback opens in a second tab of the same browser: the BroadcastChannel carries it
        # (this page's poll of the result endpoint is answered "not yet" meanwhile, to be sure)
        polls: list[str] = []

        def not_yet(route: Any) -> None:
            polls.append(route.request.url)
            route.fulfill(status=404, content_type="application/json", body='{"error": "unknown state"}')

        page.route("**/mcp-notebook/oauth/result?*", not_yet)
        first = state()
        out = front.run_in_cell(2, f"got = []\nprint('WAITING', fe.await_oauth({first!r}, got.append))")
        expect(out.locator(".jp-OutputArea")).to_contain_text("WAITING True")
        tab = page.context.new_page()
        landed = tab.goto(f"{page_url}mcp-notebook/oauth/callback?code=abc&state={first}")
        assert landed is not None and landed.status == 200 and SIGNED_IN in landed.text()
        out = front.run_in_cell(
            3, "import time\nfor _ in range(100):\n    if got: break\n    time.sleep(0.1)\nprint('GOT', got)"
        )
        expect(out.locator(".jp-OutputArea")).to_contain_text(
            f"GOT [{{'state': '{first}', 'code': 'abc', 'iss': None, 'error': None, 'error_description': None}}]"
        )
        wait_for(
            lambda: polls, "a fetch of the result endpoint"
        )  # there was one (refused), yet the broadcast carried the code
        page.unroute("**/mcp-notebook/oauth/result?*")
        tab.close()

        # a callback this page never hears of: the poll of the result endpoint brings it, to a
        # cell blocked waiting for it, asked for from another thread (as the session's loop does)
        second = state()
        code = (
            "import threading\n"
            "got2, done, asked = [], threading.Event(), []\n"
            "def deliver(answer):\n    got2.append(answer); done.set()\n"
            f"threading.Thread(target=lambda: asked.append(fe.await_oauth({second!r}, deliver))).start()\n"
            "print(f'DELIVERED {done.wait(30)} {asked} {got2}')"
        )
        out = type_and_run(front, 4, code)
        time.sleep(1)  # the wait is sent and the poll runs; the page does not see this callback
        reply = httpx2.get(
            f"{page_url}mcp-notebook/oauth/callback", params={"code": "xyz", "state": second}, headers=AUTH, timeout=10
        )
        assert reply.status_code == 200
        expect(out.locator(".jp-OutputArea")).to_contain_text(
            f"DELIVERED True [True] [{{'state': '{second}', 'code': 'xyz', 'iss': None, 'error': None, 'error_description': None}}]",
            timeout=40_000,
        )
        assert not [
            line for line in console if first in line or second in line or "xyz" in line
        ]  # never in the console
