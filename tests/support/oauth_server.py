"""A real local OAuth authorization server in front of the demo MCP server, for tests.

One process on 127.0.0.1 serves both roles, built from the SDK's server-side auth
pieces (`mcp.server.auth`):

* the authorization server (AS): RFC 8414 metadata, dynamic client registration,
  `/authorize` (PKCE S256 enforced by the SDK's handlers), `/token` (authorization
  code and refresh token grants, refresh tokens rotated), `/revoke`;
* the protected resource: the package's `demo` MCP server over streamable HTTP at
  `<issuer>/mcp`, behind the SDK's bearer-token middleware (required scopes, tokens
  bound to the resource by RFC 8707), with RFC 9728 protected-resource metadata that
  the 401's `WWW-Authenticate` header points to.

The provider below is ours (an in-memory store); the SDK does every protocol check.
`/authorize` either redirects at once (`--consent auto`) or sends the browser to our
consent page `/consent?req=<id>` (`--consent click`) with an Allow and a Deny button.

Test-only endpoints (never part of a real AS): `GET /test/stats` (counters, every request
received as "METHOD /path" except these test endpoints, and the SHA-256 hashes of issued access
tokens, never tokens), `POST /test/revoke-all` (every
access token stops working, refresh tokens stay) and `POST /test/expire-refresh`
(every refresh token is marked expired; access tokens are left alone).

Run it: `python -m tests.support.oauth_server --port P [--token-ttl S] [--consent click|auto]
[--scopes "mcp:read mcp:write"] [--base-path /] [--authorize-query Q]` from the repository root; it prints
one line `READY <issuer>` when listening (`--port 0` lets the OS pick the port).
From tests: `with running_oauth_server(...) as srv: srv.url, srv.stats(), ...`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import html
import json
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict
from urllib.parse import parse_qs

import httpx2
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    ProviderTokenVerifier,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from tests.support.ready_process import running_ready_process

REPO_ROOT = Path(__file__).resolve().parents[2]

Consent = Literal["click", "auto"]

DEFAULT_SCOPES = ("mcp:read", "mcp:write")
CODE_TTL = 300.0  # seconds an authorization code (and a pending consent request) stays valid
CONSENT_TITLE = "Test AS consent"
DEVICE_INTERVAL = 1  # seconds between device-grant polls the server asks for (a faster poll gets slow_down)
DEVICE_TITLE = "Test AS device sign-in"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def token_hash(token: str) -> str:
    """What `/test/stats` lists for an access token: the SHA-256 hex digest of the token string."""
    return hashlib.sha256(token.encode()).hexdigest()


class OAuthStats(TypedDict):
    """The JSON of `GET /test/stats`."""

    registrations: int
    authorization_code_grants: int
    refresh_token_grants: int
    access_token_hashes: list[str]
    device_grants: int
    device_polls: list[float]
    jwt_bearer_grants: int
    jwt_bearer_refusals: list[str]
    requests: list[str]


# --------------------------------------------------------------------------- provider


@dataclass
class _Pending:
    client: OAuthClientInformationFull
    params: AuthorizationParams
    expires_at: float


@dataclass
class _Device:
    """One device authorization: its user code, what was asked, and the user's decision (None: not yet)."""

    client_id: str
    user_code: str
    scopes: list[str]
    resource: str | None
    expires_at: float
    decision: str | None = None
    last_poll: float = 0.0


@dataclass
class _Issued:
    """One access token with the float expiry we check (the SDK's `AccessToken.expires_at` is whole seconds)."""

    token: AccessToken
    expires_at: float


