"""Issue 12: signing in to an OAuth-protected MCP server (tests/support/oauth_server.py, the SDK's AS pieces).

Plain Python (no kernel) opens "the browser" and the loopback catcher takes the code; here the
browser is a small HTTP client that does what a person's browser does (follows redirects, clicks
Allow or Deny on the consent page). The real-browser sign-in through the Jupyter Server extension
is in ``browser/test_sign_in.py``; the kernel paths (headless refusal, the panel and paste-back)
are at the end of this module.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
import pytest

from mcp_notebook.auth.vault import TokenVault
from mcp_notebook.errors import FlowError
from mcp_notebook.flows.record import SavedFlow
from mcp_notebook.session.session import Session

from ..conftest import REPO_ROOT, free_port
from ..support.kernel_harness import Kernel
from ..support.oauth_server import OAuthServer, running_oauth_server


def browser(decision: str = "allow", seen: list[str] | None = None) -> Callable[[str], None]:
    """A stand-in for the person's browser: open the sign-in page, click ``decision``, follow redirects home."""

    def visit(url: str) -> None:
        def run() -> None:
            with httpx2.Client(follow_redirects=False, timeout=20) as http:
                response = http.get(url)
                for _ in range(10):
                    if seen is not None:
                        seen.append(str(response.url))
                    if response.status_code in (301, 302, 303, 307, 308):
                        response = http.get(urljoin(str(response.url), response.headers["location"]))
                    elif "Test AS consent" in response.text:  # the consent page: press the button
                        req = parse_qs(urlsplit(str(response.url)).query)["req"][0]
                        response = http.post(
                            urljoin(str(response.url), "/consent"), data={"req": req, "decision": decision}
                        )
                    else:
                        return

        threading.Thread(target=run, daemon=True).start()  # like a browser window: the caller does not wait

    return visit


def new_session(vault: TokenVault, opener: Callable[[str], None] | None, timeout: float = 20.0) -> Session:
    session = Session()
    session.settings.sign_in_timeout = timeout
    session.vault = vault
    session.sign_ins.open_browser = opener
    return session


@pytest.fixture
def vault(tmp_path: Path) -> TokenVault:
    return TokenVault(tmp_path / "jupyter-data" / "mcp_notebook" / "oauth.json")


@pytest.fixture(scope="module")
def server() -> Iterator[OAuthServer]:
    with running_oauth_server(consent="click") as srv:
        yield srv


def call_echo(session: Session, name: str, text: str) -> str:
    flow = session.start("tools/call", session.registry.get(name), "echo", {"text": text})
    return str(flow.result(timeout=30).content[0].text)


def test_sign_in_consent_and_call(server: OAuthServer, vault: TokenVault) -> None:
    before = server.stats()
    seen: list[str] = []
    session = new_session(vault, browser("allow", seen))
    try:
        conn = session.connect("secure", server.url)
        assert conn.state == "open" and call_echo(session, "secure", "signed in") == "signed in"
        after = server.stats()
        assert after["authorization_code_grants"] == before["authorization_code_grants"] + 1
        assert after["registrations"] == before["registrations"] + 1
        assert any("/consent?req=" in u for u in seen) and any("/mcp-notebook/oauth/callback?code=" in u for u in seen)
        # the tokens are in the vault (0600 file, 0700 folder), tied to the resource and its issuer
        assert (
            stat.S_IMODE(vault.path.stat().st_mode) == 0o600 and stat.S_IMODE(vault.path.parent.stat().st_mode) == 0o700
        )
        [entry] = vault.entries()
        assert entry["resource"] == server.url and entry["issuer"].rstrip("/") == server.issuer and entry["refreshable"]
        assert entry["scope"] == "mcp:read mcp:write"
        # what the session says and keeps names the sign-in, never a token or the code
        stored = json.loads(vault.path.read_text())[server.url]
        secrets = [stored["tokens"]["access_token"], stored["tokens"]["refresh_token"]]
        shown = " ".join(session.notes) + repr(conn.target.saved())
        assert not any(s in shown for s in secrets)
    finally:
        session.close()


