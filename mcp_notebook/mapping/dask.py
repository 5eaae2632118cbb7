"""``mapping.map`` over a Dask collection: each partition on a worker, with the worker's own connection.

``map_dask`` sends each partition to a worker with a ``Remote`` (the server's name, URL, token
variable and protocol, never a token) and gathers the rows back in order under one progress bar.
What a worker keeps is ``Connections``, a ``WorkerPlugin``: a map over a Dask collection runs each partition on a worker, which calls the server through a
connection of its own (streamable HTTP; a token only by the name of an environment variable of the
worker). ``Connections`` is registered by every map (idempotent: the first registration on a worker
stays), so a worker opens one connection per server on first use, reuses it for later partitions
and maps, and closes it at its teardown. Imported only where Dask is used (``distributed`` is an
optional dependency); kept in its own module so the class pickles by reference.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from distributed import WorkerPlugin

from ..errors import FlowError, SessionError, describe_exception
from ..notebook.map_progress import MapProgress
from .frames import arguments_of, pandas_module
from .rows import CallSpec, Outcome, run_rows

if TYPE_CHECKING:
    from ..session.session import Session
    from ..wire.connection import Connection

__all__ = ["PLUGIN_NAME", "Connections", "Remote", "map_dask"]


class Connections(WorkerPlugin):
    """One session and connection per (connection name, URL, token variable, protocol), on the worker that owns this plugin."""

    idempotent = True

    def __init__(self) -> None:
        self.sessions: dict[tuple[str, str, str | None, str], tuple[Any, Connection]] = {}
        self.lock: threading.Lock | None = None  # made on the worker (a lock does not pickle)

    def setup(self, worker: Any) -> None:
        self.lock = threading.Lock()

    def get(self, remote: Remote) -> tuple[Any, Connection]:
        """The session and connection for ``remote``, opened on first use (the token from this process's environment)."""
        assert self.lock is not None, "the plugin runs on a worker"
        with self.lock:
            key = (remote.name, remote.url, remote.bearer_env, remote.protocol)
            entry = self.sessions.get(key)
            if entry is None or not entry[1].is_open:
                from ..session.session import Session

                session = (
                    entry[0] if entry is not None else Session()
                )  # one session per server: its connection takes the kernel's name
                conn = session.connect(
                    remote.name, remote.url, bearer_env=remote.bearer_env, protocol=remote.protocol, sign_in=False
                )
                entry = self.sessions[key] = (session, conn)
            return entry

    def teardown(self, worker: Any) -> None:
        if self.lock is None:
            return
        with self.lock:
            sessions, self.sessions = [s for s, _ in self.sessions.values()], {}
        for session in sessions:
            session.close()


# ---------------------------------------------------------------------- past one kernel: Dask
@dataclass(frozen=True)
class Remote:
    """How a Dask worker reaches the server: the URL, the protocol and the *name* of the token variable (never its value)."""

    name: str  # the kernel's connection name, so errors from a worker read as they do here
    url: str
    bearer_env: str | None
    protocol: str
    spec: CallSpec


PLUGIN_NAME = "mcp-notebook-connections"


def map_dask(
    session: Session,
    conn: Connection,
    spec: CallSpec,
    rows: Any,
    schema: Mapping[str, Any],
    columns: Mapping[str, str] | None,
    column: str | None,
    bearer_env: str | None,
) -> tuple[list[Outcome], list[dict[str, Any]], Any]:
    """Partitions as Dask tasks on the workers; outcomes, arguments and (for a DataFrame) the gathered input, in order."""
    import dask
    from distributed import as_completed, get_client

    target = conn.target
    if target.kind != "http":
        raise SessionError(
            f"{conn.name} is a {target.kind} server: Dask workers can reach only an HTTP URL (connect to the server's URL)",
            kind="bad_input",
        )
    if target.headers or target.served_token is not None:
        raise SessionError(
            f"{conn.name} sends header values or a served token that stay in this kernel; give Dask workers their token with bearer_env='VAR' (read from each worker's environment)",
            kind="bad_input",
        )  # fmt: skip
    try:
        client = get_client()
    except ValueError:
        raise SessionError(
            "no Dask client: start one first (distributed.Client(...)) to map a Dask collection", kind="bad_input"
        ) from None
    remote = Remote(
        name=conn.name,
        url=target.url,
        bearer_env=bearer_env or target.bearer_env,
        protocol=str(conn.protocol),
        spec=spec,
    )

    client.register_plugin(Connections(), name=PLUGIN_NAME)
    is_frame = hasattr(rows, "columns")
    parts = rows.to_delayed()
    run = dask.delayed(_run_partition, pure=False)
    futures = client.compute(
        [run(part, remote, _schema_part(schema), dict(columns or {}), column, is_frame) for part in parts]
    )
    order = {f.key: i for i, f in enumerate(futures)}
    progress = MapProgress.in_kernel(0, f"{conn.name}.{spec.tool} on Dask")
    done: dict[int, tuple[list[dict[str, Any]], list[Outcome], Any]] = {}
    for future in as_completed(futures):
        try:
            arguments, outcomes, part = future.result()
        except Exception as exc:  # noqa: BLE001 - a worker died or the partition could not be built: no row count to blame
            client.cancel(futures)
            text, _, _ = describe_exception(exc)
            raise FlowError(
                f"{conn.name}.{spec.tool} on Dask: partition {order[future.key]} failed as a whole ({text}); no results kept",
                server=conn.name,
            ) from None
        done[order[future.key]] = (arguments, outcomes, part)
        if progress is not None:
            progress.total += len(arguments)  # rows per partition are known once it ran
            progress.bar.max = max(progress.total, 1)
            progress.step(True, count=len(arguments), failed=sum(isinstance(o, FlowError) for o in outcomes))
            progress.draw()  # the kernel thread is waiting here: draw now
    all_args: list[dict[str, Any]] = []
    all_outcomes: list[Outcome] = []
    for i in range(len(futures)):
        a, o, _ = done[i]
        all_args.extend(a)
        all_outcomes.extend(o)
    frame = None
    if is_frame:
        pd = pandas_module()
        frames = [done[i][2] for i in range(len(futures))]
        frame = pd.concat(frames) if frames else pd.DataFrame()
    if progress is not None:
        progress.total = len(all_outcomes)
        progress.draw()
    return all_outcomes, all_args, frame


def _schema_part(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The part of the tool's schema a worker needs to build arguments (its properties and required list)."""
    return {"properties": dict(schema.get("properties") or {}), "required": list(schema.get("required") or [])}


def _run_partition(
    part: Any, remote: Remote, schema: dict[str, Any], columns: dict[str, str], column: str | None, is_frame: bool
) -> tuple[list[dict[str, Any]], list[Outcome], Any]:
    """On a Dask worker: one partition's rows through this process's own connection; (arguments, outcomes, the partition)."""
    arguments, _ = arguments_of(part, schema, columns, column)
    try:
        session, conn = _worker_connection(remote)
    except (
        FlowError
    ) as exc:  # the server refused or was unreachable from this worker: every row of the partition says so
        return arguments, [_portable(exc)] * len(arguments), part if is_frame else None
    outcomes = session.runtime.run(run_rows(session, conn, remote.spec, arguments))
    return arguments, [_portable(o) for o in outcomes], part if is_frame else None


def _worker_connection(remote: Remote) -> tuple[Any, Connection]:
    """This worker's session and connection for ``remote`` (through the connections plugin registered by the map)."""
    from distributed import get_worker

    plugin: Any = get_worker().plugins[PLUGIN_NAME]
    found: tuple[Any, Connection] = plugin.get(remote)
    return found


def _portable(outcome: Outcome) -> Outcome:
    """An outcome that pickles back to the kernel: a ``FlowError`` without its live details (a connection)."""
    if isinstance(outcome, FlowError):
        return FlowError(
            str(outcome),
            code=outcome.code,
            kind=outcome.kind,
            server=outcome.server,
            missing_field=outcome.missing_field,
            reason=outcome.reason,
        )
    return outcome
