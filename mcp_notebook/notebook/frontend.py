"""The kernel side of the notebook's memory: the ``mcp_notebook`` comm and the ``.ipynb`` fallback.

The JupyterLab extension (``labextension/``) owns the notebook model. When the extension
loads, the kernel opens a comm to target ``mcp_notebook`` saying ``hello``; the extension
answers ``restore`` with the records saved in the notebook, and afterwards ``ack`` for every
``save`` and ``delete`` (protocol in ``labextension/README.md``). Facts this module is built on
(checked with JupyterLab 4.6 and ipykernel 7.4):

* Replies reach the kernel's main thread only after the running cell ends, so saves and
  deletes never wait for one (fire and forget), and the records of the restore are there for
  the *next* cell. Only a sign-in waits, briefly, for the page's first answer (below).
* Without the extension JupyterLab answers the comm_open with a comm_close; with no front
  end at all (nbclient, nbval, papermill) nothing ever comes back; outside a kernel the comm
  is a ``DummyComm`` that does nothing.
* Every connected front end answers, and a page reloaded while the kernel runs sends an
  unsolicited ``restore`` with ``"reason": "reconnect"`` holding what that page has.

The comm also carries the sign-ins' OAuth callbacks (``oauth_relay.OAuthRelay``) and the flows'
live areas and settled reports for pages that reloaded or joined (``report_queue.ReportQueue``);
``page_probes`` is how the kernel hears the page while a cell runs (the routing hook that notes
the page's first answer for ``wait_for_page``, and the ``where`` probes of a reloaded page).

Without the extension the records of the saved ``.ipynb`` are read from disk (as JSON)
(``__session__`` where Jupyter sets it, VS Code's ``__vsc_ipynb_file__``, or ``%mcp flows --from
PATH``), new records go into the outputs of their cells (``output_records.OutputRecords``), and the
user is told so once, plainly. Which store a save goes to follows the page's answer: ``connected``,
the comm only; ``absent`` (the front end closed the comm) or no answer within ``page_wait`` seconds,
the outputs only. Before the answer, an interactive cell's record waits for it (Run All in JupyterLab
sends the first cells before the page's answer arrives), and a headless one (no page will answer)
goes to the outputs at once.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..core.threads import KernelLoop
from ..flows.record import parse_flows
from ..flows.store import Store
from ..session.page import Page
from ..session.settings import PAGE_WAIT
from .oauth_relay import OAUTH_STATE, OAuthRelay
from .output_records import OutputRecords
from .page_probes import COMM_TARGET, PROTOCOL_VERSION, WhereProbes, answers_where_sent, checked_page_url
from .report_queue import REPORTS_KEPT, ReportQueue

__all__ = ["COMM_TARGET", "REPORTS_KEPT", "Frontend", "checked_page_url"]

_answers_where_sent = answers_where_sent  # its old name here, as tests/auth import it
WRITERS_KEPT = 1_000
"""Flows whose writing page is remembered (the oldest go first)."""
PAGES_KEPT = 100
"""Pages (kernel client ids) whose tab id is remembered."""
PAGE_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
"""A page's tab id or kernel client id as the kernel keeps it (anything else is not kept)."""


