"""Issue 24, item 4: workload identity (SEP-1933), a ready-made JWT exchanged by the RFC 7523 jwt-bearer grant.

The authorization server is tests/support/oauth_server.py with ``--workload-key``: it verifies each
assertion against that public key (signature, audience: its issuer, expiry), as a workload identity
federation server does, and counts grants and refusals. The workload's token is made here with a key
pair of the run's own, as a Kubernetes or CI issuer would make it. Nobody clicks anything.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcp_notebook.auth.sdk_provider import OAuthOptions
from mcp_notebook.auth.vault import TokenVault
from mcp_notebook.auth.workload import MAX_ASSERTION, WorkloadAssertion
from mcp_notebook.errors import FlowError

from ..conftest import get_shell
from ..support.oauth_server import OAuthServer, running_oauth_server
from .test_sign_in import call_echo, new_session

KEY = ec.generate_private_key(ec.SECP256R1())


def workload_token(audience: str, expires_in: float = 300, subject: str = "system:serviceaccount:jobs:nightly") -> str:
    now = int(time.time())
    claims = {
        "iss": "https://issuer.workload.test",
        "sub": subject,
        "aud": audience,
        "iat": now,
        "exp": now + expires_in,
    }
    return jwt.encode(claims, KEY, algorithm="ES256")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OAuthServer]:
    public = tmp_path_factory.mktemp("workload") / "issuer.pub.pem"
    public.write_bytes(
        KEY.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    with running_oauth_server(consent="click", workload_key_file=str(public)) as srv:
        yield srv


@pytest.fixture
def vault(tmp_path: Path) -> TokenVault:
    return TokenVault(tmp_path / "jupyter-data" / "mcp_notebook" / "oauth.json")


def nobody(url: str) -> None:
    raise AssertionError(f"a workload sign-in opened a page: {url}")


def test_a_workload_token_in_a_variable_signs_in_with_no_person_and_no_registration(
    server: OAuthServer, vault: TokenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = workload_token(server.issuer)
    monkeypatch.setenv("JOB_ID_TOKEN", token)
    before = server.stats()
    session = new_session(vault, nobody)
    try:
        conn = session.connect(
            "secure", server.url, oauth=OAuthOptions(client_id="nightly-job", assertion_env="JOB_ID_TOKEN")
        )
        assert conn.state == "open" and call_echo(session, "secure", "as a workload") == "as a workload"
        after = server.stats()
        assert after["jwt_bearer_grants"] == before["jwt_bearer_grants"] + 1
        assert after["registrations"] == before["registrations"]  # a known client: no dynamic registration
        assert after["authorization_code_grants"] == before["authorization_code_grants"]
        assert after["jwt_bearer_refusals"] == before["jwt_bearer_refusals"]
        assert len(vault.entries()) == 1  # the access token is kept for the resource, as for any sign-in
        assert token not in vault.path.read_text()  # the assertion is the credential: never stored
        # what a saved record says of the sign-in: the variable's name, never its value
        saved = conn.target.oauth.saved()
        assert saved["assertion_env"] == "JOB_ID_TOKEN" and token not in str(saved)
    finally:
        session.close()


def test_a_token_file_is_read_again_at_each_exchange_and_a_refusal_is_said_once(
    server: OAuthServer, vault: TokenVault, tmp_path: Path
) -> None:
    projected = tmp_path / "token"
    projected.write_text(workload_token(server.issuer) + "\n")  # as the kubelet writes it
    before = server.stats()
    session = new_session(vault, nobody)
    try:
        session.connect("secure", server.url, oauth=OAuthOptions(client_id="job", assertion_file=str(projected)))
        assert call_echo(session, "secure", "first") == "first"
        # the file rotates to a token that has already expired, and the server forgets the access token (a
        # token for another audience is refused before it is sent: tests/security/test_credentials_pinned.py)
        projected.write_text(workload_token(server.issuer, expires_in=-120))
        server.revoke_all()
        flow = session.start("tools/call", session.registry.get("secure"), "echo", {"text": "second"})
        with pytest.raises(FlowError) as caught:
            flow.result(timeout=30)
        assert caught.value.kind == "sign_in_failed"
        assert "refused the token request" in str(caught.value) and "invalid_grant" in str(caught.value)
        after = server.stats()
        assert after["jwt_bearer_grants"] == before["jwt_bearer_grants"] + 1
        # the new file was sent (refused as expired), once: no retry, and no other grant tried
        assert after["jwt_bearer_refusals"] == [*before["jwt_bearer_refusals"], "ExpiredSignatureError"]
        assert after["authorization_code_grants"] == before["authorization_code_grants"]
        assert after["registrations"] == before["registrations"]
    finally:
        session.close()


def test_an_expired_workload_token_is_refused_by_the_server_and_the_cell_says_so(
    server: OAuthServer, vault: TokenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLD_TOKEN", workload_token(server.issuer, expires_in=-120))
    before = server.stats()
    session = new_session(vault, nobody)
    try:
        with pytest.raises(FlowError) as caught:  # the handshake's first 401 asks for a token: refused there
            session.connect("secure", server.url, oauth=OAuthOptions(client_id="job", assertion_env="OLD_TOKEN"))
        assert caught.value.kind == "sign_in_failed"
        assert "refused the token request" in str(caught.value) and "Signature has expired" in str(caught.value)
        assert server.stats()["jwt_bearer_refusals"] == [*before["jwt_bearer_refusals"], "ExpiredSignatureError"]
    finally:
        session.close()


# ---------------------------------------------------------------------- hostile: what is read is a JWT, or nothing is sent
@pytest.mark.parametrize(
    "content",
    [
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
        "root:x:0:0:root:/root:/bin/bash\n",
        "a.b.c" + "d" * MAX_ASSERTION,
        "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.sig\r\nX-Injected: 1",
    ],
    ids=["a private key", "a system file", "too long", "a header injection"],
)
def test_a_file_that_is_not_a_jwt_is_never_sent(
    server: OAuthServer, vault: TokenVault, tmp_path: Path, content: str
) -> None:
    planted = tmp_path / "not-a-token"
    planted.write_text(content)
    before = server.stats()
    session = new_session(vault, nobody)
    try:
        with pytest.raises(FlowError) as caught:
            session.connect("secure", server.url, oauth=OAuthOptions(client_id="job", assertion_file=str(planted)))
        assert caught.value.kind == "bad_input"
        assert "does not hold a JWT" in str(caught.value) and "nothing was sent" in str(caught.value)
        assert content.strip()[:20] not in str(caught.value)  # the file's text is not echoed either
        after = server.stats()
        assert after["jwt_bearer_refusals"] == before["jwt_bearer_refusals"]
        assert after["jwt_bearer_grants"] == before["jwt_bearer_grants"]
    finally:
        session.close()


def test_missing_places_and_flags_say_what_to_give(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_TOKEN", raising=False)
    with pytest.raises(FlowError, match=r"environment variable NO_SUCH_TOKEN is not set \(needed by --assertion-env\)"):
        WorkloadAssertion(env="NO_SUCH_TOKEN").read()
    with pytest.raises(FlowError, match=r"cannot read the file .*gone \(--assertion-file\): No such file"):
        WorkloadAssertion(file=str(tmp_path / "gone")).read()
    good = tmp_path / "t"
    good.write_text("  aGVhZA.Ym9keQ.c2ln \n")
    assert WorkloadAssertion(file=str(good)).read() == "aGVhZA.Ym9keQ.c2ln"


def test_the_connect_line_takes_the_flags_and_asks_for_a_client_id(capsys: pytest.CaptureFixture[str]) -> None:
    shell = get_shell()
    shell.run_line_magic("mcp", "connect --help")
    shown = capsys.readouterr().out
    assert "--assertion-env VAR" in shown and "--assertion-file PATH" in shown
    assert "--issuer URL" in shown and "pin sign-in to this" in shown
    with pytest.raises(FlowError, match="a workload sign-in needs the client id .*--client-id") as caught:
        shell.run_line_magic("mcp", "connect wl --assertion-env PATH http://127.0.0.1:9/mcp")
    assert caught.value.kind == "bad_input"
