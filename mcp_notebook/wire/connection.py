"""Named connections to MCP servers, each held open by one owner task on the runtime loop.

``mcp.Client`` must be entered and exited in the same task, so every connection gets an owner
task that keeps ``async with Client(...)`` open until ``close()``. Flows use the open session
directly from their own tasks (one hop per call, no relay through the owner).

What a connection talks to is its ``target.Target``; a session's connections by name are its
``registry.Registry``.

This module is the connection's life: opening (with the fallback for servers on older SDKs),
holding, closing, its state and what it lists. Its parts by job: what ``Client`` is given for a
target is ``transports.py``; the 2025 back-channel's answerers (elicitation, sampling, roots,
logs, task status, resource changes) are ``back_channel.py``, the routing of a question to its
call over HTTP ``routing.py``; a failure said in plain words (sign-in above all) is
``open_failures.py``, and which server on an older SDK is started again with the 2025
handshake ``probe_fallback.py``; the connections by name are ``registry.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from ..core.policy import current_policy
from ..core.text import one_line
from ..core.threads import Runtime
from ..errors import FlowError, describe_exception
from . import open_failures
from .apps_ext import advertisement
from .back_channel import BackChannel, Caller, covers
from .open_failures import ConnectionFailed, http_status_text, sdk_stand_in
from .probe_fallback import closed_on_probe, unanswered
from .result_type import complete_by_default
from .roots import Roots
from .routing import StreamRoutes
from .server_logs import SERVING, install
from .stderr_tail import StderrTail
from .target import Target
from .transports import http_client, http_headers, stdio_transport, stdout_line

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client.session import ClientSession
    from mcp.types import LoggingLevel

    from ..auth.sign_in import SignIn
    from .tasks import TaskClient

__all__ = ["Caller", "Connection", "ConnectionFailed", "covers"]

Protocol = Literal["auto", "legacy", "2026-07-28"]
# connecting -> open (handshake done) -> closed (close(), disconnect, unload) | dead (the server went away under us)
State = Literal["connecting", "open", "closed", "dead"]
LOG_LIMIT = 500
ROOTS_NOTIFY_TIMEOUT = 5.0  # a notification is one write; a server that blocks it longer is not waited for


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
        self.flows: list[Caller] = []  # active flows, oldest first (back-channel routing)
        self.back = BackChannel(self)  # the 2025 back-channel's answerers (the SDK's callbacks)
        self.logs: deque[dict[str, Any]] = deque(maxlen=LOG_LIMIT)
        self.resource_wakers: dict[
            str, Callable[[], None]
        ] = {}  # 2025: URI -> wake its watch (loop thread; notebook.watching)
        self.stderr_tail = StderrTail(LOG_LIMIT)  # a stdio server's stderr (its last words explain failures)
        self.stderr = self.stderr_tail.lines
        self.server_logged = 0  # log records of an in-process server kept in ``logs`` (wire/server_logs.py)
        self.state: State = "connecting"  # set on the loop thread, read from any
        self.dead: str | None = None  # why the connection is gone, if it died under us (state "dead")
        self._closing: asyncio.Event | None = None
        self._forget_at_stop: Any = None
        self._owner: asyncio.Task[None] | None = None
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
        self.heard = 0  # MCP messages read from a stdio server since this open began
        self.auth_provider: Any = None  # the SDK's OAuth provider (its discovered metadata explains failures)

    # ------------------------------------------------------------------ lifecycle (loop thread)
    async def open(self) -> None:
        """Start the owner task and wait until the handshake is done (or failed).

        A stdio server on an older SDK (1.6 and the like) exits on a request it does not know, and the
        automatic ``server/discover`` probe is one: the SDK's own fallback to ``initialize`` then finds
        the pipe closed. Such a server, which answered nothing before it went, is started once more
        with the 2025 handshake (``fell_back``), so it connects as it would with ``--protocol legacy``,
        but only when it may have stopped on the probe (``probe_fallback.py``): a command that crashes
        at start is not run twice.
        """
        mark = self.stderr_tail.count
        try:
            await self._open_once()
        except ConnectionFailed as failed:
            if not closed_on_probe(self, failed.code, failed.kind, mark):
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

    async def _open_once(self) -> None:
        # The administrator's policy, asked at every open (the first, a reconnect, a resume, a Dask worker's,
        # the 2025 restart above) before a process starts, a socket opens or a variable is read: a policy
        # tightened since the last open applies now, and a variable denied since is not read again.
        if forbidden := current_policy().target_refusal(self.target):
            raise ConnectionFailed(
                f"Not connecting {self.name!r}: {forbidden}.", kind="policy_refused", server=self.name
            )
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.state, self.dead, self.auth_refused, self.auth_failure = "connecting", None, None, None
        self.http_failed, self.heard = None, 0
        opened = self._call_mark = self.stderr_tail.count  # a failed start shows only what this start wrote
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
        if self.http_failed is not None and sdk_stand_in(error):  # an HTTP status, not a JSON-RPC error
            text, code, data = http_status_text(self.http_failed), None, {"status": self.http_failed}
        kind = error.kind if isinstance(error, FlowError) else None  # bad sign-in flags stay "bad_input"
        text = unanswered(self, code, kind, opened) or text  # a stdio server that said nothing of MCP
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
        """The failed sign-in (``auth_failure``) in plain words (``open_failures.sign_in_error``)."""
        return open_failures.sign_in_error(self, where, error_type)

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
        """The error for an HTTP 401/403 the server answered, or ``None`` (``open_failures.auth_error``)."""
        return open_failures.auth_error(self, where, error_type)

    def sign_in_unreachable(
        self, error: BaseException, where: str, error_type: type[FlowError] = ConnectionFailed
    ) -> FlowError | None:
        """A sign-in whose own request could not be sent, or ``None`` (``open_failures.sign_in_unreachable``)."""
        return open_failures.sign_in_unreachable(self, error, where, error_type)

    async def _own(self, ready: asyncio.Future[None]) -> None:
        from mcp import Client

        from .tasks import TasksExtension  # the SDK's extension types: imported when a connection opens

        if self.target.kind == "inproc":  # a 2025 in-memory server runs in tasks spawned from this one
            install()
            SERVING.set(self.server_log)
        try:
            server, http = self._server_argument()
            self.offers_roots = self.roots.offered  # fixed for this session: the SDK builds the capabilities now
            client = Client(
                server,
                mode="legacy" if self.fell_back else self.protocol,
                read_timeout_seconds=self.read_timeout,
                elicitation_callback=self.back.on_elicit,
                sampling_callback=self.back.on_sample,
                sampling_capabilities=_sampling_capabilities(),
                list_roots_callback=self.back.on_roots if self.offers_roots else None,
                logging_callback=self.back.on_log,
                log_level=self.log_level,
                message_handler=self.back.on_message,
                extensions=[TasksExtension(self.back.on_task_status), advertisement()],
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
            self.stderr_tail.close_pipe()

    async def _hold(self, client: Client, ready: asyncio.Future[None]) -> None:
        assert self._closing is not None
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
            self.heard += 1
            return
        line = stdout_line(message)
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
            return stdio_transport(t, self.stderr_tail.pipe(self.name), self._server_ended, self._heard_from), None
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = http_headers(t)
        self.routes = StreamRoutes(httpx2.AsyncHTTPTransport())
        auth = None
        if self.sign_in_setup is not None and not any(k.lower() == "authorization" for k in headers):
            self.sign_in, auth = self.sign_in_setup(self)
            self.auth_provider = auth
        hook = functools.partial(open_failures.note_http_response, self)  # what the SDK does not tell
        http = http_client(headers, self.routes, hook, auth)
        return streamable_http_client(t.url, http_client=http), http

    def stderr_mark(self) -> int:
        """How many stderr lines the server has written so far; ``_with_stderr(text, since=mark)`` shows only later ones."""
        return self.stderr_tail.count

    def _with_stderr(self, text: str, since: int = 0) -> str:
        """``text`` plus the last stderr lines written since ``since`` (a mark taken when the failing request began)."""
        fresh = self.stderr_since(since)
        if fresh:
            tail = "\n".join(fresh[-8:])
            return f"{text}\nThe server wrote on stderr:\n{tail}"
        return text

    def stderr_since(self, since: int) -> list[str]:
        """The stderr lines written since the mark ``since`` (those still kept)."""
        return self.stderr_tail.since(since, gone=self.state != "open")

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

    @property
    def task_client(self) -> TaskClient | None:
        """The task methods of this server, or ``None`` when it offers no tasks (either generation)."""
        client = self.client
        if client is None or self.state != "open":
            return None
        cached = self._task_client
        if cached is not None and cached[0] is client:  # a server's capabilities are fixed for the life of its session
            return cached[1]
        from .tasks import task_client_for

        self._task_client = (client, task_client_for(client.session, self.is_legacy))
        return self._task_client[1]

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


def _sampling_capabilities() -> Any:
    """Advertise tool-enabled sampling so ``Sample(tools=...)`` resolvers work."""
    from mcp.types import SamplingCapability, SamplingToolsCapability

    return SamplingCapability(tools=SamplingToolsCapability())
