"""OAuth sign-in for remote MCP servers: the SDK's ``OAuthClientProvider``, wired for a notebook.

The SDK does the protocol (protected-resource and authorization-server discovery, client ID
metadata documents, dynamic registration, PKCE, state and issuer checks, refresh, step-up scopes,
resource indicators). This module gives it what a notebook has:

* ``OAuthOptions``: which client signs in (dynamic registration, a client id or metadata document,
  client credentials, a private key JWT, an identity assertion), by names only;
* ``build_provider``: the SDK's providers, subclassed only to restore the expiry (``vault``), to
  register again for a new callback address, and to record failures, asking through a
  ``sign_in.SignIn``;
* ``explain``: what a failed sign-in means, as a ``FlowError`` with a ``kind``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from ..core.policy import current_policy
from ..errors import FlowError
from .device import (
    DEVICE_GRANT,
    MAX_INTERVAL,
    SLOW_DOWN,
    DeviceCode,
    DeviceGrantError,
    device_endpoint,
    foreign_address,
    parse_device_code,
    poll_answer,
)
from .dpop import DpopBinding
from .pin import IssuerPin, IssuerPinError
from .sign_in import SignIn, SignInDenied, SignInRefused, SignInTimeout, SignInUnavailable
from .vault import ResourceTokens, TokenVault

if TYPE_CHECKING:
    import httpx2
    from mcp.client.auth import OAuthClientProvider

__all__ = ["OAuthOptions", "build_provider", "explain"]


@dataclass(frozen=True)
class OAuthOptions:
    """How a connection signs in. Secrets are named by environment variable, never given as values."""

    client_id: str | None = None  # a pre-registered client (else: metadata document or dynamic registration)
    client_secret_env: str | None = None
    scope: str | None = None  # scopes to ask for up front (the server's challenge otherwise decides)
    client_credentials: bool = False  # a machine client: no person, no browser (client_secret or private key)
    private_key_env: str | None = None  # PEM of a private_key_jwt client (with client_credentials)
    # enterprise sign-in (SEP-990, cross-app access): the identity provider's ID token is exchanged there
    # for an identity assertion grant (ID-JAG), which the authorization server ``issuer`` turns into a token
    id_token_env: str | None = None
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    issuer: str | None = None  # the authorization server pre-shared credentials may go to (``pin``); any sign-in's
    # workload identity (SEP-1933): a ready-made JWT, from a variable or a file, for the jwt-bearer grant
    assertion_env: str | None = None
    assertion_file: str | None = None

    @classmethod
    def named(cls) -> tuple[str, ...]:
        """The fields that are names or addresses (every one but ``client_credentials``), in the order a
        ``%mcp connect`` line gives them: what a saved record keeps and what a printed line repeats."""
        return tuple(f.name for f in fields(cls) if f.name != "client_credentials")

    @classmethod
    def from_saved(cls, saved: dict[str, Any]) -> OAuthOptions:
        """Options back from a record's ``oauth`` entry (strings only; anything else is dropped)."""
        values = {k: saved[k] for k in cls.named() if isinstance(saved.get(k), str)}
        return cls(client_credentials=saved.get("sign_in") == "client_credentials", **values)

    def saved(self) -> dict[str, Any]:
        """What a saved record may say about sign-in: names, never secrets."""
        out: dict[str, Any] = {"sign_in": "client_credentials" if self.client_credentials else "oauth"}
        out.update({name: getattr(self, name) for name in self.named() if getattr(self, name)})
        return out