class Frontend(Page):
    """Client of the extension's comm; the ``Store``'s backend (a ``session.page.Page`` that talks to the page)."""

    def __init__(self, store: Store, shell: Any = None, page_wait: float = PAGE_WAIT) -> None:
        super().__init__(store, shell)
        self.page_wait = page_wait  # seconds from the hello until a silent page counts as absent (MCPMagics.page_wait)
        self._hello_at: float | None = None
        self.replies = 0  # restore/ack/error messages received (tests, bench)
        self.saves_sent = 0  # save messages sent, and the pages' acks saying whether they wrote them (tests)
        self.saves_written = 0
        self.saves_left = 0
        self._comm: Any = None
        self._kernel: KernelLoop | None = None  # the kernel's loop, where the comm's messages go out
        self.oauth = OAuthRelay(self._send_now)  # sign-ins waiting for the callback the page relays
        self.reports = ReportQueue()  # live areas and reports kept until a page shows them
        self._probes = WhereProbes(lambda: self._comm)  # a reloaded page asks where this comm is
        self._answered = threading.Event()  # the page said something on the comm (seen as ipykernel routes it)
        self._restored_early = False  # its restore was seen there: the relay is up before the main shell handles it
        self._page_silent = False  # a wait for the page ran out: later sign-ins do not wait again
        self._hooked = False  # the routing hook is in place (ipykernel 7.4): only then can a busy cell hear the page
        self.outputs = OutputRecords(store, self.file_ids)  # records in cell outputs, where the extension does not run
        self._writers: OrderedDict[str, str] = OrderedDict()  # flow id -> client id of the page that ran its cell
        self._pages: OrderedDict[str, str] = OrderedDict()  # client id -> that page's tab id (from its restores)
        self._silence_timer: threading.Timer | None = None

    # ------------------------------------------------------------------ lifecycle
    def open(self) -> None:
        """Say hello to the front end (at ``%load_ext``); the answer arrives after this cell."""
        kernel = getattr(self.shell, "kernel", None)  # an IPython shell has one only under ipykernel, not in a terminal
        if kernel is None:
            self.status = "none"
            return
        try:
            from comm import create_comm

            comm = create_comm(target_name=COMM_TARGET, primary=False)  # opened below, once its hooks are in place
        except Exception:  # noqa: BLE001 - a kernel without comms: behave as without a front end
            self.status = "none"
            return
        if type(comm).__name__ == "DummyComm":
            self.status = "none"
            return
        self._kernel = KernelLoop(cell_context=False)
        comm.on_msg(self._on_msg)
        comm.on_close(self._on_close)
        self._hooked = answers_where_sent(comm, heard=self._heard)
        self._comm = comm
        self._probes.register()
        self.status = "pending"
        try:
            comm.open(data={"op": "hello", "v": PROTOCOL_VERSION})
        except Exception:  # noqa: BLE001 - a kernel without comms: behave as without a front end
            self._comm = None
            self.status = "none"
            return
        self._hello_at = time.monotonic()
        self._arm_silence(self.page_wait)  # VS Code, Colab: the hello may go unanswered

    def _arm_silence(self, delay: float) -> None:
        timer = threading.Timer(max(delay, 0.0), self._page_stayed_silent)
        timer.daemon = True
        self._silence_timer = timer
        timer.start()

    def set_page_wait(self, seconds: float) -> None:
        """``%config MCPMagics.page_wait`` changed: the bound counts from the hello, so a wait under way is re-timed.

        The setting is made after ``%load_ext`` (its hello started the wait), so without this a shorter
        or longer wait would only apply to the next kernel.
        """
        self.page_wait = seconds
        timer, hello = self._silence_timer, self._hello_at
        if timer is None or hello is None or not timer.is_alive():
            return
        timer.cancel()
        self._arm_silence(hello + seconds - time.monotonic())

    def close(self) -> None:
        """Close the comm (``%unload_ext``); the notebook keeps what it has."""
        self._probes.unregister()
        comm, self._comm = self._comm, None
        timer, self._silence_timer = self._silence_timer, None
        if timer is not None:
            timer.cancel()
        self.oauth.clear()
        if comm is not None:
            comm.on_msg(None)
            comm.on_close(None)
            try:
                comm.close()
            except Exception:  # noqa: BLE001 - closing must not fail
                pass
        self.status = "none"

    # ------------------------------------------------------------------ StoreBackend (any thread)
    def save(self, record: dict[str, Any]) -> None:
        message: dict[str, Any] = {"op": "save", "record": record}
        client = self._writers.get(record["id"])
        if client is not None:  # one page writes it: the one that shows the flow (labextension/src/writer.ts)
            message["writer"] = {"client": client}
        if self._comm is not None and self.status not in ("absent", "none"):
            self.saves_sent += 1
        self._send(self._addressed(message))
        self._output_changed(record["id"])

    def _addressed(self, message: dict[str, Any]) -> dict[str, Any]:
        """``message`` with its writer's tab id, once a restore from that page said it (a reload keeps the tab id)."""
        writer = message.get("writer")
        if not isinstance(writer, dict):
            return message
        return {**message, "writer": {"client": writer["client"], "page": self._pages.get(writer["client"])}}

    def delete(self, flow_id: str) -> None:
        self._send({"op": "delete", "id": flow_id})  # every page drops it: none keeps a finished flow's record
        self._output_changed(flow_id)
        self._writers.pop(flow_id, None)

    def delete_all(self) -> None:
        self._send({"op": "delete", "all": True})

    # ------------------------------------------------------------------ records in cell outputs
    def writes_outputs(self) -> bool:
        """Records go into cell outputs: a kernel's front end without the extension (closed, silent, or none).

        Before the page answers, a cell sent by a front end that allows stdin (a live page) waits for
        the answer; one that does not (nbclient, papermill, nbval: no page will ever answer) writes at once.
        """
        if getattr(self.shell, "kernel", None) is None:
            return False
        if self.status in ("absent", "none"):
            return True
        return self.status == "pending" and (self._page_silent or not self._live_page())

    def _cell_request(self) -> dict[str, Any]:
        """The running cell's execute request (``{}`` outside a kernel)."""
        kernel: Any = getattr(self.shell, "kernel", None)
        try:
            request = kernel.get_parent("shell") or {}
        except TypeError:  # ipykernel 6: one parent
            request = kernel.get_parent() or {}
        except AttributeError:  # no kernel
            return {}
        return request if isinstance(request, dict) else {}

    def _live_page(self) -> bool:
        """Whether the running cell came from a live page (its execute request allows stdin)."""
        content = self._cell_request().get("content", {})
        return bool(isinstance(content, dict) and content.get("allow_stdin", False))

    def _cell_client(self) -> str | None:
        """The client id of the page that sent the running cell (its messages' ``session``)."""
        header = self._cell_request().get("header", {})
        client = header.get("session") if isinstance(header, dict) else None
        return client if isinstance(client, str) and PAGE_ID.match(client) else None

    def saves(self, interactive: bool) -> bool:
        """Records reach the notebook: its metadata (the extension), or its outputs (a front end without it).

        A restore heard while the main shell is busy (Run All: the page's answer queues behind the cells)
        means the extension is there: the saves already sent land in its metadata.
        """
        heard = self.status == "pending" and self._restored_early
        return super().saves(interactive) or heard or self.writes_outputs()

    def begin_flow(self, flow_id: str, cell_id: str | None, interactive: bool) -> None:
        """A flow starts in the running cell (kernel thread): where no extension writes metadata, its output goes here."""
        if getattr(self.shell, "kernel", None) is None:
            return  # plain IPython, a script: no notebook to write into
        client = self._cell_client()
        if client is not None:
            _keep_newest(self._writers, flow_id, client, WRITERS_KEPT)
        if self.status == "connected" and flow_id not in self.file_ids:
            return  # the metadata is the store
        writes = self.writes_outputs()
        self.outputs.begin(flow_id, interactive, placeholder=writes, now=writes)
        if self.store.get(flow_id) is not None:
            self._output_changed(flow_id)  # resumed or offered again: its record shows in this cell at once

    def answered_here(self, flow_id: str, display_id: str) -> None:
        """The page that sent the running comm message (a form's click) writes the flow's record and report from now on.

        The page that ran the cell may have left (a collaborator answers in a shared notebook): the
        one that answers is the one that shows the flow.
        """
        client = self._cell_client()
        if client is None:
            return
        _keep_newest(self._writers, flow_id, client, WRITERS_KEPT)
        self.reports.answered(display_id, client)

    def settle(self, flow_id: str) -> None:
        if self.outputs.writes_now(flow_id) or self.writes_outputs() or flow_id in self.file_ids:
            self.outputs.settle(flow_id)

    def forgotten(self, flow_ids: list[str]) -> None:
        if getattr(self.shell, "kernel", None) is None:
            return
        for flow_id in flow_ids:
            if flow_id in self.file_ids or self.writes_outputs():
                self.outputs.forgotten_here(flow_id)

    def _output_changed(self, flow_id: str) -> None:
        """Bring the flow's output up to date, or wait for the page's answer to know whether it is the store."""
        if self.status == "connected":
            if flow_id in self.file_ids:
                self.outputs.changed(flow_id)  # its old record lives in a file's output: its end leaves a void
            return
        if self.writes_outputs() or self.outputs.writes_now(flow_id):
            self.outputs.changed(flow_id)
        # else pending: written once the page closes the comm or stays silent (``open``'s timer), or dropped
        # when it restores (the extension's metadata is the store)

    def _page_stayed_silent(self) -> None:
        """No answer to the hello within ``page_wait`` s: a front end without the extension (timer thread).

        A restore seen on the shell channel (``_heard``) while the cell blocks the main shell means the
        extension is there and its answer is queued behind the cell: its metadata will be the store.
        """
        if self.status == "pending" and not self._restored_early:
            self._page_silent = True
            self.outputs.flush()

    def _send(self, data: dict[str, Any]) -> None:
        """Send on the kernel's own loop (a comm belongs to the main thread); never wait."""
        comm = self._comm
        if comm is None or self.status in ("absent", "none"):
            return
        kernel = self._kernel
        if kernel is None:
            self._publish(comm, data)
        else:
            kernel.now_or_soon(self._publish, comm, data)  # store saves come from the runtime loop

    def send_report(self, cell_id: str | None, display_id: str, output: dict[str, Any]) -> None:
        """A flow's settled report (an nbformat ``display_data``), for pages that do not know its display id.

        Kept until a page answers ``shown`` (at most ``REPORTS_KEPT``) and sent again with every
        ``restore``: a page that reloads as the flow ends, or joins after, still writes it.
        """
        self._send(self._addressed(self.reports.report(cell_id, display_id, output)))

    def send_live(self, cell_id: str | None, display_id: str, output: dict[str, Any]) -> None:
        """A flow's live area as it is made (its widget view), for pages that did not see it displayed.

        Kept, and sent again with every ``restore``, until its report replaces it; never over a
        report already known for that display (a flow that settled at once).
        """
        client = self._cell_client()  # made in the flow's cell: only that page (tab) adds it
        message = self.reports.live(cell_id, display_id, output, client)
        if message is not None:
            self._send(self._addressed(message))

    def pending_reports(self) -> list[str]:
        """Display ids of live areas not settled yet and of reports no page has said it shows (tests, ``restore``)."""
        return self.reports.pending()

    def send_app(self, data: dict[str, Any]) -> None:
        """An ``app_*`` message to the page, sent at once from this thread (App replies come from the loop)."""
        self._send_now(data)

    def _send_now(self, data: dict[str, Any]) -> None:
        """Send from this thread (ipykernel's iopub socket takes messages from any thread), not later on the kernel's loop."""
        comm = self._comm
        if comm is not None and self.status not in ("absent", "none"):
            self._publish(comm, data)

    @staticmethod
    def _publish(comm: Any, data: dict[str, Any]) -> None:
        try:
            if not getattr(comm, "_closed", False):
                comm.send(data)
        except Exception as exc:  # noqa: BLE001 - a lost save must not break the flow
            print(f"mcp-notebook: could not send a saved flow to the notebook: {exc}", file=sys.__stderr__)

    # ------------------------------------------------------------------ replies (main or subshell thread)
    def _on_msg(self, msg: dict[str, Any]) -> None:
        data = msg.get("content", {}).get("data") or {}
        self.handle(data)

    def handle(self, data: dict[str, Any]) -> None:
        """One message from the front end (public so the benchmark can feed restores)."""
        if not isinstance(data, dict):
            return
        self.replies += 1
        op = data.get("op")
        if data.get("warnings"):
            self.warnings.extend(f"notebook: {w}" for w in data["warnings"] if isinstance(w, str))
        if op == "restore":
            self._on_restore(data)
        elif op == "ack" and isinstance(data.get("written"), bool):
            if data["written"]:
                self.saves_written += 1
            else:
                self.saves_left += 1
        elif op == "path":
            self.path = data.get("path") if isinstance(data.get("path"), str) else self.path
        elif op == "oauth":
            self.oauth.deliver(data)
        elif op == "shown" and isinstance(data.get("display_id"), str):
            self.reports.shown(data["display_id"])
        elif isinstance(op, str) and op.startswith("app_") and self.on_app is not None:
            try:
                self.on_app(data)
            except Exception as exc:  # noqa: BLE001 - the comm handler must survive
                print(f"mcp-notebook: an App message failed: {type(exc).__name__}: {exc}", file=sys.__stderr__)
        elif op == "error":
            self.warnings.append(f"the notebook refused a {data.get('for') or 'message'}: {data.get('message')}")

    def _on_restore(self, data: dict[str, Any]) -> None:
        if self.status != "connected":
            self.outputs.withdraw()  # the metadata is the store: outputs written before this answer are emptied
        self.status = "connected"
        if isinstance(data.get("path"), str):
            self.path = data["path"]
        self._note_page(data)
        self.page_url = checked_page_url(data.get("page_url"))
        records, warnings = parse_flows(data.get("flows"), max_bytes=self.store.max_record_bytes)
        self.warnings.extend(warnings)
        _added, stale = self.store.merge(records, "notebook")
        self.note_conflicts(records)  # a record already held from a file or output differs: said, never merged
        if data.get("reason") == "reconnect":
            # A reloaded page has what was last saved to disk: put back what this kernel
            # knows better (flows waiting here, flows that finished here).
            for flow_id in stale:
                self._send({"op": "delete", "id": flow_id})
            for record in self.store.kernel_records(exclude=records):
                self.save(record)  # addressed to its writer, as every save
            for state in self.oauth.waiting():  # the reloaded page does not know them yet
                self._send_now({"op": "oauth_wait", "state": state})
        # a page that reloaded or joined as a flow ended: it writes what no page has shown
        for message in self.reports.messages():
            self._send(self._addressed(message))

    def _note_page(self, restore: dict[str, Any]) -> None:
        """Which tab a client id is (any thread): a reloaded tab keeps its page id, so it stays the writer of its flows."""
        client, page = restore.get("client"), restore.get("page")
        if isinstance(client, str) and isinstance(page, str) and PAGE_ID.match(client) and PAGE_ID.match(page):
            _keep_newest(self._pages, client, page, PAGES_KEPT)

    def _on_close(self, msg: dict[str, Any]) -> None:
        self._comm = None
        self.status = "absent"
        self.outputs.flush()  # records saved while the page had not answered go to their cells' outputs

    # ------------------------------------------------------------------ the page's first answer (shell-channel thread)
    def _heard(self, data: Any) -> None:
        """The page sent ``data`` on this comm (a message or its close): noted as ipykernel routes it.

        Runs on ipykernel's shell-channel thread, which routes every comm message even while a cell
        blocks the main shell; only flags and ``page_url`` are touched here. A ``restore`` brings the
        page's base URL (the sign-in's redirect URI) and means the OAuth relay is listening.
        """
        if isinstance(data, dict) and data.get("op") == "restore":
            url = checked_page_url(data.get("page_url"))
            if url is not None:
                self.page_url = url
            self._note_page(data)  # a page that reloads while this cell runs is known as the same tab
            self._restored_early = True
        self._answered.set()

    def wait_for_page(self, timeout: float | None = None) -> bool:
        """Wait (at most ``timeout`` s, by default ``page_wait``, once per kernel) for the page to answer the hello; whether it has (any thread).

        Only a hello still unanswered waits (``pending``); a page that stays silent past the bound
        (a front end without the extension that does not close the comm either) is not waited for again.
        """
        if self.status != "pending" or self._comm is None or not self._hooked:
            return self.status == "connected"  # without the hook the answer comes after the cell: waiting cannot help
        if self._page_silent:
            return self._answered.is_set()
        answered = self._answered.wait(self.page_wait if timeout is None else timeout)
        self._page_silent = not answered
        return answered

    # ------------------------------------------------------------------ OAuth sign-in (any thread)
    def await_oauth(self, state: str, deliver: Callable[[dict[str, Any]], None]) -> bool:
        """Ask the extension to relay what the OAuth callback gets for ``state``; ``False`` without one.

        ``deliver`` is called once, on the thread the comm message arrives on, with
        ``{"state", "code", "iss", "error", "error_description"}`` (strings or ``None``). Without a
        connected extension nothing can relay the callback: the caller needs another way.
        """
        if not isinstance(state, str) or not OAUTH_STATE.match(state):
            raise ValueError("an OAuth state is 8 to 256 letters, digits, '-' or '_'")
        if self._comm is None or not (
            self.status == "connected" or (self.status == "pending" and self._restored_early)
        ):
            return False
        self.oauth.wait(state, deliver)
        return True

    def cancel_oauth(self, state: str) -> None:
        """Stop waiting for ``state`` (timed out, cancelled): ``deliver`` will not be called."""
        self.oauth.cancel(state)


def _keep_newest(table: OrderedDict[str, str], key: str, value: str, limit: int) -> None:
    """Set ``table[key]`` as its newest entry, dropping the oldest past ``limit`` (no per-call list grows without end)."""
    table[key] = value
    table.move_to_end(key)
    while len(table) > limit:
        table.popitem(last=False)