@dataclass
class InMemoryAuthProvider:
    """An in-memory `OAuthAuthorizationServerProvider` (structural: the SDK's type is a Protocol).

    Everything the SDK validates itself (client authentication, redirect URI and scope
    against the registration, PKCE, code expiry, refresh-token expiry and scope) is left
    to it; this class stores things, binds tokens to the resource, and counts.
    """

    issuer: str
    resource: str
    scopes: list[str]
    token_ttl: float
    consent: Consent
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    pending: dict[str, _Pending] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access_tokens: dict[str, _Issued] = field(default_factory=dict)
    refresh_tokens: dict[str, RefreshToken] = field(default_factory=dict)
    # grant bookkeeping: which access token a refresh token was issued with (for /revoke)
    access_of_refresh: dict[str, str] = field(default_factory=dict)
    registrations: int = 0
    code_grants: int = 0
    refresh_grants: int = 0
    issued_hashes: list[str] = field(default_factory=list)
    # the device authorization grant (RFC 8628): device code -> its authorization, and when each poll came
    devices: dict[str, _Device] = field(default_factory=dict)
    device_grants: int = 0
    device_polls: list[float] = field(default_factory=list)
    # the jwt-bearer grant (RFC 7523, workload identity): assertions verified with this PEM public key
    workload_key: str = ""
    jwt_bearer_grants: int = 0
    jwt_bearer_refusals: list[str] = field(default_factory=list)
    # every request received, as "METHOD /path" (the test endpoints aside): what a hostile server would have seen
    requests: list[str] = field(default_factory=list)
    # the device grant's verification address, when not this server's own /device (a hostile AS)
    device_verification: str = ""

    # ---- registration

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None  # the SDK's registration handler always sets it
        self.clients[client_info.client_id] = client_info
        self.registrations += 1

    # ---- authorization

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource is not None and params.resource.rstrip("/") != self.resource.rstrip("/"):
            raise AuthorizeError("invalid_target", f"this server only issues tokens for {self.resource}")
        if self.consent == "auto":
            return self.approve(client, params)
        self._drop_stale()
        req = secrets.token_urlsafe(24)
        self.pending[req] = _Pending(client, params, time.time() + CODE_TTL)
        return f"{self.issuer}/consent?req={req}"

    def _drop_stale(self) -> None:
        now = time.time()
        for req in [r for r, p in self.pending.items() if p.expires_at < now]:
            del self.pending[req]

    def take_pending(self, req: str) -> _Pending | None:
        """The pending consent request `req` (one use only), or None if unknown or expired."""
        self._drop_stale()
        return self.pending.pop(req, None)

    def peek_pending(self, req: str) -> _Pending | None:
        self._drop_stale()
        return self.pending.get(req)

    def approve(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        """Issue a code and return the client's redirect URI carrying `code`, `state` and `iss` (RFC 9207)."""
        assert client.client_id is not None
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes if params.scopes is not None else list(self.scopes),
            expires_at=time.time() + CODE_TTL,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource or self.resource,
            subject="test-user",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=self.issuer)

    def deny(self, params: AuthorizationParams) -> str:
        return construct_redirect_uri(
            str(params.redirect_uri),
            error="access_denied",
            error_description="The user denied the request at the consent page.",
            state=params.state,
            iss=self.issuer,
        )

    # ---- tokens

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        # One use only: the SDK has checked PKCE, expiry and the redirect URI by now.
        del self.codes[authorization_code.code]
        self.code_grants += 1
        return self._issue(
            authorization_code.client_id,
            authorization_code.scopes,
            authorization_code.resource,
            authorization_code.subject,
        )

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh_tokens.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        # Rotation: the old refresh token is spent; the access token issued with it stays valid until it expires.
        self.refresh_tokens.pop(refresh_token.token, None)
        self.access_of_refresh.pop(refresh_token.token, None)
        self.refresh_grants += 1
        return self._issue(refresh_token.client_id, scopes, refresh_token.resource, refresh_token.subject)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None, subject: str | None) -> OAuthToken:
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        expires_at = time.time() + self.token_ttl
        self.access_tokens[access] = _Issued(
            AccessToken(
                token=access,
                client_id=client_id,
                scopes=scopes,
                expires_at=int(expires_at),
                resource=resource,
                subject=subject,
            ),
            expires_at,
        )
        self.refresh_tokens[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=subject
        )
        self.access_of_refresh[refresh] = access
        self.issued_hashes.append(token_hash(access))
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=max(1, round(self.token_ttl)),
            scope=" ".join(scopes) or None,
            refresh_token=refresh,
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        issued = self.access_tokens.get(token)
        if issued is None:
            return None
        if issued.expires_at <= time.time():
            del self.access_tokens[token]
            return None
        return issued.token

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        # RFC 7009 via the SDK's /revoke: drop the token and its partner from the same grant.
        if isinstance(token, RefreshToken):
            self.refresh_tokens.pop(token.token, None)
            access = self.access_of_refresh.pop(token.token, None)
            if access is not None:
                self.access_tokens.pop(access, None)
            return
        self.access_tokens.pop(token.token, None)
        for refresh, access in list(self.access_of_refresh.items()):
            if access == token.token:
                self.refresh_tokens.pop(refresh, None)
                del self.access_of_refresh[refresh]

    # ---- test-only controls

    def revoke_all_access(self) -> int:
        count = len(self.access_tokens)
        self.access_tokens.clear()
        return count

    def expire_all_refresh(self) -> int:
        # The SDK's token handler then answers `invalid_grant` ("refresh token has expired").
        past = int(time.time()) - 1
        for refresh in self.refresh_tokens.values():
            refresh.expires_at = past
        return len(self.refresh_tokens)

    def stats(self) -> OAuthStats:
        return OAuthStats(
            registrations=self.registrations,
            authorization_code_grants=self.code_grants,
            refresh_token_grants=self.refresh_grants,
            access_token_hashes=list(self.issued_hashes),
            device_grants=self.device_grants,
            device_polls=list(self.device_polls),
            jwt_bearer_grants=self.jwt_bearer_grants,
            jwt_bearer_refusals=list(self.jwt_bearer_refusals),
            requests=list(self.requests),
        )

    # ---- the jwt-bearer grant (RFC 7523 section 2.1), as a workload identity federation AS answers it

    def jwt_bearer(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """Verify the assertion (signature, audience: this issuer, expiry) and issue a token; else ``invalid_grant``."""
        import jwt

        try:
            claims = jwt.decode(
                form.get("assertion", ""), self.workload_key, algorithms=["ES256", "RS256"],
                audience=[self.issuer, self.issuer + "/", self.issuer + "/token"],  # RFC 7523 §3: either names it
            )  # fmt: skip
        except jwt.PyJWTError as exc:
            self.jwt_bearer_refusals.append(type(exc).__name__)
            return 400, {"error": "invalid_grant", "error_description": f"the assertion was refused: {exc}"}
        asked = form.get("scope", "").split()
        if any(scope not in self.scopes for scope in asked):
            self.jwt_bearer_refusals.append("invalid_scope")
            return 400, {"error": "invalid_scope", "error_description": "a scope this workload may not have"}
        self.jwt_bearer_grants += 1
        token = self._issue(
            form.get("client_id", ""), asked or list(self.scopes), form.get("resource"), claims.get("sub")
        )
        return 200, token.model_dump(exclude_none=True)

    # ---- the device authorization grant (RFC 8628)

    def start_device(self, client_id: str, scope: str | None, resource: str | None) -> dict[str, Any]:
        if client_id not in self.clients:
            raise AuthorizeError("unauthorized_client", "unknown client")  # type: ignore[arg-type]
        if resource is not None and resource.rstrip("/") != self.resource.rstrip("/"):
            raise AuthorizeError("invalid_target", f"this server only issues tokens for {self.resource}")
        device_code = secrets.token_urlsafe(32)
        user_code = "-".join(secrets.token_hex(2).upper() for _ in range(2))
        scopes = scope.split() if scope else list(self.scopes)
        self.devices[device_code] = _Device(client_id, user_code, scopes, resource, time.time() + CODE_TTL)
        page = self.device_verification or f"{self.issuer}/device"
        return {
            "device_code": device_code, "user_code": user_code,
            "verification_uri": page,
            "verification_uri_complete": f"{page}?user_code={user_code}",
            "expires_in": int(CODE_TTL), "interval": DEVICE_INTERVAL,
        }  # fmt: skip

    def device_by_user_code(self, user_code: str) -> _Device | None:
        return next((d for d in self.devices.values() if d.user_code == user_code and d.expires_at > time.time()), None)

    def poll_device(self, client_id: str, device_code: str) -> tuple[int, dict[str, Any]]:
        """One token request of the device grant: (status, JSON body)."""
        now = time.time()
        self.device_polls.append(now)
        device = self.devices.get(device_code)
        if device is None or device.client_id != client_id:
            return 400, {"error": "invalid_grant", "error_description": "unknown device code"}
        if device.expires_at < now:
            return 400, {"error": "expired_token"}
        too_soon = now - device.last_poll < DEVICE_INTERVAL - 0.2
        device.last_poll = now
        if too_soon:
            return 400, {"error": "slow_down"}
        if device.decision is None:
            return 400, {"error": "authorization_pending"}
        del self.devices[device_code]  # one use only
        if device.decision != "allow":
            return 400, {"error": "access_denied", "error_description": "The user denied the request."}
        self.device_grants += 1
        token = self._issue(client_id, device.scopes, device.resource or self.resource, "test-user")
        return 200, token.model_dump(exclude_none=True)


# --------------------------------------------------------------------------- consent page and test routes

_NO_STORE = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
}