# ---------------------------------------------------------------------- the provider
def build_provider(
    resource: str,
    options: OAuthOptions,
    vault: TokenVault,
    sign_in: SignIn,
    *,
    client_name: str,
    client_metadata_url: str | None,
    on_failure: Callable[[BaseException], None],
) -> httpx2.Auth:
    """The ``httpx2.Auth`` for one HTTP connection: authorization code with PKCE, or client credentials."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata
    from pydantic import AnyUrl

    secret = _env(options.client_secret_env, "--client-secret-env")
    redirect = sign_in.redirect_uri
    if options.issuer and not _web_issuer(options.issuer):
        raise FlowError(
            f"the --issuer given, {options.issuer[:200]!r}, is not an authorization server's address: give its https issuer URL",
            kind="bad_input",
        )
    if options.id_token_env:  # the SDK's provider fetches metadata from --issuer itself and sends only there
        return _identity_assertion_provider(resource, options, vault, secret, on_failure)
    workload = bool(options.assertion_env or options.assertion_file)
    key = _env(options.private_key_env, "--private-key-env") if options.client_credentials else None
    # pre-shared credentials (a secret, a key, a workload JWT) go only where they belong (auth/pin.py)
    shared = workload or bool(key) or bool(secret and options.client_id)
    pin = (
        IssuerPin(vault, resource, options.issuer, credentials=shared, workload=workload)
        if shared or options.issuer
        else None
    )
    if workload:
        return _workload_provider(resource, options, vault, on_failure, pin)
    if options.client_credentials:
        if not options.client_id:
            raise FlowError("a client-credentials sign-in needs a client id (--client-id)", kind="bad_input")
        storage = ResourceTokens(vault, resource, None)
        pinned = pin.pinned() if pin is not None else None  # the SDK then prefers that server where several are named
        if key:
            from mcp.client.auth.extensions.client_credentials import PrivateKeyJWTOAuthProvider, SignedJWTParameters

            jwt = SignedJWTParameters(
                issuer=options.client_id,
                subject=options.client_id,
                signing_key=key,
                signing_algorithm=_jwt_algorithm(key),
            )
            sign = jwt.create_assertion_provider()

            async def assertion_for(audience: str) -> str:
                if pin is not None:  # its aud is the issuer checked just before (never another server's)
                    pin.require_audience(audience)
                return await sign(audience)

            base: type = _recording(PrivateKeyJWTOAuthProvider)
            return base(
                resource, storage, options.client_id, assertion_for, scope=options.scope, issuer=pinned,
                on_failure=on_failure, pin=pin,
            )  # fmt: skip
        if not secret:
            raise FlowError(
                "a client-credentials sign-in needs a secret (--client-secret-env VAR) or a key (--private-key-env VAR)",
                kind="bad_input",
            )
        from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

        base = _recording(ClientCredentialsOAuthProvider)
        return base(
            resource, storage, options.client_id, secret, scope=options.scope, issuer=pinned,
            on_failure=on_failure, pin=pin,
        )  # fmt: skip

    preset = None
    if options.client_id:
        preset = OAuthClientInformationFull(
            client_id=options.client_id, client_secret=secret, redirect_uris=[AnyUrl(redirect)] if redirect else None,
            token_endpoint_auth_method="client_secret_basic" if secret else "none",
        )  # fmt: skip
    storage = ResourceTokens(vault, resource, redirect, preset)
    metadata = OAuthClientMetadata(
        client_name=client_name, redirect_uris=[AnyUrl(redirect)] if redirect else None,
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none", scope=options.scope,
    )  # fmt: skip

    class NotebookOAuth(_recording(OAuthClientProvider)):  # type: ignore[misc]
        """The SDK's provider, restoring the stored expiry (so a new kernel refreshes instead of asking again)."""

        async def _initialize(self) -> None:
            await super()._initialize()
            self.context.token_expiry_time = storage.expires_at()

        def _expected_issuer(self) -> str:
            # Called as a new authorization begins (after any refresh, which keeps the old client): a
            # client registered for another callback address is dropped here, so it registers again.
            if storage.registered_elsewhere(self.context.client_info) and not self.context.client_metadata_url:
                self.context.client_info = None
            return str(super()._expected_issuer())

        async def _perform_authorization_code_grant(self) -> tuple[str, str]:
            meta = self.context.oauth_metadata
            sign_in.issuer = str(meta.issuer) if meta is not None else self.context.auth_server_url
            # the endpoint exactly as the SDK chooses it (its metadata's, else the server's /authorize)
            if meta is not None and meta.authorization_endpoint:
                endpoint = str(meta.authorization_endpoint)
            else:
                endpoint = urljoin(self.context.get_authorization_base_url(self.context.server_url), "/authorize")
            sign_in.expect_endpoint(endpoint)
            return await super()._perform_authorization_code_grant()

        # ---- the device authorization grant (RFC 8628): a code and an address in the cell, no callback
        _device: DeviceCode | None = None
        _device_deadline = 0.0

        async def _perform_authorization(self) -> httpx2.Request:
            self._check_pin()  # before the device request or the redirect: a pre-registered secret goes there
            endpoint = await self._device_endpoint() if sign_in.wants_device_grant() else None
            if endpoint is None:
                return await super()._perform_authorization()
            return await self._start_device_grant(endpoint)

        async def _device_endpoint(self) -> str | None:
            from mcp.client.auth.utils import build_oauth_authorization_server_metadata_discovery_urls

            meta = self.context.oauth_metadata
            if meta is None:
                return None  # no metadata, no device grant: the SDK's default endpoints are for the code grant
            urls = build_oauth_authorization_server_metadata_discovery_urls(
                self.context.auth_server_url, self.context.server_url
            )
            async with _oauth_http() as http:
                return await device_endpoint(http, urls, str(meta.issuer))

        async def _start_device_grant(self, endpoint: str) -> httpx2.Request:
            """Ask for a device code, show it, and return the first poll of the token endpoint."""

            if not self.context.client_info:
                raise DeviceGrantError("invalid_client", "no client is registered for the device grant")
            meta = self.context.oauth_metadata
            sign_in.issuer = str(meta.issuer) if meta is not None else self.context.auth_server_url
            form: dict[str, Any] = {"client_id": self.context.client_info.client_id}
            if self.context.client_metadata.scope:
                form["scope"] = self.context.client_metadata.scope
            if self.context.should_include_resource_param(self.context.protocol_version):
                form["resource"] = self.context.get_resource_url()  # RFC 8707
            headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
            form, headers = self.context.prepare_token_auth(form, headers)
            async with _oauth_http() as http:
                response = await http.post(endpoint, data=form, headers=headers)
            try:
                document = response.json()
            except ValueError:
                document = None
            if response.status_code != 200 and not isinstance(document, dict):
                raise DeviceGrantError(f"HTTP {response.status_code}", "the device authorization endpoint refused")
            device = parse_device_code(document)
            foreign = foreign_address(device, str(sign_in.issuer))
            if foreign is not None:  # device-code phishing: never shown; the redirect sign-in instead
                sign_in.notice = _foreign_device_notice(foreign, str(sign_in.issuer))
                return await super()._perform_authorization()
            await sign_in.show_device(device)
            self._device = device
            self._device_deadline = asyncio.get_running_loop().time() + min(device.expires_in, sign_in.timeout)
            await sign_in.device_wait(device.interval, self._device_deadline)
            return self._device_poll(device)

        def _device_poll(self, device: DeviceCode) -> httpx2.Request:
            import httpx2

            assert self.context.client_info is not None
            data: dict[str, Any] = {
                "grant_type": DEVICE_GRANT,
                "device_code": device.device_code,
                "client_id": self.context.client_info.client_id,
            }
            headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
            data, headers = self.context.prepare_token_auth(data, headers)
            return httpx2.Request("POST", self._get_token_endpoint(), data=data, headers=headers)

        async def _handle_token_response(self, response: httpx2.Response) -> None:
            device, self._device = self._device, None
            if device is None:
                await super()._handle_token_response(response)
                return

            interval = device.interval
            try:
                async with _oauth_http() as http:
                    while True:
                        await response.aread()
                        try:
                            document = response.json()
                        except ValueError:
                            document = None
                        step = poll_answer(response.status_code, document)
                        if step is None:
                            break
                        if step == "slow_down":
                            interval = min(interval + SLOW_DOWN, MAX_INTERVAL)
                        await sign_in.device_wait(interval, self._device_deadline)
                        response = await http.send(self._device_poll(device))
                await super()._handle_token_response(response)
            except DeviceGrantError as exc:
                sign_in.device_settled(exc.error)
                raise
            except (SignInDenied, SignInTimeout):
                raise  # the panel heard it (device_wait)
            except BaseException as exc:
                sign_in.device_settled(type(exc).__name__)
                raise
            sign_in.device_settled(None)

    provider: OAuthClientProvider = NotebookOAuth(
        resource, metadata, storage, redirect_handler=sign_in.redirect, callback_handler=sign_in.callback,
        client_metadata_url=client_metadata_url, on_failure=on_failure, pin=pin,
    )  # fmt: skip
    return provider


