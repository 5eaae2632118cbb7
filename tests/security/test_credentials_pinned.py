"""Issue 34, finding 4: pre-shared credentials go only to the authorization server they belong to.

The MCP server names its authorization server, so a hostile (or re-pointed) one can name its own
and receive a workload JWT, a client secret or a private-key client assertion meant for another.
The server here is tests/support/oauth_server.py, which notes every request it receives
(``stats()["requests"]``): a refused sign-in must leave it with no POST but the MCP requests
themselves (no token request, no device request, no registration).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcp_notebook.auth.pin import REMEMBERED
from mcp_notebook.auth.sdk_provider import OAuthOptions
from mcp_notebook.auth.vault import TokenVault
from mcp_notebook.errors import FlowError

from ..auth.test_sign_in import call_echo, new_session
from ..support.oauth_server import OAuthServer, running_oauth_server

KEY = ec.generate_private_key(ec.SECP256R1())
KEY_PEM = KEY.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
).decode()
ELSEWHERE = "https://sts.elsewhere.example"


def workload_token(audience: str | list[str]) -> str:
    now = int(time.time())
    claims = {"iss": "https://issuer.workload.test", "sub": "job", "aud": audience, "iat": now, "exp": now + 300}
    return jwt.encode(claims, KEY, algorithm="ES256")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OAuthServer]:
    public = tmp_path_factory.mktemp("pin") / "issuer.pub.pem"
    public.write_bytes(
        KEY.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    with running_oauth_server(consent="auto", workload_key_file=str(public)) as srv:
        yield srv


@pytest.fixture
def vault(tmp_path: Path) -> TokenVault:
    return TokenVault(tmp_path / "jupyter-data" / "mcp_notebook" / "oauth.json")


def nobody(url: str) -> None:
    raise AssertionError(f"a sign-in with pre-shared credentials opened a page: {url}")


def posts_since(server: OAuthServer, before: int) -> list[str]:
    """The POSTs the server received since ``before`` requests, the MCP endpoint's own aside."""
    return [r for r in server.stats()["requests"][before:] if r.startswith("POST") and r != "POST /mcp"]


def refused(server: OAuthServer, vault: TokenVault, options: OAuthOptions) -> FlowError:
    """Connect with ``options``: the sign-in must stop with nothing sent to the authorization server."""
    before = len(server.stats()["requests"])
    session = new_session(vault, nobody)
    try:
        with pytest.raises(FlowError) as caught:
            session.connect("secure", server.url, oauth=options)
    finally:
        session.close()
    assert caught.value.kind == "sign_in_refused", str(caught.value)
    assert "before any credential was sent" in str(caught.value)
    assert posts_since(server, before) == []  # no token request, no device request, no registration
    assert any(r.startswith("GET /.well-known/oauth-authorization-server") for r in server.stats()["requests"][before:])
    return caught.value


