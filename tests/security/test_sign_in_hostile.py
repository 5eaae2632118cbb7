"""Issue 12: what an authorization server or MCP server controls in a sign-in is shown inert.

The authorization URL (from the server's metadata), the issuer and the connection's name reach the
sign-in panel; the callback answer (code, state, error text) reaches the loopback catcher's page.
Nothing of it may run as script, the link only ever goes where the highlighted host says, and a
``javascript:`` endpoint gets no link at all. Issue 20: an authorization endpoint that carries its
own ``state`` is refused before any page opens (the state is the SDK's, never the server's).
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from typing import Any

import httpx2
import ipywidgets as w
import pytest
from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook.auth.sign_in import LoopbackCatcher, SignIn, SignInRequest, parse_redirect
from mcp_notebook.auth.vault import TokenVault
from mcp_notebook.errors import FlowError
from mcp_notebook.session.session import Session

from ..support.oauth_server import running_oauth_server
from .test_hostile import find_leaks

PAYLOAD = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


def panel_html(request: SignInRequest) -> str:
    from mcp_notebook.notebook.sign_in_view import SignInPanel

    sign_in = SignIn(request.server, request.resource, request.redirect_uri, lambda r, d: None, 5)
    panel = SignInPanel(request, sign_in)

    def walk(widget: Any) -> Any:
        if isinstance(widget, w.HTML):
            yield widget.value
        for child in getattr(widget, "children", ()):
            yield from walk(child)

    return "".join(walk(panel.widget))


@pytest.mark.parametrize(("url", "opens", "warning"), [
    ("https://auth.example.com/authorize?state=s&client_id=" + PAYLOAD, "auth.example.com", None),
    ("https://аpple.com/authorize?state=s", "xn--pple-43d.com", "looks like apple.com"),
    ("https://evil.example\\@auth.example.com/authorize", None, None),
    ("javascript:alert(document.cookie)//https://auth.example.com/authorize", None, None),
])  # fmt: skip
def test_sign_in_panel_is_inert(url: str, opens: str | None, warning: str | None) -> None:
    request = SignInRequest(
        server=f"srv{PAYLOAD}",
        resource="https://mcp.example.com/mcp",
        url=url,
        state="s",
        issuer=f"https://issuer.example{PAYLOAD}",
        redirect_uri=None,
    )
    html = panel_html(request)
    assert find_leaks(html) == []
    assert "&lt;img src=x onerror=" in html and "<script>" not in html  # escaped, shown, not dropped
    links = html.count('class="mcp-open-link"')
    if url.startswith("javascript:"):
        assert links == 0 and "no link is offered" in html
    else:
        assert links == 1 and 'rel="noopener noreferrer"' in html
    if opens is not None:
        assert (
            f'class="mcp-domain" style="background:color-mix(in srgb,var(--jp-warn-color1,#f57c00) 25%,var(--jp-layout-color1,#fff));color:var(--jp-ui-font-color1,#000);padding:0 2px">{opens}</b>'
            in html
        )
    if warning is not None:
        assert warning in html


def test_catcher_page_and_parser_take_hostile_answers_as_text() -> None:
    catcher = LoopbackCatcher()
    got: list[dict[str, Any]] = []
    try:
        catcher.await_state("state-1", got.append)
        query = (
            "state=state-1&error="
            + urllib.request.quote(PAYLOAD)
            + "&error_description="
            + urllib.request.quote(PAYLOAD)
        )
        with urllib.request.urlopen(f"{catcher.redirect_uri}?{query}", timeout=10) as response:
            page = response.read().decode()
        assert find_leaks(page) == [] and "&lt;img" in page and response.headers["Cache-Control"] == "no-store"
        assert got == [{"state": "state-1", "error": PAYLOAD, "error_description": PAYLOAD}]  # delivered once, as text
        with pytest.raises(urllib.error.HTTPError) as info:  # the same state again: nothing is waiting for it
            urllib.request.urlopen(f"{catcher.redirect_uri}?state=state-1&code=again", timeout=10)
        assert info.value.code == 400 and len(got) == 1
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"http://127.0.0.1:{catcher.port}/elsewhere", timeout=10)
        assert info.value.code == 404
    finally:
        catcher.close()
    with pytest.raises(ValueError, match="no sign-in answer"):
        parse_redirect("https://example.com/?" + PAYLOAD)
    assert parse_redirect(f"http://x/cb?code=c&state=s&iss={PAYLOAD}")["iss"] == PAYLOAD


def test_sign_in_outcome_and_auth_list_show_hostile_text_inert(tmp_path: Any) -> None:
    """The AS's error text in the settled panel, and its issuer and scope in ``%mcp auth list``, stay text."""
    from mcp_notebook.auth.vault import TokenVault

    from ..conftest import get_shell, session_of

    request = SignInRequest(
        server="srv",
        resource="https://mcp.example.com/mcp",
        url="https://auth.example.com/authorize?state=s",
        state="s",
        issuer=None,
        redirect_uri=None,
    )
    from mcp_notebook.notebook.sign_in_view import SignInPanel

    panel = SignInPanel(request, SignIn("srv", request.resource, None, lambda r, d: None, 5))
    panel.settled(PAYLOAD)
    [done] = panel.widget.children
    assert find_leaks(done.value) == [] and "&lt;img src=x onerror=" in done.value

    ip: InteractiveShell = get_shell()
    session = session_of(ip)
    saved = session.vault
    session.vault = TokenVault(tmp_path / "oauth.json")
    try:
        session.vault.update(
            "https://mcp.example.com/mcp",
            issuer=f"https://as.example{PAYLOAD}",
            tokens={"access_token": "t", "scope": PAYLOAD},
            expires_at=0.0,
        )
        table = ip.run_line_magic("mcp", "auth list")
        html = table._repr_mimebundle_()["text/html"]
        whole = re.sub(
            r"<summary[^>]*>.*?</summary>", "", html
        )  # a folded cell: its first line and hover, then all of it
        assert find_leaks(html) == [] and whole.count("&lt;img src=x onerror=") == 2 and '"t"' not in html
    finally:
        session.vault = saved


