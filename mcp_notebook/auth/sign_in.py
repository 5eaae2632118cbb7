"""One connection's sign-in, and the ways back from the authorization server: ``SignIn``, ``LoopbackCatcher``.

The SDK calls ``SignIn.redirect`` with the authorization URL and then awaits ``callback``;
``redirect`` hands a ``SignInRequest`` to whoever can show it (the cell's panel, a browser opened
from plain Python) and the answer comes back through ``deliver`` from any thread: the Jupyter
Server extension's callback page (``CALLBACK_PATH``, relayed by the labextension), a pasted
redirect URL (``parse_redirect``), or ``LoopbackCatcher``. ``callback`` waits at most ``timeout``
seconds (the SDK has no timeout of its own). The ``state`` every way back is keyed by is the SDK's,
read from the parameters it appended (``expect_endpoint``), never the server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote_plus, urlsplit

from ..core.policy import current_policy
from ..errors import FlowError

__all__ = [
    "CALLBACK_PATH",
    "LoopbackCatcher",
    "SignIn",
    "SignInDenied",
    "SignInRefused",
    "SignInRequest",
    "SignInTimeout",
    "SignInUnavailable",
    "parse_redirect",
]

if TYPE_CHECKING:
    from .device import DeviceCode


CALLBACK_PATH = (
    "mcp-notebook/oauth/callback"  # under the Jupyter server's base URL (server_extension.py), or the catcher's
)


_ANSWER_KEYS = ("state", "code", "iss", "error", "error_description")


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
    device: DeviceCode | None = None  # a device grant (RFC 8628): its code is typed at ``url``; no way back to paste
    notice: str | None = None  # why this sign-in is not the one first tried (a device grant refused), shown above it


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
        raise ValueError(
            "that address has no sign-in answer in it (no state, and no code or error): paste the whole address of the page you were sent back to"
        )
    return answer


class SignIn:
    """One connection's sign-in: the SDK's redirect and callback handlers, with a timeout and several ways back."""

    def __init__(
        self,
        server: str,
        resource: str,
        redirect_uri: str | None,
        present: Callable[[SignInRequest, Callable[[dict[str, Any]], None]], None],
        timeout: float,
        *,
        device: str = "auto",
        relayed: bool = False,
    ) -> None:
        self.server, self.resource, self.redirect_uri = server, resource, redirect_uri
        self.present = present
        self.timeout = timeout
        # the device grant (RFC 8628), where the authorization server offers it: "always", "never", or
        # "auto" (when the browser's redirect does not come back to the kernel by itself: ``relayed``)
        self.device, self.relayed = device, relayed
        self.issuer: str | None = None  # set from the provider's discovered metadata before each redirect
        self.endpoint: str | None = None  # the authorization endpoint the SDK builds on (``expect_endpoint``)
        self.notice: str | None = None  # said with the next request shown (``SignInRequest.notice``), then dropped
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
        names = {
            unquote_plus(part.split("=", 1)[0]).strip().lower() for part in re.split(r"[&;?]", urlsplit(endpoint).query)
        }
        if "state" in names:
            raise SignInRefused(
                f"the authorization server's metadata gives an authorization endpoint that already carries a state "
                f"({endpoint[:300]}). A sign-in's state is made fresh by this notebook for each sign-in and is what its answer "
                "is matched by; one chosen by the server is refused"
            )  # fmt: skip
        self.endpoint = endpoint

    async def redirect(self, url: str) -> None:
        """The SDK's ``redirect_handler``: show the URL where a person can act (raises ``SignInUnavailable`` if nowhere).

        The page a person is sent to sign in at is the authorization server's choice (its metadata), so it
        must be within the administrator's ``allowed_urls`` as every request the kernel sends for a
        sign-in is: otherwise an allowed server could send a student to sign in anywhere.
        """
        if refused := current_policy().url_refusal(url):
            raise FlowError(f"Not opening the sign-in page {url[:300]}: {refused}.", kind="policy_refused")
        state = self._sdk_state(url)
        self._loop = asyncio.get_running_loop()
        self._future = self._loop.create_future()
        notice, self.notice = self.notice, None
        self.pending = SignInRequest(
            self.server, self.resource, url, state, self.issuer, self.redirect_uri, notice=notice
        )
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
            raise SignInRefused(
                "the authorization address is not the one this sign-in built on the authorization server's endpoint"
            )
        states = parse_qs(url[len(endpoint) + 1 :], keep_blank_values=True).get("state") or []
        if len(states) != 1 or not states[0]:
            raise SignInRefused("the authorization address carries no single state of this sign-in")
        return states[0]

    def wants_device_grant(self) -> bool:
        """Whether to ask the authorization server for a device code (if it offers the grant)."""
        return self.device == "always" or (self.device == "auto" and not self.relayed)

    async def show_device(self, device: DeviceCode) -> None:
        """Show a device grant's code and address where a person can act (as ``redirect`` does a URL).

        The page the code is typed at is the authorization server's choice, as the authorization URL is,
        so both its addresses must be within the administrator's ``allowed_urls`` (``redirect``): a refused
        one is never shown, and the token endpoint never polled for it.
        """
        for page in (device.verification_uri, device.verification_uri_complete):
            if page is not None and (refused := current_policy().url_refusal(page)):
                from ..core.urls import visible  # the server's text: a browser drops line breaks, the error must not

                shown = visible(page[:300])
                raise FlowError(f"Not showing the device sign-in page {shown}: {refused}.", kind="policy_refused")
        self._loop = asyncio.get_running_loop()
        self._future = self._loop.create_future()
        url = device.verification_uri_complete or device.verification_uri
        # the key a Cancel is matched by: the grant itself has no state (the device code is its secret)
        self.pending = SignInRequest(
            self.server, self.resource, url, secrets.token_urlsafe(16), self.issuer, None, device=device
        )
        try:
            self.present(self.pending, self.deliver)
        except BaseException:
            self.pending = None
            raise

    async def device_wait(self, seconds: float, deadline: float) -> None:
        """Wait ``seconds`` before the next poll; ``SignInDenied`` if the user cancels, ``SignInTimeout`` past ``deadline``.

        ``deadline`` (``loop.time()``) is the sooner of the code's expiry and this sign-in's timeout.
        """
        assert self._future is not None and self._loop is not None, "show_device comes first"
        left = deadline - self._loop.time()
        if left <= 0:
            self._settle(f"no answer within {self.timeout:g} s")
            raise SignInTimeout(self.timeout)
        try:
            answer = await asyncio.wait_for(asyncio.shield(self._future), min(seconds, left))
        except TimeoutError:
            return
        self._settle(answer.error or "cancelled")
        raise SignInDenied(answer.error or "cancelled", answer.error_description)

    def device_settled(self, error: str | None) -> None:
        """The device grant ended: with tokens (``None``) or with ``error``; the panel hears it."""
        self._settle(error)
        if error is None and self.after_success is not None:
            self.after_success()

    async def callback(self) -> Any:
        """The SDK's ``callback_handler``: the answer, within ``timeout`` seconds."""
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
        self.deliver(
            {
                "state": self.pending.state if self.pending else None,
                "error": "cancelled",
                "error_description": "sign-in cancelled in the notebook",
            }
        )

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
