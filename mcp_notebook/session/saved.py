"""``SavedFlows``: a session's flows that wait in the notebook, listed, offered, resumed and forgotten.

A waiting flow leaves a record (``flows.store.SavedFlow``, the one schema) in the session's store,
which the page keeps in the notebook. Here the session reads them back (``load``, from the page, the
kernel's ``__session__`` or a file), lists them (``waiting``, ``task_rows``), picks one (``pick``),
resumes it (``resume``: reconnect, consent first for a record this user did not write, then the
session's ``call`` going on with the saved state), offers Continue / Start over when the cell of a
waiting flow runs again (``offer``), and forgets them (``forget``, with their task handles). Records
travel as ``SavedFlow`` objects from the store on: no dict past it.

Consent (``concerns``): a record from a received notebook could run any command, send a token
anywhere or call any tool, and a record whose connection name now points elsewhere would hand its
saved state to another server. Interactive, the notebook side shows the record whole and asks
(``Views.confirm_resume``); headless, ``consent_needed`` refuses with everything it would do.
Consent is bound to the content shown (``trust.content_digest``), never to the flow id: Resume,
Continue and ``--trust`` act only while the store still holds exactly the record the person was
shown, and ask again, showing it, when it changed. Several different records claiming one id
(``Store.claimants``) are shown together and none resumes until the person names one by its digest.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from ..auth.sdk_provider import OAuthOptions
from ..core.policy import current_policy
from ..core.text import mcp_line
from ..errors import FlowError, Note, SessionError, describe_exception
from ..flows.flow import Flow, FlowState
from ..flows.record import SavedFlow
from ..flows.trust import content_digest, digest_matches, record_text, target_of
from ..wire.connection import Connection
from ..wire.target import Target

if TYPE_CHECKING:
    from .page import Page
    from .session import Session
    from .settings import CallOptions
    from .views import Choice

__all__ = ["SavedFlows", "consent_needed"]


class SavedFlows:
    """The saved flows of one session (``session.saved``)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    # ------------------------------------------------------------------ reading and listing
    def load(self, from_path: str | None = None) -> Page:
        """Make sure the saved records are in the store (a file given, or ``__session__``); tell warnings.

        Raises:
            SessionError: ``from_path`` cannot be read (kind ``unreadable_file``).
        """
        frontend = self.session.frontend
        if from_path:
            try:
                frontend.read_file(from_path)
            except OSError as exc:
                raise SessionError(
                    f"cannot read {from_path}: {exc.strerror or exc}",
                    kind="unreadable_file",
                    details={"path": from_path},
                ) from None
        frontend.ensure_loaded()
        for warning in frontend.take_warnings():
            self.session.tell(f"Warning: {warning}")
        return frontend

    def waiting(self, from_path: str | None, *, interactive: bool) -> list[SavedFlow]:
        """The saved flows waiting for input, oldest first (read first: see ``load``)."""
        self.load(from_path)
        records = self.session.store.saved_all()
        if records:
            self.session.notice(interactive)
        return records

    def task_rows(self, server: str | None = None) -> list[list[Any]]:
        """``%mcp tasks``: tasks followed here, tasks saved in the notebook, and the server's own list (2025, where offered).

        Rows: flow id, server, tool, status, status message, created, ttl, where. A task id is never
        shown (a bearer-like handle); a task known only from the server's list shows its fingerprint.
        """
        from ..wire.tasks import TaskStatus, fingerprint

        session = self.session
        self.load(None)
        conns = [session.registry.get(server)] if server else list(session.registry)
        rows: list[list[Any]] = []
        known: set[str] = set()
        for conn in conns:
            for flow in cast("list[Flow]", list(conn.flows)):  # the calls a connection names as wire.Caller
                if flow.task is not None and not flow.finished:
                    known.add(flow.task.task_id)
                    rows.append(
                        [
                            flow.id,
                            conn.name,
                            flow.name,
                            flow.task.status,
                            _line(flow.task.message),
                            flow.task.created_at or "",
                            _ttl(flow.task),
                            "followed here",
                        ]
                    )
        for record in session.store.saved_all():
            task = record.task_ref  # typed: a received notebook's odd values are dropped, not computed with
            if task is None or (server and record.server_name != server):
                continue
            if session.live_flow(record.id) is not None:
                continue
            task_id = session.task_handles.task_id(task.ref) if session.store.is_trusted(record.id) else None
            if task_id is not None:
                known.add(task_id)
            status = TaskStatus(task_id="", status=task.status, created_at=task.created, ttl_ms=task.ttl_ms)
            where = (
                "saved: " + mcp_line("%mcp", "resume", record.id)
                if task_id is not None
                else "saved, but its handle is not on this machine"
            )  # a record's id: encoded for the line
            rows.append(
                [
                    record.id,
                    record.server_name,
                    record.name,
                    status.status,
                    "",
                    status.created_at or "",
                    _ttl(status),
                    where,
                ]
            )
        for conn in conns:
            client = conn.task_client
            if client is None or not client.can_list:
                continue
            try:
                listed = session.runtime.run(client.list(), timeout=10)
            except Exception as exc:  # noqa: BLE001 - one server's listing must not hide the rest
                rows.append(
                    [
                        "",
                        conn.name,
                        "",
                        "",
                        f"could not list its tasks: {describe_exception(exc)[0][:200]}",
                        "",
                        "",
                        "on the server",
                    ]
                )
                continue
            for status in listed:
                if status.task_id not in known:
                    rows.append(
                        [
                            fingerprint(status.task_id),
                            conn.name,
                            "",
                            status.status,
                            _line(status.message),
                            status.created_at or "",
                            _ttl(status),
                            "on the server",
                        ]
                    )
        return rows

    def pick(self, flow_id: str | None, cell_id: str | None) -> SavedFlow:
        """The record ``flow_id``, else the only one of this cell, else the only one at all.

        Raises:
            SessionError: no such record (``no_saved_flow``), none waiting (``nothing_waiting``), or several and none named (``several_waiting``).
        """
        store = self.session.store
        if flow_id:
            record = store.saved(flow_id)
            if record is None:
                raise self._no_saved_flow(flow_id)
            return record
        candidates = (store.saved_for_cell(cell_id) if cell_id else []) or store.saved_all()
        if not candidates:
            raise SessionError("No flow is waiting for input.", kind="nothing_waiting")
        if len(candidates) > 1:
            ids = [r.id for r in candidates]
            raise SessionError(
                f"several saved flows are waiting ({', '.join(ids)}); say which.",
                kind="several_waiting",
                details={"ids": ids},
            )
        return candidates[0]

    def _no_saved_flow(self, flow_id: str) -> SessionError:
        waiting = [r.id for r in self.session.store.saved_all()]
        text = f"no saved flow {flow_id!r} (waiting: {', '.join(waiting) or 'none'})."
        return SessionError(text, kind="no_saved_flow", flow_id=flow_id, details={"ids": waiting})

    # ------------------------------------------------------------------ going on
    def resume(
        self, record: SavedFlow, options: CallOptions, *, interactive: bool, cell_id: str | None, wait: bool = False
    ) -> Flow | Choice | None:
        """Continue ``record``: reconnect, re-render its questions here, go on with its saved state.

        ``interactive`` says whether a person can answer here (the consent panel needs one);
        ``wait`` keeps the flow itself headless all the same (``--wait``). Returns the consent
        panel when it was shown instead (its ``outcome()`` is the flow a Resume click starts).

        Raises:
            SessionError: the flow is running here right now (``flow_running``), or, headless, the
                record needs the user's consent first (``consent_needed``: ``options.trust`` gives it).
            FlowError: its server cannot be reached again (``reconnect_needed``, ``still_saved``).
        """
        session = self.session
        if refused := current_policy().saved_server_refusal(record.server):  # before a consent, a process or a socket
            raise FlowError(
                f"Flow {record.id} was not resumed: {refused}. It stays saved.",
                kind="policy_refused", flow_id=record.id, server=record.server_name,
            )  # fmt: skip
        live = session.live_flow(record.id)
        if live is not None:
            if live.state is not FlowState.WAITING:
                raise SessionError(
                    f"flow {record.id} is running in this kernel right now; wait for it, or cancel it first",
                    kind="flow_running",
                    flow_id=record.id,
                )
            live.cancel(forget=False)  # it continues here; its form elsewhere goes away
            try:
                live.result(timeout=10)
            except Exception:  # noqa: BLE001 - cancelled, as asked
                pass
        record = self._one_claimant(record, options)
        concerns = self.concerns(record)
        if concerns and not self._consented(record, options):  # a Continue button passes the call's flags
            if interactive:
                return self._confirm(record, concerns, options, cell_id)
            if options.trust:  # consent was given, but to other content than this record's
                concerns.append(
                    "it is not the record you were shown (it changed since, or was not shown here): "
                    "read it as it is now before you consent again"
                )
            session.store.shown(record.id, content_digest(record.to_dict()))
            raise consent_needed(record, concerns)
        conn, reconnected = self.reconnect(record, interactive=interactive and not wait)
        if reconnected:
            text = f"Reconnected {conn.name!r} to {conn.target.describe()} to resume flow {record.id}."
            session.tell(Note(text, "reconnected", flow_id=record.id, server=conn.name))
        session.notice(
            interactive
        )  # resuming changes what is saved; without the extension the file keeps the old record
        return session.call(
            record.method, conn, record.name, dict(record.arguments or {}), options,  # type: ignore[arg-type]  # a checked record's method is one of Method
            interactive=interactive and not wait, cell_id=cell_id, resume=record,
        )  # fmt: skip

    def _one_claimant(self, record: SavedFlow, options: CallOptions) -> SavedFlow:
        """``record``, or, when several different records claim its id, the one the person named by its digest.

        Raises:
            SessionError: ``consent_needed`` (reason ``conflict``) with every claimant shown whole,
                unless ``options`` carries ``--trust DIGEST`` naming exactly one of them.
        """
        store = self.session.store
        claimants = store.claimants(record.id)
        if not claimants:
            return record
        chosen = store.choose(record.id, options.consented) if options.trust and options.consented else None
        if chosen is not None:
            return SavedFlow.from_dict(chosen)
        store.shown(record.id, None)  # several shown at once: a bare --trust names none of them
        raise conflict_refusal(record.id, [SavedFlow.from_dict(c) for c in claimants], self.concerns)

    @staticmethod
    def _consented(record: SavedFlow, options: CallOptions) -> bool:
        """Whether ``options`` consent to this very record: ``trust`` with its content's digest (``None``: the record passed)."""
        if not options.trust:
            return False
        return options.consented is None or digest_matches(content_digest(record.to_dict()), options.consented)

    def _confirm(self, record: SavedFlow, concerns: list[str], options: CallOptions, cell_id: str | None) -> Choice:
        """Show what the record would do and resume only when the user says yes (a cell awaits the panel's outcome).

        The yes is to the content shown: when the click comes, the store must still hold exactly
        that record (a restore may have brought another under the same id meanwhile); otherwise
        the person is asked again, shown what it holds now.
        """
        store = self.session.store
        digest = content_digest(record.to_dict())
        store.shown(record.id, digest)

        def confirmed() -> Flow | Choice | None:
            current = store.get(record.id)
            if current is None:
                raise SessionError(
                    f"flow {record.id} is no longer saved here (it ended or was forgotten); nothing was resumed",
                    kind="no_saved_flow", flow_id=record.id, details={"ids": []},
                )  # fmt: skip
            now = SavedFlow.from_dict(current)
            if store.claimants(record.id) or not store.trust(record.id, digest):
                return self.resume(
                    now, replace(options, trust=False, consented=None), interactive=True, cell_id=cell_id
                )
            return self.resume(now, replace(options, trust=True, consented=digest), interactive=True, cell_id=cell_id)

        return self.session.views.confirm_resume(record, concerns, confirmed)

    def for_cell(self, cell_id: str, method: str, server: str, name: str) -> SavedFlow | None:
        """A saved flow that this cell started with the same call, still waiting for input."""
        session = self.session
        session.frontend.ensure_loaded()
        for record in session.store.saved_for_cell(cell_id):
            if record.method == method and record.name == name and record.server_name == server:
                live = session.live_flow(record.id)
                if live is None or live.state is FlowState.WAITING:
                    return record
        return None

    def offer(
        self,
        record: SavedFlow,
        method: Any,
        conn: Connection,
        name: str,
        arguments: Any,
        options: CallOptions,
        cell_id: str,
    ) -> Choice:
        """Re-running the cell of a waiting flow: offer Continue / Start over (a cell awaits the panel's outcome)."""
        session = self.session

        shown = content_digest(record.to_dict())

        def resume() -> Flow | Choice | None:
            current = session.store.saved(record.id)
            if current is not None and (
                session.store.claimants(record.id) or content_digest(current.to_dict()) != shown
            ):  # not the flow offered: offer again, as it is now (its resume asks before anything runs)
                return self.offer(current, method, conn, name, arguments, options, cell_id)
            return self.resume(current or record, options, interactive=True, cell_id=cell_id)

        def start_over() -> Flow | Choice | None:
            live = session.live_flow(record.id)
            if live is not None:
                live.cancel()
            session.store.delete(record.id)
            self._drop_task_handle(record)
            return session.call(method, conn, name, arguments, options, interactive=True, cell_id=cell_id)

        return session.views.resume_offer(record, resume, start_over)

    # ------------------------------------------------------------------ forgetting
    def forget(self, flow_id: str | None = None, *, everything: bool = False) -> None:
        """Forget one saved flow, or all of them (a live one is cancelled).

        Raises:
            SessionError: no id given (``flow_id_needed``), or no such record (``no_saved_flow``).
        """
        session = self.session
        self.load(None)
        if everything:
            records = session.store.saved_all()
            for gone in session.store.forget_all():
                live = session.live_flow(gone)
                if live is not None:
                    live.cancel()
            for record in records:
                self._drop_task_handle(record)
            session.frontend.delete_all()
            session.frontend.forgotten([r.id for r in records])
            return
        if not flow_id:
            raise SessionError("no flow id given (or forget everything)", kind="flow_id_needed")
        saved = session.store.saved(flow_id)
        if saved is None:
            raise self._no_saved_flow(flow_id)
        session.store.delete(flow_id)
        session.frontend.forgotten([flow_id])
        self._drop_task_handle(saved)

    def _drop_task_handle(self, record: SavedFlow) -> None:
        """A forgotten task record: its handle goes too (the task itself runs on until its ttl)."""
        task = record.task_ref
        if task is not None and self.session.store.is_trusted(record.id):
            self.session.task_handles.remove(task.ref)

    # ------------------------------------------------------------------ consent and reconnecting
    def concerns(self, record: SavedFlow) -> list[str]:
        """Why resuming ``record`` needs the user's consent first (empty: it may go on by itself)."""
        session = self.session
        concerns: list[str] = []
        if refused := current_policy().saved_server_refusal(record.server):  # listed as forbidden, never started
            concerns.append(f"{refused}, so it cannot be resumed here")
        others = len(session.store.claimants(record.id)) - 1
        if others > 0:
            concerns.append(
                f"{others} other, different record{'s' if others > 1 else ''} claim{'' if others > 1 else 's'} the same "
                f"flow id {record.id}: none is resumed until you choose one by its content digest, or forget them all"
            )
        if not session.store.vouches(record.to_dict()):
            concerns.append(
                "it was not saved by you: it carries no valid signature of yours (mcp-notebook signs the flows it "
                "saves with your Jupyter notebook secret), so it may come from someone else's notebook"
            )
        name = record.server_name
        if name in session.registry:
            saved, current = target_of(record.server), target_of(session.registry.get(name).target.saved())
            if saved != current:
                # URLs as reached, look-alike hosts marked
                saved_at, now_at = (_target_shown(t[0]) for t in (saved, current))
                where = f"{saved_at} (folder {saved[1]})" if saved[1] else saved_at
                now = f"{now_at} (folder {current[1]})" if current[1] else now_at
                concerns.append(
                    f"connection {name!r} now points to {now}, but the flow was saved against {where}; its saved state would go there"
                )
        return concerns

    def reconnect(self, record: SavedFlow, interactive: bool = False) -> tuple[Connection, bool]:
        """The connection a saved flow talks to, and whether it had to be opened again.

        Open by its name, else reconnected from its saved target. Says plainly what the user must
        supply again when the record cannot (an in-notebook server, header or environment values,
        which are never saved).

        Raises:
            FlowError: ``reconnect_needed`` (the server must be connected again by hand, ``reason`` says
                why), or ``still_saved`` (the server could not be reached; the record stays).
        """
        session = self.session
        server = record.server
        name, flow_id = record.server_name, record.id
        target = server.get("target") if isinstance(server.get("target"), str) else ""
        registry = session.registry
        if name in registry:
            conn = registry.get(name)
            if conn.is_open:
                return conn, False
            if conn.sign_in_setup is not None:
                session.sign_ins.page_first(interactive)
            again = registry.connect(
                name, conn.target, protocol=conn.protocol, log_level=conn.log_level, read_timeout=conn.read_timeout,
                connect_timeout=conn.connect_timeout, sign_in_setup=conn.sign_in_setup, return_on_sign_in=interactive,
            )  # fmt: skip
            return again, True
        kind = Target.kind_of_saved(server)
        refusal: dict[str, Any] = dict(
            flow_id=flow_id, server=name, details={"target": target}
        )  # kind= stays in each raise, where mypy checks it is a Kind
        if kind == "inproc":
            raise FlowError(
                f"Flow {flow_id} talked to {target or name!r}, a server defined inside the notebook's previous "
                f"kernel, and it is not defined in this one. Define the server again and connect it as {name!r} to resume the flow.",
                kind="reconnect_needed", reason="inproc", **refusal,
            )  # fmt: skip
        if kind == "http" and server.get("headers"):
            refusal["details"]["names"] = list(server["headers"])
            raise FlowError(
                f"Flow {flow_id} reached {target} with HTTP headers ({', '.join(server['headers'])}) whose values are never saved. "
                f"Connect {name!r} again with those headers to resume the flow.",
                kind="reconnect_needed", reason="headers", **refusal,
            )  # fmt: skip
        if kind == "stdio" and server.get("env"):
            refusal["details"]["names"] = list(server["env"])
            raise FlowError(
                f"Flow {flow_id} started its server with environment variables ({', '.join(server['env'])}) whose values are never saved. "
                f"Connect {name!r} again with those variables to resume the flow.",
                kind="reconnect_needed", reason="env", **refusal,
            )  # fmt: skip
        if kind == "http":
            how: Any = target
            options: dict[str, Any] = {"bearer_env": server.get("bearer_env"), "interactive": interactive}
            if isinstance(
                server.get("oauth"), dict
            ):  # the sign-in it used (names only; a foreign record was consented to)
                options["oauth"] = OAuthOptions.from_saved(server["oauth"])
        else:
            how = target  # "-- COMMAND ARGS", exactly what %mcp connect takes
            options = {"cwd": server.get("cwd")}
        error: FlowError | None = None
        try:
            conn = session.connect(name, how, **options)
        except FlowError as exc:
            error = FlowError(
                f"{exc}\nFlow {flow_id} stays saved; it can be resumed once the server is reachable.", code=exc.code, data=exc.data,
                kind="still_saved", flow_id=flow_id, server=name, reason="unreachable", details={"error": exc},
            )  # fmt: skip
        if error is not None:
            raise error
        return conn, True


