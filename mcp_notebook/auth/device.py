"""The OAuth device authorization grant (RFC 8628): a code and an address in the cell, no callback.

Where the browser cannot come back to the kernel by itself (no labextension to relay the callback,
a remote kernel whose loopback address the browser cannot reach), an authorization server that
offers ``device_authorization_endpoint`` lets the user sign in anywhere: the cell shows a short
code and the address to type it at, and the kernel polls the token endpoint until the user has
approved (or denied, or the code expired). Nothing comes back to the kernel over HTTP but the
token endpoint's own answers.

The SDK's metadata model drops fields it does not know, so the endpoint is read from the
authorization server's metadata document here (``device_endpoint``), from the same discovery
addresses the SDK used and only when it names the issuer the SDK accepted. Everything the server
sends (the code, the addresses, the intervals) is checked and bounded before it is shown or used.

The address the code is typed at must be on the issuer's own host (or a subdomain of it), as the
browser reads both (``foreign_address``): a code shown beside someone else's sign-in page (a
well-known provider's ``/devicelogin``) is how device-code phishing works, since whoever types it
there signs in the attacker's device. Such a grant is never shown; the sign-in falls back to the
redirect.

Under the administrator's ``allowed_urls`` (core/policy.py) the grant is judged as the redirect
sign-in is: the device authorization request, like every request the auth layer sends, is refused
before it leaves (``sdk_provider._oauth_http``), and a code whose page (``verification_uri`` or
``verification_uri_complete``) the policy does not list is refused before it is shown or polled
(``sign_in.SignIn.show_device``, as ``SignIn.redirect`` refuses an authorization URL).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "DEVICE_GRANT",
    "DeviceCode",
    "DeviceGrantError",
    "device_endpoint",
    "foreign_address",
    "parse_device_code",
    "poll_answer",
]

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
MAX_USER_CODE = 64
"""Longest user code shown (RFC 8628 suggests about 8 characters; anything long is not for typing)."""
MAX_URI = 2_000
MAX_DEVICE_CODE = 4_096
MIN_INTERVAL, DEFAULT_INTERVAL, MAX_INTERVAL = 1.0, 5.0, 60.0
"""Seconds between polls: the server's ``interval`` is kept within these (RFC 8628 §3.2 default 5)."""
SLOW_DOWN = 5.0
"""Seconds added to the interval each time the server answers ``slow_down`` (RFC 8628 §3.5)."""
_USER_CODE = re.compile(r"^[A-Za-z0-9 _.-]{1,64}$")


class DeviceGrantError(Exception):
    """The device authorization failed: refused by the server, denied by the user, expired, or malformed."""

    def __init__(self, error: str, description: str | None = None) -> None:
        super().__init__(f"{error}: {description}" if description else error)
        self.error, self.description = error, description


@dataclass(frozen=True)
class DeviceCode:
    """One device authorization: what the user is shown (never the ``device_code``, which is the secret)."""

    device_code: str
    user_code: str
    verification_uri: str
    verification_uri_complete: str | None
    expires_in: float
    interval: float


async def device_endpoint(http: httpx2.AsyncClient, discovery_urls: list[str], issuer: str | None) -> str | None:
    """The authorization server's ``device_authorization_endpoint``, or ``None`` when it offers none.

    Read from the first discovery address that answers with a JSON object; used only when that
    document names ``issuer`` (the one the SDK validated), so another server's document cannot
    steer the grant elsewhere.
    """
    for url in discovery_urls:
        try:
            response = await http.get(url, headers={"Accept": "application/json"})
        except Exception:  # noqa: BLE001 - an unreachable discovery address: try the next one
            continue
        if response.status_code != 200:
            continue
        try:
            document = response.json()
        except ValueError:
            return None
        if not isinstance(document, dict):
            return None
        if issuer is not None and str(document.get("issuer", "")).rstrip("/") != issuer.rstrip("/"):
            return None
        endpoint = document.get("device_authorization_endpoint")
        return endpoint if isinstance(endpoint, str) and _web_address(endpoint) else None
    return None