def test_back_channel_refusal_quotes_the_server_bounded_and_inert() -> None:
    """A tool error that reads like a back-channel refusal is quoted in the error (at most 300 characters), and renders inert."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from mcp_notebook.errors import FlowError
    from mcp_notebook.notebook.display import FlowReport
    from mcp_notebook.session.session import Session

    server = MCPServer("refuser")

    @server.tool()
    def ask() -> str:
        raise ToolError(
            f"{PAYLOAD} elicitation via server-initiated requests is unavailable on 2026-07-28 connections. "
            + "x" * 1000
        )

    session = Session()
    try:
        conn = session.connect("refuser", server)
        flow = session.start("tools/call", conn, "ask", {})
        with pytest.raises(FlowError) as info:
            flow.result(timeout=30)
        assert info.value.kind == "needs_legacy" and "x" * 400 not in str(info.value)
        html = FlowReport(flow)._repr_mimebundle_()["text/html"]
        assert find_leaks(html) == [] and "&lt;img src=x onerror=" in html
    finally:
        session.close()


@pytest.mark.parametrize("query", ["state=forged", "tenant=lab&state=forged", "tenant=lab;STATE=forged"])
def test_an_authorization_endpoint_carrying_its_own_state_is_refused(query: str, tmp_path: Any) -> None:
    """Issue 20, finding 6: a real AS whose metadata's ``authorization_endpoint`` ends in ``?state=forged``.

    The relay used to key the sign-in by the first ``state`` in the URL, the server's. Now the
    endpoint is refused before any page is opened, and nothing reaches the AS's ``/authorize``.
    """
    opened: list[str] = []
    with running_oauth_server(consent="auto", authorize_query=query) as srv:
        metadata = httpx2.get(srv.issuer + "/.well-known/oauth-authorization-server", timeout=10).json()
        assert metadata["authorization_endpoint"] == f"{srv.issuer}/authorize?{query}"  # the server really publishes it
        session = Session()
        session.vault = TokenVault(tmp_path / "oauth.json")
        session.sign_ins.open_browser = opened.append
        session.settings.sign_in_timeout = 10
        try:
            with pytest.raises(FlowError) as info:
                session.connect("secure", srv.url)
            text = str(info.value)
            assert info.value.kind == "sign_in_refused"
            assert f"Sign-in to secure at {srv.issuer}" in text and "stopped before any sign-in page was shown" in text
            assert f"an authorization endpoint that already carries a state ({srv.issuer}/authorize?{query})" in text
            assert "one chosen by the server is refused" in text and "tell the server's operator" in text
            assert opened == [] and not any("Sign in to secure" in str(n) for n in session.notes)
            assert srv.stats()["authorization_code_grants"] == 0 and not any(
                e["signed_in"] for e in session.vault.entries()
            )
        finally:
            session.close()


def test_the_relay_keys_a_sign_in_by_the_sdks_state_only() -> None:
    """The state shown and awaited is the one in the parameters the SDK appended, whatever the endpoint says."""
    import asyncio

    shown: list[SignInRequest] = []
    sign_in = SignIn("srv", "https://mcp.example.com/mcp", None, lambda request, deliver: shown.append(request), 5)
    sign_in.expect_endpoint("https://as.example/authorize?tenant=lab")  # a query of its own, but no state
    asyncio.run(
        sign_in.redirect("https://as.example/authorize?tenant=lab?response_type=code&state=the-sdks&client_id=c")
    )
    assert [r.state for r in shown] == ["the-sdks"]
    with pytest.raises(Exception, match="not the one this sign-in built"):  # a URL on another endpoint is not shown
        asyncio.run(sign_in.redirect("https://elsewhere.example/authorize?state=the-sdks"))
    assert len(shown) == 1


def test_a_refused_device_grants_notice_is_shown_inert_above_the_redirect() -> None:
    """Issue 34, finding 5: the panel says why the redirect is shown instead of a device code, as text."""
    request = SignInRequest(
        server="srv",
        resource="https://mcp.example.com/mcp",
        url="https://auth.example.com/authorize?state=s",
        state="s",
        issuer="https://auth.example.com",
        redirect_uri=None,
        notice=f"offered a sign-in code to type at a page on {PAYLOAD}",
    )
    html = panel_html(request)
    assert find_leaks(html) == [] and 'class="mcp-sign-in-notice"' in html
    assert "⚠ offered a sign-in code to type at a page on &lt;img src=x onerror=" in html