def _consent_page(req: str, pending: _Pending, action: str) -> str:
    client = pending.client
    name = client.client_name or client.client_id or "(unnamed client)"
    scopes = pending.params.scopes
    scope_items = "".join(f"<li>{html.escape(s)}</li>" for s in scopes) if scopes else "<li>(the default scopes)</li>"
    e = html.escape
    return f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{e(CONSENT_TITLE)}</title></head>
<body>
<h1>{e(CONSENT_TITLE)}</h1>
<p><strong id="client-name">{e(name)}</strong> wants to access the MCP server at <code>{e(pending.params.resource or "")}</code>.</p>
<p>Requested scopes:</p>
<ul id="scopes">{scope_items}</ul>
<p>You will be sent back to <code id="redirect-uri">{e(str(pending.params.redirect_uri))}</code>.</p>
<form method="post" action="{e(action)}">
<input type="hidden" name="req" value="{e(req)}">
<button type="submit" id="allow" name="decision" value="allow">Allow</button>
<button type="submit" id="deny" name="decision" value="deny">Deny</button>
</form>
</body>
</html>
"""


def _error_page(status: int, message: str) -> HTMLResponse:
    body = f"<!doctype html><html><head><title>{html.escape(CONSENT_TITLE)}</title></head><body><p>{html.escape(message)}</p></body></html>"
    return HTMLResponse(body, status_code=status, headers=_NO_STORE)


def _routes(provider: InMemoryAuthProvider) -> list[Route]:
    consent_action = f"{provider.issuer}/consent"

    async def consent_get(request: Request) -> Response:
        req = request.query_params.get("req", "")
        pending = provider.peek_pending(req)
        if pending is None:
            return _error_page(400, "This consent request is unknown or has expired.")
        return HTMLResponse(_consent_page(req, pending, consent_action), headers=_NO_STORE)

    async def consent_post(request: Request) -> Response:
        form = await request.form()
        req, decision = form.get("req"), form.get("decision")
        if not isinstance(req, str) or decision not in ("allow", "deny"):
            return _error_page(400, "Malformed consent answer.")
        pending = provider.take_pending(req)
        if pending is None:
            return _error_page(400, "This consent request is unknown, expired or already answered.")
        target = (
            provider.approve(pending.client, pending.params) if decision == "allow" else provider.deny(pending.params)
        )
        return RedirectResponse(target, status_code=302, headers={"Cache-Control": "no-store"})

    async def stats(request: Request) -> Response:
        return JSONResponse(provider.stats(), headers={"Cache-Control": "no-store"})

    async def revoke_all(request: Request) -> Response:
        return JSONResponse({"revoked_access_tokens": provider.revoke_all_access()})

    async def expire_refresh(request: Request) -> Response:
        return JSONResponse({"expired_refresh_tokens": provider.expire_all_refresh()})

    async def device_authorization(request: Request) -> Response:
        form = await request.form()
        client_id, scope, resource = form.get("client_id"), form.get("scope"), form.get("resource")
        try:
            data = provider.start_device(
                client_id if isinstance(client_id, str) else "",
                scope if isinstance(scope, str) else None,
                resource if isinstance(resource, str) else None,
            )
        except AuthorizeError as exc:
            return JSONResponse({"error": exc.error, "error_description": exc.error_description}, status_code=400)
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    async def device_get(request: Request) -> Response:
        user_code = request.query_params.get("user_code", "")
        e = html.escape
        body = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{e(DEVICE_TITLE)}</title></head>
<body><h1>{e(DEVICE_TITLE)}</h1><form method="post" action="{e(provider.issuer)}/device">
<label>Code <input id="user-code" name="user_code" value="{e(user_code)}"></label>
<button type="submit" id="allow" name="decision" value="allow">Allow</button>
<button type="submit" id="deny" name="decision" value="deny">Deny</button></form></body></html>"""
        return HTMLResponse(body, headers=_NO_STORE)

    async def device_post(request: Request) -> Response:
        form = await request.form()
        user_code, decision = form.get("user_code"), form.get("decision")
        device = provider.device_by_user_code(user_code.strip().upper()) if isinstance(user_code, str) else None
        if device is None or decision not in ("allow", "deny"):
            return _error_page(400, "This code is unknown or has expired.")
        device.decision = str(decision)
        return HTMLResponse("<!doctype html><p id='done'>Done. You can go back to your device.</p>", headers=_NO_STORE)

    return [
        Route("/device_authorization", device_authorization, methods=["POST"]),
        Route("/device", device_get, methods=["GET"]),
        Route("/device", device_post, methods=["POST"]),
        Route("/consent", consent_get, methods=["GET"]),
        Route("/consent", consent_post, methods=["POST"]),
        Route("/test/stats", stats, methods=["GET"]),
        Route("/test/revoke-all", revoke_all, methods=["POST"]),
        Route("/test/expire-refresh", expire_refresh, methods=["POST"]),
    ]