def parse_device_code(document: Any) -> DeviceCode:
    """The device authorization response (RFC 8628 §3.2), checked: raises ``DeviceGrantError`` if malformed."""
    if not isinstance(document, dict):
        raise DeviceGrantError("invalid_response", "the device authorization answer is not a JSON object")
    if isinstance(document.get("error"), str):
        description = document.get("error_description")
        raise DeviceGrantError(document["error"][:100], description[:300] if isinstance(description, str) else None)
    device_code, user_code = document.get("device_code"), document.get("user_code")
    uri, complete = document.get("verification_uri"), document.get("verification_uri_complete")
    if not isinstance(device_code, str) or not 0 < len(device_code) <= MAX_DEVICE_CODE:
        raise DeviceGrantError("invalid_response", "the device authorization answer has no usable device_code")
    if not isinstance(user_code, str) or not _USER_CODE.fullmatch(user_code):
        raise DeviceGrantError(
            "invalid_response",
            f"the device authorization answer's user_code is not a short code of letters and digits (at most {MAX_USER_CODE})",
        )
    if not isinstance(uri, str) or not _web_address(uri):
        raise DeviceGrantError("invalid_response", "the device authorization answer has no web address to sign in at")
    if not (isinstance(complete, str) and _web_address(complete)):
        complete = None
    return DeviceCode(
        device_code=device_code,
        user_code=user_code,
        verification_uri=uri,
        verification_uri_complete=complete,
        expires_in=_seconds(document.get("expires_in"), 600.0, 1.0, 3600.0),
        interval=_seconds(document.get("interval"), DEFAULT_INTERVAL, MIN_INTERVAL, MAX_INTERVAL),
    )


def foreign_address(device: DeviceCode, issuer: str) -> str | None:
    """The first of the grant's addresses whose host is not the issuer's (nor a subdomain of it), else ``None``.

    Hosts are compared as the browser reads them (ada: lower case, punycode, IP addresses
    normalized). A look-alike name is another host; an IP address matches only itself.
    """
    from ..core.urls import read_url

    home = read_url(issuer)
    base = home.hostname if home is not None else ""
    for address in (device.verification_uri, device.verification_uri_complete):
        if address is None:
            continue
        read = read_url(address)
        host = read.hostname if read is not None else ""
        if not base or not host:
            return address
        if host == base:
            continue
        try:
            ipaddress.ip_address(base.strip("[]"))
            return address  # an IP address has no subdomains
        except ValueError:
            pass
        if not host.endswith("." + base):
            return address
    return None


def poll_answer(status: int, document: Any) -> str | None:
    """What one poll of the token endpoint says: ``None`` (tokens: done), ``"pending"`` or ``"slow_down"``.

    Any other error ends the grant (``DeviceGrantError``): ``access_denied`` (the user said no),
    ``expired_token`` (the code ran out), or the server's own refusal.
    """
    if status in (200, 201):
        return None
    error = document.get("error") if isinstance(document, dict) else None
    if error == "authorization_pending":
        return "pending"
    if error == "slow_down":
        return "slow_down"
    description = document.get("error_description") if isinstance(document, dict) else None
    raise DeviceGrantError(
        error[:100] if isinstance(error, str) else f"HTTP {status}",
        description[:300] if isinstance(description, str) else None,
    )


def _seconds(value: Any, default: float, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return min(max(float(value), low), high)


def _web_address(text: str) -> bool:
    """An https address (http only on a loopback host, ``*.localhost`` too as browsers take it), as the
    browser reads it, of bounded length."""
    from ..core.urls import read_url

    if len(text) > MAX_URI:
        return False
    read = read_url(text)
    if read is None or not read.linkable:
        return False
    return read.scheme == "https" or read.hostname in ("127.0.0.1", "[::1]") or _localhost(read.hostname)


def _localhost(hostname: str) -> bool:
    return hostname == "localhost" or hostname.endswith(".localhost")
