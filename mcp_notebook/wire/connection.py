"""Named connections to MCP servers, each held open by one owner task on the runtime loop.

``mcp.Client`` must be entered and exited in the same task, so every connection gets an owner
task that keeps ``async with Client(...)`` open until ``close()``. Flows use the open session
directly from their own tasks (one hop per call, no relay through the owner).

What a connection talks to is its ``target.Target``; a session's connections by name are its
``registry.Registry``.

Why this module is long: a connection is one owner task holding the SDK's ``Client`` open, and
the 2025 back-channel's answerers (elicitation, sampling, roots, logging, progress, resource
changes) must live where its callbacks are registered; what it talks to is ``target.py``, the
connections by name ``registry.py``, the routing of a 2025 question to its call ``routing.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal

from ..core.threads import Runtime
from ..errors import FlowError, describe_exception, leaf_exceptions
from .roots import Roots
from .target import Target

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client import ClientRequestContext, IncomingMessage
    from mcp.client.session import ClientSession
    from mcp.types import (
        CreateMessageRequestParams,
        CreateMessageResult,
        CreateMessageResultWithTools,
        ElicitRequestParams,
        ElicitResult,
        ErrorData,
        ListRootsResult,
        LoggingLevel,
        LoggingMessageNotificationParams,
    )

    from ..auth.sign_in import SignIn
    from ..flows.flow import Flow
    from .routing import StreamRoutes
    from .tasks import TaskClient, TaskStatus

__all__ = ["Connection", "ConnectionFailed", "covers"]

Protocol = Literal["auto", "legacy", "2026-07-28"]
# connecting -> open (handshake done) -> closed (close(), disconnect, unload) | dead (the server went away under us)
State = Literal["connecting", "open", "closed", "dead"]
LOG_LIMIT = 500
CONNECTION_CLOSED = -32000  # the SDK's code for a transport that ended under a request
ROOTS_NOTIFY_TIMEOUT = 5.0  # a notification is one write; a server that blocks it longer is not waited for
PROBE = "server/discover"  # the request an automatic handshake opens with (2026-07-28)


class ConnectionFailed(FlowError):
    """Opening a connection failed (command missing, URL refusing, handshake error)."""


class Connection:
    """One open MCP client session plus what the notebook shows about it."""

    def __init__(
        self,
        name: str,
        target: Target,
        *,
        protocol: Protocol = "auto",
        log_level: LoggingLevel | None = "info",
        read_timeout: float | None = None,
        connect_timeout: float | None = None,
        runtime: Runtime | None = None,
        roots: Roots | None = None,
        sign_in_setup: Callable[[Connection], tuple[SignIn, Any]] | None = None,
        return_on_sign_in: bool = False,
    ) -> None:
        self.name = name
        self.roots = (
            roots if roots is not None else Roots()
        )  # answers every roots/list, in a flow or not (the session's)
        self.offers_roots = (
            False  # declared the roots capability when it opened (only once the user added a root; roots.py)
        )
        self.runtime = runtime if runtime is not None else Runtime()  # the loop this connection lives on
        self.target = target
        self.protocol = protocol
        self.log_level = log_level
        self.read_timeout = read_timeout
        self.connect_timeout = connect_timeout  # bound of the whole open/initialize handshake (None: none)
        # the last HTTP 401/403 an HTTP target answered ({"status", "www_authenticate"}); the SDK hides it
        # behind MCPError(-32603, "Server returned an error response")
        self.auth_refused: dict[str, Any] | None = None
        self.client: Client | None = None
        self.flows: list[Flow] = []  # active flows, oldest first (back-channel routing)
        self.logs: deque[dict[str, Any]] = deque(maxlen=LOG_LIMIT)
        self.resource_wakers: dict[
            str, Callable[[], None]
        ] = {}  # 2025: URI -> wake its watch (loop thread; notebook.watching)
        self.stderr: deque[str] = deque(maxlen=LOG_LIMIT)
        self.server_logged = 0  # log records of an in-process server kept in ``logs`` (wire/server_logs.py)
        self.state: State = "connecting"  # set on the loop thread, read from any
        self.dead: str | None = None  # why the connection is gone, if it died under us (state "dead")
        self._closing: asyncio.Event | None = None
        self._forget_at_stop: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._stderr_file: Any = None
        self._stderr_pump: threading.Thread | None = None
        self._stderr_lines = 0  # stderr lines read in all (marks count from here)
        self._call_mark = 0  # stderr mark when the latest call on this connection began (a death's last words)
        self._tools: dict[str, Any] | None = None
        self._listing_tools: asyncio.Future[dict[str, Any]] | None = None  # a tools/list in flight (loop thread)
        self._task_client: tuple[Client, TaskClient | None] | None = None  # task_client of the open client
        self.routes: StreamRoutes | None = None  # HTTP targets: which call's stream carried a back-channel question
        # OAuth (HTTP targets sending no Authorization of their own): the session builds the SDK's
        # provider and this connection's SignIn; a failure inside the auth flow is kept to explain it
        self.sign_in_setup = sign_in_setup
        self.sign_in: SignIn | None = None
        self.auth_failure: BaseException | None = None
        self.return_on_sign_in = (
            return_on_sign_in  # an interactive connect returns once a sign-in is shown, and opens later
        )
        self._sign_in_started: asyncio.Event | None = None
        self._ready: asyncio.Future[None] | None = None
        # the last HTTP error status (not 401/403) the target's own URL answered while opening (None: none)
        self.http_failed: int | None = None
        self.fell_back = False  # a stdio server that closed on the server/discover probe, opened with initialize
        self.stdout_noise = 0  # lines a stdio server wrote on stdout that are not MCP (kept in ``logs``)
        self._heard = 0  # MCP messages read from a stdio server since this open began
        self._auth: Any = None  # the SDK's OAuth provider (its discovered metadata explains failures)

    # ------------------------------------------------------------------ lifecycle (loop thread)
    async def open(self) -> None:
        """Start the owner task and wait until the handshake is done (or failed).

        A stdio server on an older SDK (1.6 and the like) exits on a request it does not know, and the
        automatic ``server/discover`` probe is one: the SDK's own fallback to ``initialize`` then finds
        the pipe closed. Such a server, which answered nothing before it went, is started once more
        with the 2025 handshake (``fell_back``), so it connects as it would with ``--protocol legacy``,
        but only when it may have stopped on the probe (``_closed_on_probe``): a command that crashes at
        start is not run twice.
        """
        mark = self._stderr_lines
        try:
            await self._open_once()
        except ConnectionFailed as failed:
            if not self._closed_on_probe(failed.code, failed.kind, mark):
                raise
            self.fell_back = True
            try:
                await self._open_once()
            except ConnectionFailed:
                self.fell_back = False
                raise
            self.logs.append(
                {
                    "level": "notice",
                    "logger": "mcp-notebook",
                    "data": "closed on server/discover: connected with initialize",
                }
            )

    def _exited_unheard(self, code: int | None, kind: str | None) -> bool:
        """Whether a stdio server went away during an automatic handshake without a single message of MCP."""
        return (
            self.protocol == "auto"
            and not self.fell_back
            and self.target.kind == "stdio"
            and code == CONNECTION_CLOSED
            and kind is None
            and self._heard == 0
        )

    def _closed_on_probe(self, code: int | None, kind: str | None, since: int) -> bool:
        """Whether such a server may have stopped on the ``server/discover`` probe, so that a 2025 start may connect it.

        It did when what it wrote on stderr since ``since`` names the probe (an older SDK's traceback
        quotes the method it refused), and may have when it wrote nothing. Anything else there (a
        traceback at start, "no API key") is a crash of its own: starting it again would run it twice.
        """
        if not self._exited_unheard(code, kind):
            return False
        said = self._stderr_since(since)
        return not said or any(PROBE in line for line in said)

    async def _open_once(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.state, self.dead, self.auth_refused, self.auth_failure = "connecting", None, None, None
        self.http_failed, self._heard = None, 0
        opened = self._call_mark = self._stderr_lines  # a failed start shows only what this start wrote
        self._closing = asyncio.Event()
        self._sign_in_started = asyncio.Event()
        self._ready = ready
        self._forget_at_stop = self.runtime.at_stop(self.close)  # a stopping runtime closes us cleanly first
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp-connection-{self.name}")
        deadline = asyncio.timeout(self.connect_timeout)
        try:
            async with deadline:
                await self._ready_or_sign_in(ready)
            if not ready.done():  # a person is signing in: the sign-in has its own timeout, not the handshake's
                if self.return_on_sign_in:
                    ready.add_done_callback(self._opened_late)
                    return
                await asyncio.shield(ready)
        except BaseException as exc:  # noqa: BLE001 - explained below, raised outside except
            error = exc
        else:
            return
        where = f"Could not connect {self.name!r} to {self.target.describe()}"
        if self.auth_failure is not None:
            raise self.sign_in_error(where)
        if deadline.expired():
            ready.cancel()  # the owner must not report into it any more
            await self._abandon()
            text = f"{where}: the server did not finish the handshake within {self.connect_timeout:g} s."
            details = {"timeout": self.connect_timeout, "connection": self}
            raise ConnectionFailed(
                self._with_stderr(text, opened), code=-32001, kind="connect_timeout", server=self.name, details=details
            )
        refused = self.sign_in_unreachable(error, where) or (
            self.auth_error(where) if describe_exception(error)[1] == -32603 else None
        )
        if refused is not None:
            raise refused
        text, code, data = describe_exception(error)
        if self.http_failed is not None and _sdk_stand_in(error):  # an HTTP status, not a JSON-RPC error
            text, code, data = _http_status_text(self.http_failed), None, {"status": self.http_failed}
        elif self.fell_back and code == CONNECTION_CLOSED:
            text = (
                "the server exited without answering, both on the 2026-07-28 probe (server/discover) and on the "
                "2025 handshake (initialize, as with --protocol legacy)"
            )
        kind = error.kind if isinstance(error, FlowError) else None  # bad sign-in flags stay "bad_input"
        if self._exited_unheard(code, kind) and not self._closed_on_probe(code, kind, opened):
            text = (
                "the server exited without answering; it was not started again, as what it wrote on stderr (below) "
                "does not name the 2026-07-28 probe (server/discover). A server on an older SDK that stops on that "
                "probe connects with --protocol legacy."
            )
        raise ConnectionFailed(self._with_stderr(f"{where}: {text}", opened), code=code, data=data, kind=kind)

    async def _ready_or_sign_in(self, ready: asyncio.Future[None]) -> None:
        """Until the handshake ends (its error raised) or a sign-in page is shown to a person."""
        assert self._sign_in_started is not None
        signing: asyncio.Future[Any] = asyncio.ensure_future(self._sign_in_started.wait())
        try:
            await asyncio.wait([ready, signing], return_when=asyncio.FIRST_COMPLETED)
        finally:
            signing.cancel()
        if ready.done():
            ready.result()

    def _opened_late(self, ready: asyncio.Future[None]) -> None:
        """An interactive connect that returned for a sign-in: the handshake ended later (its error is kept)."""
        error = None if ready.cancelled() else ready.exception()
        if error is not None and self.dead is None:
            self.state = "dead"  # not "closed": calls say why (a failed sign-in, a refused handshake)
            self.dead = (
                str(self.sign_in_error("sign-in")) if self.auth_failure is not None else describe_exception(error)[0]
            )

    async def wait_open(self, timeout: float | None) -> None:
        """Wait for a connection that is still signing in; raise its error when it did not open."""
        ready = self._ready
        if self.state != "connecting" or ready is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            raise FlowError(
                f"connection {self.name!r} is still waiting for you to sign in",
                kind="sign_in_pending",
                server=self.name,
            ) from None
        except Exception:  # noqa: BLE001 - explained
            if self.auth_failure is not None:
                raise self.sign_in_error(f"Could not connect {self.name!r}", FlowError) from None
            raise

    def sign_in_error(self, where: str, error_type: type[FlowError] = ConnectionFailed) -> FlowError:
        """The failed sign-in (``auth_failure``) in plain words, with a ``kind``.

        A server that answered 401 but offers no OAuth (no protected-resource or authorization-server
        metadata, so registration failed) wants some other credential: that is the plain 401 error.
        """
        from ..auth.sdk_provider import explain

        assert self.auth_failure is not None
        context = getattr(self._auth, "context", None)
        offered = context is not None and (
            context.protected_resource_metadata is not None or context.oauth_metadata is not None
        )
        registration_failed = (
            type(self.auth_failure).__name__ == "OAuthRegistrationError"
        )  # what a non-OAuth 401 ends in
        if not offered and registration_failed and self.auth_refused is not None:
            refused = self.auth_error(where, error_type)
            if refused is not None:
                refused.args = (f"{refused} (It offers no OAuth sign-in: no authorization server metadata.)",)
                return refused
        issuer = self.sign_in.issuer if self.sign_in is not None else None
        error = explain(self.auth_failure, self.name, self.target.url, issuer)
        error.details = {**(error.details or {}), "connection": self}
        return error

    def note_auth_failure(self, exc: BaseException) -> None:
        """The OAuth provider's flow raised: kept so the SDK's bare -32603 can be explained (any task)."""
        self.auth_failure = exc

    async def wait_closed(self) -> None:
        """Return when this connection ends (closed, disconnected, or its server gone); at once if it never opened."""
        owner = self._owner  # the task holding the Client open ends exactly when the connection does
        if owner is not None and not owner.done():
            await asyncio.wait([owner])

    def sign_in_shown(self) -> None:
        """A sign-in page is in front of a person now: an interactive ``open`` may return (loop thread)."""
        if self._sign_in_started is not None:
            self._sign_in_started.set()

    async def _abandon(self) -> None:
        """Give up a handshake that took too long: stop the owner task (it closes the transport, ends a child)."""
        owner = self._owner
        if self._closing is not None:
            self._closing.set()
        if owner is not None and not owner.done():
            owner.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(owner, timeout=10)

    def auth_error(self, where: str, error_type: type[FlowError] = ConnectionFailed) -> FlowError | None:
        """The error for an HTTP 401/403 the server answered (``None`` when it did not): what it wants, how to give it."""
        refused = self.auth_refused
        if refused is None:
            return None
        status, challenge = refused["status"], refused.get("www_authenticate") or ""
        sent = bool(self.target.headers or self.target.bearer_env or self.target.served_token)
        why = "it wants credentials" if status == 401 else "it refused access: it wants credentials"
        if sent:
            why += " (it did not accept the ones sent)"
        text = (
            f"{where}: the server answered HTTP {status} ({'Unauthorized' if status == 401 else 'Forbidden'}): {why}"
            f"{f' (WWW-Authenticate: {challenge})' if challenge else ''}. Give them when connecting: bearer_env='VAR' "
            "(a token in environment variable VAR, sent as Authorization: Bearer) or headers={'Authorization': '...'}."
        )
        details = {"status": status, "www_authenticate": challenge, "url": self.target.url, "connection": self}
        return error_type(text, kind="auth_required", server=self.name, details=details)

    def sign_in_unreachable(
        self, error: BaseException, where: str, error_type: type[FlowError] = ConnectionFailed
    ) -> FlowError | None:
        """The server answered 401 and the sign-in's own request (its metadata, its authorization server)
        could not be sent: that, not "could not reach the server" (``None`` when it is not the case).

        httpx2 raises such a failure out of the request the OAuth flow was authenticating, so it reads
        like the MCP server being down; the failed request's address tells them apart.
        """
        import httpx2

        refused = self.auth_refused
        if refused is None or refused["status"] != 401:
            return None
        failed = next((e for e in leaf_exceptions(error) if isinstance(e, httpx2.TransportError)), None)
        try:
            url = str(failed.request.url) if failed is not None else ""
        except RuntimeError:  # an httpx2 error raised outside a request has none
            url = ""
        if not url or _same_endpoint(url, self.target.url):
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
        details = {"status": 401, "metadata_url": url, "reason": reason, "url": self.target.url, "connection": self}
        return error_type(text, kind="sign_in_unreachable", server=self.name, details=details)

    async def _on_http_response(self, response: Any) -> None:
        """An httpx2 response hook: remember a 401/403 (the SDK reports it as a bare internal error)."""
        status = response.status_code
        if status >= 400 and status not in (401, 403) and _same_endpoint(str(response.request.url), self.target.url):
            self.http_failed = status  # the SDK turns a 404 into -32601 "Not Found", others into a bare -32603
        elif status < 400 and _same_endpoint(str(response.request.url), self.target.url):
            self.http_failed = None
        if status in (401, 403):
            self.auth_refused = {"status": status, "www_authenticate": response.headers.get("www-authenticate", "")}
        elif (
            status < 400
            and self.auth_refused is not None
            and _same_endpoint(str(response.request.url), self.target.url)
        ):
            self.auth_refused = None  # the server itself accepted (a sign-in's metadata answering 200 is not that)

    async def _own(self, ready: asyncio.Future[None]) -> None:
        from mcp import Client

        from .apps_ext import advertisement
        from .tasks import TasksExtension

        if self.target.kind == "inproc":  # a 2025 in-memory server runs in tasks spawned from this one
            from .server_logs import SERVING, install

            install()
            SERVING.set(self.server_log)
        try:
            server, http = self._server_argument()
            self.offers_roots = self.roots.offered  # fixed for this session: the SDK builds the capabilities now
            client = Client(
                server,
                mode="legacy" if self.fell_back else self.protocol,
                read_timeout_seconds=self.read_timeout,
                elicitation_callback=self._on_elicit,
                sampling_callback=self._on_sample,
                sampling_capabilities=_sampling_capabilities(),
                list_roots_callback=self._on_roots if self.offers_roots else None,
                logging_callback=self._on_log,
                log_level=self.log_level,
                message_handler=self._on_message,
                extensions=[TasksExtension(self._on_task_status), advertisement()],
            )
            if http is not None:
                async with http:
                    await self._hold(client, ready)
            else:
                await self._hold(client, ready)
        except BaseException as exc:  # noqa: BLE001 - the owner must report, never raise into the void
            if not ready.done():
                ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                self.dead = describe_exception(exc)[0]
        finally:
            self.client = None
            self.state = "dead" if self.dead else "closed"
            if self._forget_at_stop is not None:
                self._forget_at_stop()
                self._forget_at_stop = None
            if self._stderr_file is not None:
                self._stderr_file.close()
                self._stderr_file = None

    async def _hold(self, client: Client, ready: asyncio.Future[None]) -> None:
        assert self._closing is not None
        from .result_type import complete_by_default

        async with client:
            complete_by_default(client.session)  # a result without resultType is complete (SEP-2322)
            self.client = client
            self.state = "open"
            ready.set_result(None)
            await self._closing.wait()

    def _heard_from(self, message: Any) -> None:
        """An item read from a stdio server: a message of MCP, or a stdout line that is not MCP (its parse error).

        Such a line (a server logging with ``print``) is kept in the log as it is read, before the
        handshake's answer that follows it, so the connect cell can say how many there were.
        """
        if not isinstance(message, Exception):
            self._heard += 1
            return
        line = _stdout_line(message)
        if line is not None:
            self.stdout_noise += 1
            self.logs.append({"level": "warning", "logger": "stdout (not MCP)", "data": line})

    def _server_ended(self) -> None:
        """The transport's read side ended while we still held it open: the server went away."""
        if self._closing is not None and not self._closing.is_set():
            self.dead = (
                "the server process exited" if self.target.kind == "stdio" else "the server closed the connection"
            )
            self.state = "dead"
            self._closing.set()  # the owner leaves ``async with Client`` as on a close

    async def close(self) -> None:
        """Close the session from any task on the loop; the owner task does the actual exit."""
        if self._closing is not None:
            self._closing.set()
        if self._owner is not None and not self._owner.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._owner), timeout=10)
            except Exception:  # noqa: BLE001 - closing must not fail (a timeout included)
                self._owner.cancel()
        elif self.state == "connecting":
            self.state = "closed"

    def _server_argument(self) -> tuple[Any, Any]:
        """What ``Client`` receives, plus the httpx2 client to own for HTTP targets."""
        t = self.target
        if t.kind == "inproc":
            return t.obj, None
        if t.kind == "stdio":
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            params = StdioServerParameters(command=t.command[0], args=t.command[1:], env=_child_env(t.env), cwd=t.cwd)
            transport = stdio_client(params, errlog=self._stderr_pipe())
            return _watch_end(transport, self._server_ended, self._heard_from), None
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

        from .routing import StreamRoutes

        headers = dict(t.headers)
        if t.bearer_env:
            token = os.environ.get(t.bearer_env)
            if not token:
                raise FlowError(f"environment variable {t.bearer_env} is not set (needed by --bearer-env)")
            headers["Authorization"] = f"Bearer {token}"
        if t.served_token is not None and not any(k.lower() == "authorization" for k in headers):
            own = t.served_token()
            if own:
                headers["Authorization"] = f"Bearer {own}"
        self.routes = StreamRoutes(httpx2.AsyncHTTPTransport())
        auth = None
        if self.sign_in_setup is not None and not any(k.lower() == "authorization" for k in headers):
            self.sign_in, auth = self.sign_in_setup(self)
            self._auth = auth
        http = httpx2.AsyncClient(
            headers=headers or None,
            timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),  # the SDK's defaults
            transport=self.routes,  # type: ignore[arg-type]  # duck-typed: httpx2 only calls the transport methods
            event_hooks={"response": [self._on_http_response]},
            auth=auth,
        )
        return streamable_http_client(t.url, http_client=http), http

    def _stderr_pipe(self) -> Any:
        """A real pipe for the child's stderr: a kernel's ``sys.stderr`` has no file descriptor."""
        read_fd, write_fd = os.pipe()
        reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
        self._stderr_file = os.fdopen(write_fd, "w")

        def pump() -> None:
            with reader:
                for line in reader:
                    self.stderr.append(line.rstrip("\n"))
                    self._stderr_lines += 1

        self._stderr_pump = threading.Thread(target=pump, name=f"mcp-stderr-{self.name}", daemon=True)
        self._stderr_pump.start()
        return self._stderr_file

    def stderr_mark(self) -> int:
        """How many stderr lines the server has written so far; ``_with_stderr(text, since=mark)`` shows only later ones."""
        return self._stderr_lines

    def _with_stderr(self, text: str, since: int = 0) -> str:
        """``text`` plus the last stderr lines written since ``since`` (a mark taken when the failing request began)."""
        fresh = self._stderr_since(since)
        if fresh:
            tail = "\n".join(fresh[-8:])
            return f"{text}\nThe server wrote on stderr:\n{tail}"
        return text

    def _stderr_since(self, since: int) -> list[str]:
        """The stderr lines written since the mark ``since`` (those still kept)."""
        pump = self._stderr_pump
        if pump is not None and pump.is_alive() and self.state != "open":
            pump.join(0.5)  # the server is gone: let its last words (a traceback) arrive first
        fresh = min(self._stderr_lines - since, len(self.stderr))
        return list(self.stderr)[-fresh:] if fresh > 0 else []

    # ------------------------------------------------------------------ state
    @property
    def live(self) -> Client:
        """The open client, or a clear error when the connection is gone."""
        client = self.client
        if client is None or self.state != "open":
            fields: dict[str, Any] = dict(server=self.name, details={"connection": self})
            if self.state == "dead":
                text = f"connection {self.name!r} is dead ({self.dead})."
                raise FlowError(
                    self._with_stderr(text, self._call_mark), kind="connection_dead", reason=self.dead, **fields
                )
            if self.state == "connecting" and self.sign_in is not None and self.sign_in.pending is not None:
                text = (
                    f"connection {self.name!r} is waiting for you to sign in (the panel in the cell that connected it)."
                )
                raise FlowError(text, kind="sign_in_pending", **fields)
            raise FlowError(
                f"connection {self.name!r} is {self.state}.", kind="connection_closed", reason=self.state, **fields
            )
        return client

    @property
    def session(self) -> ClientSession:
        """The open session (the manual, round-by-round path)."""
        return self.live.session

    @property
    def is_open(self) -> bool:
        return self.state == "open" and self.client is not None

    @property
    def protocol_version(self) -> str | None:
        client = self.client
        return client.session.protocol_version if client is not None and self.state == "open" else None

    @property
    def server_label(self) -> str:
        """The server's own name and version (``server_name``), or "unnamed server" when it is not known."""
        return self.server_name or "unnamed server"

    @property
    def server_name(self) -> str | None:
        """The server's own name and version: what its handshake said, or the ``name`` of a server object in the notebook.

        A connection pinned to 2026-07-28 (``--protocol 2026-07-28``) skips ``server/discover``, the only
        place a modern server names itself, so an in-process server's own ``name`` is read instead; a
        remote one stays unnamed (never the connection's name, which would read as the server's).
        """
        from ..core.text import one_line

        info = self.client.session.server_info if self.client is not None else None
        if info is not None:
            told = f"{info.name} {info.version}".strip() if info.version else info.name
        else:
            own = getattr(self.target.obj, "name", None) if self.target.kind == "inproc" else None
            told = own if isinstance(own, str) else ""
        printable = "".join(ch if ch.isprintable() else " " for ch in told)  # no terminal escapes or control characters
        return one_line(printable, 80) or None  # the server chooses it: one line, bounded

    @property
    def is_legacy(self) -> bool:
        version = self.protocol_version
        return version is not None and not version.startswith("2026")

    @property
    def cached_tools(self) -> dict[str, Any] | None:
        """Tools as last listed (read from any thread; the dict is replaced, never mutated)."""
        return self._tools

    async def opened(self) -> None:
        """A connection finishing its handshake after a sign-in: wait for it (not while the person is still signing in)."""
        if self.state == "connecting" and not (self.sign_in is not None and self.sign_in.pending is not None):
            await self.wait_open(self.connect_timeout)

    async def tools(self, refresh: bool = False) -> dict[str, Any]:
        """Tools by name (cached per connection; refreshed on demand)."""
        await self.opened()
        if self._tools is not None and not refresh:
            return self._tools
        listing = self._listing_tools
        if listing is None or listing.done():  # one listing at a time: a hundred calls starting together share it
            listing = self._listing_tools = asyncio.ensure_future(self._list_tools())
        self._tools = await asyncio.shield(listing)
        return self._tools

    async def _list_tools(self) -> dict[str, Any]:
        tools: dict[str, Any] = {}
        cursor: str | None = None
        while True:
            page = await self.live.list_tools(cursor=cursor)
            tools.update({tool.name: tool for tool in page.tools})
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def list_all(self, kind: Literal["prompts", "resources", "resource_templates"]) -> list[Any]:
        """Every prompt, resource or resource template, following pagination."""
        await self.opened()
        method = getattr(self.live, f"list_{kind}")
        attr = {"prompts": "prompts", "resources": "resources", "resource_templates": "resource_templates"}[kind]
        items: list[Any] = []
        cursor: str | None = None
        while True:
            page = await method(cursor=cursor)
            items.extend(getattr(page, attr))
            cursor = page.next_cursor
            if not cursor:
                return items

    # ------------------------------------------------------------------ back-channel (2025 servers)
    @property
    def tags_calls(self) -> bool:
        """Whether calls go out tagged so back-channel questions can be routed by stream (2025 over HTTP)."""
        return self.routes is not None and self.is_legacy

    def _running(self) -> list[Flow]:
        return [flow for flow in self.flows if not flow.finished]

    def _asker(self, request_id: Any, meta: Any = None) -> tuple[Flow | None, list[Flow]]:
        """The flow a server→client request belongs to, and the running flows when that cannot be told.

        A question of a 2025 task names it (``_meta`` related-task): it goes to the flow following
        that task. Over streamable HTTP the question arrives on the stream of the call that asks
        (``routing.StreamRoutes``). Elsewhere a 2025 request carries no link to its call: with one
        call running it is that call's; with several, the oldest shows it and all are listed, so
        the question is answered without any call's presets.
        """
        from .tasks import RELATED_TASK

        running = self._running()
        related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
        task_id = related.get("taskId") if isinstance(related, dict) else None
        if isinstance(task_id, str):
            for flow in running:
                if flow.task is not None and flow.task.task_id == task_id:
                    return flow, []
        tag = self.routes.origin(request_id) if self.routes is not None else None
        if tag is not None:
            for flow in running:
                if flow.route_tag == tag:
                    return flow, []
        if len(running) <= 1:
            return (running[0] if running else None), []
        return running[0], running

    # The SDK's ElicitationFnT, SamplingFnT, ListRootsFnT, LoggingFnT and MessageHandlerFnT.
    async def _on_elicit(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        """A 2025 back-channel question: the flow's answer, or what the server is told when there is none.

        A question nobody in this run can answer (headless without a fitting preset, a form over the
        limits, a link a headless run cannot open) is answered ``cancel``, the elicitation result for
        "dismissed without an explicit choice", which every server handles; the reason (the missing
        field, the flag to give) stays in the notebook, where the flow fails with it. Left to the SDK,
        the exception would reach the server as a JSON-RPC error with code 0 and our hint as its text.
        A failure of ours is -32603 (internal error) without its text.
        """
        from mcp.types import INTERNAL_ERROR, ElicitResult, ErrorData

        flow, candidates = self._asker(context.request_id, context.meta)
        if flow is None:
            return ErrorData(code=-32600, message="No notebook flow is waiting for this request")
        try:
            answer: ElicitResult | ErrorData = await flow.answer_elicitations(
                {str(context.request_id): params}, single=True, candidates=candidates
            )
            return answer
        except FlowError:
            if getattr(flow, "task", None) is not None:
                # A task's question stays open on the server for a later `%mcp resume` (the task is
                # kept): a cancel would end it. The server gets a real error code, not our hint.
                return ErrorData(
                    code=INTERNAL_ERROR, message="No answer in this run; the question stays open for a later resume"
                )
            # the flow keeps the reason and fails with it (Flow.answer_elicitations)
            return ElicitResult(action="cancel")
        except Exception as exc:  # noqa: BLE001 - a bug of ours: the server gets a real code, the log its kind (its text may quote answers)
            self.logs.append(
                {
                    "level": "error",
                    "logger": "mcp-notebook",
                    "data": f"could not answer an elicitation: {type(exc).__name__}",
                }
            )
            return ErrorData(code=INTERNAL_ERROR, message="The notebook client failed while answering this request")

    async def _on_sample(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | CreateMessageResultWithTools | ErrorData:
        from mcp.types import ErrorData

        flow, candidates = self._asker(context.request_id, context.meta)
        if flow is None:
            return ErrorData(code=-32600, message="No notebook flow is waiting for this request")
        # sampling has no per-call presets (the session's models answer), so the oldest call shows it either way
        reply: CreateMessageResult | CreateMessageResultWithTools | ErrorData = await flow.answer_sampling(
            str(context.request_id), params, single=True
        )
        return reply

    async def _on_roots(self, context: ClientRequestContext) -> ListRootsResult | ErrorData:
        """Roots belong to the session: asked after connecting or after ``roots/list_changed``, no flow needed."""
        result = self.roots.result()
        flow, _ = self._asker(context.request_id, context.meta)
        if flow is not None:  # asked during a call: the flow's notes say so, same answer
            flow.answerer.note_roots(flow, result)
        return result

    def server_log(self, entry: dict[str, Any]) -> None:
        """A log record of this connection's in-process server (``wire/server_logs.py``), kept in its log."""
        self.logs.append(entry)
        self.server_logged += 1

    @property
    def server_sink(self) -> Callable[[dict[str, Any]], None] | None:
        """Where an in-process server's log records go while its code runs (``None`` for other targets).

        The handler that routes them is installed when the connection opens (``_own``), not per call.
        """
        return self.server_log if self.target.kind == "inproc" else None

    async def _on_log(self, params: LoggingMessageNotificationParams) -> None:
        entry = {"level": params.level, "logger": params.logger, "data": params.data}
        self.logs.append(entry)
        running = self._running()
        if len(running) == 1:  # with several calls running, a log line belongs to the connection's log only
            running[0].on_log(entry)

    async def _on_task_status(self, status: TaskStatus) -> None:
        """A 2025 ``notifications/tasks/status``: to the flow following that task, if any."""
        for flow in self._running():
            if flow.task is not None and flow.task.task_id == status.task_id:
                flow.task_notified(status)

    @property
    def task_client(self) -> TaskClient | None:
        """The task methods of this server, or ``None`` when it offers no tasks (either generation)."""
        client = self.client
        if client is None or self.state != "open":
            return None
        cached = self._task_client
        if cached is not None and cached[0] is client:  # a server's capabilities are fixed for the life of its session
            return cached[1]
        self._task_client = (client, self._make_task_client(client))
        return self._task_client[1]

    def _make_task_client(self, client: Client) -> TaskClient | None:
        from .tasks import TASKS_EXTENSION, TaskClient

        session = client.session
        capabilities = session.server_capabilities
        if capabilities is None:
            return None
        if self.is_legacy:
            tasks = capabilities.tasks
            calls = (
                tasks.requests.tools.call
                if tasks is not None and tasks.requests is not None and tasks.requests.tools is not None
                else None
            )
            if tasks is None or calls is None:
                return None
            return TaskClient(session, "2025", can_list=tasks.list is not None, can_cancel=tasks.cancel is not None)
        if TASKS_EXTENSION in (capabilities.extensions or {}):
            return TaskClient(session, "2026")
        return None

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            if self.target.kind == "stdio" and _stdout_line(message) is not None:
                return  # kept by ``_heard_from`` as it was read
            self.logs.append({"level": "error", "logger": "transport", "data": str(message)})
            return
        self._resource_updated(message)

    def _resource_updated(self, message: Any) -> None:
        """2025 ``notifications/resources/updated``: wake whoever follows that URI or one it lies under (loop thread).

        The spec lets a server name a sub-resource of the subscribed one. Never waits: an in-process
        server's ``send_resource_updated`` runs this inline.
        """
        if getattr(message, "method", None) != "notifications/resources/updated":
            return
        uri = getattr(getattr(message, "params", None), "uri", None)
        if not isinstance(uri, str) or not self.resource_wakers:
            return
        for watched, wake in list(self.resource_wakers.items()):
            if covers(watched, uri):
                wake()

    # ------------------------------------------------------------------ roots (2025 servers may cache them)
    async def send_roots_changed(self) -> bool:
        """Send ``notifications/roots/list_changed``; only 2025-generation sessions have it.

        A 2026-07-28 server asks for roots inside each request, so it never holds a stale list.
        Returns whether the server was told.
        """
        import warnings

        client = self.client
        if client is None or not self.is_legacy or not self.offers_roots:
            return False  # a server not offered roots must not be sent a roots notification
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # flagged deprecated with roots (SEP-2577); still how 2025 servers learn
            await client.send_roots_list_changed()
        return True


@asynccontextmanager
async def _watch_end(
    transport: Any, on_end: Callable[[], None], on_message: Callable[[Any], None]
) -> AsyncIterator[tuple[Any, Any]]:
    """``transport`` whose read stream calls ``on_message(item)`` for each item and ``on_end()`` at its end of stream.

    The SDK ends a stdio session's read stream when the server process exits, and then only fails
    requests with "Connection closed"; nothing else tells the owner task, which would hold a dead
    session forever. Whether anything arrived before tells a server that closed on the
    ``server/discover`` probe (``Connection.open``). While the transport runs, the SDK's traceback
    for a stdout line that is not MCP is left out (``server_logs.quiet_stdout``): ``on_message``
    keeps the line in the connection's log instead.
    """
    from .server_logs import quiet_stdout

    with quiet_stdout():
        async with transport as (read_stream, write_stream):
            yield _EndWatch(read_stream, on_end, on_message), write_stream


class _EndWatch:
    """A read stream (same shape as the SDK's ``ContextReceiveStream``) that reports its items and its end of stream."""

    def __init__(self, inner: Any, on_end: Callable[[], None], on_message: Callable[[Any], None]) -> None:
        self._inner, self._on_end, self._on_message = inner, on_end, on_message

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            self._on_end()
            raise
        self._on_message(item)
        return item

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _EndWatch:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _EndWatch:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self._inner.close()


def _same_endpoint(a: str, b: str) -> bool:
    """The same scheme, host, port and path (httpx2's normalised form: a bare host is ``/``)."""
    import httpx2

    try:
        x, y = httpx2.URL(a), httpx2.URL(b)
    except Exception:  # noqa: BLE001 - an address httpx2 cannot parse is no endpoint of ours
        return False
    return (x.scheme, x.host, x.port, x.path) == (y.scheme, y.host, y.port, y.path)


def _stdout_line(error: Exception) -> str | None:
    """The stdout line a stdio server wrote that is not JSON-RPC, from the SDK's parse error (``None``: another error)."""
    from pydantic import ValidationError

    from ..core.text import clip

    if not isinstance(error, ValidationError):
        return None
    issues = error.errors()
    line = issues[0].get("input") if issues else None
    return clip(line, 2000) if isinstance(line, str) else None


def _sdk_stand_in(error: BaseException) -> bool:
    """Whether the handshake failed with the error the SDK makes of an HTTP status without a JSON-RPC body."""
    from mcp import MCPError

    failed = next((e for e in leaf_exceptions(error) if isinstance(e, MCPError)), None)
    return failed is not None and (failed.code, failed.message) in (
        (-32601, "Not Found"),
        (-32603, "Server returned an error response"),
    )


def _http_status_text(status: int) -> str:
    """What an HTTP error status at the server's URL means for connecting to it."""
    if status == 404:
        return "HTTP 404: is the path right (most servers use /mcp)?"
    if status == 405:
        return "HTTP 405 (method not allowed): is this the MCP endpoint (most servers use /mcp)?"
    return f"HTTP {status}: the server answered with an error, not MCP"


def _child_env(extra: dict[str, str]) -> dict[str, str] | None:
    """The SDK passes only a safe subset of the parent environment; add the user's variables."""
    return dict(extra) if extra else None


def _sampling_capabilities() -> Any:
    """Advertise tool-enabled sampling so ``Sample(tools=...)`` resolvers work."""
    from mcp.types import SamplingCapability, SamplingToolsCapability

    return SamplingCapability(tools=SamplingToolsCapability())


def covers(watched: str, changed: str) -> bool:
    """Whether a change of ``changed`` concerns a follower of ``watched`` (the same URI, or one under it)."""
    return changed == watched or changed.startswith(watched.rstrip("/") + "/")
