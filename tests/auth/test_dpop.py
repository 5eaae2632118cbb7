"""Issue 24, item 3: DPoP (RFC 9449): proofs, the DPoP scheme, nonces, and a key kept with the tokens.

The whole exchange against a real authorization server and MCP server that verify every proof is the
conformance suite's ``auth/dpop`` and ``auth/dpop-nonce`` (tests/conformance). Here each part is
checked with real ``httpx2`` requests and responses and real signatures: a proof verifies with the key
it names and says what RFC 9449 section 4.2 asks, the key survives a new kernel through the vault
(0600) and nowhere else, and what a server sends back (nonces, token types) is bounded and honoured.
"""

from __future__ import annotations

import base64
import hashlib
import json
import stat
import time
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest

from mcp_notebook.auth.dpop import MAX_NONCE, DpopBinding, DpopKey
from mcp_notebook.auth.vault import ResourceTokens, TokenVault

RESOURCE = "https://mcp.example.test/mcp"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def verified(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The proof's header and claims, its signature checked against the public key in its own header."""
    header = jwt.get_unverified_header(proof)
    key = jwt.PyJWK(header["jwk"], algorithm="ES256")
    return header, jwt.decode(proof, key.key, algorithms=["ES256"])


@pytest.fixture
def storage(tmp_path: Path) -> ResourceTokens:
    return ResourceTokens(TokenVault(tmp_path / "mcp_notebook" / "oauth.json"), RESOURCE, None)


def token_request() -> httpx2.Request:
    return httpx2.Request(
        "POST", "https://as.example.test/token?x=1", data={"grant_type": "authorization_code", "code": "c"},
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )  # fmt: skip


def as_metadata(algorithms: list[str]) -> httpx2.Response:
    request = httpx2.Request("GET", "https://as.example.test/.well-known/oauth-authorization-server")
    return httpx2.Response(
        200,
        json={"issuer": "https://as.example.test", "dpop_signing_alg_values_supported": algorithms},
        request=request,
    )


def test_a_proof_is_signed_by_the_key_it_names_and_says_what_rfc_9449_asks() -> None:
    key = DpopKey.new()
    first = key.proof("post", "https://mcp.example.test/mcp", access_token="tok-123", nonce="n-1")
    header, claims = verified(first)
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    assert set(header["jwk"]) == {"kty", "crv", "x", "y"}  # the public half only, never "d"
    assert claims["htm"] == "POST" and claims["htu"] == "https://mcp.example.test/mcp" and claims["nonce"] == "n-1"
    assert abs(claims["iat"] - time.time()) < 5
    assert claims["ath"] == base64.urlsafe_b64encode(hashlib.sha256(b"tok-123").digest()).rstrip(b"=").decode()
    _, again = verified(key.proof("POST", "https://mcp.example.test/mcp", access_token="tok-123"))
    assert again["jti"] != claims["jti"] and "nonce" not in again  # fresh on every request


@pytest.mark.anyio
async def test_no_proof_until_the_server_offers_dpop_then_a_token_request_gets_one(storage: ResourceTokens) -> None:
    binding = DpopBinding(storage)
    plain = token_request()
    assert binding.prepare(plain, None) is None and "DPoP" not in plain.headers and binding.key is None
    await binding._read_offer(as_metadata(["RS256"]))
    assert binding.prepare(token_request(), None) is None  # only ES256 is signed here
    await binding._read_offer(as_metadata(["ES256", "RS256"]))
    request = token_request()
    assert binding.prepare(request, None) == "token"
    _, claims = verified(request.headers["DPoP"])
    assert claims["htm"] == "POST" and claims["htu"] == "https://as.example.test/token"  # no query (section 4.2)
    assert "ath" not in claims and "Authorization" not in request.headers


@pytest.mark.anyio
async def test_a_dpop_token_is_sent_with_the_dpop_scheme_and_its_key_survives_a_new_kernel(
    storage: ResourceTokens, tmp_path: Path
) -> None:
    binding = DpopBinding(storage)
    await binding._read_offer(as_metadata(["ES256"]))
    signed = token_request()
    binding.prepare(signed, None)
    answer = httpx2.Response(200, json={"access_token": "at-1", "token_type": "DPoP", "expires_in": 60}, request=signed)
    handed = await binding.token_response(answer)
    assert json.loads(handed.content)["token_type"] == "Bearer"  # as the SDK's OAuthToken reads it
    assert binding.bound
    call = httpx2.Request("POST", RESOURCE, headers={"Authorization": "Bearer at-1"}, json={"jsonrpc": "2.0"})
    assert binding.prepare(call, None) == "resource"
    assert call.headers["Authorization"] == "DPoP at-1"
    _, claims = verified(call.headers["DPoP"])
    assert claims["htu"] == RESOURCE and claims["ath"]
    # the key is in the vault file (0600), as PEM, beside the tokens; a new kernel's binding signs with the same key
    vault_file = tmp_path / "mcp_notebook" / "oauth.json"
    assert stat.S_IMODE(vault_file.stat().st_mode) == 0o600
    assert "BEGIN PRIVATE KEY" in vault_file.read_text()
    later = DpopBinding(ResourceTokens(TokenVault(vault_file), RESOURCE, None))
    assert later.key is not None and later.key.jwk == binding.key.jwk and later.bound
    # what %mcp auth lists says nothing of the key
    assert "PRIVATE" not in json.dumps(TokenVault(vault_file).entries())


@pytest.mark.anyio
async def test_a_bearer_token_stays_bearer(storage: ResourceTokens) -> None:
    binding = DpopBinding(storage)
    await binding._read_offer(as_metadata(["ES256"]))
    signed = token_request()
    binding.prepare(signed, None)
    await binding.token_response(
        httpx2.Response(200, json={"access_token": "a", "token_type": "Bearer"}, request=signed)
    )
    call = httpx2.Request("POST", RESOURCE, headers={"Authorization": "Bearer a"})
    assert not binding.bound and binding.prepare(call, None) is None and call.headers["Authorization"] == "Bearer a"


@pytest.mark.anyio
async def test_nonce_challenges_from_both_servers_are_answered_once_and_bounded(storage: ResourceTokens) -> None:
    binding = DpopBinding(storage)
    await binding._read_offer(as_metadata(["ES256"]))
    request = token_request()
    binding.prepare(request, None)
    challenge = httpx2.Response(
        400, json={"error": "use_dpop_nonce"}, headers={"DPoP-Nonce": "as-nonce-1"}, request=request
    )
    assert await binding.answer(request, challenge, "token")
    assert verified(request.headers["DPoP"])[1]["nonce"] == "as-nonce-1"
    # the MCP server's challenge: 401 with WWW-Authenticate DPoP error="use_dpop_nonce"
    storage.set_extra(dpop_bound=True)
    call = httpx2.Request("POST", RESOURCE, headers={"Authorization": "Bearer at"})
    binding.prepare(call, None)
    refused = httpx2.Response(
        401, headers={"WWW-Authenticate": 'DPoP error="use_dpop_nonce"', "DPoP-Nonce": "rs-nonce"}, request=call
    )
    assert await binding.answer(call, refused, "resource")
    assert verified(call.headers["DPoP"])[1]["nonce"] == "rs-nonce" and call.headers["Authorization"] == "DPoP at"
    # another error is no nonce challenge; an over-long nonce is not kept
    other = httpx2.Response(400, json={"error": "invalid_grant"}, headers={"DPoP-Nonce": "x"}, request=request)
    assert not await binding.answer(request, other, "token")
    huge = httpx2.Response(200, headers={"DPoP-Nonce": "n" * (MAX_NONCE + 1)}, request=call)
    await binding.answer(call, huge, "resource")
    assert binding.nonces["https://mcp.example.test"] == "rs-nonce"


def test_a_damaged_key_in_the_vault_is_replaced_not_used(storage: ResourceTokens) -> None:
    storage.set_extra(dpop_key="-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    assert DpopBinding(storage).key is None