# --------------------------------------------------------------------------- the app


def normalize_base_path(base_path: str) -> str:
    """The prefix every non-well-known path gets: `/` gives "", `as/` gives `/as`."""
    stripped = base_path.strip().strip("/")
    return f"/{stripped}" if stripped else ""


def _rebase(routes: list[BaseRoute], base: str) -> list[BaseRoute]:
    """Serve the app under `base` while keeping the well-known documents where RFC 8414 / 9728 clients look.

    The SDK registers its AS routes at fixed root paths; an issuer with a path needs the
    endpoints under that path and the metadata at `/.well-known/oauth-authorization-server<base>`.
    The protected-resource route is already right: the SDK derives it from the resource URL.
    """
    if not base:
        return routes
    rebased: list[BaseRoute] = []
    for route in routes:
        if not isinstance(route, Route):  # pragma: no cover - the SDK builds plain routes only
            raise TypeError(f"cannot move route {route!r} under {base}")
        if route.path == "/.well-known/oauth-authorization-server":
            path = route.path + base
        elif route.path.startswith("/.well-known/oauth-protected-resource"):
            path = route.path
        else:
            path = base + route.path
        rebased.append(
            Route(path, route.endpoint, methods=sorted(route.methods) if route.methods else None, name=route.name)
        )
    return rebased


