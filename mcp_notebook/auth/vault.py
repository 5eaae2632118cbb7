"""Where OAuth sign-ins are kept: ``TokenVault`` and ``ResourceTokens``.

``TokenVault``: tokens and client registrations per resource (the server's URL), with the
authorization server's issuer (and the one pre-shared credentials are pinned to: ``pin``), in
the user's Jupyter data folder (``mcp_notebook/oauth.json``, mode 0600, like Jupyter's notary
secret). Never in a notebook, an output or a trace.
``ResourceTokens`` is one resource's view, the SDK's ``TokenStorage``; it also keeps the expiry,
which the SDK does not persist (``sdk_provider`` restores it, so a new kernel refreshes silently
instead of asking again).
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.private_table import PrivateTable, data_file
from .pin import REMEMBERED

__all__ = ["ResourceTokens", "TokenVault"]

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


# ---------------------------------------------------------------------- storage
class TokenVault(PrivateTable):
    """Per-resource OAuth tokens and client registrations in one 0600 JSON file (thread-safe)."""

    def __init__(self, path: Path | None = None) -> None:
        super().__init__(path or partial(data_file, "oauth.json"))  # the folder found on first use

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
                "issuer": entry.get("issuer") or (entry.get("client") or {}).get("issuer") or entry.get(REMEMBERED) or "",
                "scope": tokens.get("scope") or "",
                "expires_at": entry.get("expires_at"),
                "refreshable": bool(tokens.get("refresh_token")),
                "signed_in": bool(tokens.get("access_token")),
            })  # fmt: skip
        return rows


class ResourceTokens:
    """The SDK's ``TokenStorage`` for one resource, backed by the vault (plus a pre-registered client kept in memory)."""

    def __init__(
        self,
        vault: TokenVault,
        resource: str,
        redirect_uri: str | None,
        preset_client: OAuthClientInformationFull | None = None,
    ) -> None:
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
        self.vault.update(
            self.resource, tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires_at
        )

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
        self.vault.update(
            self.resource, client=client_info.model_dump(mode="json", exclude_none=True), issuer=client_info.issuer
        )

    def extra(self, name: str) -> Any:
        """Another value kept for this resource beside its tokens (the DPoP key and whether the token is bound)."""
        return self.vault.get(self.resource).get(name)

    def set_extra(self, **values: Any) -> None:
        self.vault.update(self.resource, **values)

    def expires_at(self) -> float | None:
        value = self.vault.get(self.resource).get("expires_at")
        return float(value) if isinstance(value, int | float) else None
