"""Sanity checks of the test OAuth server (`tests/support/oauth_server.py`) with the raw SDK client.

No mcp_notebook client code here: `mcp.client.auth.OAuthClientProvider` on an
`httpx2.AsyncClient`, wrapped by `mcp.Client(streamable_http_client(...))`, against
the real server process. The "browser" is plain HTTP: the redirect handler GETs the
authorize URL, follows our consent page (or the auto-approval), and reads `code`,
`state` and `iss` from the final `Location`; nothing listens at the redirect URI.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import parse_qs, urlencode, urljoin, urlparse

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.types import CallToolResult, TextContent
from pydantic import AnyUrl

from tests.support.oauth_server import CONSENT_TITLE, OAuthServer, running_oauth_server, token_hash

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

REDIRECT_URI = "http://127.0.0.1:9/oauth/callback"  # never contacted: the code is read from Location
CLIENT_NAME = 'Raw <SDK> "test" client'  # markup on purpose: the consent page must escape it
STEP_TIMEOUT = 20.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def auto_server() -> Iterator[OAuthServer]:
    with running_oauth_server(consent="auto") as srv:
        yield srv


@pytest.fixture
def click_server() -> Iterator[OAuthServer]:
    with running_oauth_server(consent="click") as srv:
        yield srv


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class AccessDenied(Exception):
    pass


@dataclass
class Browser:
    """Plays the user's browser: follows the AS's redirects and answers the consent page."""

    decision: Literal["allow", "deny"] = "allow"
    authorize_urls: list[str] = field(default_factory=list)
    consent_pages: list[str] = field(default_factory=list)
    final_locations: list[str] = field(default_factory=list)
    result: AuthorizationCodeResult | None = None

    async def redirect_handler(self, url: str) -> None:
        self.authorize_urls.append(url)
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.get(url)
            location = self._location(response)
            if urlparse(location).path.endswith("/consent"):
                page = await http.get(location)
                assert page.status_code == 200, page.text
                self.consent_pages.append(page.text)
                req = re.search(r'name="req" value="([^"]*)"', page.text)
                assert req is not None, page.text
                action = re.search(r'<form method="post" action="([^"]*)"', page.text)
                assert action is not None
                answer = await http.post(action.group(1), data={"req": req.group(1), "decision": self.decision})
                location = self._location(answer)
        self.final_locations.append(location)
        query = parse_qs(urlparse(location).query)
        if "error" in query:
            self.result = None
            return
        self.result = AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )

    async def callback_handler(self) -> AuthorizationCodeResult:
        if self.result is None:
            raise AccessDenied(self.final_locations[-1])
        result, self.result = self.result, None
        return result

    @staticmethod
    def _location(response: httpx2.Response) -> str:
        assert response.status_code == 302, (response.status_code, response.text)
        return urljoin(str(response.request.url), response.headers["location"])


@dataclass
class Session:
    provider: OAuthClientProvider
    storage: MemoryStorage
    browser: Browser
    statuses: list[tuple[str, str, int]]  # (method, path, status) of every response the authed client saw


def make_session(srv: OAuthServer, decision: Literal["allow", "deny"] = "allow") -> Session:
    storage = MemoryStorage()
    browser = Browser(decision=decision)
    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[AnyUrl(REDIRECT_URI)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    provider = OAuthClientProvider(srv.url, metadata, storage, browser.redirect_handler, browser.callback_handler)
    return Session(provider, storage, browser, [])


def authed_http(session: Session) -> httpx2.AsyncClient:
    async def record(response: httpx2.Response) -> None:
        session.statuses.append((response.request.method, response.request.url.path, response.status_code))

    return httpx2.AsyncClient(auth=session.provider, timeout=30, event_hooks={"response": [record]})


def text_of(result: CallToolResult) -> str:
    assert not result.is_error, result
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def contains(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether `kind` is `exc` or inside it (exception groups, causes, contexts)."""
    seen: set[int] = set()
    stack = [exc]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, kind):
            return True
        if isinstance(e, BaseExceptionGroup):
            stack.extend(e.exceptions)
        stack.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    return False