# ---------------------------------------------------------------------- workload JWT: its aud names the server
def test_a_workload_token_for_another_issuer_is_never_posted(
    server: OAuthServer, vault: TokenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = workload_token(ELSEWHERE)
    monkeypatch.setenv("JOB_TOKEN", token)
    error = refused(server, vault, OAuthOptions(client_id="job", assertion_env="JOB_TOKEN"))
    text = str(error)
    assert f"the workload token is for {ELSEWHERE} (its aud)" in text
    assert f"the authorization server {server.issuer}" in text and f"token endpoint {server.issuer}/token" in text
    assert token not in text and server.stats()["jwt_bearer_refusals"] == []
    assert REMEMBERED not in vault.get(server.url)  # a refused server is not remembered


def test_a_workload_token_without_an_audience_is_never_posted(
    server: OAuthServer, vault: TokenVault, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    now = int(time.time())
    planted = tmp_path / "token"
    planted.write_text(jwt.encode({"sub": "job", "iat": now, "exp": now + 300}, KEY, algorithm="ES256"))
    error = refused(server, vault, OAuthOptions(client_id="job", assertion_file=str(planted)))
    assert "names no audience (aud)" in str(error)


@pytest.mark.parametrize("audience", ["issuer", "token endpoint", "a list"])
def test_a_workload_token_for_this_server_signs_in_and_the_server_is_remembered(
    server: OAuthServer, vault: TokenVault, monkeypatch: pytest.MonkeyPatch, audience: str
) -> None:
    """RFC 7523 §3: the aud is the issuer identifier or the token endpoint URL (or a list holding one)."""
    aud: str | list[str] = {
        "issuer": server.issuer,
        "token endpoint": f"{server.issuer}/token",
        "a list": [ELSEWHERE, server.issuer],
    }[audience]
    monkeypatch.setenv("JOB_TOKEN", workload_token(aud))
    session = new_session(vault, nobody)
    try:
        session.connect("secure", server.url, oauth=OAuthOptions(client_id="job", assertion_env="JOB_TOKEN"))
        assert call_echo(session, "secure", "pinned") == "pinned"
    finally:
        session.close()
    assert vault.get(server.url)[REMEMBERED] == server.issuer


def test_a_changed_authorization_server_is_refused_until_the_person_says_so(
    server: OAuthServer, vault: TokenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The credentials went to another server before (remembered); now the server names this one."""
    vault.update(server.url, **{REMEMBERED: ELSEWHERE})
    monkeypatch.setenv("JOB_TOKEN", workload_token([ELSEWHERE, server.issuer]))
    error = refused(server, vault, OAuthOptions(client_id="job", assertion_env="JOB_TOKEN"))
    text = str(error)
    assert f"now sends you to the authorization server {server.issuer}" in text
    assert f"went to {ELSEWHERE} before" in text
    assert f"%mcp auth logout {server.url}" in text and f"--issuer {server.issuer}" in text
    assert vault.get(server.url)[REMEMBERED] == ELSEWHERE  # still refused next time
    # the person says the new server is right: --issuer, and it is remembered from then on
    session = new_session(vault, nobody)
    try:
        options = OAuthOptions(client_id="job", assertion_env="JOB_TOKEN", issuer=server.issuer)
        session.connect("secure", server.url, oauth=options)
        assert call_echo(session, "secure", "moved") == "moved"
    finally:
        session.close()
    assert vault.get(server.url)[REMEMBERED] == server.issuer


# ---------------------------------------------------------------------- a client secret or private key: only to the pinned server
@pytest.mark.parametrize("credential", ["client secret", "private key"])
@pytest.mark.parametrize("pinned_by", ["--issuer", "remembered"])
def test_client_credentials_go_only_to_the_pinned_issuer(
    server: OAuthServer, vault: TokenVault, monkeypatch: pytest.MonkeyPatch, credential: str, pinned_by: str
) -> None:
    monkeypatch.setenv("SVC_SECRET", "s3cret-value")
    monkeypatch.setenv("SVC_KEY", KEY_PEM)
    names = {"client_secret_env": "SVC_SECRET"} if credential == "client secret" else {"private_key_env": "SVC_KEY"}
    if pinned_by == "remembered":
        vault.update(server.url, **{REMEMBERED: ELSEWHERE})
    options = OAuthOptions(
        client_id="svc", client_credentials=True, issuer=ELSEWHERE if pinned_by == "--issuer" else None, **names
    )
    text = str(refused(server, vault, options))
    assert server.issuer in text and ELSEWHERE in text and "s3cret-value" not in text
    # pinned to this server, the token request goes (this test server has no client-credentials grant itself)
    before = len(server.stats()["requests"])
    session = new_session(vault, nobody)
    try:
        with pytest.raises(FlowError) as caught:
            session.connect("secure", server.url, oauth=replace(options, issuer=server.issuer))
        assert caught.value.kind == "sign_in_failed"
    finally:
        session.close()
    sent = posts_since(server, before)
    assert sent and set(sent) == {"POST /token"}  # (asked again by the handshake's retry, as before)
    assert vault.get(server.url)[REMEMBERED] == server.issuer


def test_a_pre_registered_secret_is_refused_before_any_page_opens(
    server: OAuthServer, vault: TokenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The code grant with --client-id and --client-secret-env: refused before the person is even asked."""
    monkeypatch.setenv("APP_SECRET", "app-s3cret")
    error = refused(
        server, vault, OAuthOptions(client_id="app", client_secret_env="APP_SECRET", issuer=f"{ELSEWHERE}/tenant")
    )
    assert f"--issuer pins this sign-in to {ELSEWHERE}/tenant" in str(error)


def test_an_issuer_that_is_no_web_address_is_refused_at_connect(server: OAuthServer, vault: TokenVault) -> None:
    session = new_session(vault, nobody)
    try:
        with pytest.raises(FlowError, match=r"--issuer given, 'javascript:alert\(1\)', is not an authorization server"):
            session.connect("secure", server.url, oauth=OAuthOptions(client_id="a", issuer="javascript:alert(1)"))
    finally:
        session.close()