class _MetadataEdit:
    """ASGI wrapper of the SDK's AS metadata app: its JSON goes through ``edit`` before it is sent."""

    def __init__(self, app: Any, edit: Callable[[dict[str, Any]], None]) -> None:
        self.app, self.edit = app, edit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        start: dict[str, Any] = {}
        body = bytearray()

        async def rewrite(message: Any) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200 and scope.get("method") == "GET":
                start.update(message)
                return
            if not start or message["type"] != "http.response.body":
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            data = json.loads(bytes(body))
            self.edit(data)
            new = json.dumps(data).encode()
            headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"] + [
                (b"content-length", str(len(new)).encode())
            ]
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": new})

        await self.app(scope, receive, rewrite)


class _Recorded:
    """ASGI wrapper of the whole app: every HTTP request is noted as "METHOD /path" before it is answered."""

    def __init__(self, app: Any, provider: InMemoryAuthProvider) -> None:
        self.app, self.provider = app, provider

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not scope["path"].startswith("/test/"):
            self.provider.requests.append(f"{scope['method']} {scope['path']}")
        await self.app(scope, receive, send)


class _ExtraGrants:
    """ASGI wrapper of the SDK's token app: the device grant's and the jwt-bearer grant's token requests are
    answered here (the SDK's authorization server has neither)."""

    def __init__(self, app: Any, provider: InMemoryAuthProvider) -> None:
        self.app, self.provider = app, provider

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = bool(message.get("more_body"))
        body = b"".join(chunks)
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        if form.get("grant_type") == DEVICE_GRANT:
            status, data = self.provider.poll_device(form.get("client_id", ""), form.get("device_code", ""))
            await JSONResponse(data, status_code=status, headers={"Cache-Control": "no-store"})(scope, receive, send)
            return
        if form.get("grant_type") == JWT_BEARER and self.provider.workload_key:
            status, data = self.provider.jwt_bearer(form)
            await JSONResponse(data, status_code=status, headers={"Cache-Control": "no-store"})(scope, receive, send)
            return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def _edited(
    routes: list[BaseRoute], provider: InMemoryAuthProvider, authorize_query: str, device_endpoint: str
) -> list[BaseRoute]:
    """The AS metadata route edited (an `authorization_endpoint` ending in `?query`: a hostile AS, issue 20,
    finding 6; a `device_authorization_endpoint`), and the token route taking the device grant."""

    def edit(data: dict[str, Any]) -> None:
        if authorize_query:
            data["authorization_endpoint"] = f"{data['authorization_endpoint']}?{authorize_query}"
        if device_endpoint:
            data["device_authorization_endpoint"] = (
                f"{provider.issuer}/device_authorization" if device_endpoint == "default" else device_endpoint
            )
            data["grant_types_supported"] = [*data.get("grant_types_supported", []), DEVICE_GRANT]
        if provider.workload_key:
            data["grant_types_supported"] = [*data.get("grant_types_supported", []), JWT_BEARER]

    out: list[BaseRoute] = []
    for route in routes:
        if isinstance(route, Route):
            methods = sorted(route.methods) if route.methods else None
            if route.path.startswith("/.well-known/oauth-authorization-server") and (
                authorize_query or device_endpoint or provider.workload_key
            ):
                route = Route(route.path, _MetadataEdit(route.endpoint, edit), methods=methods, name=route.name)
            elif route.path.endswith("/token") and (device_endpoint or provider.workload_key):
                route = Route(route.path, _ExtraGrants(route.endpoint, provider), methods=methods, name=route.name)
        out.append(route)
    return out


