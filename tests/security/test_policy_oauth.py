"""The administrator's policy at the sign-in doors (issue 40, items 1 and 2), with the real OAuth test server.

``denied_env`` covers every variable a sign-in names (``--client-secret-env``, ``--private-key-env``,
``--id-token-env``, the workload token's ``--assertion-env``): refused at connect, naming the policy
file, and never read by the auth layer either. ``allowed_urls`` covers every OAuth request the
kernel sends (discovery, registration, token, the auth layer's own clients): one outside it is
refused before it is sent, so tests/support/oauth_server.py, which notes every request it receives,
sees none of them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_notebook.auth import sdk_provider
from mcp_notebook.auth.sdk_provider import OAuthOptions
from mcp_notebook.auth.vault import TokenVault
from mcp_notebook.auth.workload import WorkloadAssertion
from mcp_notebook.core import policy as policy_module
from mcp_notebook.core.policy import POLICY_FILE, current_policy
from mcp_notebook.errors import FlowError
from mcp_notebook.session.session import Session

from ..auth.test_device_grant import person
from ..auth.test_sign_in import browser, call_echo, new_session
from ..support.oauth_server import OAuthServer, running_oauth_server

SECRET = "hub-secret-value"
JWT = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJqb2IifQ.c2ln"


@pytest.fixture
def set_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``mcp_notebook_policy.json`` in a shared config directory (as a hub's spawner names it); returns its path."""
    hub = tmp_path / "hub-etc"
    hub.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(hub))
    monkeypatch.setattr(policy_module, "_AT_START", "")
    yield hub / POLICY_FILE


def write(path: Path, data: dict[str, object]) -> Path:
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def server() -> Iterator[OAuthServer]:
    with running_oauth_server(consent="auto") as srv:
        yield srv


@pytest.fixture
def vault(tmp_path: Path) -> TokenVault:
    return TokenVault(tmp_path / "jupyter-data" / "mcp_notebook" / "oauth.json")


def requests_since(server: OAuthServer, before: int) -> list[str]:
    return server.stats()["requests"][before:]


def refused_connect(server: OAuthServer, vault: TokenVault, options: OAuthOptions | None = None) -> FlowError:
    session = new_session(vault, browser("allow"))
    try:
        with pytest.raises(FlowError) as caught:
            session.connect("secure", server.url, oauth=options)
    finally:
        session.close()
    return caught.value


# ---------------------------------------------------------------------------------------------- item 1: denied_env
@pytest.mark.parametrize(
    ("options", "name"),
    [
        (
            OAuthOptions(client_id="svc", client_secret_env="HUB_CLIENT_SECRET", client_credentials=True),
            "HUB_CLIENT_SECRET",
        ),
        (OAuthOptions(client_id="svc", client_secret_env="HUB_CLIENT_SECRET"), "HUB_CLIENT_SECRET"),
        (OAuthOptions(client_id="job", assertion_env="HUB_WORKLOAD_TOKEN"), "HUB_WORKLOAD_TOKEN"),
    ],
    ids=["client-credentials", "code-grant-secret", "workload"],
)
def test_a_denied_sign_in_variable_is_refused_at_connect(
    set_policy: Path,
    server: OAuthServer,
    vault: TokenVault,
    monkeypatch: pytest.MonkeyPatch,
    options: OAuthOptions,
    name: str,
) -> None:
    monkeypatch.setenv(name, JWT if "WORKLOAD" in name else SECRET)
    path = write(set_policy, {"denied_env": ["HUB_*"]})
    before = len(server.stats()["requests"])
    error = refused_connect(server, vault, options)
    text = str(error)
    assert error.kind == "policy_refused", text
    assert str(path) in text and f"denies environment variable {name} (rule 'HUB_*')" in text
    flag = "--assertion-env" if "WORKLOAD" in name else "--client-secret-env"
    assert f"never used read for {flag}" in text
    assert SECRET not in text and JWT not in text
    assert requests_since(server, before) == []  # not even the MCP request: refused before a connection