async def test_auto_consent_connects_and_calls_tools(auto_server: OAuthServer) -> None:
    session = make_session(auto_server)
    http = authed_http(session)
    with anyio.fail_after(STEP_TIMEOUT):
        async with http, Client(streamable_http_client(auto_server.url, http_client=http)) as client:
            assert text_of(await client.call_tool("echo", {"text": "through OAuth"})) == "through OAuth"

    stats = auto_server.stats()
    assert stats["registrations"] == 1
    assert stats["authorization_code_grants"] == 1
    assert stats["refresh_token_grants"] == 0
    assert session.storage.tokens is not None
    assert stats["access_token_hashes"] == [token_hash(session.storage.tokens.access_token)]
    assert session.storage.tokens.access_token not in str(stats)  # hashes only, never tokens
    assert session.storage.tokens.scope == "mcp:read mcp:write"

    # The SDK client sent PKCE S256, state and the RFC 8707 resource; the AS answered with `iss`.
    (authorize_url,) = session.browser.authorize_urls
    query = parse_qs(urlparse(authorize_url).query)
    assert query["code_challenge_method"] == ["S256"]
    assert query["resource"] == [auto_server.url]
    assert query["scope"] == ["mcp:read mcp:write"]
    final = parse_qs(urlparse(session.browser.final_locations[0]).query)
    assert final["iss"] == [auto_server.issuer]
    assert final["state"] == query["state"]
    assert session.statuses[0][2] == 401  # discovery started from the MCP endpoint's challenge


async def test_click_consent_allow(click_server: OAuthServer) -> None:
    session = make_session(click_server, "allow")
    http = authed_http(session)
    with anyio.fail_after(STEP_TIMEOUT):
        async with http, Client(streamable_http_client(click_server.url, http_client=http)) as client:
            assert text_of(await client.call_tool("echo", {"text": "clicked"})) == "clicked"

    (page,) = session.browser.consent_pages
    assert f"<title>{CONSENT_TITLE}</title>" in page
    assert "Raw &lt;SDK&gt; &quot;test&quot; client" in page and CLIENT_NAME not in page
    assert "<li>mcp:read</li><li>mcp:write</li>" in page
    assert re.search(r'<button type="submit" id="allow"[^>]*>Allow</button>', page)
    assert re.search(r'<button type="submit" id="deny"[^>]*>Deny</button>', page)
    location = session.browser.final_locations[0]
    assert location.startswith(REDIRECT_URI + "?")
    assert set(parse_qs(urlparse(location).query)) == {"code", "state", "iss"}
    stats = click_server.stats()
    assert (stats["registrations"], stats["authorization_code_grants"]) == (1, 1)


async def test_click_consent_deny(click_server: OAuthServer) -> None:
    session = make_session(click_server, "deny")
    http = authed_http(session)
    with anyio.fail_after(STEP_TIMEOUT), pytest.raises(BaseException) as raised:
        async with http, Client(streamable_http_client(click_server.url, http_client=http)) as client:
            await client.call_tool("echo", {"text": "never"})
    assert contains(raised.value, AccessDenied), raised.value

    (location,) = session.browser.final_locations
    query = parse_qs(urlparse(location).query)
    assert location.startswith(REDIRECT_URI + "?")
    assert query["error"] == ["access_denied"]
    assert query["error_description"][0]
    assert query["state"] == parse_qs(urlparse(session.browser.authorize_urls[0]).query)["state"]
    assert "code" not in query
    stats = click_server.stats()
    assert (stats["registrations"], stats["authorization_code_grants"], stats["access_token_hashes"]) == (1, 0, [])


