"""A ``%mcp call`` ends its cell when its flow ends: the cell *awaits* the flow.

Why an awaiting cell (see ``shared/reference/kernel.md`` section 3): in an interactive front end
a call may wait for a click in its form, and

* a *blocking* cell does not hear that click in a front end without subshells (the main shell is
  busy), nor, on ipykernel 7.4, a widget's message that it routes to the main shell (our forms ask
  for the page's subshell: ``forms.widgets.in_send_order``); jupyter-ui-poll is broken on ipykernel 7;
* a cell that returns at once with a running ``Flow`` lets Run All race ahead of its own calls
  (a later cell reads a record that does not exist yet, or stops the server the call still uses);
* an *awaiting* cell hears comm messages from ipykernel 7.4 on, and the next cell of a Run All
  starts only after it.

A line magic cannot be written after ``await``, so an IPython input transformer
(``input_transformers_post``, which sees the cell after ``%mcp ...`` became
``get_ipython().run_line_magic('mcp', '...')``) rewrites the statements that start a flow
(``call``, ``prompt``, ``read``, ``resume``) into ``(await _mcp_notebook_await_.line(...))``.
The cell then runs as an async cell. The helper runs the magic with ``MCPMagics.awaiting`` set, so
the magic hands back an ``InCell`` (the started flow) instead of returning the ``Flow`` at once,
and awaits it on the kernel's own loop: the form, the sampling review and the sign-in stay live,
``x = %mcp call ...`` binds the result, Interrupt stops the flow and keeps its saved record and a failed or cancelled flow fails its cell, as a headless run does;
so does a result the tool marked ``isError`` (``magics.hints.tool_failure``: Run All stops at a tool's error as at an exception).

Only statements at the cell's top level, or inside its ``for`` / ``if`` / ``with`` / ``try``
blocks, are rewritten: ``await`` inside a ``def`` or ``class`` body would not compile. ``%mcp call
... --background`` keeps the old behaviour (the ``Flow`` at once). A kernel that cannot hear comms
while a cell awaits (ipykernel < 7.4) gets no transformer and one note at ``%load_ext``.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import re
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..flows.flow import Flow
    from ..notebook.live_view import ChoicePanel
    from .magics import MCPMagics

__all__ = [
    "AWAITED",
    "HELPER",
    "CellAwait",
    "InCell",
    "Interrupted",
    "interrupted",
    "kernel_hears_comms_while_awaiting",
    "rewrite",
]

HELPER = "_mcp_notebook_await_"  # the helper's name in the user's namespace
AWAITED = frozenset({"call", "prompt", "read", "resume"})  # the subcommands that start a flow
_BLOCKS = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try, ast.TryStar)


@dataclass(frozen=True)
class InCell:
    """What the magic returns to the helper: a started flow the cell is to wait for, or a panel
    (consent to resume, Continue / Start over) whose click starts the flow to wait for.

    ``report``: a headless flow's report, shown (and its error raised) once the flow has ended. The
    cell awaits the flow rather than blocking in ``flow.result()``, whose wait an Interrupt could
    not end (ipykernel only schedules a callback on SIGINT while a cell runs as a coroutine).
    """

    flow: Flow | None
    choice: ChoicePanel | None = None
    report: Callable[[], Any] | None = None
    frame: bool = False  # --frame: the cell's value is the result's table as a pandas DataFrame


class Interrupted(KeyboardInterrupt):
    """Interrupt (Kernel > Interrupt, Ctrl-C) during a flow line: one line says what became of the flow.

    Still a ``KeyboardInterrupt`` (``except KeyboardInterrupt`` in the user's loop catches it), but
    IPython shows ``_render_traceback_`` instead of a traceback through the rewritten cell and our frames.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


def kernel_hears_comms_while_awaiting() -> bool:
    """True where an awaiting cell still receives widget clicks: ipykernel >= 7.4, or no ipykernel (no widgets).

    Read from the imported ``ipykernel`` (a kernel has it loaded already), not from the installed metadata:
    ``importlib.metadata`` would add about 20 ms to ``%load_ext`` (P3 in ``bench/``).
    """
    kernel_module = sys.modules.get("ipykernel")
    if kernel_module is None:  # terminal IPython or a script, where nothing is clicked
        return True
    found = str(getattr(kernel_module, "__version__", ""))
    parts = []
    for piece in found.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts) >= (7, 4)