def _identity_assertion_provider(
    resource: str,
    options: OAuthOptions,
    vault: TokenVault,
    secret: str | None,
    on_failure: Callable[[BaseException], None],
) -> httpx2.Auth:
    """SEP-990: the IdP's ID token -> an ID-JAG at the IdP (RFC 8693 token exchange) -> a token at ``issuer`` (RFC 7523)."""
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    id_token = _env(options.id_token_env, "--id-token-env")
    if not (options.client_id and secret and options.issuer and options.idp_token_endpoint):
        raise FlowError(
            "an enterprise sign-in needs --client-id, --client-secret-env, --issuer (the authorization server) and --idp-token-endpoint",
            kind="bad_input",
        )
    endpoint = options.idp_token_endpoint

    async def fetch_id_jag(audience: str, resource_id: str) -> str:
        form = {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token": id_token or "", "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag", "audience": audience, "resource": resource_id,
        }  # fmt: skip
        if options.idp_client_id:
            form["client_id"] = options.idp_client_id
        async with _oauth_http() as http:
            response = await http.post(endpoint, data=form)
        if response.status_code != 200:
            raise RuntimeError(
                f"the identity provider refused the token exchange (HTTP {response.status_code}): {response.text[:300]}"
            )
        grant = response.json().get("access_token")
        if not isinstance(grant, str):
            raise RuntimeError("the identity provider's token exchange returned no identity assertion grant")
        return grant

    base: type = _recording(IdentityAssertionOAuthProvider)  # type: ignore[arg-type]
    provider: httpx2.Auth = base(
        resource, ResourceTokens(vault, resource, None), options.client_id, secret, options.issuer, fetch_id_jag,
        scope=options.scope, token_endpoint_auth_method="client_secret_basic", on_failure=on_failure,
    )  # fmt: skip
    return provider