async def test_expired_token_is_refreshed_without_a_new_authorization() -> None:
    with running_oauth_server(consent="auto", token_ttl=2) as srv:
        session = make_session(srv)
        http = authed_http(session)
        with anyio.fail_after(STEP_TIMEOUT):
            async with http, Client(streamable_http_client(srv.url, http_client=http)) as client:
                assert text_of(await client.call_tool("echo", {"text": "one"})) == "one"
                first = session.storage.tokens
                await anyio.sleep(3)
                assert text_of(await client.call_tool("echo", {"text": "two"})) == "two"
        stats = srv.stats()
    assert (stats["authorization_code_grants"], stats["refresh_token_grants"]) == (1, 1)
    assert len(session.browser.authorize_urls) == 1
    assert first is not None and session.storage.tokens is not None
    assert session.storage.tokens.refresh_token != first.refresh_token  # rotated
    assert stats["access_token_hashes"] == [
        token_hash(first.access_token),
        token_hash(session.storage.tokens.access_token),
    ]
    assert not any(status == 401 for _, _, status in session.statuses[1:]), session.statuses  # refreshed before sending


async def test_expired_refresh_token_leads_to_a_new_authorization() -> None:
    with running_oauth_server(consent="auto", token_ttl=2) as srv:
        session = make_session(srv)
        http = authed_http(session)
        with anyio.fail_after(STEP_TIMEOUT):
            async with http, Client(streamable_http_client(srv.url, http_client=http)) as client:
                assert text_of(await client.call_tool("echo", {"text": "one"})) == "one"
                assert srv.expire_refresh() == 1
                await anyio.sleep(3)
                seen = len(session.statuses)
                assert text_of(await client.call_tool("echo", {"text": "two"})) == "two"
        stats = srv.stats()
    token_path = urlparse(srv.issuer + "/token").path
    assert (token_path, 400) in [
        (path, status) for _, path, status in session.statuses[seen:]
    ]  # the refresh was refused
    assert (stats["authorization_code_grants"], stats["refresh_token_grants"]) == (2, 0)
    assert len(session.browser.authorize_urls) == 2


async def test_revoked_tokens_lead_to_a_new_authorization(auto_server: OAuthServer) -> None:
    session = make_session(auto_server)
    http = authed_http(session)
    with anyio.fail_after(STEP_TIMEOUT):
        async with http, Client(streamable_http_client(auto_server.url, http_client=http)) as client:
            assert text_of(await client.call_tool("echo", {"text": "before"})) == "before"
            assert auto_server.revoke_all() == 1
            seen = len(session.statuses)
            assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"
    mcp_path = urlparse(auto_server.url).path
    assert (mcp_path, 401) in [(path, status) for _, path, status in session.statuses[seen:]]
    stats = auto_server.stats()
    assert stats["registrations"] == 1  # the stored client is reused
    assert stats["authorization_code_grants"] == 2
    assert len(session.browser.authorize_urls) == 2


