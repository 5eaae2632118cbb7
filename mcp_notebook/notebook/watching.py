"""Live resources: ``%mcp watch [SERVER] URI [--into VAR]`` keeps a resource's latest contents in its cell.

A watch reads the resource, shows it in the calling cell under a display id, and reads and shows it again
(``update_display_data``, same id, so the output changes in place and the notebook saves the last value)
each time the server says it changed, until ``%mcp unwatch``, the connection closing, or the session
stopping; the output then says that it stopped and why. The two generations are told of changes
differently:

* 2026-07-28: one ``subscriptions/listen`` stream per watch (``Client.listen(resource_subscriptions=[uri])``);
  each ``ResourceUpdated`` event on it means "read again". The stream belongs to the watch's own task
  on the runtime loop (it is an anyio context, entered and left in one task).
* 2025-11-25: ``resources/subscribe`` once, then ``notifications/resources/updated`` for that URI (or a
  sub-resource of it) arrives through the connection's ``message_handler``; ``Connection._on_message``
  wakes the watch through the waker it keeps in ``Connection.resource_wakers`` (it runs inline in an
  in-process server's send, so it must not wait). ``resources/unsubscribe`` when the watch stops. A 2025 server that
  does not declare ``resources.subscribe`` but announces changes anyway (mcp-server-sqlite does) is
  watched without any subscribe request, and the output says so (``UNDECLARED_NOTE``).

Several watches run at once, one per (server, URI): watching a URI again replaces the older watch.
Updates are coalesced: a burst of change notices costs one read, and reads are at least
``MIN_INTERVAL`` apart, so a chatty server cannot flood the page. What the server sends is rendered by
``display.ResultView`` (escaped, bounded by the session's ``Limits``); ``--into VAR`` binds the latest
``ReadResourceResult`` on the kernel thread (through the cell's ``KernelLoop``), never from the loop.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import threading
import time
import warnings
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.limits import Limits
from ..core.text import esc, one_line, plain_text
from ..core.threads import KernelLoop
from ..errors import FlowError, describe_exception
from ..wire.connection import covers
from .result_view import ResultView
from .style import STYLE, note_html

if TYPE_CHECKING:
    from mcp.types import ReadResourceResult

    from ..session.session import Session
    from ..wire.connection import Connection

__all__ = ["MIN_INTERVAL", "Watch", "Watches"]

MIN_INTERVAL = 0.2  # seconds between two reads of one watch: change notices in between are folded into one read
REASON_CHARS = 300  # a server's error text shown in a watch's header is cut to this
STOP_TIMEOUT = 10.0  # bound on stopping a watch (its task, and a 2025 resources/unsubscribe)
UNDECLARED_NOTE = (
    "{server} does not declare resource subscriptions (no resources.subscribe in its capabilities), so no "
    "resources/subscribe was sent; this shows each change the server announces anyway (notifications/resources/updated)."
)


def subscription_support(conn: Connection) -> FlowError | None:
    """``None`` when ``conn``'s server lets clients follow a resource, else the error saying it does not.

    Both generations say so in ``capabilities.resources.subscribe``: a 2025 server from ``initialize``,
    a 2026-07-28 server from ``server/discover`` (the SDK sets it when ``subscriptions/listen`` is served).
    """
    capabilities = conn.live.session.server_capabilities
    resources = capabilities.resources if capabilities is not None else None
    if resources is not None and resources.subscribe:
        return None
    how = "resources/subscribe" if conn.is_legacy else "subscriptions/listen"
    text = f"server {conn.name!r} ({conn.server_label}) does not support resource subscriptions (its capabilities offer no {how}), so a resource cannot be watched there; read it again instead."
    return FlowError(text, kind="no_subscriptions", server=conn.name)


class Watch:
    """One watched resource: its display in the calling cell, its task on the runtime loop, its latest value.

    Made on the kernel thread (``Watches.watch``), which also makes its ``KernelLoop``: every redraw and
    ``--into`` binding lands on the kernel's loop in that cell's context. ``updates`` counts the reads
    after the first; ``since`` is when the watch began (``time.time()``).
    """

    def __init__(
        self,
        conn: Connection,
        uri: str,
        into: str | None,
        namespace: dict[str, Any],
        limits: Limits,
        on_end: Callable[[Watch], None],
        subscribe: bool = True,
    ) -> None:
        self.conn = conn
        self.subscribe = (
            subscribe  # 2025: send resources/subscribe (False: the server does not declare it; listen only)
        )
        self.note: str | None = None if subscribe else UNDECLARED_NOTE.format(server=conn.name)
        self.server = conn.name
        self.uri = uri
        self.into = into
        self.namespace = namespace
        self.limits = limits
        self.legacy = conn.is_legacy
        self.since = time.time()
        self.updates = 0
        self.last: float | None = None  # when the latest read was shown (time.time())
        self.result: ReadResourceResult | None = None
        self.error: str | None = None  # why the latest read failed (the previous value stays shown)
        self.ended: str | None = None  # why the watch stopped (None while it runs)
        self.main = KernelLoop()
        self.handle: Any = None  # the DisplayHandle, once shown
        self._on_end = on_end
        self._task: asyncio.Task[None] | None = None
        self._subscribed = False  # 2025: resources/subscribe was accepted (unsubscribe when stopping)
        self._wake: asyncio.Event | None = None
        self._forget_at_stop: Callable[[], None] | None = None
        self._finished = False

    def __repr__(self) -> str:
        state = f"stopped: {self.ended}" if self.ended else "watching"
        return f"<Watch {self.uri} on {self.server}, {self.updates} update{'s' if self.updates != 1 else ''}, {state}>"

    @property
    def active(self) -> bool:
        return self.ended is None

    # ------------------------------------------------------------------ kernel thread
    def show(self) -> None:
        """Display the watch in the running cell with a display id (kernel thread); later redraws update it."""
        from IPython.display import display

        self.handle = display(self.view(), display_id=True)

    def _redraw(self) -> None:
        """Update the cell's output to the watch as it is now (kernel thread, through ``self.main``)."""
        if self.handle is not None:
            self.handle.update(self.view())

    def _bind(self, result: ReadResourceResult) -> None:
        """``--into VAR``: the latest value in the notebook's namespace (kernel thread)."""
        if self.into:
            self.namespace[self.into] = result

    def view(self) -> WatchView:
        """What the output shows now: a header (watching, or stopped and why) and the latest contents."""
        return WatchView(self)

    # ------------------------------------------------------------------ loop thread
    async def start(self) -> None:
        """Subscribe, read once, and leave the watch's task following changes; raises when any of that fails."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._forget_at_stop = self.conn.runtime.at_stop(self._session_stopping)
        self._task = asyncio.create_task(self._run(ready), name=f"mcp-watch-{self.server}-{self.uri}")
        await asyncio.shield(ready)

    async def stop(self, reason: str) -> None:
        """End the watch (``%mcp unwatch``, a newer watch of the URI, the session stopping); idempotent."""
        if self.ended is None:
            self.ended = reason
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task], timeout=STOP_TIMEOUT)
        await self._unsubscribe()
        self._finish()

    async def _session_stopping(self) -> None:
        await self.stop("the MCP session stopped (the kernel is stopping, or %unload_ext)")

    async def _run(self, ready: asyncio.Future[None]) -> None:
        """The watch's task: follow the resource until stopped or the connection ends (and say which)."""
        follow = asyncio.ensure_future(self._follow_2025(ready) if self.legacy else self._follow_2026(ready))
        closed = asyncio.ensure_future(self._connection_end())
        try:
            await asyncio.wait([follow, closed], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (follow, closed):
                task.cancel()
            await asyncio.wait([follow, closed], timeout=STOP_TIMEOUT)
        if follow.done() and not follow.cancelled() and follow.exception() is not None:
            error = follow.exception()
            assert error is not None
            if not ready.done():
                ready.set_exception(
                    error
                    if isinstance(error, FlowError)
                    else FlowError(
                        f"Could not watch {self.uri} on {self.server!r}: {describe_exception(error)[0]}",
                        server=self.server,
                    )
                )
                self.ended = self.ended or "could not start"
            elif self.ended is None:
                self.ended = self._lost(error)
        elif self.ended is None:
            self.ended = (
                f"connection {self.server!r} closed" if not self.conn.is_open else "the server ended the subscription"
            )
        if not ready.done():
            ready.set_exception(
                FlowError(f"Could not watch {self.uri} on {self.server!r}: {self.ended}", server=self.server)
            )
        await self._unsubscribe()
        self._finish()

    def _lost(self, error: BaseException) -> str:
        if not self.conn.is_open:
            return f"connection {self.server!r} closed"
        return f"the subscription was lost: {one_line(describe_exception(error)[0], REASON_CHARS)}"

    async def _connection_end(self) -> None:
        """Returns when the connection ends (closed, disconnected, or its server gone)."""
        await self.conn.wait_closed()

    async def _follow_2026(self, ready: asyncio.Future[None]) -> None:
        """2026-07-28: a ``subscriptions/listen`` stream for this URI; every ``ResourceUpdated`` on it → read again."""
        from mcp.client.subscriptions import ResourceUpdated

        client = self.conn.live
        async with client.listen(resource_subscriptions=[self.uri]) as subscription:
            if self.uri not in (subscription.honored.resource_subscriptions or []):
                raise FlowError(
                    f"server {self.server!r} did not agree to send updates of {self.uri}",
                    kind="no_subscriptions",
                    server=self.server,
                )
            await self._read(first=True)
            ready.set_result(None)
            async for event in subscription:  # the SDK folds repeated events that wait while we read into one
                if isinstance(event, ResourceUpdated) and covers(self.uri, event.uri):
                    await self._pace()
                    await self._read()

    async def _follow_2025(self, ready: asyncio.Future[None]) -> None:
        """2025: ``resources/subscribe``, then read again whenever the connection hears the resource changed (its ``resource_wakers``)."""
        wake = self._wake = asyncio.Event()
        wakers = self.conn.resource_wakers
        wakers[self.uri] = wake.set
        try:
            if self.subscribe:
                with warnings.catch_warnings():
                    warnings.simplefilter(
                        "ignore"
                    )  # deprecated as of 2026-07-28 (Client.listen); still how 2025 servers do it
                    await self.conn.live.session.subscribe_resource(self.uri)
                self._subscribed = True
            await self._read(first=True)
            ready.set_result(None)
            while True:
                await wake.wait()
                await self._pace()
                wake.clear()  # notices until now are covered by the read below
                await self._read()
        finally:
            if wakers.get(self.uri) == wake.set:
                del wakers[self.uri]

    async def _unsubscribe(self) -> None:
        """2025: ``resources/unsubscribe`` once, if subscribed and the connection is still open (best effort)."""
        if not self._subscribed:
            return
        self._subscribed = False
        client = self.conn.client
        if client is None or not self.conn.is_open:
            return
        with warnings.catch_warnings(), contextlib.suppress(Exception):
            warnings.simplefilter("ignore")
            await asyncio.wait_for(client.session.unsubscribe_resource(self.uri), STOP_TIMEOUT)

    async def _pace(self) -> None:
        """Wait until ``MIN_INTERVAL`` has passed since the latest read."""
        if self.last is not None:
            wait = self.last + MIN_INTERVAL - time.time()
            if wait > 0:
                await asyncio.sleep(wait)

    async def _read(self, first: bool = False) -> None:
        """Read the resource and show it; a failed later read is shown as a note over the last value."""
        try:
            result = await self.conn.live.read_resource(self.uri, cache_mode="refresh")
        except Exception as exc:  # noqa: BLE001 - a later failure is shown; the first one fails the watch
            if first:
                raise FlowError(
                    f"Could not read {self.uri} on {self.server!r}: {describe_exception(exc)[0]}", server=self.server
                ) from None
            self.error = one_line(describe_exception(exc)[0], REASON_CHARS)
        else:
            self.result, self.error = result, None
            if not first:
                self.updates += 1
            if self.into and not first:  # the first value is bound by ``Watches.watch`` on the kernel thread
                self.main.call(self._bind, result)
        self.last = time.time()
        if not first:
            self.main.call(self._redraw)

    def _finish(self) -> None:
        """The watch is over: forget it, and show why (once)."""
        if self._finished:
            return
        self._finished = True
        if self.ended is None:
            self.ended = "stopped"
        if self._forget_at_stop is not None:
            self._forget_at_stop()
            self._forget_at_stop = None
        self._on_end(self)
        self.main.call(self._redraw)


class WatchView:
    """A watch's output as it is at one moment: a header line and the contents, escaped and bounded."""

    def __init__(self, watch: Watch) -> None:
        self.watch = watch
        self.result = watch.result
        self.ended = watch.ended
        self.error = watch.error
        self.updates = watch.updates
        self.last = watch.last
        self.note = watch.note

    def header(self) -> str:
        w = self.watch
        if self.ended is not None:
            return f"Stopped watching {w.uri} on {w.server}: {self.ended}"
        return f"Watching {w.uri} on {w.server}"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        head = self.header()
        plain, rich = ResultView(self.result, self.watch.limits).parts() if self.result is not None else ([], [])
        notes = [self.note] if self.note and self.ended is None else []
        notes += [f"The latest read failed: {self.error} (showing the previous value)"] if self.error else []
        count = f"{self.updates} update{'s' if self.updates != 1 else ''}"
        when = (
            f", last at {datetime.fromtimestamp(self.last).strftime('%H:%M:%S')}"
            if self.last is not None and self.updates
            else ""
        )
        hdr = f'<div class="hdr"><b>{esc(head)}</b> <span class="note">({esc(count + when)})</span></div>'
        html = STYLE + '<div class="mcpnb">' + hdr + "".join(note_html(n) for n in notes) + "".join(rich) + "</div>"
        return {"text/plain": plain_text("\n".join([head, *notes, *plain])), "text/html": html}


Row = tuple[str, str, int, str]


class Watches:
    """The watches of one session, by (server, URI); what ``%mcp watch`` / ``unwatch`` / the listing call."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._watches: dict[tuple[str, str], Watch] = {}
        self._lock = threading.Lock()  # the kernel thread adds and lists; a watch's end (loop thread) removes

    def watch(self, server: str | None, uri: str, into: str | None, namespace: dict[str, Any]) -> Watch:
        """Show ``uri`` in the running cell and keep it current (kernel thread); replaces a watch of the same URI.

        Raises ``FlowError`` (nothing shown) when the connection is not open or its server offers no
        subscriptions, or when subscribing or the first read fails. A 2025 server that declares no
        subscriptions is still watched, without a subscribe request: some announce changes anyway.
        """
        if into is not None and not into.isidentifier():
            raise FlowError(f"--into needs a variable name, not {into!r}", kind="bad_input")
        conn = self.session.registry.get(server)
        refused = subscription_support(conn)
        if refused is not None and not conn.is_legacy:
            raise refused  # 2026-07-28: changes come only on a subscriptions/listen stream, which it does not serve
        runtime = self.session.runtime
        with self._lock:
            old = self._watches.pop((conn.name, uri), None)
        if old is not None:
            runtime.run(old.stop("replaced by a newer watch of the same resource"))
        watch = Watch(conn, uri, into, namespace, self.session.settings.limits, self._ended, subscribe=refused is None)
        with self._lock:
            self._watches[(conn.name, uri)] = watch
        try:
            runtime.run(watch.start())
        except BaseException:
            with self._lock:
                if self._watches.get((conn.name, uri)) is watch:
                    del self._watches[(conn.name, uri)]
            with contextlib.suppress(Exception):
                runtime.run(watch.stop("could not start"), timeout=STOP_TIMEOUT + 5)
            raise
        if into and watch.result is not None:
            watch._bind(watch.result)  # the first value, bound now (later ones through the cell's KernelLoop)
        watch.show()
        return watch

    def unwatch(self, server: str | None = None, uri: str | None = None) -> builtins.list[str]:
        """Stop the watches matching ``server`` and ``uri`` (each ``None``: any); returns ``"SERVER URI"`` of each stopped."""
        with self._lock:
            chosen = [
                w
                for (name, watched), w in self._watches.items()
                if (server is None or name == server) and (uri is None or watched == uri)
            ]
            for w in chosen:
                del self._watches[(w.server, w.uri)]
        for w in chosen:
            self.session.runtime.run(w.stop("%mcp unwatch"))
        return [f"{w.server} {w.uri}" for w in chosen]

    def list(self) -> builtins.list[Row]:
        """One row per running watch: server, URI, updates shown since the first read, and when it began (HH:MM:SS)."""
        with self._lock:
            watches = builtins.list(self._watches.values())
        return [(w.server, w.uri, w.updates, datetime.fromtimestamp(w.since).strftime("%H:%M:%S")) for w in watches]

    def get(self, server: str, uri: str) -> Watch | None:
        """The running watch of ``uri`` on ``server``, if any."""
        with self._lock:
            return self._watches.get((server, uri))

    def _ended(self, watch: Watch) -> None:
        """A watch ended on its own (connection closed, session stopping): forget it (any thread)."""
        with self._lock:
            if self._watches.get((watch.server, watch.uri)) is watch:
                del self._watches[(watch.server, watch.uri)]
