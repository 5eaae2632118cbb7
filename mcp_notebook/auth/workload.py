"""Workload identity (SEP-1933): a ready-made JWT exchanged for a token by the RFC 7523 jwt-bearer grant.

A notebook run by a machine (a Kubernetes job, a GitHub Actions step, a cloud VM) often already
holds a signed workload token: a projected service-account token in a file, ``ACTIONS_ID_TOKEN``
from GitHub's OIDC, a metadata server's identity token copied into a variable. The user names where
it is (``--assertion-env VAR`` or ``--assertion-file PATH``); the notebook reads it at each token
exchange (projected tokens rotate) and fetches nothing on its own.

The grant carries no client authentication (the assertion *is* the credential): a public client
id, ``grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`` and ``assertion``. A refused grant
is reported as it is (``invalid_grant``, ``invalid_scope``, ``unauthorized_client``): never retried
and never traded for another grant type, since a person cannot fix a workload token by clicking.

What is read must look like a JWT (three base64url parts, bounded) before it is sent anywhere: a
received notebook cannot make ``--assertion-file`` post an arbitrary file to an authorization server.
And it goes only to the authorization server its ``aud`` names (``pin.IssuerPin``, checked in
``_before_sending``): a server cannot send someone else's workload token to its own.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import FlowError

if TYPE_CHECKING:
    import httpx2
    from mcp.client.auth import TokenStorage

__all__ = ["JWT_BEARER", "MAX_ASSERTION", "WorkloadAssertion", "workload_provider_class"]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
MAX_ASSERTION = 16_384
"""The longest assertion read (Kubernetes and cloud identity tokens are 1-3 kB)."""
_JWT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")


@dataclass(frozen=True)
class WorkloadAssertion:
    """Where the workload's JWT is: an environment variable or a file, named by the user."""

    env: str | None = None
    file: str | None = None

    def read(self) -> str:
        """The assertion as it is now (a rotating file is read again each time), checked to be a JWT."""
        if self.env:
            from ..core.policy import current_policy

            if refused := current_policy().env_refusal(self.env, "read for --assertion-env"):
                raise FlowError(f"Not reading environment variable {self.env}: {refused}.", kind="policy_refused")
            value, where = os.environ.get(self.env, ""), f"environment variable {self.env}"
            if not value:
                raise FlowError(f"{where} is not set (needed by --assertion-env)", kind="bad_input")
        elif self.file:
            where = f"the file {self.file}"
            try:
                with Path(self.file).expanduser().open("rb") as handle:
                    raw = handle.read(MAX_ASSERTION + 1)
            except OSError as exc:
                raise FlowError(f"cannot read {where} (--assertion-file): {exc.strerror}", kind="bad_input") from exc
            value = raw.decode("ascii", errors="replace")
        else:
            raise FlowError("a workload sign-in needs --assertion-env VAR or --assertion-file PATH", kind="bad_input")
        value = value.strip()
        if len(value) > MAX_ASSERTION or not _JWT.fullmatch(value):
            raise FlowError(
                f"{where} does not hold a JWT (three base64url parts, at most {MAX_ASSERTION} characters); "
                "nothing was sent. Give the workload identity token itself.",
                kind="bad_input",
            )
        return value


def workload_provider_class() -> type:
    """The SDK's ``OAuthClientProvider`` with the jwt-bearer grant in place of authorization code.

    Built on first use so that importing this module does not import the SDK's OAuth machinery. The
    SDK keeps discovery (protected-resource metadata, the authorization server's metadata and its
    issuer check), the resource indicator, scope selection and token storage.
    """
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    class WorkloadIdentityProvider(OAuthClientProvider):
        """RFC 7523 section 2.1: ``assertion`` is the authorization grant; the client is public."""

        def __init__(
            self,
            server_url: str,
            storage: TokenStorage,
            client_id: str,
            assertion: WorkloadAssertion,
            scope: str | None = None,
        ) -> None:
            metadata = OAuthClientMetadata(
                redirect_uris=None, grant_types=[JWT_BEARER], token_endpoint_auth_method="none", scope=scope
            )
            super().__init__(server_url, metadata, storage, None, None)
            self._assertion = assertion
            self._refused: str | None = None  # what the server said the one time it refused this workload
            self._client = OAuthClientInformationFull(
                redirect_uris=None, client_id=client_id, grant_types=[JWT_BEARER],
                token_endpoint_auth_method="none", scope=scope,
            )  # fmt: skip

        async def _initialize(self) -> None:
            self.context.current_tokens = await self.context.storage.get_tokens()
            self.context.client_info = self._client  # pre-registered: never dynamic registration
            self._initialized = True

        async def _perform_authorization(self) -> httpx2.Request:
            import httpx2
            from mcp.client.auth import OAuthTokenError

            if self._refused is not None:  # asked once, refused: a second try would only be refused again
                raise OAuthTokenError(f"{self._refused}; not sent again: fix the workload token, then connect again")
            assertion = self._assertion.read()
            self._before_sending(assertion)
            data: dict[str, Any] = {
                "grant_type": JWT_BEARER,
                "assertion": assertion,
                "client_id": self._client.client_id,
            }
            if self.context.should_include_resource_param(self.context.protocol_version):
                data["resource"] = self.context.get_resource_url()
            if self.context.client_metadata.scope:
                data["scope"] = self.context.client_metadata.scope
            headers = {"Content-Type": "application/x-www-form-urlencoded"}
            return httpx2.Request("POST", self._get_token_endpoint(), data=data, headers=headers)

        def _before_sending(self, assertion: str) -> None:
            """Called with the JWT just before it is sent: the caller's check that its ``aud`` is this server."""

        async def _handle_token_response(self, response: httpx2.Response) -> None:
            if response.status_code != 200:
                body = (await response.aread()).decode("utf-8", errors="replace")[:300]
                self._refused = (
                    f"the authorization server refused the workload token (HTTP {response.status_code}: {body})"
                )
            await super()._handle_token_response(response)

    return WorkloadIdentityProvider
