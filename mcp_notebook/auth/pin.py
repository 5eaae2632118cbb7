"""Pre-shared credentials go only to the authorization server they belong to: ``IssuerPin``.

A client secret (``--client-secret-env``), a private key (``--private-key-env``) or a workload's
JWT (``--assertion-env`` / ``--assertion-file``) was issued for one authorization server. Which
server a connection signs in at is the MCP server's say (its protected-resource metadata), so a
hostile or re-pointed server could name its own and receive them. Before any token request that
carries one is built, the authorization server the SDK discovered must be:

* the one the user pinned with ``--issuer``, or else the one remembered for this resource in the
  vault (the first sign-in remembers it; a change is refused, and says how to accept it);
* for a workload JWT, the one its ``aud`` names (RFC 7523 §3: the audience identifies the
  authorization server, by its issuer identifier or its token endpoint URL).

Nothing is sent when the check fails: it runs before the request exists. A sign-in without
pre-shared credentials (dynamic registration, a public client id) is bound by the SDK itself
(SEP-2352) and needs no pin unless the user gives ``--issuer``.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

from ..core.text import Flag, mcp_line

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthMetadata

    from .vault import TokenVault

__all__ = ["REMEMBERED", "IssuerPin", "IssuerPinError", "assertion_audiences"]

REMEMBERED = "credentials_issuer"
"""The vault field (per resource) naming the authorization server its pre-shared credentials went to."""


class IssuerPinError(Exception):
    """Pre-shared credentials were about to go to an authorization server they do not belong to: nothing was sent."""


def assertion_audiences(assertion: str) -> list[str]:
    """The ``aud`` of a JWT (a string or a list of strings), read without verifying it; [] if it has none."""
    try:
        payload = assertion.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return []
    aud = claims.get("aud") if isinstance(claims, dict) else None
    if isinstance(aud, str):
        return [aud]
    return [a for a in aud if isinstance(a, str)] if isinstance(aud, list) else []


def _same(a: str, b: str) -> bool:
    """Issuer identifiers compared as strings (RFC 8414 §3.3), a trailing slash aside."""
    return a.rstrip("/") == b.rstrip("/")


class IssuerPin:
    """Where one resource's pre-shared credentials may go (see the module docstring)."""

    def __init__(
        self,
        vault: TokenVault,
        resource: str,
        given: str | None,
        *,
        credentials: bool,
        workload: bool = False,
    ) -> None:
        self.vault, self.resource, self.given = vault, resource, given
        self.credentials = credentials  # a secret, key or JWT is sent: remember the server, refuse a change
        self.workload = workload  # a JWT's aud must name the server too: not remembered before that is checked

    def pinned(self) -> str | None:
        """The issuer the credentials are pinned to: ``--issuer``, else the one remembered for the resource."""
        if self.given:
            return self.given
        remembered = self.vault.get(self.resource).get(REMEMBERED)
        return remembered if isinstance(remembered, str) and self.credentials else None

    def check(
        self, metadata: OAuthMetadata | None, token_endpoint: str, fallback_issuer: str, assertion: str | None = None
    ) -> str:
        """The issuer the token request about to be built goes to, if the credentials may go there.

        ``metadata`` is the authorization server metadata the SDK discovered (and checked); without
        it the SDK uses the MCP server's own ``/token``, so its origin (``fallback_issuer``) is the
        authorization server. ``assertion`` is the workload JWT about to be sent: its ``aud`` must
        name that server. Raises ``IssuerPinError`` (nothing sent) otherwise; on success the issuer
        is remembered for the resource.
        """
        issuer = str(metadata.issuer) if metadata is not None else fallback_issuer
        pinned = self.pinned()
        if pinned is not None and not _same(issuer, pinned):
            if self.given:
                raise IssuerPinError(
                    f"the server sends you to the authorization server {issuer}, but --issuer pins this sign-in to "
                    f"{pinned}; nothing was sent there. Check the server's address, or give the --issuer you mean"
                )
            raise IssuerPinError(
                f"the server now sends you to the authorization server {issuer}, but your credentials for it went to "
                f"{pinned} before (remembered for {self.resource}); nothing was sent to {issuer}. If that change is "
                f"expected, sign out ({mcp_line('%mcp', 'auth', 'logout', self.resource)}) or connect with "
                f"{mcp_line(Flag('--issuer'), issuer)}"  # the issuer is the server's: encoded for the line (issue 34, finding 3)
            )
        if assertion is not None:
            audiences = assertion_audiences(assertion)
            if not audiences:
                raise IssuerPinError(
                    "the workload token names no audience (aud), so which authorization server it is for is unknown; "
                    "nothing was sent. Use a token issued for the authorization server (its aud)"
                )
            if not any(_same(aud, issuer) or _same(aud, token_endpoint) for aud in audiences):
                shown = ", ".join(a[:200] for a in audiences[:5])
                raise IssuerPinError(
                    f"the workload token is for {shown} (its aud), but the server sends it to the authorization server "
                    f"{issuer} (token endpoint {token_endpoint}); nothing was sent. Use a token whose aud is that "
                    "server, or check the server's address"
                )
        if self.workload and assertion is None:
            return issuer  # the JWT's own check (with ``assertion``) comes before it is sent, and remembers
        if self.credentials and self.vault.get(self.resource).get(REMEMBERED) != issuer:
            self.vault.update(self.resource, **{REMEMBERED: issuer})
        return issuer

    def require_audience(self, audience: str) -> None:
        """A private-key client assertion is about to be signed for ``audience``: it must be the pinned issuer."""
        pinned = self.pinned()
        if pinned is None or not _same(audience, pinned):
            raise IssuerPinError(
                f"the client assertion would name {audience} as its audience, not the authorization server {pinned} "
                "this sign-in was checked for; nothing was signed or sent"
            )
