"""Where a session's saved records go, and the notebook file it reads them from: ``Page``.

A session keeps the records of its waiting flows in its ``flows.store.Store``; the store hands every
save and delete to a backend. ``Page`` is the session's notebook as a session with no page knows it:
it writes nothing anywhere (records stay in this kernel, and the user is told so once, plainly), and
reads the records of the saved ``.ipynb`` from disk (as JSON): its metadata and its cells'
outputs (``__session__`` where Jupyter sets it, ``__vsc_ipynb_file__`` in VS Code, or
``%mcp flows --from PATH``). The notebook side's ``notebook.frontend.Frontend`` is a ``Page`` that
writes: into the notebook's metadata through the labextension where it runs, else into the output of
the flow's cell (``notebook.output_records``); ``Session.plug_page`` puts it in place. The session tells
its page when a flow starts in a cell (``begin_flow``), when a headless flow has ended its cell
(``settle``) and when records were forgotten (``forgotten``), so the page can place what it writes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, Literal

from ..flows.record import read_notebook
from ..flows.store import Store

__all__ = ["NOTEBOOK_PATH_NAMES", "NOT_SAVED_NOTICE", "Page", "Status"]

Status = Literal["pending", "connected", "absent", "none"]
"""``pending``: hello sent, no answer yet; ``connected``: the extension answered;
``absent``: the front end closed the comm (no extension); ``none``: no kernel, nothing to ask."""

NOT_SAVED_NOTICE = (
    "Note: flows waiting for input are kept in this kernel only and will not be saved in the "
    "notebook, because the mcp-notebook JupyterLab extension is not active here. "
    "They last until the kernel stops."
)

NOTEBOOK_PATH_NAMES = ("__session__", "__vsc_ipynb_file__")
"""Where a kernel learns its notebook's path: Jupyter Server (``JPY_SESSION_NAME``), VS Code's Jupyter."""


class Page:
    """The notebook of a session with no page: the ``.ipynb`` read from disk, records kept in this kernel."""

    def __init__(self, store: Store, shell: Any = None) -> None:
        self.store = store
        self.shell = shell
        self.status: Status = "none"
        self.path: str | None = None  # the notebook's path as the front end reports it
        self.warnings: list[str] = []  # not yet shown to the user
        self.files_read: list[str] = []
        self.file_ids: set[str] = set()  # ids of records read from files (a flow ending away from them voids them)
        self.page_url: str | None = (
            None  # the Jupyter server's base URL in the browser (latest restore), for OAuth redirects
        )
        self.on_app: Callable[[dict[str, Any]], None] | None = (
            None  # the page's ``app_*`` messages (notebook.apps.AppHost.handle)
        )
        self._session_read = False
        self._noticed = False

    # ------------------------------------------------------------------ a page, where there is one (none here)
    def open(self) -> None:
        """Greet the page (``%load_ext``); nothing to greet here."""

    def close(self) -> None:
        """Stop talking to the page; records stay in the store."""
        self.status = "none"

    def save(self, record: dict[str, Any]) -> None:
        """``StoreBackend``: a record saved goes nowhere but the store."""

    def delete(self, flow_id: str) -> None:
        """``StoreBackend``: nothing outside the store to delete from."""

    def delete_all(self) -> None:
        """Nothing outside the store to delete from."""

    def begin_flow(self, flow_id: str, cell_id: str | None, interactive: bool) -> None:
        """A flow starts (or resumes) in the running cell (kernel thread): nowhere to place its record here."""

    def settle(self, flow_id: str) -> None:
        """A headless flow has ended its cell (kernel thread): nothing to write here."""

    def forgotten(self, flow_ids: list[str]) -> None:
        """These records were forgotten in the running cell (kernel thread): nothing to write here."""

    def answered_here(self, flow_id: str, display_id: str) -> None:
        """A person answered the flow's form (kernel thread, in the page's comm message): no page to note here."""

    def writes_outputs(self) -> bool:
        """Whether records reach the notebook through cell outputs (no extension, but a kernel's front end)."""
        return False

    def send_report(self, cell_id: str | None, display_id: str, output: dict[str, Any]) -> None:
        """A flow's settled report, for pages that do not know its display id: no page here."""

    def send_live(self, cell_id: str | None, display_id: str, output: dict[str, Any]) -> None:
        """A flow's live area as it is made: no page here."""

    def send_app(self, data: dict[str, Any]) -> None:
        """An ``app_*`` message to the page: no page here."""

    def wait_for_page(self, timeout: float = 0.0) -> bool:
        """Whether the page has answered: there is none to wait for."""
        return False

    def await_oauth(self, state: str, deliver: Callable[[dict[str, Any]], None]) -> bool:
        """Relay an OAuth callback through the page: ``False``, nothing can relay it here."""
        return False

    def cancel_oauth(self, state: str) -> None:
        """Stop waiting for a relayed callback: nothing was waiting."""

    # ------------------------------------------------------------------ the .ipynb fallback
    def session_path(self) -> str | None:
        """The saved notebook of this kernel, when the kernel knows it (``NOTEBOOK_PATH_NAMES``)."""
        ns = (self.shell.user_ns if self.shell is not None else None) or {}
        for name in NOTEBOOK_PATH_NAMES:
            value = ns.get(name)
            if not isinstance(value, str) or not value:
                continue
            if os.path.exists(value):
                return value
            base = os.path.basename(value)  # a path relative to the server root; the kernel runs beside it
            if base and os.path.exists(base):
                return base
        return None

    def ensure_loaded(self) -> None:
        """Before listing or resuming: read this kernel's notebook file once.

        Without the extension's restore, its metadata and its outputs; with it, only its outputs (a
        papermill run's records, written where no extension ran): the page's metadata is newer than the file's.
        """
        if self._session_read:
            return
        self._session_read = True
        path = self.session_path()
        if path is not None:
            try:
                self.read_file(path, metadata=self.status != "connected")
            except OSError as exc:
                self.warnings.append(f"could not read the saved notebook {path}: {exc.strerror or exc}")

    def read_file(self, path: str, *, metadata: bool = True) -> list[str]:
        """Take the records saved in the notebook at ``path`` (metadata and outputs); returns the ids added."""
        others: dict[str, list[dict[str, Any]]] = {}
        records, warnings = read_notebook(path, max_bytes=self.store.max_record_bytes, metadata=metadata, others=others)
        self.warnings.extend(f"{os.path.basename(path)}: {w}" for w in warnings)
        added, _stale = self.store.merge(records, "file")
        for flow_id, losers in others.items():  # the same id written twice in the file: the store tells a conflict
            for loser in losers:
                self.store.merge({flow_id: loser}, "file")
        self.file_ids.update(records)
        self.files_read.append(path)
        self.note_conflicts(records)
        return added

    def note_conflicts(self, ids: Iterable[str]) -> None:
        """Say once, plainly, which of ``ids`` several different records now claim (nothing resumes them until the person chooses)."""
        for flow_id in ids:
            count = len(self.store.claimants(flow_id))
            if count:
                self.warnings.append(
                    f"{count} different saved records claim flow {flow_id}; none of them is resumed until you choose "
                    "one (%mcp flows shows them all, each with its content digest)"
                )

    # ------------------------------------------------------------------ telling the user
    def saves(self, interactive: bool) -> bool:
        """Whether records written now reach the notebook (pending counts only in a live front end)."""
        return self.status == "connected" or (self.status == "pending" and interactive)

    def notice(self, interactive: bool) -> str | None:
        """The one plain notice that records will not be saved: returned once, then ``None``.

        Where records go into cell outputs there is none: the record's own output says where it is.
        """
        if self._noticed or self.saves(interactive):
            return None
        self._noticed = True
        return NOT_SAVED_NOTICE

    def take_warnings(self) -> list[str]:
        """Warnings not shown yet (corrupt metadata, refused messages); each is shown once."""
        out, self.warnings = self.warnings, []
        return list(dict.fromkeys(out))

    def describe(self) -> str:
        """Where the saved flows live, for ``%mcp flows``."""
        if self.status == "connected":
            return f"saved in {self.path}" if self.path else "saved in the notebook"
        names = ", ".join(dict.fromkeys(os.path.basename(p) for p in self.files_read))
        if self.writes_outputs():
            return f"read from {names}; new ones saved in cell outputs" if names else "saved in cell outputs"
        if names:
            return f"read from {names}; changes stay in this kernel"
        return "kept in this kernel"
