"""An in-process server's log records go to its connection's log (``%mcp log``), not into the cell.

A server defined in the notebook (``%%mcp server``, a ``module:attr`` target) runs on this kernel's
loop thread, so whatever it logs reaches the kernel's own logging: a tool's ``log.warning(...)`` and
the SDK's traceback of a tool that raised ("Tool 'x' raised an unexpected exception", twenty lines)
used to land in the middle of the learner's cell, through Python's last-resort handler. A stdio
server's stderr goes to the connection's log; an in-process one's records now do too, and so do the warnings its code raises.

How a record is known to be the server's: ``SERVING`` (a context variable) names the connection's
log while its server code runs. It is set in the connection's owner task (a 2025 in-memory server
runs in tasks spawned there) and around each call of a flow on an in-process connection (a
2026-07-28 in-process server runs inside the caller's task, the SDK's direct dispatcher). Records of
the client's own loggers (``mcp.client``, ``mcp_notebook``, HTTP) are not the server's.

``ServerLogs`` takes the place of Python's last-resort handler (with the first in-process
connection), which is how a kernel's records reach stderr: a record outside ``SERVING`` is printed
by the previous one, as before. Where the user set logging up (``basicConfig``), records find the
user's handlers and never reach the last resort: the server's records show there, as asked.
"""

from __future__ import annotations

import contextlib
import logging
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["CLIENT_LOGGERS", "SERVING", "ServerLogs", "install", "not_serving", "quiet_stdout", "serving"]

#: the log of the connection whose in-process server is running here (``None``: not a server's code)
SERVING: ContextVar[Callable[[dict[str, Any]], None] | None] = ContextVar("mcp_notebook_serving", default=None)
CLIENT_LOGGERS = ("mcp.client", "mcp_notebook", "httpx", "httpx2", "httpcore", "asyncio")
TEXT_LIMIT = 20_000  # characters of one record kept (a traceback included)


class ServerLogs(logging.Handler):
    """Python's last-resort handler, routing the records of an in-process server's code to its connection's log.

    Installed as ``logging.lastResort``: the handler Python uses when a record finds no handler at
    all, which is how a kernel's records reach stderr (a kernel configures no logging). Not a handler
    on the root logger: that would make the user's own ``logging.basicConfig()`` do nothing.
    """

    def __init__(self, previous: logging.Handler | None) -> None:
        super().__init__(previous.level if previous is not None else logging.WARNING)
        self.previous = previous

    def emit(self, record: logging.LogRecord) -> None:
        sink = SERVING.get()
        if sink is not None and not record.name.startswith(CLIENT_LOGGERS):
            sink(entry_of(record))
        elif self.previous is not None:
            self.previous.handle(record)


def entry_of(record: logging.LogRecord) -> dict[str, Any]:
    """A log record as an entry of a connection's log: level, logger, and the message with its traceback."""
    try:
        text = record.getMessage()
    except Exception:  # noqa: BLE001 - a bad format string of the server's must not break its call
        text = str(record.msg)
    if record.exc_info and record.exc_info[1] is not None:
        text += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
    if len(text) > TEXT_LIMIT:
        text = text[:TEXT_LIMIT] + f"… ({len(text) - TEXT_LIMIT:,} more characters)"
    return {"level": record.levelname.lower(), "logger": record.name, "data": text, "server_side": True}


def install() -> ServerLogs:
    """The ``ServerLogs`` in ``logging.lastResort``, put there if it is not yet (and the warnings hook with it)."""
    current = logging.lastResort
    if isinstance(current, ServerLogs):
        return current
    handler = ServerLogs(current)
    logging.lastResort = handler
    if not isinstance(warnings.showwarning, _ShowWarning):
        warnings.showwarning = _ShowWarning(warnings.showwarning)
    return handler


class _ShowWarning:
    """``warnings.showwarning`` that sends a warning raised in an in-process server's code to its log.

    The SDK warns a server that uses a capability 2026-07-28 deprecated (``ctx.info``: three
    ``MCPDeprecationWarning`` lines per call site); meant for the server's author, kept in the
    server's log beside its other records. Every other warning goes where it went.
    """

    def __init__(self, shown: Callable[..., None]) -> None:
        self.shown = shown

    def __call__(self, message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None, line: str | None = None) -> None:  # fmt: skip
        sink = SERVING.get()
        if sink is None or file is not None:
            self.shown(message, category, filename, lineno, file, line)
            return
        text = warnings.formatwarning(message, category, filename, lineno, line).rstrip()
        sink({"level": "warning", "logger": f"warnings.{category.__name__}", "data": text, "server_side": True})


@contextlib.contextmanager
def serving(sink: Callable[[dict[str, Any]], None] | None) -> Iterator[None]:
    """Run the body as an in-process server's code: its records go to ``sink`` (``None``: no change)."""
    if sink is None:
        yield
        return
    token = SERVING.set(sink)
    try:
        yield
    finally:
        SERVING.reset(token)


@contextlib.contextmanager
def not_serving() -> Iterator[None]:
    """Run the body as the client's code inside a server's call: answering its question (a form, the user's
    sampling function, a model provider's SDK), whose records and warnings are the user's own."""
    token = SERVING.set(None)
    try:
        yield
    finally:
        SERVING.reset(token)


#: set while one of our stdio transports runs (in its tasks): the SDK's parse traceback is left out there
_READING_STDIO: ContextVar[bool] = ContextVar("mcp_notebook_reading_stdio", default=False)
STDOUT_PARSE_FAILED = "Failed to parse JSONRPC message from server"  # what mcp.client.stdio logs, with a traceback


class _NotMcpOnStdout(logging.Filter):
    """Leaves out the SDK's traceback for a stdio server's stdout line that is not MCP, inside our transports.

    A server that logs with ``print`` put twenty lines of pydantic traceback into the connect cell per
    line it printed; the connection keeps the line itself in its log (``Connection._heard_from``) and the
    connect cell says so in one line. Outside our transports (the user's own SDK code) nothing changes.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_READING_STDIO.get() and record.msg == STDOUT_PARSE_FAILED)


_STDIO_FILTER = _NotMcpOnStdout()


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """Run a stdio transport (the tasks it starts inherit this) without the SDK's stdout parse tracebacks."""
    stdio_logger = logging.getLogger("mcp.client.stdio")
    if _STDIO_FILTER not in stdio_logger.filters:
        stdio_logger.addFilter(_STDIO_FILTER)
    token = _READING_STDIO.set(True)
    try:
        yield
    finally:
        _READING_STDIO.reset(token)
