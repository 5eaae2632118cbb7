"""Issue 23, item 6: the OAuth device authorization grant (RFC 8628), where no callback comes back.

The authorization server is tests/support/oauth_server.py with ``--device-endpoint``: its metadata
names ``/device_authorization``, its ``/device`` page takes the user code, and its token endpoint
answers the device grant's polls (``authorization_pending``, ``slow_down`` when polled too fast,
``access_denied``). "The person" is an HTTP client that opens the address shown and presses Allow or
Deny, as someone on another machine would: nothing is ever redirected back to the kernel.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from mcp_notebook.auth.device import DeviceCode, DeviceGrantError, foreign_address, parse_device_code, poll_answer
from mcp_notebook.auth.vault import TokenVault
from mcp_notebook.errors import FlowError
from mcp_notebook.session.session import Session

from ..conftest import REPO_ROOT
from ..support.kernel_harness import Kernel
from ..support.oauth_server import DEVICE_INTERVAL, OAuthServer, running_oauth_server
from .test_sign_in import browser, call_echo, new_session


def person(decision: str = "allow", seen: list[str] | None = None) -> Callable[[str], None]:
    """Someone who opens the address the cell shows (with the code in it) and presses ``decision`` there."""

    def visit(url: str) -> None:
        def run() -> None:
            if seen is not None:
                seen.append(url)
            with httpx2.Client(follow_redirects=False, timeout=20) as http:
                page = http.get(url)
                assert page.status_code == 200 and "Test AS device sign-in" in page.text
                user_code = parse_qs(urlsplit(url).query)["user_code"][0]
                done = http.post(
                    urlsplit(url)._replace(query="").geturl(), data={"user_code": user_code, "decision": decision}
                )
                assert done.status_code == 200

        threading.Thread(target=run, daemon=True).start()

    return visit


@pytest.fixture(scope="module")
def server() -> Iterator[OAuthServer]:
    with running_oauth_server(consent="click", device_endpoint="default") as srv:
        yield srv


@pytest.fixture
def vault(tmp_path: Path) -> TokenVault:
    return TokenVault(tmp_path / "jupyter-data" / "mcp_notebook" / "oauth.json")


def test_a_code_and_an_address_sign_in_without_any_callback(server: OAuthServer, vault: TokenVault) -> None:
    before = server.stats()
    seen: list[str] = []
    session = new_session(vault, person("allow", seen))
    try:
        session.connect("secure", server.url)
        assert call_echo(session, "secure", "by code") == "by code"
        after = server.stats()
        assert after["device_grants"] == before["device_grants"] + 1
        assert after["authorization_code_grants"] == before["authorization_code_grants"]  # no redirect, no code grant
        [url] = seen
        assert url.startswith(server.issuer + "/device?user_code=")
        user_code = parse_qs(urlsplit(url).query)["user_code"][0]
        assert any(f"enter the code {user_code}" in note for note in session.notes)
        # polled at the server's pace: never faster than its interval (a faster poll would have got slow_down)
        polls = after["device_polls"][len(before["device_polls"]) :]
        assert len(polls) >= 1 and all(b - a >= DEVICE_INTERVAL - 0.2 for a, b in zip(polls, polls[1:], strict=False))
        [entry] = vault.entries()
        assert entry["resource"] == server.url and entry["refreshable"]
        stored = json.loads(vault.path.read_text())[server.url]["tokens"]
        assert stored["access_token"] not in " ".join(session.notes)
    finally:
        session.close()


def test_denied_at_the_device_page_is_explained_and_nothing_is_kept(server: OAuthServer, vault: TokenVault) -> None:
    session = new_session(vault, person("deny"))
    try:
        with pytest.raises(FlowError) as caught:
            session.connect("secure", server.url)
        assert (caught.value.kind, caught.value.server) == ("sign_in_denied", "secure")
        assert "was denied at the authorization server" in str(caught.value) and "Nothing was sent" in str(caught.value)
        assert "secure" not in session.registry and vault.entries() == []
    finally:
        session.close()


def test_never_keeps_the_redirect_sign_in(server: OAuthServer, vault: TokenVault) -> None:
    before = server.stats()
    session = new_session(vault, browser("allow"))
    session.settings.device_sign_in = "never"
    try:
        session.connect("secure", server.url)
        assert call_echo(session, "secure", "redirected") == "redirected"
        after = server.stats()
        assert after["authorization_code_grants"] == before["authorization_code_grants"] + 1
        assert after["device_grants"] == before["device_grants"]
    finally:
        session.close()


@pytest.mark.parametrize("endpoint", ["javascript:alert(1)", "http://evil.example/device_authorization"])
def test_a_hostile_device_endpoint_is_not_used(endpoint: str, vault: TokenVault) -> None:
    """A script URL, or plain http to a host that is not loopback: the redirect sign-in goes on as without one."""
    with running_oauth_server(consent="auto", device_endpoint=endpoint) as srv:
        session = new_session(vault, browser("allow"))
        try:
            session.connect("secure", srv.url)
            assert call_echo(session, "secure", "safe") == "safe"
            stats = srv.stats()
            assert (stats["authorization_code_grants"], stats["device_grants"], stats["device_polls"]) == (1, 0, [])
        finally:
            session.close()


def test_a_hostile_device_answer_is_refused_before_anything_is_shown() -> None:
    good = {"device_code": "d" * 40, "user_code": "WDJB-MJHT", "verification_uri": "https://as.example/device"}
    assert parse_device_code(good).user_code == "WDJB-MJHT"
    for field, value in [
        ("user_code", "<img src=x onerror=alert(1)>"),
        ("user_code", "A" * 65),
        ("user_code", "ABCD\u202eEFGH"),
        ("verification_uri", "javascript:alert(1)"),
        ("verification_uri", "http://evil.example/device"),
        ("verification_uri", "https://" + "a" * 2100 + ".example/"),
        ("device_code", ""),
        ("device_code", 42),
    ]:
        with pytest.raises(DeviceGrantError) as caught:
            parse_device_code({**good, field: value})
        assert caught.value.error == "invalid_response", (field, value)
    # a hostile complete address is dropped, not shown; intervals and lifetimes are kept within bounds
    read = parse_device_code({**good, "verification_uri_complete": "javascript:x", "interval": 1e9, "expires_in": -5})
    assert (read.verification_uri_complete, read.interval, read.expires_in) == (None, 60.0, 1.0)
    assert parse_device_code({**good, "interval": True}).interval == 5.0
    with pytest.raises(DeviceGrantError) as caught:
        parse_device_code({"error": "x" * 500, "error_description": "y" * 5000})
    assert (
        len(caught.value.error) == 100 and caught.value.description is not None and len(caught.value.description) == 300
    )
    assert [poll_answer(400, {"error": e}) for e in ("authorization_pending", "slow_down")] == ["pending", "slow_down"]
    assert poll_answer(200, {}) is None
    with pytest.raises(DeviceGrantError) as caught:
        poll_answer(500, "not json")
    assert caught.value.error == "HTTP 500"


def test_a_kernel_without_the_extension_shows_the_code_in_the_cell(server: OAuthServer, tmp_path: Path) -> None:
    """No page relays a redirect here: the cell shows the code and the address; Cancel stops it; Allow signs in."""
    kernel = Kernel(cwd=str(REPO_ROOT), env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")})
    try:
        kernel.execute("%load_ext mcp_notebook")

        def device_panel() -> str | None:
            return next(
                (str(s["value"]) for s in list(kernel.comms.values()) if "mcp-device-code" in str(s.get("value", ""))),
                None,
            )

        first = kernel.execute(f"%mcp connect secure {server.url}", allow_stdin=True)
        assert "the server wants you to sign in first" in kernel.text_of_cell(first)
        kernel.wait_for(device_panel, what="the device code")
        [cancel] = kernel.find_widgets("ButtonModel", description="Cancel")
        kernel.click(cancel)
        kernel.wait_for(
            lambda: any("did not complete (cancelled)" in str(s.get("value", "")) for s in kernel.comms.values()),
            what="the cancelled sign-in",
        )
        assert kernel.find_widgets("TextModel", description="Address") == []  # nothing to paste back
        for widget in list(kernel.comms):
            kernel.comms.pop(widget)
        second = kernel.execute(f"%mcp connect secure {server.url}", allow_stdin=True)
        assert "the server wants you to sign in first" in kernel.text_of_cell(second)
        code = kernel.wait_for(device_panel, what="the device code")
        link = next(
            str(s["value"]) for s in kernel.comms.values() if 'class="mcp-open-link"' in str(s.get("value", ""))
        )
        href = link.split('href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
        user_code = parse_qs(urlsplit(href).query)["user_code"][0]
        assert href.startswith(server.issuer + "/device?") and f">{user_code}</b>" in code and "Opens: <b" in link
        person("allow")(href)
        kernel.wait_for(
            lambda: any("Signed in to <b>secure</b>" in str(s.get("value", "")) for s in kernel.comms.values()),
            what="signed in",
        )
        done = kernel.execute("r = %mcp call secure.echo text=after-device --wait\nprint(r.content[0].text)")
        assert "after-device" in kernel.text_of_cell(done)
        tokens = json.loads((tmp_path / "jd" / "mcp_notebook" / "oauth.json").read_text())[server.url]["tokens"]
        everything = json.dumps([m["content"] for m in kernel.messages])
        assert tokens["access_token"] not in everything and tokens["refresh_token"] not in everything
        assert "device_code" not in everything
    finally:
        kernel.close()


def test_a_session_settings_trait_names_the_choices() -> None:
    session = Session()
    try:
        assert session.settings.device_sign_in == "auto"
        with pytest.raises(Exception, match="device_sign_in"):
            session.settings.device_sign_in = "sometimes"
    finally:
        session.close()


# ---------------------------------------------------------------------- issue 34, finding 5: device-code phishing
@pytest.mark.parametrize(
    "page",
    [
        "https://microsoft.com/devicelogin",  # a well-known sign-in page: the code would sign in the attacker's device
        "https://127.0.0.1.evil.example/device",  # starts like the issuer's host, is another
        "https://10.0.0.1/device",  # another IP address
    ],
)
def test_a_device_page_on_another_host_is_refused_and_the_redirect_signs_in(page: str, vault: TokenVault) -> None:
    with running_oauth_server(consent="click", device_endpoint="default", device_verification=page) as srv:
        seen: list[str] = []
        session = new_session(vault, browser("allow", seen))
        try:
            session.connect("secure", srv.url)
            assert call_echo(session, "secure", "by redirect") == "by redirect"
            stats = srv.stats()
            # the server issued a device code (it was asked), but it was never shown or polled
            assert "POST /device_authorization" in stats["requests"]
            assert (stats["device_grants"], stats["device_polls"], stats["authorization_code_grants"]) == (0, [], 1)
            host = urlsplit(page).hostname
            assert not any(host in url for url in seen) and seen[0].startswith(srv.issuer + "/authorize?")
            assert not any("enter the code" in note for note in session.notes)
            [notice] = [note for note in session.notes if "offered a sign-in code" in note]
            assert f"a page on {host}, which is not its own host (127.0.0.1)" in notice
            assert "that code was not shown; sign in here instead" in notice
        finally:
            session.close()


def test_a_device_page_on_a_subdomain_of_the_issuer_is_shown(vault: TokenVault) -> None:
    """An issuer with a name (localhost here) may put its device page on a subdomain of it."""
    page = "http://device.localhost:{port}/device"
    with running_oauth_server(
        consent="click", device_endpoint="default", device_verification=page, host="localhost"
    ) as srv:
        seen: list[str] = []
        port = str(urlsplit(srv.issuer).port)
        go = person("allow")

        def visit(url: str) -> None:  # a browser takes *.localhost to the loopback address, as Chromium does
            seen.append(url)
            go(url.replace("device.localhost", "127.0.0.1"))

        session = new_session(vault, visit)
        try:
            session.connect("secure", srv.url)
            assert call_echo(session, "secure", "by code") == "by code"
            assert srv.stats()["device_grants"] == 1
            [url] = seen
            assert url.startswith(f"http://device.localhost:{port}/device?user_code=")
            assert not any("offered a sign-in code" in note for note in session.notes)
        finally:
            session.close()


def test_device_hosts_are_compared_as_the_browser_reads_them() -> None:
    def grant(uri: str, complete: str | None = None) -> DeviceCode:
        return DeviceCode("d", "WDJB-MJHT", uri, complete, 600.0, 5.0)

    issuer = "https://as.example.com"
    for same in [
        "https://as.example.com/device",
        "HTTPS://AS.Example.COM/device",  # case
        "https://login.as.example.com/device",  # a subdomain
        "https://as.example.com:8443/device",  # another port of the same host
    ]:
        assert foreign_address(grant(same), issuer) is None, same
    for other in [
        "https://microsoft.com/devicelogin",
        "https://evilas.example.com/device",  # a suffix, not a subdomain
        "https://as.example.com.evil.example/device",
        "https://аs.example.com/device",  # Cyrillic а: a look-alike, xn-- to the browser
        "https://example.com/device",  # the parent domain is not the issuer's
    ]:
        assert foreign_address(grant(other), issuer) == other, other
    # the complete address counts as much as the plain one
    assert foreign_address(grant("https://as.example.com/device", "https://evil.example/d?c=1"), issuer) == (
        "https://evil.example/d?c=1"
    )
    # punycode: an international issuer and its xn-- spelling are one host
    assert foreign_address(grant("https://xn--bcher-kva.example/device"), "https://bücher.example") is None
    # an IP address has no subdomains
    assert foreign_address(grant("https://10.0.0.1/device"), "https://10.0.0.1") is None
    assert foreign_address(grant("https://a.10.0.0.1/device"), "https://10.0.0.1") is not None