def test_new_kernel_refreshes_silently_after_expiry(vault: TokenVault) -> None:
    with running_oauth_server(consent="auto", token_ttl=2) as srv:
        first = new_session(vault, browser())
        try:
            first.connect("secure", srv.url)
            assert call_echo(first, "secure", "one") == "one"
        finally:
            first.close()
        time.sleep(2.5)  # the access token has expired; the refresh token has not
        opened: list[str] = []
        second = new_session(vault, opened.append)  # a new kernel: a sign-in page would be recorded here
        try:
            second.connect("secure", srv.url)
            assert call_echo(second, "secure", "two") == "two"
        finally:
            second.close()
        stats = srv.stats()
        assert opened == [] and (stats["authorization_code_grants"], stats["refresh_token_grants"]) == (1, 1)


def test_expired_refresh_token_asks_again(vault: TokenVault) -> None:
    with running_oauth_server(consent="auto", token_ttl=1) as srv:
        session = new_session(vault, browser())
        try:
            session.connect("secure", srv.url)
            srv.expire_refresh()
            time.sleep(1.5)
            assert call_echo(session, "secure", "again") == "again"  # refresh refused: signed in again, same call
            assert srv.stats()["authorization_code_grants"] == 2
        finally:
            session.close()


def test_denied_consent_is_explained_and_nothing_is_kept(server: OAuthServer, vault: TokenVault) -> None:
    session = new_session(vault, browser("deny"))
    try:
        with pytest.raises(FlowError) as info:
            session.connect("secure", server.url)
        error = info.value
        assert (error.kind, error.server) == ("sign_in_denied", "secure")
        assert "'access_denied'" in str(error) and "Nothing was sent" in str(error)
        assert "secure" not in session.registry and not any(e["signed_in"] for e in vault.entries())
        # the client was registered before the denial and stays for the next sign-in, but no sign-in is listed
        assert "client" in json.loads(vault.path.read_text())[server.url] and vault.entries() == []
    finally:
        session.close()


def test_answer_from_another_sign_in_is_refused(server: OAuthServer, vault: TokenVault) -> None:
    """A pasted or forged answer whose state is not this sign-in's: refused by the SDK, explained, nothing sent."""
    holder: dict[str, Session] = {}

    def forged(url: str) -> None:  # the person pastes the address of an older attempt's page
        holder["s"].sign_ins.complete(
            "http://127.0.0.1:1/mcp-notebook/oauth/callback?code=stolen-code&state=an-older-attempts-state"
        )

    session = holder["s"] = new_session(vault, forged)
    try:
        with pytest.raises(FlowError) as info:
            session.connect("secure", server.url)
        assert info.value.kind == "sign_in_failed"
        assert "did not belong to this sign-in" in str(info.value) and "stolen-code" not in str(info.value)
        with pytest.raises(FlowError, match="no sign-in is waiting"):
            session.sign_ins.complete("http://x/cb?code=c&state=s")
    finally:
        session.close()


def test_sign_in_times_out_and_says_so(server: OAuthServer, vault: TokenVault) -> None:
    session = new_session(vault, lambda url: None, timeout=5.0)  # the tab was closed: no answer ever comes
    try:
        started = time.monotonic()
        with pytest.raises(FlowError) as info:
            session.connect("secure", server.url)
        assert info.value.kind == "sign_in_timeout" and "within 5 s" in str(info.value)
        assert time.monotonic() - started < 15
    finally:
        session.close()


def test_logout_forgets_and_the_next_call_signs_in_again(server: OAuthServer, vault: TokenVault) -> None:
    session = new_session(vault, browser())
    try:
        session.connect("secure", server.url)
        grants = server.stats()["authorization_code_grants"]
        assert vault.remove(server.url) and vault.entries() == []
        server.revoke_all()  # the server forgets the token too (a revoked or expired one)
        assert call_echo(session, "secure", "after logout") == "after logout"
        assert server.stats()["authorization_code_grants"] == grants + 1
    finally:
        session.close()