def rewrite(lines: list[str]) -> list[str]:
    """The cell's lines with each flow-starting ``%mcp`` statement awaited (see the module docstring)."""
    source = "".join(lines)
    if "_magic('mcp'" not in source:
        return lines  # the common case: no %mcp line in this cell
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return lines  # IPython reports the error as usual
    data = source.encode()  # ast's column offsets count UTF-8 bytes
    starts = _line_starts(data)
    edits: list[tuple[int, int, bytes]] = []  # (start byte, end byte, new text)
    for call, bind in _flow_statements(tree.body):
        args = [ast.get_source_segment(source, a) or "" for a in call.args]
        method = "line" if _attr(call) == "run_line_magic" else "cell"
        text = f"(await {HELPER}.{method}({', '.join(args)}, bind={bind}))"
        row = starts[call.lineno - 1]
        edits.append((row + call.col_offset, row + (call.end_col_offset or call.col_offset), text.encode()))
    if not edits:
        return lines
    for start, end, new in sorted(edits, reverse=True):
        data = data[:start] + new + data[end:]
    return data.decode().splitlines(keepends=True)  # IPython only joins the lines again


_LINE_END = re.compile(rb"\r\n|\r|\n")


def _line_starts(data: bytes) -> list[int]:
    """The byte offset where each line starts, as ``ast`` numbers lines.

    Python ends a line only at ``\\n``, ``\\r\\n`` or ``\\r``; ``str.splitlines`` also splits at form
    feed, vertical tab, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, which may sit in a string, a
    comment or (form feed) between statements. Counting lines that way put an edit on the wrong line:
    a string overwritten, or a second, un-awaited copy of a call.
    """
    return [0] + [m.end() for m in _LINE_END.finditer(data)]