async def test_unauthenticated_request_is_challenged(auto_server: OAuthServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with httpx2.AsyncClient(timeout=10) as http:
        response = await http.post(
            auto_server.url, json=body, headers={"Accept": "application/json, text/event-stream"}
        )
        assert response.status_code == 401
        challenge = response.headers["www-authenticate"]
        match = re.search(r'resource_metadata="([^"]+)"', challenge)
        assert challenge.startswith("Bearer ") and match is not None, challenge
        assert match.group(1) == urljoin(auto_server.url, "/.well-known/oauth-protected-resource/mcp")

        prm = (await http.get(match.group(1))).json()
        assert prm["resource"] == auto_server.url
        assert prm["authorization_servers"] == [auto_server.issuer]
        assert prm["scopes_supported"] == ["mcp:read", "mcp:write"]
        asm = (await http.get(urljoin(auto_server.issuer, "/.well-known/oauth-authorization-server"))).json()
        assert asm["issuer"] == auto_server.issuer
        assert asm["code_challenge_methods_supported"] == ["S256"]

        bad = await http.post(
            auto_server.url,
            json=body,
            headers={"Authorization": "Bearer not-a-token", "Accept": "application/json, text/event-stream"},
        )
        assert bad.status_code == 401


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


async def test_pkce_and_one_time_codes_are_enforced(auto_server: OAuthServer) -> None:
    """By hand, without the SDK client: what the SDK's AS handlers refuse."""
    issuer = auto_server.issuer
    async with httpx2.AsyncClient(timeout=10) as http:
        reg = await http.post(
            f"{issuer}/register",
            json={"redirect_uris": [REDIRECT_URI], "client_name": "by hand", "token_endpoint_auth_method": "none"},
        )
        assert reg.status_code == 201, reg.text
        client_id = reg.json()["client_id"]
        verifier, challenge = _pkce()
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "state": "s1",
            "resource": auto_server.url,
        }

        no_pkce = await http.get(f"{issuer}/authorize?{urlencode(params)}")
        assert no_pkce.status_code == 302 and "error=invalid_request" in no_pkce.headers["location"]
        plain = await http.get(
            f"{issuer}/authorize?{urlencode({**params, 'code_challenge': verifier, 'code_challenge_method': 'plain'})}"
        )
        assert plain.status_code == 302 and "error=invalid_request" in plain.headers["location"]
        other = await http.get(
            f"{issuer}/authorize?{urlencode({**params, 'code_challenge': challenge, 'resource': 'http://127.0.0.1:1/mcp'})}"
        )
        assert other.status_code == 302 and "error=invalid_target" in other.headers["location"]

        ok = await http.get(
            f"{issuer}/authorize?{urlencode({**params, 'code_challenge': challenge, 'code_challenge_method': 'S256'})}"
        )
        assert ok.status_code == 302
        code = parse_qs(urlparse(ok.headers["location"]).query)["code"][0]
        exchange = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
        }
        wrong = await http.post(f"{issuer}/token", data={**exchange, "code_verifier": _pkce()[0]})
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
        right = await http.post(f"{issuer}/token", data={**exchange, "code_verifier": verifier})
        assert right.status_code == 200, right.text
        tokens = right.json()
        assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3600 and tokens["refresh_token"]
        again = await http.post(f"{issuer}/token", data={**exchange, "code_verifier": verifier})
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"

        refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id}
        assert auto_server.expire_refresh() == 1
        expired = await http.post(f"{issuer}/token", data=refresh)
        assert expired.status_code == 400 and expired.json()["error"] == "invalid_grant"

    stats = auto_server.stats()
    assert (stats["registrations"], stats["authorization_code_grants"], stats["refresh_token_grants"]) == (1, 1, 0)


async def test_base_path_serves_well_known_documents_at_rfc_locations() -> None:
    with running_oauth_server(consent="auto", base_path="/tenant/") as srv:
        assert srv.issuer.endswith("/tenant") and srv.url == srv.issuer + "/mcp"
        origin = srv.issuer.removesuffix("/tenant")
        async with httpx2.AsyncClient(timeout=10) as http:
            asm = (await http.get(f"{origin}/.well-known/oauth-authorization-server/tenant")).json()
            assert asm["issuer"] == srv.issuer and asm["authorization_endpoint"] == f"{srv.issuer}/authorize"
            prm = (await http.get(f"{origin}/.well-known/oauth-protected-resource/tenant/mcp")).json()
            assert prm["resource"] == srv.url and prm["authorization_servers"] == [srv.issuer]

        session = make_session(srv)
        client_http = authed_http(session)
        with anyio.fail_after(STEP_TIMEOUT):
            async with client_http, Client(streamable_http_client(srv.url, http_client=client_http)) as client:
                assert text_of(await client.call_tool("echo", {"text": "prefixed"})) == "prefixed"
        assert srv.stats()["authorization_code_grants"] == 1