def consent_needed(record: SavedFlow, concerns: list[str]) -> SessionError:
    """The headless refusal: why, and everything the flow would do (``CallOptions(trust=True)`` goes on)."""
    text = f"Flow {record.id} was not resumed: " + "; and ".join(concerns) + ".\n" + record_text(record.to_dict())
    return SessionError(
        text, kind="consent_needed", flow_id=record.id, server=record.server_name, details={"concerns": concerns}
    )


def _target_shown(target: str) -> str:
    """A saved or current target as a consent shows it: a URL through ``core.urls.consent_url``, the rest as written."""
    from ..core.urls import consent_url

    return str(consent_url(target)) if target.startswith(("http://", "https://")) else target


def conflict_refusal(flow_id: str, claimants: list[SavedFlow], concerns: Any) -> SessionError:
    """Several different records claim ``flow_id``: every one shown whole, with its digest; nothing resumed.

    ``concerns(record)`` gives each one's reasons (``SavedFlows.concerns``).
    """
    shown = "\n".join(record_text(c.to_dict(), concerns(c)) for c in claimants)
    text = (
        f"Flow {flow_id} was not resumed: {len(claimants)} different saved records claim this id (for example one "
        "in a cell output and another in the notebook's metadata), and which one runs is yours to choose. Resume "
        "the one you mean with --trust and its content digest, or forget them all.\n" + shown
    )
    return SessionError(
        text, kind="consent_needed", flow_id=flow_id, server=claimants[0].server_name, reason="conflict",
        details={"digests": [content_digest(c.to_dict()) for c in claimants]},
    )  # fmt: skip


def _ttl(status: Any) -> str:
    """A task's time to live, and whether it has run out (a ``tasks.TaskStatus``)."""
    if status.ttl_ms is None:
        return "unlimited" if status.created_at else ""
    return f"{status.ttl_ms / 1000:g} s" + (" (expired)" if status.expired() else "")


def _line(text: str | None) -> str:
    return (text or "").strip().split("\n")[0]