def _workload_provider(
    resource: str,
    options: OAuthOptions,
    vault: TokenVault,
    on_failure: Callable[[BaseException], None],
    pin: IssuerPin | None,
) -> httpx2.Auth:
    """SEP-1933: the workload's own JWT, read where the user said, is the grant (RFC 7523); no person, no secret."""
    from .workload import WorkloadAssertion, workload_provider_class

    if not options.client_id:
        raise FlowError(
            "a workload sign-in needs the client id the authorization server knows this workload by (--client-id)",
            kind="bad_input",
        )
    if options.assertion_env and options.assertion_file:
        raise FlowError("give the workload token once: --assertion-env or --assertion-file", kind="bad_input")
    assertion = WorkloadAssertion(env=options.assertion_env, file=options.assertion_file)
    assertion.read()  # a missing or malformed token is said at connect, before any request
    base: type = _recording(workload_provider_class())
    provider: httpx2.Auth = base(
        resource, ResourceTokens(vault, resource, None), options.client_id, assertion,
        scope=options.scope, on_failure=on_failure, pin=pin,
    )  # fmt: skip
    return provider


def _quiet_sdk_log() -> None:
    """Drop the SDK's "OAuth flow error" traceback: the failure is recorded and explained in the cell
    (``explain``); in a kernel that log line would print a traceback into whatever cell is running."""
    logger = logging.getLogger("mcp.client.auth.oauth2")
    if not any(getattr(f, "mcp_notebook", False) for f in logger.filters):

        def explained_here(record: logging.LogRecord) -> bool:
            return record.getMessage() != "OAuth flow error"

        explained_here.mcp_notebook = True  # type: ignore[attr-defined]
        logger.addFilter(explained_here)


