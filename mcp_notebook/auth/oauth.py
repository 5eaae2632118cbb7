"""OAuth sign-in for remote MCP servers: the SDK's ``OAuthClientProvider``, wired for a notebook.

The SDK does the protocol (protected-resource and authorization-server discovery, client ID
metadata documents, dynamic registration, PKCE, state and issuer checks, refresh, step-up scopes,
resource indicators). This module gives it what a notebook has:

* ``TokenVault``: tokens and client registrations per resource (the server's URL), with the
  authorization server's issuer, in the user's Jupyter data folder (``mcp_notebook/oauth.json``,
  mode 0600, like Jupyter's notary secret). Never in a notebook, an output or a trace.
  ``ResourceTokens`` is one resource's view, the SDK's ``TokenStorage``; it also keeps the expiry,
  which the SDK does not persist (``NotebookOAuth`` restores it, so a new kernel refreshes
  silently instead of asking again).
* ``SignIn``: one connection's sign-in. The SDK calls ``redirect`` with the authorization URL
  and then awaits ``callback``; ``redirect`` hands a ``SignInRequest`` to whoever can show it
  (the cell's panel, a browser opened from plain Python) and the answer comes back through
  ``deliver`` from any thread: the Jupyter Server extension's callback page (relayed by the
  labextension), a pasted redirect URL, or ``LoopbackCatcher``. ``callback`` waits at most
  ``timeout`` seconds (the SDK has no timeout of its own). The ``state`` every way back is keyed
  by is the SDK's, read from the parameters it appended (``expect_endpoint``), never the server's.
* ``explain``: what a failed sign-in means, as a ``FlowError`` with a ``kind``.
"""

from __future__ import annotations

import contextlib
import html
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote_plus, urljoin, urlsplit

from ..errors import FlowError
from ..core.private_table import PrivateTable, data_file

if TYPE_CHECKING:
    import asyncio

    import httpx2
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

__all__ = [
    "CALLBACK_PATH",
    "LoopbackCatcher",
    "OAuthOptions",
    "ResourceTokens",
    "SignIn",
    "SignInRefused",
    "SignInRequest",
    "SignInUnavailable",
    "TokenVault",
    "build_provider",
    "explain",
    "parse_redirect",
]