@contextmanager
def answering_401(resource_metadata: str) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 whose every answer is 401 with ``resource_metadata`` in its challenge; yields its MCP URL."""

    class Refuse(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(401)
            self.send_header("WWW-Authenticate", f'Bearer resource_metadata="{resource_metadata}"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_DELETE = do_POST

        def log_message(self, *args: object) -> None:
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{http.server_address[1]}/mcp"
    finally:
        http.shutdown()
        http.server_close()


def test_a_401_whose_sign_in_metadata_cannot_be_fetched_says_so_and_leaves_no_stray_task(
    vault: TokenVault, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 20, finding 8: not "could not reach the server", and no "Task exception was never retrieved" from the SDK's flow."""
    metadata = f"http://127.0.0.1:{free_port()}/.well-known/oauth-protected-resource/mcp"  # nothing listens there
    opened: list[str] = []
    session = new_session(vault, opened.append)
    unhandled: list[dict[str, object]] = []
    session.runtime.loop.set_exception_handler(lambda loop, context: unhandled.append(context))
    caplog.set_level(logging.ERROR, logger="asyncio")
    try:
        with answering_401(metadata) as url:
            with pytest.raises(FlowError) as info:
                session.connect("locked", url)
            text = str(info.value)
            assert info.value.kind == "sign_in_unreachable" and "locked" not in session.registry
            assert (
                f"Could not connect 'locked' to {url}: the server answered HTTP 401 (Unauthorized) and asks you to sign in"
                in text
            )
            assert (
                f"its sign-in metadata (protected resource metadata) at {metadata} could not be fetched: All connection attempts failed (ConnectError)"
                in text
            )
            assert "check that it is reachable from this kernel" in text and "bearer_env='VAR'" in text
            assert "could not reach the server" not in text and "Is it running" not in text
            assert opened == []  # no sign-in page was opened
        for _ in range(3):  # a stranded async generator is closed by the garbage collector, on the loop
            gc.collect()
            session.runtime.run(asyncio.sleep(0.2))
    finally:
        session.close()
        gc.collect()
    assert unhandled == []
    assert not [
        r for r in caplog.records if "never retrieved" in r.getMessage() or "not holding this lock" in str(r.exc_info)
    ]


