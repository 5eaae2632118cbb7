"""Why a connection did not open, or a call was refused, in plain words (sign-in failures above all).

The SDK reports an HTTP 401/403 as a bare internal error (-32603), a 404 as "method not found",
and a sign-in whose own request failed as the MCP server being unreachable. The connection
notes what the server really answered (``note_http_response``, an httpx2 response hook) and
what the OAuth flow raised (``Connection.auth_failure``); the functions here turn that into an
error that says what happened and what to do, with a ``kind`` the magics' hints key on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import FlowError, leaf_exceptions

if TYPE_CHECKING:
    from .connection import Connection

__all__ = [
    "ConnectionFailed",
    "auth_error",
    "http_status_text",
    "note_http_response",
    "same_endpoint",
    "sdk_stand_in",
    "sign_in_error",
    "sign_in_unreachable",
]


class ConnectionFailed(FlowError):
    """Opening a connection failed (command missing, URL refusing, handshake error)."""


def sign_in_error(conn: Connection, where: str, error_type: type[FlowError] = ConnectionFailed) -> FlowError:
    """The failed sign-in (``auth_failure``) in plain words, with a ``kind``.

    A server that answered 401 but offers no OAuth (no protected-resource or authorization-server
    metadata, so registration failed) wants some other credential: that is the plain 401 error.
    """
    from ..auth.sdk_provider import explain

    assert conn.auth_failure is not None
    # the SDK's OAuth provider (``auth.sdk_provider``) when the server asked a sign-in; not every provider has a
    # context (the enterprise-managed one has none), and explaining its failure must not fail
    context = getattr(conn.auth_provider, "context", None)
    offered = context is not None and (
        context.protected_resource_metadata is not None or context.oauth_metadata is not None
    )
    registration_failed = type(conn.auth_failure).__name__ == "OAuthRegistrationError"  # what a non-OAuth 401 ends in
    if not offered and registration_failed and conn.auth_refused is not None:
        refused = auth_error(conn, where, error_type)
        if refused is not None:
            refused.args = (f"{refused} (It offers no OAuth sign-in: no authorization server metadata.)",)
            return refused
    issuer = conn.sign_in.issuer if conn.sign_in is not None else None
    error = explain(conn.auth_failure, conn.name, conn.target.url, issuer)
    error.details = {**(error.details or {}), "connection": conn}
    return error


def auth_error(conn: Connection, where: str, error_type: type[FlowError] = ConnectionFailed) -> FlowError | None:
    """The error for an HTTP 401/403 the server answered (``None`` when it did not): what it wants, how to give it."""
    refused = conn.auth_refused
    if refused is None:
        return None
    status, challenge = refused["status"], refused.get("www_authenticate") or ""
    sent = bool(conn.target.headers or conn.target.bearer_env or conn.target.served_token)
    why = "it wants credentials" if status == 401 else "it refused access: it wants credentials"
    if sent:
        why += " (it did not accept the ones sent)"
    text = (
        f"{where}: the server answered HTTP {status} ({'Unauthorized' if status == 401 else 'Forbidden'}): {why}"
        f"{f' (WWW-Authenticate: {challenge})' if challenge else ''}. Give them when connecting: bearer_env='VAR' "
        "(a token in environment variable VAR, sent as Authorization: Bearer) or headers={'Authorization': '...'}."
    )
    details = {"status": status, "www_authenticate": challenge, "url": conn.target.url, "connection": conn}
    return error_type(text, kind="auth_required", server=conn.name, details=details)


def sign_in_unreachable(
    conn: Connection, error: BaseException, where: str, error_type: type[FlowError] = ConnectionFailed
) -> FlowError | None:
    """The server answered 401 and the sign-in's own request (its metadata, its authorization server)
    could not be sent: that, not "could not reach the server" (``None`` when it is not the case).

    httpx2 raises such a failure out of the request the OAuth flow was authenticating, so it reads
    like the MCP server being down; the failed request's address tells them apart.
    """
    import httpx2

    refused = conn.auth_refused
    if refused is None or refused["status"] != 401:
        return None
    failed = next((e for e in leaf_exceptions(error) if isinstance(e, httpx2.TransportError)), None)
    try:
        url = str(failed.request.url) if failed is not None else ""
    except RuntimeError:  # an httpx2 error raised outside a request has none
        url = ""
    if not url or same_endpoint(url, conn.target.url):
        return None
    if "/.well-known/oauth-protected-resource" in url:
        what = "its sign-in metadata (protected resource metadata)"
    elif "/.well-known/oauth-authorization-server" in url or "/.well-known/openid-configuration" in url:
        what = "its authorization server's metadata"
    else:
        what = "its authorization server"
    reason = str(failed) or type(failed).__name__
    text = (
        f"{where}: the server answered HTTP 401 (Unauthorized) and asks you to sign in, but {what} at {url} "
        f"could not be fetched: {reason} ({type(failed).__name__}). That address comes from the server "
        "(its WWW-Authenticate header or metadata): check that it is reachable from this kernel, or ask the server's operator; "
        "or connect with a token instead (bearer_env='VAR', or headers={'Authorization': '...'})."
    )  # fmt: skip
    details = {"status": 401, "metadata_url": url, "reason": reason, "url": conn.target.url, "connection": conn}
    return error_type(text, kind="sign_in_unreachable", server=conn.name, details=details)


async def note_http_response(conn: Connection, response: Any) -> None:
    """An httpx2 response hook: remember a 401/403 (the SDK reports it as a bare internal error)."""
    status = response.status_code
    if status >= 400 and status not in (401, 403) and same_endpoint(str(response.request.url), conn.target.url):
        conn.http_failed = status  # the SDK turns a 404 into -32601 "Not Found", others into a bare -32603
    elif status < 400 and same_endpoint(str(response.request.url), conn.target.url):
        conn.http_failed = None
    if status in (401, 403):
        conn.auth_refused = {"status": status, "www_authenticate": response.headers.get("www-authenticate", "")}
    elif status < 400 and conn.auth_refused is not None and same_endpoint(str(response.request.url), conn.target.url):
        conn.auth_refused = None  # the server itself accepted (a sign-in's metadata answering 200 is not that)


def same_endpoint(a: str, b: str) -> bool:
    """The same scheme, host, port and path (httpx2's normalised form: a bare host is ``/``)."""
    import httpx2

    try:
        x, y = httpx2.URL(a), httpx2.URL(b)
    except Exception:  # noqa: BLE001 - an address httpx2 cannot parse is no endpoint of ours
        return False
    return (x.scheme, x.host, x.port, x.path) == (y.scheme, y.host, y.port, y.path)


def sdk_stand_in(error: BaseException) -> bool:
    """Whether the handshake failed with the error the SDK makes of an HTTP status without a JSON-RPC body."""
    from mcp import MCPError

    failed = next((e for e in leaf_exceptions(error) if isinstance(e, MCPError)), None)
    return failed is not None and (failed.code, failed.message) in (
        (-32601, "Not Found"),
        (-32603, "Server returned an error response"),
    )


def http_status_text(status: int) -> str:
    """What an HTTP error status at the server's URL means for connecting to it."""
    if status == 404:
        return "HTTP 404: is the path right (most servers use /mcp)?"
    if status == 405:
        return "HTTP 405 (method not allowed): is this the MCP endpoint (most servers use /mcp)?"
    return f"HTTP {status}: the server answered with an error, not MCP"