def build_app(
    port: int,
    *,
    token_ttl: float = 3600,
    consent: Consent = "click",
    scopes: Sequence[str] = DEFAULT_SCOPES,
    base_path: str = "/",
    authorize_query: str = "",
    device_endpoint: str = "",
    workload_key: str = "",
    device_verification: str = "",
    host: str = "127.0.0.1",
) -> tuple[Starlette, InMemoryAuthProvider]:
    """The ASGI app for a server listening on 127.0.0.1:`port`, and its provider (for in-process inspection).

    `authorize_query` is appended to the advertised `authorization_endpoint` (`?query`), as a hostile
    or careless authorization server might publish it. `device_endpoint` offers the device grant:
    "default" advertises this server's `/device_authorization`, any other text is advertised as is.
    `workload_key` (a PEM public key) offers the jwt-bearer grant to workloads whose tokens it verifies.
    `device_verification` is the device grant's verification address (else this server's `/device`;
    `{port}` in it is this server's port);
    `host` is the name in the issuer (`localhost` gives the issuer a name that can have subdomains).
    """
    from mcp_notebook.demo import make_demo

    base = normalize_base_path(base_path)
    issuer = f"http://{host}:{port}{base}"
    resource = f"{issuer}/mcp"
    scope_list = list(scopes)
    provider = InMemoryAuthProvider(
        issuer=issuer,
        resource=resource,
        scopes=scope_list,
        token_ttl=token_ttl,
        consent=consent,
        workload_key=workload_key,
        device_verification=device_verification.replace("{port}", str(port)),
    )
    # Strings, not `AnyHttpUrl(...)`: only validation inside `AuthSettings` keeps a path-less
    # issuer without a trailing slash ("http://h:p"); a bare `AnyHttpUrl` becomes "http://h:p/",
    # which the metadata then advertises and the client's RFC 9207 `iss` check compares exactly.
    auth = AuthSettings.model_validate(
        {
            "issuer_url": issuer,
            "resource_server_url": resource,
            "required_scopes": scope_list or None,
            "validate_token_resource": True,  # refuse tokens bound (RFC 8707) to another resource
            "client_registration_options": ClientRegistrationOptions(
                enabled=True, valid_scopes=scope_list or None, default_scopes=scope_list or None
            ),
            "revocation_options": RevocationOptions(enabled=True),
        }
    )
    server = make_demo()
    # `MCPServer` takes auth only in its constructor and `make_demo()` builds it without;
    # its `streamable_http_app()` just forwards the constructor's auth to the low-level
    # server's `streamable_http_app(auth=, token_verifier=, auth_server_provider=)`, so call
    # that with ours (the same code path, without a hook in demo.py).
    lowlevel = server._lowlevel_server
    app = lowlevel.streamable_http_app(
        host="127.0.0.1",
        auth=auth,
        token_verifier=ProviderTokenVerifier(provider),  # type: ignore[arg-type]  # structural provider
        auth_server_provider=provider,  # type: ignore[arg-type]
        custom_starlette_routes=_routes(provider),
    )
    app.router.routes[:] = _edited(_rebase(list(app.router.routes), base), provider, authorize_query, device_endpoint)
    return app, provider


