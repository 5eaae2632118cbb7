"""DPoP (RFC 9449, SEP-1932): sender-constrained tokens for sign-ins whose authorization server offers them.

When the authorization server's metadata lists ``ES256`` in ``dpop_signing_alg_values_supported``,
the notebook makes a P-256 key for that resource, keeps it with the tokens (the vault: 0600, in the
Jupyter data folder, never in a notebook, an output or a trace), and:

* signs a proof for every token request (code, refresh), so the token is bound to the key
  (``cnf.jkt``);
* presents a DPoP-bound token with the ``DPoP`` scheme and a fresh proof (new ``jti``, the request's
  method and address, ``ath`` of the token) on every request, never as ``Bearer``;
* answers a ``use_dpop_nonce`` challenge (from the token endpoint, RFC 9449 section 8, or the MCP
  server, section 9) by signing again with the server's nonce, once, and keeps the latest nonce
  each origin sent.

The SDK has only the metadata fields: ``DpopBinding.flow`` wraps its OAuth flow's requests and
responses (a proof added on the way out, a nonce challenge answered before the SDK sees it). Its
``OAuthToken`` accepts only ``token_type: Bearer``, so a ``DPoP`` token response reaches it as
``Bearer`` and the binding remembers (in the vault) that the token is DPoP-bound.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2
    from mcp.shared.auth import ProtectedResourceMetadata

    from .vault import ResourceTokens

__all__ = ["ALGORITHM", "MAX_NONCE", "DpopBinding", "DpopKey"]

ALGORITHM = "ES256"
MAX_NONCE = 512  # a longer DPoP-Nonce is ignored (a server cannot make every proof carry a megabyte)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class DpopKey:
    """A P-256 key pair for proofs; its private half is stored only as PEM in the vault."""

    def __init__(self, private: Any) -> None:
        from jwt.algorithms import ECAlgorithm

        self.private = private
        jwk = ECAlgorithm.to_jwk(private.public_key(), as_dict=True)
        self.jwk = {k: jwk[k] for k in ("kty", "crv", "x", "y")}  # public members only

    @classmethod
    def new(cls) -> DpopKey:
        from cryptography.hazmat.primitives.asymmetric import ec

        return cls(ec.generate_private_key(ec.SECP256R1()))

    @classmethod
    def from_pem(cls, pem: str) -> DpopKey | None:
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        try:
            key = load_pem_private_key(pem.encode(), password=None)
        except (ValueError, TypeError):
            return None
        return cls(key) if isinstance(key, ec.EllipticCurvePrivateKey) else None

    def pem(self) -> str:
        from cryptography.hazmat.primitives import serialization

        return self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()

    def proof(self, method: str, url: str, access_token: str | None = None, nonce: str | None = None) -> str:
        """A DPoP proof JWT for one request (RFC 9449 section 4.2): fresh ``jti``, ``htm``, ``htu`` (no query), ``iat``."""
        import jwt

        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": url,
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = _b64(hashlib.sha256(access_token.encode("ascii")).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode(claims, self.private, algorithm=ALGORITHM, headers={"typ": "dpop+jwt", "jwk": self.jwk})


def _htu(request: httpx2.Request) -> str:
    url = request.url
    return str(url.copy_with(query=None, fragment=None))


def _is_token_request(request: httpx2.Request) -> bool:
    content_type = request.headers.get("Content-Type", "")
    return (
        request.method == "POST"
        and "application/x-www-form-urlencoded" in content_type
        and b"grant_type=" in (request.content or b"")
    )


class DpopBinding:
    """One resource's DPoP state: the key (from the vault, or made when the server first offers DPoP), the nonces."""

    def __init__(self, storage: ResourceTokens) -> None:
        self.storage = storage
        self.nonces: dict[str, str] = {}  # origin -> the latest DPoP-Nonce it sent
        pem = storage.extra("dpop_key")
        self.key = DpopKey.from_pem(pem) if isinstance(pem, str) else None
        self.proofs = 0  # how many proofs were signed (for tests and the trace of a sign-in)
        self.offered = False  # the authorization server's metadata listed ES256 in dpop_signing_alg_values_supported

    @property
    def bound(self) -> bool:
        """Whether the kept tokens are DPoP-bound (the last token response said ``token_type: DPoP``)."""
        return self.key is not None and self.storage.extra("dpop_bound") is True

    def wanted(self, resource_metadata: ProtectedResourceMetadata | None) -> bool:
        """DPoP for this sign-in: a key is already kept, or the authorization server (or resource) offers ES256 proofs."""
        if self.key is not None or self.offered:
            return True
        algorithms = (
            resource_metadata.dpop_signing_alg_values_supported if resource_metadata is not None else None
        ) or []
        return ALGORITHM in algorithms

    async def _read_offer(self, response: httpx2.Response) -> None:
        """Whether an authorization server's metadata offers ES256 proofs (the SDK's model drops the field)."""
        path = response.request.url.path
        if response.status_code != 200 or not (
            "/.well-known/oauth-authorization-server" in path or "/.well-known/openid-configuration" in path
        ):
            return
        await response.aread()
        try:
            document = response.json()
        except ValueError:
            return
        algorithms = document.get("dpop_signing_alg_values_supported") if isinstance(document, dict) else None
        if isinstance(algorithms, list) and ALGORITHM in algorithms:
            self.offered = True

    def _sign(self, request: httpx2.Request, token: str | None) -> None:
        assert self.key is not None
        origin = f"{request.url.scheme}://{request.url.netloc.decode()}"
        request.headers["DPoP"] = self.key.proof(request.method, _htu(request), token, self.nonces.get(origin))
        self.proofs += 1
        if token is not None:
            request.headers["Authorization"] = f"DPoP {token}"

    def _observe(self, response: httpx2.Response) -> None:
        nonce = response.headers.get("DPoP-Nonce")
        if nonce and len(nonce) <= MAX_NONCE:
            url = response.request.url
            self.nonces[f"{url.scheme}://{url.netloc.decode()}"] = nonce

    def prepare(self, request: httpx2.Request, metadata: ProtectedResourceMetadata | None) -> str | None:
        """Sign ``request`` if it needs a proof; what kind it was (``"token"``, ``"resource"``, or ``None``)."""
        if _is_token_request(request):
            if not self.wanted(metadata):
                return None
            if self.key is None:
                self.key = DpopKey.new()
                self.storage.set_extra(dpop_key=self.key.pem())
            self._sign(request, None)
            return "token"
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if self.bound and scheme in ("Bearer", "DPoP") and token:
            self._sign(request, token)
            return "resource"
        return None

    async def answer(self, request: httpx2.Request, response: httpx2.Response, kind: str) -> bool:
        """Whether ``response`` is a nonce challenge to ``request`` (then signed again, with the nonce)."""
        self._observe(response)
        if "DPoP-Nonce" not in response.headers:
            return False
        if kind == "token" and response.status_code == 400:
            await response.aread()
            try:
                challenged = response.json().get("error") == "use_dpop_nonce"
            except (ValueError, AttributeError):
                challenged = False
        else:
            challenged = response.status_code == 401 and "use_dpop_nonce" in response.headers.get(
                "WWW-Authenticate", ""
            )
        if not challenged:
            return False
        token = request.headers.get("Authorization", "")[len("DPoP ") :] if kind == "resource" else None
        self._sign(request, token or None)
        return True

    async def token_response(self, response: httpx2.Response) -> httpx2.Response:
        """A token response as the SDK can read it: ``token_type: DPoP`` recorded here and handed on as ``Bearer``."""
        import httpx2

        if response.status_code != 200:
            return response
        await response.aread()
        try:
            data = response.json()
        except ValueError:
            return response
        if not isinstance(data, dict) or str(data.get("token_type", "")).lower() != "dpop":
            self.storage.set_extra(dpop_bound=False)
            return response
        self.storage.set_extra(dpop_bound=True)
        headers = {k: v for k, v in response.headers.items() if k.lower() not in ("content-length", "content-encoding")}
        return httpx2.Response(200, headers=headers, json={**data, "token_type": "Bearer"}, request=response.request)

    async def flow(
        self, inner: AsyncGenerator[Any, Any], metadata: Callable[[], ProtectedResourceMetadata | None]
    ) -> AsyncGenerator[Any, Any]:
        """The SDK's auth flow ``inner`` with proofs added and nonce challenges answered (``metadata``: the resource's, a callable)."""
        try:
            outgoing = await inner.__anext__()
            while True:
                kind = self.prepare(outgoing, metadata())
                incoming = yield outgoing
                if kind is not None and await self.answer(outgoing, incoming, kind):
                    incoming = yield outgoing  # once: a second challenge goes to the SDK as it is
                    self._observe(incoming)
                if kind == "token":
                    incoming = await self.token_response(incoming)
                elif outgoing.method == "GET":
                    await self._read_offer(incoming)
                outgoing = await inner.asend(incoming)
        except StopAsyncIteration:
            return
        finally:
            await inner.aclose()