def _recording(base: type[OAuthClientProvider]) -> type:
    """``base`` with its auth flow's exceptions handed to ``on_failure`` first (the SDK reports them as a bare -32603)."""

    _quiet_sdk_log()

    class Recording(base):  # type: ignore[valid-type,misc]
        def __init__(
            self, *args: Any, on_failure: Callable[[BaseException], None], pin: IssuerPin | None = None, **kwargs: Any
        ) -> None:
            super().__init__(*args, **kwargs)
            self._on_failure = on_failure
            self._pin = pin
            self._dpop: DpopBinding | None = None
            self._dpop_read = False  # ``_dpop`` made (lazily: the vault is read at the first token request)

        # ---- pre-shared credentials go only to their own authorization server (auth/pin.py)
        def _check_pin(self, assertion: str | None = None) -> None:
            """Raise ``IssuerPinError`` unless the token request about to be built may carry the credentials."""
            if self._pin is not None:
                context = self.context
                origin = context.get_authorization_base_url(context.server_url)
                self._pin.check(context.oauth_metadata, self._get_token_endpoint(), origin, assertion)

        def _before_sending(self, assertion: str) -> None:
            self._check_pin(assertion)  # the workload provider's JWT, exactly as it is about to be sent

        async def _initialize(self) -> None:
            await super()._initialize()
            # A new kernel holds tokens but no metadata yet: the SDK would refresh at the MCP server's own
            # /token, with the client's secret. Unless that origin is the pinned server, discover first.
            tokens, context = self.context.current_tokens, self.context
            if self._pin is not None and context.oauth_metadata is None and tokens is not None and tokens.refresh_token:
                pinned = self._pin.pinned()
                if pinned is None or pinned.rstrip("/") != context.get_authorization_base_url(context.server_url):
                    context.current_tokens = tokens.model_copy(update={"refresh_token": None})

        async def _perform_authorization(self) -> Any:
            self._check_pin()
            return await super()._perform_authorization()

        async def _refresh_token(self) -> Any:
            self._check_pin()
            return await super()._refresh_token()

        async def _auth_flow(self, request: Any) -> Any:
            flow = super()._auth_flow(request)
            binding = self._dpop_binding()
            if binding is not None:  # proofs added, nonce challenges answered (auth/dpop.py)
                flow = binding.flow(flow, lambda: self.context.protected_resource_metadata)
            try:
                outgoing = await flow.__anext__()
                while True:
                    within_policy(str(outgoing.url))  # a refresh, discovery or token request included
                    incoming = yield outgoing
                    outgoing = await flow.asend(incoming)
            except StopAsyncIteration:
                return
            except Exception as exc:  # noqa: BLE001 - recorded, and the request fails alone (below)
                self._on_failure(exc)
            finally:
                # httpx2 closes this generator when one of the flow's own requests cannot be sent (a
                # metadata address refusing connections): the SDK's flow, suspended inside its lock,
                # must be closed here, in this task. Left to the garbage collector it is closed in
                # another task, whose lock release fails ("Task exception was never retrieved"), and
                # until then it holds the lock every later request of this connection waits for.
                await flow.aclose()
            # The sign-in failed (denied, timed out, no OAuth offered...). Raising here would end the
            # whole transport; instead the request goes once more without a token, so the server's own
            # 401 fails just this request, and the connection (and its other calls) lives on.
            request.headers.pop("Authorization", None)
            yield request

        def _dpop_binding(self) -> DpopBinding | None:
            """This resource's DPoP state, for the SDK's code-grant and refresh flows (kept in the vault with the tokens)."""
            if not self._dpop_read:
                # not every SDK provider this class wraps has a context: the enterprise-managed (token exchange) one
                # has none, and reading it failed that sign-in (the conformance suite's enterprise scenario)
                context = getattr(self, "context", None)
                storage = context.storage if context is not None else None
                self._dpop = DpopBinding(storage) if isinstance(storage, ResourceTokens) else None
                self._dpop_read = True
            return self._dpop

    return Recording


def _env(name: str | None, flag: str) -> str | None:
    """The value of the variable ``flag`` names; a name the administrator's policy denies is never read."""
    if not name:
        return None
    if refused := current_policy().env_refusal(name, f"read for {flag}"):
        raise FlowError(f"Not reading environment variable {name}: {refused}.", kind="policy_refused")
    value = os.environ.get(name)
    if not value:
        raise FlowError(f"environment variable {name} is not set (needed by {flag})", kind="bad_input")
    return value


def within_policy(url: str) -> None:
    """The one check before every OAuth request leaves the kernel: its URL must be in ``allowed_urls``.

    Discovery, registration, token, refresh and device requests the SDK's flow yields pass here
    (``Recording._auth_flow``), and so does every request of this module's own clients
    (``_oauth_http``'s request hook): refused before it is sent, naming the policy file.
    """
    if refused := current_policy().url_refusal(url):
        raise FlowError(f"Not sending a sign-in request to {url}: {refused}.", kind="policy_refused")


async def _policy_hook(request: httpx2.Request) -> None:
    within_policy(str(request.url))


def _oauth_http() -> httpx2.AsyncClient:
    """A client for this module's own OAuth requests (device grant, identity assertion), asking the policy first."""
    import httpx2

    return httpx2.AsyncClient(timeout=30, follow_redirects=False, event_hooks={"request": [_policy_hook]})


def _foreign_device_notice(address: str, issuer: str) -> str:
    """Why a device grant was refused, in words: its page is not on the authorization server's host."""
    from ..core.urls import read_url, visible

    read, home = read_url(address), read_url(issuer)
    host = read.hostname if read is not None else visible(address[:200])
    own = home.hostname if home is not None else visible(issuer[:200])
    return (
        f"The authorization server {visible(issuer[:200])} offered a sign-in code to type at a page on {host}, "
        f"which is not its own host ({own}). A code typed on another site's page can sign in someone else's "
        "device, so that code was not shown; sign in here instead."
    )