# ---------------------------------------------------------------------- in a real kernel
def test_kernel_headless_refuses_interactive_panel_and_paste_back(server: OAuthServer, tmp_path: Path) -> None:
    """Headless: a clear error, no waiting. Interactive: the panel; the redirected address pasted back; no secret in any output."""
    kernel = Kernel(cwd=str(REPO_ROOT), env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")})
    try:
        kernel.execute("%load_ext mcp_notebook")
        headless = kernel.execute(f"%mcp connect secure {server.url}", wait=False)
        kernel.wait_idle(headless)
        [error] = [m["content"] for m in kernel.for_cell(headless) if m["msg_type"] == "error"]
        assert error["ename"] == "FlowError" and "this run is headless" in error["evalue"]
        assert (
            f"Sign in in JupyterLab or Notebook 7 (interactive) with %mcp connect secure {server.url}"
            in error["evalue"]
        )

        cell = kernel.execute(f"%mcp connect secure {server.url}", allow_stdin=True)
        assert "the server wants you to sign in first" in kernel.text_of_cell(cell)
        panel = kernel.wait_for(
            lambda: [s for s in kernel.comms.values() if "Sign in to secure" in str(s.get("value", ""))],
            what="the sign-in panel",
        )
        link = panel[-1]["value"]
        authorize = next(u for u in kernel.comms.values() if 'class="mcp-open-link"' in str(u.get("value", "")))[
            "value"
        ]
        href = authorize.split('href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
        assert href.startswith(server.issuer + "/authorize?") and "Opens: <b" in authorize and server.issuer in link
        # the person signs in; the address they land on (the loopback catcher's) is pasted into the panel
        landed: list[str] = []
        browser("allow", landed)(href)
        callback = kernel.wait_for(
            lambda: next((u for u in landed if "/mcp-notebook/oauth/callback?" in u), None), what="the redirect back"
        )
        code = parse_qs(urlsplit(callback).query)["code"][0]
        [paste] = kernel.find_widgets("TextModel", description="Address")
        kernel.set_value(paste, callback)
        [use] = kernel.find_widgets("ButtonModel", description="Use address")
        kernel.click(use)
        kernel.wait_for(
            lambda: any("Signed in to <b>secure</b>" in str(s.get("value", "")) for s in kernel.comms.values()),
            what="signed in",
        )
        done = kernel.execute("r = %mcp call secure.echo text=after-sign-in --wait\nprint(r.content[0].text)")
        assert "after-sign-in" in kernel.text_of_cell(done)
        listing = kernel.text_of_cell(kernel.execute("%mcp auth list"))
        assert server.url in listing and "yes" in listing
        # nothing a notebook could save (outputs, widget state, comm messages) holds the code or a token
        vault_file = json.loads((tmp_path / "jd" / "mcp_notebook" / "oauth.json").read_text())
        tokens = vault_file[server.url]["tokens"]
        everything = json.dumps([m["content"] for m in kernel.messages])
        for secret in (code, tokens["access_token"], tokens["refresh_token"]):
            assert secret not in everything
        assert kernel.comms[paste].get("value", "") == ""  # the pasted address does not stay in the widget
        out = kernel.text_of_cell(kernel.execute("%mcp auth logout secure"))
        assert "Signed out of" in out and server.url not in json.loads(
            (tmp_path / "jd" / "mcp_notebook" / "oauth.json").read_text()
        )
    finally:
        kernel.close()


def test_saved_flow_resumes_in_a_new_kernel_with_the_stored_token(vault: TokenVault) -> None:
    """The record says only that the server needs sign-in; a new session reuses the kept token (no new sign-in)."""
    from mcp_notebook.forms.model import Answers
    from mcp_notebook.session.session import CallOptions

    with running_oauth_server(consent="auto") as srv:
        first = new_session(vault, browser())
        try:
            conn = first.connect("secure", srv.url)
            flow = first.call(
                "tools/call",
                conn,
                "provision_db",
                {"name": "orders"},
                CallOptions(answers=Answers(fields={"region": "us-west-2"})),
                interactive=False,
                cell_id=None,
            )
            with pytest.raises(FlowError):
                flow.result(timeout=30)  # round two has no answer: the flow stays saved
            record = first.store.get(flow.id)
            assert record is not None and record["server"]["oauth"] == {"sign_in": "oauth"}
            tokens = json.loads(vault.path.read_text())[srv.url]["tokens"]
            assert tokens["access_token"] not in json.dumps(record) and tokens["refresh_token"] not in json.dumps(
                record
            )
        finally:
            first.close()
        opened: list[str] = []
        second = new_session(vault, opened.append)  # a new kernel, same user
        try:
            resumed = second.saved.resume(
                SavedFlow.from_dict(record),
                CallOptions(answers=Answers(accept_defaults=True), trust=True),
                interactive=False,
                cell_id=None,
            )
            assert (
                resumed is not None
                and resumed.result(timeout=30).content[0].text == "Provisioned 'orders' in us-west-2 (size small)."
            )
            assert opened == [] and srv.stats()["authorization_code_grants"] == 1  # no second sign-in
        finally:
            second.close()


def _landing(authorize: str, home: str, decision: str = "allow") -> str:
    """What a person's browser does with the sign-in link: consent, then the address it is sent back to under ``home`` (not fetched)."""
    with httpx2.Client(follow_redirects=False, timeout=20) as http:
        response = http.get(authorize)
        for _ in range(10):
            location = response.headers.get("location")
            if location is not None and urljoin(str(response.url), location).startswith(home):
                return urljoin(str(response.url), location)
            if location is not None:
                response = http.get(urljoin(str(response.url), location))
            elif "Test AS consent" in response.text:
                req = parse_qs(urlsplit(str(response.url)).query)["req"][0]
                response = http.post(urljoin(str(response.url), "/consent"), data={"req": req, "decision": decision})
            else:
                break
    raise AssertionError(f"the sign-in never sent the browser back to {home}")


def test_first_cell_asks_the_page_before_choosing_the_redirect(server: OAuthServer, tmp_path: Path) -> None:
    """``%load_ext`` and ``%mcp connect`` in one interactive cell: the page's answer, sent while that cell runs (as
    JupyterLab's first reply is, on the main shell), picks the Jupyter server's callback; one panel for the cell's
    connect and call; the relayed answer signs in; ``%mcp auth list`` lists that one sign-in."""
    page = "http://127.0.0.1:8888/user/ada/"
    kernel = Kernel(cwd=str(REPO_ROOT), env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")})
    try:
        cell = kernel.execute(
            f"%load_ext mcp_notebook\n%mcp connect secure {server.url}\n%mcp call secure.echo text=first-cell",
            allow_stdin=True,
            wait=False,
        )
        opened = kernel.wait_for(
            lambda: [
                m
                for m in kernel.messages
                if m["msg_type"] == "comm_open" and m["content"].get("target_name") == "mcp_notebook"
            ],
            what="the hello",
        )
        comm_id = opened[0]["content"]["comm_id"]
        time.sleep(1.0)  # a page slow to answer: the connect waits for it (at most MCPMagics.page_wait)
        kernel._comm_msg(
            comm_id, {"op": "restore", "v": 1, "reason": "hello", "flows": {}, "path": "nb.ipynb", "page_url": page}
        )
        kernel.wait_idle(cell)
        assert not [m for m in kernel.for_cell(cell) if m["msg_type"] == "error"], kernel.text_of_cell(cell)
        assert "the server wants you to sign in first" in kernel.text_of_cell(cell)

        def widgets_with(css: str) -> list[dict[str, Any]]:
            return [s for s in kernel.comms.values() if css in (s.get("_dom_classes") or [])]

        kernel.wait_for(
            lambda: any(
                "Waiting for the sign-in to <b>secure</b>" in str(s.get("value", "")) for s in kernel.comms.values()
            ),
            what="the call's note",
        )
        assert len(widgets_with("mcp-sign-in")) == 1  # the connect's panel; the call waits for it, no second panel
        authorize = next(
            s["value"] for s in kernel.comms.values() if 'class="mcp-open-link"' in str(s.get("value", ""))
        )
        href = authorize.split('href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
        query = parse_qs(urlsplit(href).query)
        assert query["redirect_uri"] == [page + "mcp-notebook/oauth/callback"]  # not the kernel's loopback
        state = query["state"][0]
        waits = [
            m["content"]["data"]
            for m in kernel.messages
            if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id
        ]
        assert {"op": "oauth_wait", "state": state} in waits  # the page's relay was asked to bring the answer

        back = parse_qs(urlsplit(_landing(href, page + "mcp-notebook/oauth/callback?")).query)
        kernel._comm_msg(
            comm_id,
            {
                "op": "oauth",
                "state": state,
                "code": back["code"][0],
                "iss": back["iss"][0],
                "error": None,
                "error_description": None,
            },
        )
        kernel.wait_for(lambda: "first-cell" in kernel.text_of_cell(cell), what="the first cell's call to finish")
        assert any("Signed in to <b>secure</b>" in str(s.get("value", "")) for s in kernel.comms.values())
        assert len(widgets_with("mcp-sign-in")) == 1
        assert server.stats()["authorization_code_grants"] >= 1

        listing = kernel.text_of_cell(kernel.execute("%mcp auth list"))
        rows = [line.split() for line in listing.splitlines()[2:]]
        assert rows == [["secure", server.url, server.issuer, "mcp:read", "mcp:write", "in", "60", "min", "yes"]], (
            listing
        )
    finally:
        kernel.close()