def test_the_auth_layer_never_reads_a_denied_variable(set_policy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reads themselves refuse (a saved record, the Python API or any later caller reaching them)."""
    monkeypatch.setenv("HUB_WORKLOAD_TOKEN", JWT)
    monkeypatch.setenv("HUB_CLIENT_SECRET", SECRET)
    path = write(set_policy, {"denied_env": ["HUB_*"]})
    with pytest.raises(FlowError) as error:
        WorkloadAssertion(env="HUB_WORKLOAD_TOKEN").read()
    assert error.value.kind == "policy_refused" and str(path) in str(error.value) and JWT not in str(error.value)
    with pytest.raises(FlowError) as error:
        sdk_provider._env("HUB_CLIENT_SECRET", "--client-secret-env")
    assert error.value.kind == "policy_refused" and str(path) in str(error.value) and SECRET not in str(error.value)
    # a saved record naming one is listed as forbidden (session/saved asks saved_server_refusal)
    record = {
        "target": "http://127.0.0.1:9/mcp",
        "oauth": {"sign_in": "oauth", "client_secret_env": "HUB_CLIENT_SECRET"},
    }
    refused = current_policy().saved_server_refusal(record)
    assert refused is not None and "denies environment variable HUB_CLIENT_SECRET" in refused
    write(set_policy, {"denied_env": ["OTHER_*"]})
    assert WorkloadAssertion(env="HUB_WORKLOAD_TOKEN").read() == JWT
    assert current_policy().saved_server_refusal(record) is None


# ---------------------------------------------------------------------------------------------- item 2: OAuth URLs
def test_oauth_requests_outside_allowed_urls_are_never_sent(
    set_policy: Path, server: OAuthServer, vault: TokenVault
) -> None:
    """The MCP endpoint is allowed, its authorization server's endpoints are not: only POST /mcp arrives."""
    path = write(set_policy, {"allowed_urls": ["http://127.0.0.1:*/mcp"]})
    before, registered = len(server.stats()["requests"]), server.stats()["registrations"]
    error = refused_connect(server, vault)
    text = str(error)
    assert error.kind == "policy_refused", text
    assert str(path) in text and "Not sending a sign-in request to http://127.0.0.1:" in text
    assert "allows only these URLs: http://127.0.0.1:*/mcp" in text
    seen = requests_since(server, before)
    assert seen and set(seen) == {"POST /mcp"}, seen  # no discovery, no registration, no token request
    assert server.stats()["registrations"] == registered and vault.entries() == []
    # the same server under a policy that lists it: the sign-in completes (the refusal was the policy's)
    write(set_policy, {"allowed_urls": ["http://127.0.0.1:*/*"]})
    session = new_session(vault, browser("allow"))
    try:
        session.connect("secure", server.url)
        assert call_echo(session, "secure", "allowed") == "allowed"
    finally:
        session.close()


def test_the_sign_in_page_outside_allowed_urls_is_never_opened(
    set_policy: Path, server: OAuthServer, vault: TokenVault
) -> None:
    """Every request the kernel sends is allowed, the authorization page the browser would open is not."""
    allowed = [f"http://127.0.0.1:*/{p}" for p in ("mcp", ".well-known/*", "register", "token")]
    path = write(set_policy, {"allowed_urls": allowed})
    opened: list[str] = []
    session = new_session(vault, opened.append)
    try:
        with pytest.raises(FlowError) as caught:
            session.connect("secure", server.url)
    finally:
        session.close()
    text = str(caught.value)
    assert caught.value.kind == "policy_refused", text
    assert "Not opening the sign-in page http://127.0.0.1:" in text and str(path) in text
    assert opened == [] and vault.entries() == []  # no browser sent there, no sign-in


def test_the_auth_layers_own_requests_ask_the_policy(set_policy: Path, server: OAuthServer) -> None:
    """The device grant's and identity assertion's client: refused before the request is sent."""
    path = write(set_policy, {"allowed_urls": ["http://127.0.0.1:*/mcp"]})
    before = len(server.stats()["requests"])
    metadata = f"{server.issuer}/.well-known/oauth-authorization-server"

    async def fetch() -> int:
        async with sdk_provider._oauth_http() as http:
            return (await http.get(metadata)).status_code

    with pytest.raises(FlowError) as error:
        asyncio.run(fetch())
    assert error.value.kind == "policy_refused" and str(path) in str(error.value)
    assert requests_since(server, before) == []
    write(set_policy, {"allowed_urls": ["http://127.0.0.1:*/.well-known/*"]})
    assert asyncio.run(fetch()) == 200


# ---------------------------------------------------------------------------------------------- the device grant
@pytest.fixture(scope="module")
def device_server() -> Iterator[OAuthServer]:
    """The real OAuth test server offering the device grant (RFC 8628): its page is its own ``/device``."""
    with running_oauth_server(consent="click", device_endpoint="default") as srv:
        yield srv


def local_echo(session: Session) -> None:
    """An in-notebook server connected beside the signed-in one (the policy does not govern the notebook's own)."""
    from mcp.server.mcpserver import MCPServer

    local = MCPServer("local")

    @local.tool()
    def echo(text: str) -> str:
        return text

    session.connect("local", local)


DEVICE_ALLOWED = [f"http://127.0.0.1:*/{p}" for p in ("mcp", ".well-known/*", "register", "token", "authorize")]


def test_a_device_grant_within_allowed_urls_signs_in(
    set_policy: Path, device_server: OAuthServer, vault: TokenVault
) -> None:
    write(
        set_policy,
        {"allowed_urls": [*DEVICE_ALLOWED, "http://127.0.0.1:*/device_authorization", "http://127.0.0.1:*/device"]},
    )
    before = device_server.stats()
    seen: list[str] = []
    session = new_session(vault, person("allow", seen))
    try:
        session.connect("secure", device_server.url)
        assert call_echo(session, "secure", "by code") == "by code"
        assert device_server.stats()["device_grants"] == before["device_grants"] + 1
        [url] = seen
        assert url.startswith(device_server.issuer + "/device?user_code=")
    finally:
        session.close()


def test_a_device_page_outside_allowed_urls_is_never_shown_nor_polled(
    set_policy: Path, device_server: OAuthServer, vault: TokenVault
) -> None:
    """The device authorization request is allowed, the page its code is typed at is not: refused, naming the file.

    Nothing else is lost: a connection already open in the session still answers, and the same
    session signs in by code once the page is allowed.
    """
    path = write(set_policy, {"allowed_urls": [*DEVICE_ALLOWED, "http://127.0.0.1:*/device_authorization"]})
    before = device_server.stats()
    seen: list[str] = []
    session = new_session(vault, person("allow", seen))
    try:
        local_echo(session)
        with pytest.raises(FlowError) as caught:
            session.connect("secure", device_server.url)
        text = str(caught.value)
        assert caught.value.kind == "policy_refused", text
        assert f"Not showing the device sign-in page {device_server.issuer}/device: " in text and str(path) in text
        assert f"{device_server.issuer}/device (host 127.0.0.1) is not among them" in text
        after = device_server.stats()
        assert "POST /device_authorization" in after["requests"][len(before["requests"]) :]  # asked, allowed
        assert seen == [] and not any("enter the code" in note for note in session.notes)  # never shown
        assert after["device_polls"] == before["device_polls"] and after["device_grants"] == before["device_grants"]
        assert after["authorization_code_grants"] == before["authorization_code_grants"] and vault.entries() == []
        assert "secure" not in session.registry
        assert call_echo(session, "local", "still here") == "still here"
        # the same session, the page allowed: the next sign-in shows the code and completes
        write(set_policy, {"allowed_urls": [*DEVICE_ALLOWED, "http://127.0.0.1:*/device*"]})
        session.connect("secure", device_server.url)
        assert call_echo(session, "secure", "after") == "after" and len(seen) == 1
    finally:
        session.close()


def test_a_device_authorization_endpoint_outside_allowed_urls_is_never_asked(
    set_policy: Path, device_server: OAuthServer, vault: TokenVault
) -> None:
    path = write(set_policy, {"allowed_urls": [*DEVICE_ALLOWED, "http://127.0.0.1:*/device"]})
    before = device_server.stats()
    seen: list[str] = []
    session = new_session(vault, person("allow", seen))
    try:
        with pytest.raises(FlowError) as caught:
            session.connect("secure", device_server.url)
    finally:
        session.close()
    text = str(caught.value)
    assert caught.value.kind == "policy_refused", text
    assert f"Not sending a sign-in request to {device_server.issuer}/device_authorization" in text
    assert str(path) in text
    after = device_server.stats()
    assert "POST /device_authorization" not in after["requests"][len(before["requests"]) :]
    assert seen == [] and after["device_polls"] == before["device_polls"] and vault.entries() == []


def test_a_refused_device_page_is_named_spelled_out_not_as_the_server_wrote_it(
    set_policy: Path, vault: TokenVault
) -> None:
    """The page is the authorization server's text: a browser drops its line breaks, so it passes as a URL.

    Refused, it is named in the error: spelled out (as the foreign-host notice does), so the server
    cannot write lines of its own into the cell's error (a fake "signed in, type the code at ..."),
    nor a terminal escape that hides or colours what follows.
    """
    injected = "\n\nAll is well: type the code at https://evil.example/login\x1b[8m"
    page = "http://127.0.0.1:{port}/device" + injected
    path = write(set_policy, {"allowed_urls": [*DEVICE_ALLOWED, "http://127.0.0.1:*/device_authorization"]})
    seen: list[str] = []
    with running_oauth_server(consent="click", device_endpoint="default", device_verification=page) as srv:
        session = new_session(vault, person("allow", seen))
        try:
            with pytest.raises(FlowError) as caught:
                session.connect("secure", srv.url)
        finally:
            session.close()
        stats = srv.stats()
    text = str(caught.value)
    assert caught.value.kind == "policy_refused", text
    assert str(path) in text and seen == [] and not stats["device_polls"]
    assert "\n" not in text and "\x1b" not in text  # no line nor escape of the server's own
    shown = f"{srv.issuer}/device\\u000a\\u000aAll is well: type the code at https://evil.example/login\\u001b[8m"
    assert f"Not showing the device sign-in page {shown}: " in text