async def _serve(sock: socket.socket, app: Any, issuer: str) -> None:
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            await task  # re-raise the startup failure
            raise RuntimeError("the server stopped before it started")
        await asyncio.sleep(0.02)
    print(f"READY {issuer}", flush=True)
    await task


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.oauth_server",
        description="A local OAuth AS in front of the demo MCP server (tests only).",
    )
    parser.add_argument(
        "--port", type=int, required=True, help="port on 127.0.0.1 (0: the OS picks one; READY shows it)"
    )
    parser.add_argument(
        "--token-ttl", type=float, default=3600.0, help="access-token lifetime in seconds (default 3600)"
    )
    parser.add_argument(
        "--consent", choices=("click", "auto"), default="click", help="click: a consent page; auto: approve at once"
    )
    parser.add_argument(
        "--scopes",
        default=" ".join(DEFAULT_SCOPES),
        help='space-separated scopes, all required by the MCP endpoint (default "mcp:read mcp:write")',
    )
    parser.add_argument("--base-path", default="/", help="path prefix of the issuer and every endpoint (default /)")
    parser.add_argument(
        "--authorize-query",
        default="",
        help="a query the advertised authorization_endpoint carries (a hostile AS), e.g. state=forged",
    )
    parser.add_argument(
        "--device-endpoint",
        default="",
        help='offer the device grant (RFC 8628): "default" (this server\'s /device_authorization) or an address to advertise',
    )
    parser.add_argument(
        "--device-verification", default="", help="the device grant's verification address (a hostile AS: elsewhere)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="the host name in the issuer (it listens on 127.0.0.1)")
    parser.add_argument(
        "--workload-key",
        default="",
        help="a PEM public key file: offer the jwt-bearer grant (RFC 7523) to workload tokens it verifies",
    )
    args = parser.parse_args(argv)
    if args.token_ttl <= 0:
        parser.error("--token-ttl must be positive")

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    port = int(sock.getsockname()[1])
    app, provider = build_app(
        port,
        token_ttl=args.token_ttl,
        consent=args.consent,
        scopes=args.scopes.split(),
        base_path=args.base_path,
        authorize_query=args.authorize_query,
        device_endpoint=args.device_endpoint,
        workload_key=Path(args.workload_key).read_text() if args.workload_key else "",
        device_verification=args.device_verification,
        host=args.host,
    )
    asyncio.run(_serve(sock, _Recorded(app, provider), provider.issuer))
    return 0


# --------------------------------------------------------------------------- from tests


@dataclass
class OAuthServer:
    """A running test server (see `running_oauth_server`)."""

    issuer: str
    """The AS issuer, e.g. `http://127.0.0.1:PORT` (plus the base path, no trailing slash)."""
    url: str
    """The protected MCP endpoint, `<issuer>/mcp`."""
    process: subprocess.Popen[bytes]

    def _test_url(self, name: str) -> str:
        return f"{self.issuer}/test/{name}"

    def stats(self) -> OAuthStats:
        """`GET /test/stats`: counts of registrations and grants, and the hashes (`token_hash`) of every access token issued, oldest first."""
        response = httpx2.get(self._test_url("stats"), timeout=10)
        response.raise_for_status()
        data: OAuthStats = response.json()
        return data

    def revoke_all(self) -> int:
        """Every access token stops working now (refresh tokens stay); returns how many were live."""
        response = httpx2.post(self._test_url("revoke-all"), timeout=10)
        response.raise_for_status()
        return int(response.json()["revoked_access_tokens"])

    def expire_refresh(self) -> int:
        """Every refresh token issued so far is expired now (access tokens stay); returns how many."""
        response = httpx2.post(self._test_url("expire-refresh"), timeout=10)
        response.raise_for_status()
        return int(response.json()["expired_refresh_tokens"])


@contextmanager
def running_oauth_server(
    token_ttl: float = 3600,
    consent: Consent = "click",
    scopes: Sequence[str] | str = DEFAULT_SCOPES,
    base_path: str = "/",
    startup_timeout: float = 30.0,
    authorize_query: str = "",
    device_endpoint: str = "",
    workload_key_file: str = "",
    device_verification: str = "",
    host: str = "127.0.0.1",
) -> Iterator[OAuthServer]:
    """Start `python -m tests.support.oauth_server` on a free port (the child binds port 0) and stop it on exit."""
    scope_text = scopes if isinstance(scopes, str) else " ".join(scopes)
    args = [
        sys.executable, "-m", "tests.support.oauth_server", "--port", "0",
        "--token-ttl", str(token_ttl), "--consent", consent, "--scopes", scope_text, "--base-path", base_path,
        "--authorize-query", authorize_query, "--device-endpoint", device_endpoint, "--workload-key", workload_key_file,
        "--device-verification", device_verification, "--host", host,
    ]  # fmt: skip
    with running_ready_process(args, "test OAuth server", startup_timeout, cwd=REPO_ROOT) as (issuer, proc):
        yield OAuthServer(issuer=issuer, url=f"{issuer}/mcp", process=proc)


if __name__ == "__main__":
    sys.exit(main())