def _web_issuer(text: str) -> bool:
    """An issuer identifier a pin can name: https (http only on a loopback host), as the browser reads it."""
    from ..core.urls import read_url

    read = read_url(text)
    return (
        read is not None
        and read.linkable
        and (read.scheme == "https" or read.hostname in ("127.0.0.1", "localhost", "[::1]"))
    )


def _jwt_algorithm(pem: str) -> str:
    """ES256 for an EC key, RS256 for RSA (what a private_key_jwt assertion is signed with)."""
    return "RS256" if "RSA" in pem.split("-----", 2)[1] else "ES256"


# ---------------------------------------------------------------------- failures in plain words
def explain(exc: BaseException, server: str, resource: str, issuer: str | None) -> FlowError:
    """A failed sign-in as a ``FlowError``: what happened and (with ``kind``) what to do."""
    where = f" at {issuer}" if issuer else ""
    details = {"url": resource, "issuer": issuer}
    if isinstance(exc, SignInUnavailable):
        text = f"{server} wants you to sign in{where}, and this run is headless: nobody can click. {exc}"
        return FlowError(text, kind="sign_in_required", server=server, details=details)
    if isinstance(exc, SignInDenied):
        if exc.error == "cancelled":
            return FlowError(
                f"Sign-in to {server} was cancelled; nothing was sent.",
                kind="sign_in_denied",
                server=server,
                details=details,
            )
        why = f" ({exc.description})" if exc.description else ""
        text = f"Sign-in to {server}{where} did not complete: the authorization server answered {exc.error!r}{why}. Nothing was sent to the server."
        return FlowError(text, kind="sign_in_denied", server=server, details=details)
    if isinstance(exc, FlowError) and exc.kind == "policy_refused":
        text = f"Sign-in to {server} stopped: {exc}"
        return FlowError(text, kind="policy_refused", server=server, details=details)
    if isinstance(exc, IssuerPinError):
        text = f"Sign-in to {server} stopped before any credential was sent: {exc}."
        return FlowError(text, kind="sign_in_refused", server=server, details=details)
    if isinstance(exc, SignInRefused):
        text = f"Sign-in to {server}{where} stopped before any sign-in page was shown: {exc}. Nothing was opened or sent; tell the server's operator."
        return FlowError(text, kind="sign_in_refused", server=server, details=details)
    if isinstance(exc, DeviceGrantError):
        why = f" ({exc.description})" if exc.description else ""
        if exc.error == "access_denied":
            text = f"Sign-in to {server}{where} was denied at the authorization server{why}. Nothing was sent to the server."
            return FlowError(text, kind="sign_in_denied", server=server, details=details)
        if exc.error == "expired_token":
            text = f"The sign-in code for {server}{where} expired before it was entered{why}. Run the cell again for a new code."
            return FlowError(text, kind="sign_in_timeout", server=server, details=details)
        text = f"The device sign-in to {server}{where} failed: the authorization server answered {exc.error!r}{why}. Nothing was sent to the server."
        return FlowError(text, kind="sign_in_failed", server=server, details=details)
    if isinstance(exc, SignInTimeout):
        text = f"Sign-in to {server}{where} got no answer within {exc.timeout:g} s (the tab was closed, or the redirect did not come back here)."
        return FlowError(text, kind="sign_in_timeout", server=server, details=details)
    message = str(exc)
    lower = message.lower()
    if "state parameter mismatch" in lower:
        text = f"The sign-in answer for {server} did not belong to this sign-in (its state did not match): an older attempt's page, or a forged one. Nothing was sent; sign in again."
    elif "issuer" in lower and ("mismatch" in lower or "does not match" in lower or "expected" in lower):
        text = f"Sign-in to {server} stopped: the authorization server is not who it says it is ({message}). Nothing was sent."
    elif "does not match expected" in lower and "resource" in lower:
        text = (
            f"Sign-in to {server} stopped: the server's metadata names another resource ({message}). Nothing was sent."
        )
    elif type(exc).__name__ == "OAuthRegistrationError":
        text = f"{server}{where} did not register this notebook as a client ({message}). If it wants a pre-registered client, connect with --client-id ID [--client-secret-env VAR]."
    elif type(exc).__name__ == "OAuthTokenError":
        text = f"The authorization server{where} refused the token request for {server} ({message})."
    else:
        text = f"Sign-in to {server}{where} failed: {message or type(exc).__name__}."
    return FlowError(text, kind="sign_in_failed", server=server, details=details)
