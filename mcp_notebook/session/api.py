"""The Python API behind the magics: connect, call, prompt, read (usable from scripts too).

The functions here run on ``default_session()`` (the magics' ``Session`` inside IPython with the
extension loaded, else one of their own); scripts and users who prefer code call
``mcp_notebook.connect(...)`` / ``mcp_notebook.call(...)`` directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..flows.flow import Flow
from ..forms.model import Answers
from ..wire.connection import Connection

if TYPE_CHECKING:
    from ..flows.replay import Replay
    from .session import Session

__all__ = ["call", "connect", "default_session", "prompt", "read", "replay"]


_default: Session | None = None


def default_session() -> Session:
    """The session the plain Python API uses.

    Inside IPython with the extension loaded it is the ``%mcp`` magics' session, so
    ``mcp_notebook.connect(...)`` and ``%mcp call`` share connections. Elsewhere (scripts, or
    before ``%load_ext``) it is one session made on first use and kept in ``_default``: the
    module-level functions below take no session argument, so they need one place to find it,
    and that one slot is the only mutable state of the module. Code that wants isolation makes
    its own ``Session()`` and calls its methods.
    """
    global _default
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # pragma: no cover - IPython is a dependency
        shell = None
    magics = shell.magics_manager.registry.get("MCPMagics") if shell is not None else None
    if magics is not None:
        return magics.session
    if _default is None:
        from .session import Session

        _default = Session()
    return _default


# ---------------------------------------------------------------------- module-level API
def connect(name: str, target: Any, **options: Any) -> Connection:
    """Open a named connection (see ``Session.connect``)."""
    return default_session().connect(name, target, **options)


def _answers(answers: Mapping[str, Any] | None, accept_defaults: bool) -> Answers:
    return Answers(fields=dict(answers or {}), accept_defaults=accept_defaults)


def call(
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    answers: Mapping[str, Any] | None = None,
    accept_defaults: bool = False,
    timeout: float | None = None,
    save: bool = False,
    task: bool = False,
    ttl: float | None = None,
) -> Flow:
    """Call ``[server.]tool`` headless with preset answers; returns the started ``Flow``.

    ``flow.result()`` blocks for the ``CallToolResult``; ``await flow`` waits without blocking.
    ``task=True`` runs it as a task where the server offers tasks (``ttl``: seconds a 2025 server
    should keep it); in a notebook cell, every task the cell starts shows in one live table, so a
    loop that starts a hundred shows one table, not a hundred widgets. ``save=True`` keeps a task
    in the notebook to be followed from a new kernel (``%mcp resume ID``).
    """
    from ..wire.task_handles import TaskOptions

    session = default_session()
    conn, name = session.resolve(tool)
    options = (
        TaskOptions(requested=True, ttl_ms=round(ttl * 1000) if ttl is not None else None)
        if task or ttl is not None
        else None
    )
    board = session.task_board() if options is not None else None
    flow = session.start(
        "tools/call", conn, name, dict(arguments or {}), answers=_answers(answers, accept_defaults), timeout=timeout, save=save, task=options, view=board
    )  # fmt: skip
    if board is not None:
        board.add(flow)
    return flow


def prompt(
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    answers: Mapping[str, Any] | None = None,
    accept_defaults: bool = False,
) -> Flow:
    """Get ``[server.]prompt`` (a ``GetPromptResult`` flow)."""
    session = default_session()
    conn, short = session.resolve(name)
    return session.start(
        "prompts/get", conn, short, dict(arguments or {}), answers=_answers(answers, accept_defaults), save=False
    )


def read(
    uri: str, server: str | None = None, *, answers: Mapping[str, Any] | None = None, accept_defaults: bool = False
) -> Flow:
    """Read a resource (a ``ReadResourceResult`` flow)."""
    session = default_session()
    conn = session.registry.get(server)
    return session.start("resources/read", conn, uri, None, answers=_answers(answers, accept_defaults), save=False)


def replay(
    path: str,
    server: str | None = None,
    *,
    answers: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    trust: bool = False,
) -> Replay:
    """Call the flow saved in the trace file ``path`` again, answered as recorded, and say what changed.

    ``answers`` gives what the recording withheld (secret arguments and fields) or did not keep
    (saved without ``keep_answers``), and answers a question the recording never saw. Returns a
    ``Replay``: ``.same``, ``.differences``, ``.check()`` (raises when anything changed), e.g.
    ``assert mcp_notebook.replay("orders.json").same`` in a pytest test. A file this user did not
    write (its recording's signature does not verify) is refused and shown whole unless ``trust=True``.
    """
    return default_session().replay(path, server, _answers(answers, False), timeout, trust)