def _attr(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def _flow_statements(body: list[ast.stmt]) -> list[tuple[ast.Call, bool]]:
    """The ``%mcp`` calls that start a flow, as bare statements or assigned to one name, outside functions."""
    found: list[tuple[ast.Call, bool]] = []
    for stmt in body:
        if isinstance(stmt, ast.Expr) and _is_flow_magic(stmt.value):
            found.append((stmt.value, False))  # type: ignore[arg-type]
        elif (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and _is_flow_magic(stmt.value)
        ):
            found.append((stmt.value, True))  # type: ignore[arg-type]
        elif isinstance(stmt, _BLOCKS):
            for field in ("body", "orelse", "finalbody"):
                found += _flow_statements(getattr(stmt, field, []) or [])
            for handler in getattr(stmt, "handlers", []) or []:
                found += _flow_statements(handler.body)
    return found


def _is_flow_magic(node: ast.expr) -> bool:
    """``get_ipython().run_line_magic('mcp', 'call ...')`` (or ``run_cell_magic``), on one line."""
    if not isinstance(node, ast.Call) or node.keywords or _attr(node) not in ("run_line_magic", "run_cell_magic"):
        return False
    owner = node.func.value if isinstance(node.func, ast.Attribute) else None
    if not (
        isinstance(owner, ast.Call)
        and isinstance(owner.func, ast.Name)
        and owner.func.id == "get_ipython"
        and not owner.args
    ):
        return False
    want = 2 if _attr(node) == "run_line_magic" else 3
    if len(node.args) != want or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
        return False
    magic, line = node.args[0].value, node.args[1].value  # type: ignore[attr-defined]
    words = line.split(None, 1)
    return magic == "mcp" and bool(words) and words[0] in AWAITED and node.lineno == node.end_lineno


class CellAwait:
    """The helper a rewritten cell awaits, and the transformer's registration, for one ``MCPMagics``."""

    def __init__(self, magics: MCPMagics) -> None:
        self.magics = magics
        self.shell: Any = magics.shell  # an InteractiveShell: a magic is registered in one

    def register(self) -> None:
        """Put the helper in the user's namespace and the transformer on the shell (again: replaces the old one)."""
        from .kernel_parent import keep_request_parents

        self.unregister(self.shell)
        self.shell.user_ns[HELPER] = self
        self.shell.user_ns_hidden[HELPER] = self  # kept out of %who and the variable inspector
        self.shell.input_transformers_post.append(self.transform)
        keep_request_parents(self.shell)  # a comm handled beside an awaiting cell leaves the next cell its parent

    @staticmethod
    def unregister(shell: Any) -> None:
        """Take the transformer off ``shell`` (``%unload_ext``); cells run as plain cells again."""
        from .kernel_parent import forget_request_parents

        forget_request_parents(shell)
        kept = [t for t in shell.input_transformers_post if not isinstance(getattr(t, "__self__", None), CellAwait)]
        shell.input_transformers_post[:] = kept
        shell.user_ns.pop(HELPER, None)
        shell.user_ns_hidden.pop(HELPER, None)

    def transform(self, lines: list[str]) -> list[str]:
        """The input transformer: ``rewrite``, unless the user turned IPython's ``%autoawait`` off."""
        return rewrite(lines) if getattr(self.shell, "autoawait", True) else lines

    async def line(self, magic: str, line: str, *, bind: bool) -> Any:
        """``%mcp LINE`` in an awaiting cell: the value the line would give, once its flow has ended.

        ``{expr}`` in the line reads the cell's frame, as the line unrewritten would: ``_stack_depth``
        counts the frames from IPython's ``run_line_magic`` back to the cell (the lambda, ``_run``, this
        coroutine), so that ``{line}`` is the cell's ``line``, not this method's argument.
        """
        return await self._finish(self._run(lambda: self.shell.run_line_magic(magic, line, _stack_depth=4)), bind)

    async def cell(self, magic: str, line: str, body: str, *, bind: bool) -> Any:
        """``%%mcp LINE`` + body in an awaiting cell."""
        return await self._finish(self._run(lambda: self.shell.run_cell_magic(magic, line, body)), bind)

    def _run(self, start: Any) -> Any:
        self.magics.awaiting = True
        try:
            return start()
        finally:
            self.magics.awaiting = False

    async def _finish(self, value: Any, bind: bool) -> Any:
        """The flow's result once it has ended: bound by ``x = ...``; else the cell's value (``_``, ``Out[n]``).

        A bare line's result is the cell's value as any expression's is, marked as shown by the report
        already in the cell, so the displayhook sets ``_`` and ``Out[n]`` and shows nothing twice
        (``notebook.display.reported``). An awaited cell never leaves a waiting flow as its value: it ends
        when the flow has ended, or raises (Interrupt: ``Interrupted``, the flow kept if saved). Only
        ``--background`` (or a line that cannot be awaited) returns the running ``Flow``: then ``_`` is
        that ``Flow``, and ``await _`` gives the result.
        """
        if not isinstance(value, InCell):
            return value  # a background Flow, a listing, a usage message: as the plain line gives it
        from ..errors import FlowError
        from .hints import flow_failure, for_magics, tool_failure

        flow = value.flow
        if value.choice is not None:  # a panel first: the click starts the flow this cell then waits for
            from ..flows.flow import Flow
            from ..notebook.live_view import ChoicePanel, LiveView  # loaded already: the panel is one of its

            try:
                with _comm_status_replies(self.shell):
                    started: Any = value.choice
                    while isinstance(started, ChoicePanel):  # Continue may need consent first: a panel after a panel
                        started = await _until_done_or_interrupted(started.outcome())
            except KeyboardInterrupt:
                raise Interrupted("nothing was resumed; the panel above still takes your click.") from None
            except Exception:  # noqa: BLE001 - the panel shows what went wrong; the cell fails without a second copy
                raise FlowError("the chosen action failed (the panel above says why).", kind="resume_failed") from None
            if not isinstance(started, Flow):
                return None  # the user said no: nothing started
            flow = started
            if isinstance(flow.view, LiveView):
                flow.view.error_follows = True  # its error fails this cell (shown once)
        if flow is None:
            return None
        if value.report is not None:  # headless: the report says how it ended, and raises its error
            try:
                await _until_done_or_interrupted(flow)
            except KeyboardInterrupt:
                raise interrupted(flow) from None
            except (Exception, asyncio.CancelledError):  # noqa: BLE001 - the report below shows and raises it
                pass
            try:
                value.report()
            except FlowError as exc:  # outside the magic now: its hint added here, as the magic adds it
                hinted = for_magics(exc)
            else:
                return self._value(flow, bind, value.frame)
            hinted.__context__ = None
            raise hinted
        try:
            with _comm_status_replies(self.shell):
                await _until_done_or_interrupted(flow)
        except KeyboardInterrupt:
            error: Exception | Interrupted = interrupted(flow)
        except asyncio.CancelledError:  # the flow's own Cancel button (an Interrupt arrives as KeyboardInterrupt)
            error = FlowError(f"{flow.label} was cancelled.", kind="cancelled", server=flow.conn.name)
        except Exception as exc:  # noqa: BLE001 - the flow's own error fails the cell, as a headless run does
            error = for_magics(flow_failure(flow, exc)) if isinstance(exc, FlowError) else exc
        else:
            failed = tool_failure(flow)  # the tool's own isError: the cell fails, as a headless run's does
            if failed is None:
                return self._value(flow, bind, value.frame)
            error = failed
        error.__context__ = None
        raise error

    @staticmethod
    def _value(flow: Flow, bind: bool, frame: bool = False) -> Any:
        """What the cell gets: the result as its readable subclass (``notebook.results``), or with ``--frame`` its table."""
        from ..notebook.display import reported
        from ..notebook.results import readable

        if frame:
            return framed(flow)  # not the report's value: the cell shows the frame too, as any value
        value = readable(flow.value)
        return value if bind else reported(value)


def framed(flow: Flow) -> Any:
    """``--frame``: the flow's result as a pandas DataFrame (``mapping.tabular``), or a ``UsageError`` naming its shape.

    The call has run and its report is in the cell: the error says so, and how to keep the result itself.
    """
    from IPython.core.error import UsageError

    from ..mapping.tabular import NotTabular, frame

    try:
        return frame(flow.value)
    except NotTabular as exc:
        refused = UsageError(
            f"{flow.label}'s result is {exc} (the call ran: its report is above; without --frame the line "
            "binds the result itself, and -o VAR keeps it beside a frame)"
        )
    except ImportError:
        refused = UsageError("--frame needs pandas, which is not installed here: pip install pandas")
    raise refused


def interrupted(flow: Flow) -> Interrupted:
    """Interrupt stops the flow here and keeps what is saved of it; the one-line error that says so.

    Jupyter interrupts a kernel before every shutdown or restart (``jupyter_client`` does, so a
    notebook closed while its form waits is interrupted first): forgetting the flow here would
    lose the very record that lets a reopened notebook continue it, and cancel a task that is
    meant to outlive the kernel. So the flow stops waiting in this kernel, its saved record and
    its task stay, and the cell says how to continue or drop it.
    """
    from ..core.text import mcp_line

    saved = flow.store is not None and flow.store.get(flow.id) is not None
    flow.cancel(forget=False)
    if saved:
        return Interrupted(
            f"{flow.label} stopped waiting here; it stays saved as flow {flow.id} "
            f"({mcp_line('%mcp', 'resume', flow.id)} continues it, {mcp_line('%mcp', 'forget', flow.id)} drops it)."
        )
    return Interrupted(f"{flow.label} was cancelled.")


_COMM_TYPES = ("comm_open", "comm_msg", "comm_close")


@contextlib.contextmanager
def _comm_status_replies(shell: Any) -> Iterator[None]:
    """While the cell awaits, each comm message the kernel handles beside it gets its busy/idle status.

    ipykernel 7.4 handles a comm message that arrives during an awaiting cell at once, beside the
    cell (``dispatch_shell(..., concurrent=True)``), but publishes no busy/idle status for it. The
    ipywidgets front end counts a model's messages in flight and sends the next change only after
    the idle status of the last one: without it the first keystroke of a field reaches the kernel
    and every later one waits in the page until the cell ends (seen in JupyterLab 4.6 + Chromium:
    a form's fields kept their first character). So, for as long as this cell awaits, the kernel's
    comm handlers are wrapped to publish that status, only for messages handled beside the cell
    (on the main thread while its lock is held; a subshell's own messages have theirs already).
    Each such ``idle`` is followed by ``busy`` again under the cell's own request: the page shows the
    kernel's last status, and the cell still runs (without it the status bar said Idle while the cell
    and the cells queued behind it showed ``[*]``).

    Only a cell awaiting on the main thread installs them: the handlers are the kernel's, shared by
    every subshell, and a cell awaiting in a subshell (its own thread) would otherwise wrap the main
    shell's comm handling for as long as it waits, under its own request as parent, and two such
    cells ending out of order would leave a wrapper in place for good.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # a subshell's cell: the main shell's comm messages are not beside it
        return
    kernel = getattr(shell, "kernel", None)
    handlers = getattr(kernel, "shell_handlers", None)
    lock = getattr(kernel, "_main_asyncio_lock", None)
    publish = getattr(kernel, "_publish_status", None)
    if kernel is None or not isinstance(handlers, dict) or lock is None or publish is None:
        yield  # not ipykernel (terminal IPython, a script): no page waits for a status
        return
    originals = {kind: handlers[kind] for kind in _COMM_TYPES if kind in handlers}
    cell = kernel.get_parent("shell")  # this cell's execute_request: the kernel is still busy with it

    def replying(handler: Any) -> Any:
        def handle(stream: Any, idents: Any, msg: Any) -> Any:
            beside = threading.current_thread() is threading.main_thread() and lock.locked()
            if beside:
                publish("busy", "shell", parent=msg)
            try:
                return handler(stream, idents, msg)  # ipykernel's comm handlers are synchronous
            finally:
                if beside:
                    publish("idle", "shell", parent=msg)
                    publish("busy", "shell", parent=cell)

        return handle

    for kind, handler in originals.items():
        handlers[kind] = replying(handler)
    try:
        yield
    finally:
        for kind, handler in originals.items():
            handlers[kind] = handler


async def _until_done_or_interrupted(flow: Awaitable[Any]) -> Any:
    """``await flow``, or ``KeyboardInterrupt`` when the kernel is interrupted first.

    ipykernel 7.4 turns SIGINT during an awaiting cell into a callback on a loop that no longer
    runs there, so Interrupt would leave the cell waiting for ever (tried: ``await asyncio.sleep``
    in a cell is not interrupted either). While a flow is awaited on the main thread, this takes
    SIGINT itself, wakes the kernel's loop and ends the wait; the previous handler comes back after.
    """
    loop = asyncio.get_running_loop()
    interrupted: asyncio.Future[bool] = loop.create_future()

    def mark() -> None:
        if not interrupted.done():
            interrupted.set_result(True)

    def on_sigint(signum: int, frame: Any) -> None:
        loop.call_soon_threadsafe(mark)

    async def wait() -> Any:
        return await flow

    previous = (
        signal.signal(signal.SIGINT, on_sigint) if threading.current_thread() is threading.main_thread() else None
    )
    waiting = asyncio.ensure_future(wait())
    try:
        try:
            await asyncio.wait({waiting, interrupted}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the cell's task cancelled (a kernel whose own Interrupt works)
            raise KeyboardInterrupt from None
        if not waiting.done():
            raise KeyboardInterrupt
        return waiting.result()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        interrupted.cancel()
        if not waiting.done():
            waiting.cancel()