CALLBACK_PATH = "mcp-notebook/oauth/callback"  # under the Jupyter server's base URL (server_extension.py), or the catcher's
_ANSWER_KEYS = ("state", "code", "iss", "error", "error_description")


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
    issuer: str | None = None

    @classmethod
    def from_saved(cls, saved: dict[str, Any]) -> OAuthOptions:
        """Options back from a record's ``oauth`` entry (strings only; anything else is dropped)."""
        names = ("client_id", "client_secret_env", "scope", "private_key_env", "id_token_env", "idp_token_endpoint", "idp_client_id", "issuer")
        values = {k: saved[k] for k in names if isinstance(saved.get(k), str)}
        return cls(client_credentials=saved.get("sign_in") == "client_credentials", **values)

    def saved(self) -> dict[str, Any]:
        """What a saved record may say about sign-in: names, never secrets."""
        out: dict[str, Any] = {"sign_in": "client_credentials" if self.client_credentials else "oauth"}
        if self.client_id:
            out["client_id"] = self.client_id
        for name in ("client_secret_env", "private_key_env", "scope", "id_token_env", "idp_token_endpoint", "idp_client_id", "issuer"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        return out


# ---------------------------------------------------------------------- storage
class TokenVault(PrivateTable):
    """Per-resource OAuth tokens and client registrations in one 0600 JSON file (thread-safe)."""

    def __init__(self, path: Path | None = None) -> None:
        super().__init__(path or data_file("oauth.json"))

    def entries(self) -> list[dict[str, Any]]:
        """Every signed-in resource, described without a secret (for ``%mcp auth list``).

        Only sign-ins that happened: a resource whose entry holds just a client registration (a
        sign-in denied, cancelled or never finished registers the client first) is not listed.
        """
        rows = []
        for resource, entry in self.items():
            tokens = entry.get("tokens")
            if not isinstance(tokens, dict) or not tokens.get("access_token"):
                continue
            rows.append({
                "resource": resource,
                "issuer": entry.get("issuer") or (entry.get("client") or {}).get("issuer") or "",
                "scope": tokens.get("scope") or "",
                "expires_at": entry.get("expires_at"),
                "refreshable": bool(tokens.get("refresh_token")),
                "signed_in": bool(tokens.get("access_token")),
            })  # fmt: skip
        return rows


class ResourceTokens:
    """The SDK's ``TokenStorage`` for one resource, backed by the vault (plus a pre-registered client kept in memory)."""

    def __init__(self, vault: TokenVault, resource: str, redirect_uri: str | None, preset_client: OAuthClientInformationFull | None = None) -> None:
        self.vault, self.resource, self.redirect_uri = vault, resource, redirect_uri
        self.preset_client = preset_client  # from --client-id/--client-secret-env: never written to disk

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        raw = self.vault.get(self.resource).get("tokens")
        try:
            return OAuthToken.model_validate(raw) if raw else None
        except ValueError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + tokens.expires_in if tokens.expires_in else None
        self.vault.update(self.resource, tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires_at)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        if self.preset_client is not None:
            return self.preset_client
        raw = self.vault.get(self.resource).get("client")
        try:
            return OAuthClientInformationFull.model_validate(raw) if raw else None
        except ValueError:
            return None

    def registered_elsewhere(self, client: OAuthClientInformationFull | None) -> bool:
        """A stored registration made for another callback address (another front end, another loopback port)."""
        if client is None or self.preset_client is not None or not self.redirect_uri or not client.redirect_uris:
            return False
        return self.redirect_uri not in [str(u) for u in client.redirect_uris]

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.preset_client is not None:
            self.preset_client = client_info
            return
        self.vault.update(self.resource, client=client_info.model_dump(mode="json", exclude_none=True), issuer=client_info.issuer)

    def expires_at(self) -> float | None:
        value = self.vault.get(self.resource).get("expires_at")
        return float(value) if isinstance(value, int | float) else None


# ---------------------------------------------------------------------- the sign-in itself
@dataclass
class SignInRequest:
    """One authorization the user is asked to give: shown whole, with its host, never followed by itself."""

    server: str  # the connection's name
    resource: str  # the MCP server's URL
    url: str  # the authorization URL (server-controlled: escaped and checked where shown)
    state: str
    issuer: str | None
    redirect_uri: str | None


class SignInUnavailable(Exception):
    """Nobody can sign in here (a headless run in a kernel): said before any browser or listener is involved."""


@dataclass
class _Answer:
    code: str | None
    state: str | None
    iss: str | None
    error: str | None
    error_description: str | None


def parse_redirect(text: str) -> dict[str, str | None]:
    """The answer in a pasted redirect URL (``...callback?code=...&state=...``), or its bare query string."""
    text = text.strip()
    query = urlsplit(text).query if "?" in text or "://" in text else text.lstrip("?")
    values = parse_qs(query, keep_blank_values=True)
    answer = {key: (values[key][0] if key in values else None) for key in _ANSWER_KEYS}
    if not answer["state"] or not (answer["code"] or answer["error"]):
        raise ValueError("that address has no sign-in answer in it (no state, and no code or error): paste the whole address of the page you were sent back to")
    return answer


class SignIn:
    """One connection's sign-in: the SDK's redirect and callback handlers, with a timeout and several ways back."""

    def __init__(self, server: str, resource: str, redirect_uri: str | None, present: Callable[[SignInRequest, Callable[[dict[str, Any]], None]], None], timeout: float) -> None:
        self.server, self.resource, self.redirect_uri = server, resource, redirect_uri
        self.present = present
        self.timeout = timeout
        self.issuer: str | None = None  # set from the provider's discovered metadata before each redirect
        self.endpoint: str | None = None  # the authorization endpoint the SDK builds on (``expect_endpoint``)
        self.pending: SignInRequest | None = None
        self._future: asyncio.Future[_Answer] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.on_settled: list[Callable[[str | None], None]] = []  # views told when it ends (error text or None)
        self.after_success: Callable[[], None] | None = None  # told each time a sign-in completes
        self._panel_for: str | None = None  # the state of the request a panel shows (one panel per sign-in)
        self._panel_lock = threading.Lock()  # the connect cell (main thread) and a call's view (loop) may both ask

    def claim_panel(self, request: SignInRequest) -> bool:
        """Whether the caller is the first to show ``request``: one panel per sign-in (any thread).

        A connect's cell and the calls waiting on that connection (in the same cell or later ones)
        all want to show the same sign-in; the first shows the panel, the others say they wait for it.
        """
        with self._panel_lock:
            if self._panel_for == request.state:
                return False
            self._panel_for = request.state
            return True

    def expect_endpoint(self, endpoint: str) -> None:
        """The authorization endpoint the SDK is about to build its URL on (``NotebookOAuth``, before each redirect).

        The endpoint is the authorization server's text (its metadata), and the SDK appends its own
        parameters to it. An endpoint that already names a ``state`` is refused: the state is this
        sign-in's own, the key every way back is matched by, and never the server's to choose.
        """
        # every way a server's query parser might split it (``&``, ``;``, a second ``?``), any case
        names = {unquote_plus(part.split("=", 1)[0]).strip().lower() for part in re.split(r"[&;?]", urlsplit(endpoint).query)}
        if "state" in names:
            raise SignInRefused(
                f"the authorization server's metadata gives an authorization endpoint that already carries a state "
                f"({endpoint[:300]}). A sign-in's state is made fresh by this notebook for each sign-in and is what its answer "
                "is matched by; one chosen by the server is refused"
            )  # fmt: skip
        self.endpoint = endpoint

    async def redirect(self, url: str) -> None:
        """The SDK's ``redirect_handler``: show the URL where a person can act (raises ``SignInUnavailable`` if nowhere)."""
        import asyncio

        state = self._sdk_state(url)
        self._loop = asyncio.get_running_loop()
        self._future = self._loop.create_future()
        self.pending = SignInRequest(self.server, self.resource, url, state, self.issuer, self.redirect_uri)
        try:
            self.present(self.pending, self.deliver)
        except BaseException:
            self.pending = None  # shown nowhere: nothing waits for it
            raise

    def _sdk_state(self, url: str) -> str:
        """The state the SDK made for this authorization, read from the parameters it appended to the endpoint.

        The SDK keeps its state in a local variable, not in its context; the only copy it hands out
        is in ``url``, which is ``endpoint + "?" + its own urlencoded parameters``. So the state is
        taken from that part alone: whatever the endpoint itself carries (the server's text) is
        never read as the state.
        """
        endpoint = self.endpoint
        if endpoint is None or not url.startswith(endpoint + "?"):
            raise SignInRefused("the authorization address is not the one this sign-in built on the authorization server's endpoint")
        states = parse_qs(url[len(endpoint) + 1 :], keep_blank_values=True).get("state") or []
        if len(states) != 1 or not states[0]:
            raise SignInRefused("the authorization address carries no single state of this sign-in")
        return states[0]

    async def callback(self) -> Any:
        """The SDK's ``callback_handler``: the answer, within ``timeout`` seconds."""
        import asyncio

        from mcp.client.auth import AuthorizationCodeResult

        assert self._future is not None, "redirect comes first"
        try:
            answer = await asyncio.wait_for(asyncio.shield(self._future), self.timeout)
        except TimeoutError:
            self._settle(f"no answer within {self.timeout:g} s")
            raise SignInTimeout(self.timeout) from None
        if answer.error:
            self._settle(answer.error)
            raise SignInDenied(answer.error, answer.error_description)
        self._settle(None)
        if self.after_success is not None:
            self.after_success()
        return AuthorizationCodeResult(code=answer.code or "", state=answer.state, iss=answer.iss)

    def deliver(self, values: dict[str, Any]) -> None:
        """An answer from anywhere (a relayed callback page, a pasted URL, the loopback catcher); any thread."""
        answer = _Answer(**{k: values[k] if isinstance(values.get(k), str) else None for k in _ANSWER_KEYS})
        future, loop = self._future, self._loop
        if future is None or loop is None:
            return

        def give() -> None:
            if not future.done():
                future.set_result(answer)

        loop.call_soon_threadsafe(give)

    def cancel(self) -> None:
        """The user gave up (the panel's Cancel): the waiting request fails at once."""
        self.deliver({"state": self.pending.state if self.pending else None, "error": "cancelled", "error_description": "sign-in cancelled in the notebook"})

    def _settle(self, error: str | None) -> None:
        self.pending = None
        tells, self.on_settled = self.on_settled, []  # each sign-in's panel hears its own outcome once
        for tell in tells:
            with contextlib.suppress(Exception):
                tell(error)


class SignInRefused(Exception):
    """The authorization server asked for something a sign-in never does (its own ``state``): stopped before any page is shown."""


class SignInDenied(Exception):
    def __init__(self, error: str, description: str | None) -> None:
        super().__init__(f"{error}: {description}" if description else error)
        self.error, self.description = error, description


class SignInTimeout(Exception):
    def __init__(self, timeout: float) -> None:
        super().__init__(f"no answer within {timeout:g} s")
        self.timeout = timeout


# ---------------------------------------------------------------------- the loopback way back (plain Python, local kernels)
class LoopbackCatcher:
    """A small HTTP listener on 127.0.0.1 that catches ``/mcp-notebook/oauth/callback`` redirects (one per session)."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # only when a sign-in needs it

        self._waiting: dict[str, Callable[[dict[str, Any]], None]] = {}
        catcher = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path.rstrip("/") != "/" + CALLBACK_PATH:
                    self.send_error(404)
                    return
                values = {k: v[0] for k, v in parse_qs(parts.query).items() if k in _ANSWER_KEYS}
                deliver = catcher._waiting.pop(values.get("state") or "", None)
                ok = deliver is not None
                if deliver is not None:
                    deliver(values)
                error = values.get("error")
                text = (
                    "This sign-in is not awaited here (an old or foreign link)." if not ok
                    else f"Sign-in did not complete: {error}." if error
                    else "Signed in. You can close this tab and go back to the notebook."
                )  # fmt: skip
                body = f"<!doctype html><title>mcp-notebook sign-in</title><p>{html.escape(text)}</p>".encode()
                self.send_response(200 if ok else 400)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Referrer-Policy", "no-referrer")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass  # the query holds the code: never logged

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        threading.Thread(target=self.server.serve_forever, name="mcp-oauth-loopback", daemon=True).start()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/{CALLBACK_PATH}"

    def await_state(self, state: str, deliver: Callable[[dict[str, Any]], None]) -> None:
        self._waiting[state] = deliver

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------------- the provider
def build_provider(resource: str, options: OAuthOptions, vault: TokenVault, sign_in: SignIn, *, client_name: str, client_metadata_url: str | None, on_failure: Callable[[BaseException], None]) -> httpx2.Auth:
    """The ``httpx2.Auth`` for one HTTP connection: authorization code with PKCE, or client credentials."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata
    from pydantic import AnyUrl

    secret = _env(options.client_secret_env, "--client-secret-env")
    redirect = sign_in.redirect_uri
    if options.id_token_env:
        return _identity_assertion_provider(resource, options, vault, secret, on_failure)
    if options.client_credentials:
        if not options.client_id:
            raise FlowError("a client-credentials sign-in needs a client id (--client-id)", kind="bad_input")
        storage = ResourceTokens(vault, resource, None)
        key = _env(options.private_key_env, "--private-key-env")
        if key:
            from mcp.client.auth.extensions.client_credentials import PrivateKeyJWTOAuthProvider, SignedJWTParameters

            jwt = SignedJWTParameters(issuer=options.client_id, subject=options.client_id, signing_key=key, signing_algorithm=_jwt_algorithm(key))
            base: type = _recording(PrivateKeyJWTOAuthProvider)
            return base(resource, storage, options.client_id, jwt.create_assertion_provider(), scope=options.scope, on_failure=on_failure)
        if not secret:
            raise FlowError("a client-credentials sign-in needs a secret (--client-secret-env VAR) or a key (--private-key-env VAR)", kind="bad_input")
        from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

        base = _recording(ClientCredentialsOAuthProvider)
        return base(resource, storage, options.client_id, secret, scope=options.scope, on_failure=on_failure)

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

    provider: OAuthClientProvider = NotebookOAuth(
        resource, metadata, storage, redirect_handler=sign_in.redirect, callback_handler=sign_in.callback,
        client_metadata_url=client_metadata_url, on_failure=on_failure,
    )  # fmt: skip
    return provider


def _identity_assertion_provider(resource: str, options: OAuthOptions, vault: TokenVault, secret: str | None, on_failure: Callable[[BaseException], None]) -> httpx2.Auth:
    """SEP-990: the IdP's ID token -> an ID-JAG at the IdP (RFC 8693 token exchange) -> a token at ``issuer`` (RFC 7523)."""
    import httpx2
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    id_token = _env(options.id_token_env, "--id-token-env")
    if not (options.client_id and secret and options.issuer and options.idp_token_endpoint):
        raise FlowError("an enterprise sign-in needs --client-id, --client-secret-env, --issuer (the authorization server) and --idp-token-endpoint", kind="bad_input")
    endpoint = options.idp_token_endpoint

    async def fetch_id_jag(audience: str, resource_id: str) -> str:
        form = {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token": id_token or "", "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag", "audience": audience, "resource": resource_id,
        }  # fmt: skip
        if options.idp_client_id:
            form["client_id"] = options.idp_client_id
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.post(endpoint, data=form)
        if response.status_code != 200:
            raise RuntimeError(f"the identity provider refused the token exchange (HTTP {response.status_code}): {response.text[:300]}")
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


def _quiet_sdk_log() -> None:
    """Drop the SDK's "OAuth flow error" traceback: the failure is recorded and explained in the cell
    (``explain``); in a kernel that log line would print a traceback into whatever cell is running."""
    import logging

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
        def __init__(self, *args: Any, on_failure: Callable[[BaseException], None], **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._on_failure = on_failure

        async def _auth_flow(self, request: Any) -> Any:
            flow = super()._auth_flow(request)
            try:
                outgoing = await flow.__anext__()
                while True:
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

    return Recording


def _env(name: str | None, flag: str) -> str | None:
    if not name:
        return None
    value = os.environ.get(name)
    if not value:
        raise FlowError(f"environment variable {name} is not set (needed by {flag})", kind="bad_input")
    return value


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
            return FlowError(f"Sign-in to {server} was cancelled; nothing was sent.", kind="sign_in_denied", server=server, details=details)
        why = f" ({exc.description})" if exc.description else ""
        text = f"Sign-in to {server}{where} did not complete: the authorization server answered {exc.error!r}{why}. Nothing was sent to the server."
        return FlowError(text, kind="sign_in_denied", server=server, details=details)
    if isinstance(exc, SignInRefused):
        text = f"Sign-in to {server}{where} stopped before any sign-in page was shown: {exc}. Nothing was opened or sent; tell the server's operator."
        return FlowError(text, kind="sign_in_refused", server=server, details=details)
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
        text = f"Sign-in to {server} stopped: the server's metadata names another resource ({message}). Nothing was sent."
    elif type(exc).__name__ == "OAuthRegistrationError":
        text = f"{server}{where} did not register this notebook as a client ({message}). If it wants a pre-registered client, connect with --client-id ID [--client-secret-env VAR]."
    elif type(exc).__name__ == "OAuthTokenError":
        text = f"The authorization server{where} refused the token request for {server} ({message})."
    else:
        text = f"Sign-in to {server}{where} failed: {message or type(exc).__name__}."
    return FlowError(text, kind="sign_in_failed", server=server, details=details)
