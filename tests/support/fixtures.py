"""The three things most tests drive, one fixture each (imported by tests/conftest.py).

- ``ip``: the process's IPython shell with ``%mcp`` loaded and non-interactive, for a module. What
  the module adds to it (connections, served prototypes, saved records, models, the review policy)
  is undone when the module ends, so modules cannot see each other's. A module whose tests must not
  see each other's either uses ``undo_each_test`` (``pytestmark = pytest.mark.usefixtures(...)``).
  A module's own servers are connected by a module fixture of its own that asks for ``ip``.
- ``session``: a ``Session`` of the test's own (not the shell's), closed after the test; a module
  names the servers it connects by overriding ``session_servers`` (and ``session_views`` for the notebook
  side's panels); ``make_session`` makes more (closed after the test too).
- ``kernel``: a real ipykernel (``kernel_harness.Kernel``) for a module, in the repository root,
  after running ``kernel_setup`` (override it to connect the module's servers). ``fresh_kernel``
  is one per test in a folder of its own with its own Jupyter data folder (nothing saved leaks).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .kernel_harness import Kernel

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from mcp_notebook.session.session import Session

REPO_ROOT = Path(__file__).resolve().parent.parent.parent


# ---------------------------------------------------------------------- the shell
@contextmanager
def undone(shell: InteractiveShell) -> Iterator[InteractiveShell]:
    """Undo, after the block, what it added to the shell's session: connections, served prototypes,
    saved records and models (the default model and the review policy back as they were)."""
    from ..conftest import get_shell, session_of

    session = session_of(shell)
    connections = {conn.name for conn in session.registry}
    served = set(session.prototypes.served)
    records = {record.id for record in session.store.saved_all()}
    models, default = set(session.router.models), session.router.default
    review = shell.magics_manager.registry["MCPMagics"].review
    try:
        yield shell
    finally:
        shell = get_shell()  # a test may have unloaded the extension: loaded and non-interactive again
        session = session_of(shell)
        for name in [name for name in session.prototypes.served if name not in served]:
            session.prototypes.stop(name)
        for conn in [conn for conn in session.registry if conn.name not in connections]:
            session.registry.disconnect(conn.name)
        for record in session.store.saved_all():
            if record.id not in records:
                session.store.delete(record.id)
        router = session.router
        router.use(default if default in router.models else "echo")
        for name in [name for name in router.models if name not in models]:
            router.remove(name)
        shell.run_line_magic("config", f"MCPMagics.review = {review!r}")


@pytest.fixture(scope="module")
def ip() -> Iterator[InteractiveShell]:
    """The process's IPython shell with ``%mcp`` (``conftest.get_shell``), what the module added undone after it."""
    from ..conftest import get_shell

    with undone(get_shell()) as shell:
        yield shell


@pytest.fixture
def undo_each_test(ip: InteractiveShell) -> Iterator[InteractiveShell]:
    """What each test added to the shell (connections, served prototypes, records, models) is undone after it."""
    with undone(ip) as shell:
        yield shell


# ---------------------------------------------------------------------- a session of the test's own
@pytest.fixture
def make_session() -> Iterator[Callable[..., Session]]:
    """Factory: ``make_session(views=None, **servers)``, a ``Session`` with ``servers`` connected by name.

    Every session made is closed after the test.
    """
    from mcp_notebook.session.session import Session

    made: list[Session] = []

    def make(views: Any = None, **servers: Any) -> Session:
        session = Session(views=views) if views is not None else Session()
        made.append(session)
        for name, server in servers.items():
            session.connect(name, server)
        return session

    try:
        yield make
    finally:
        for session in made:
            session.close()


@pytest.fixture
def session_servers() -> dict[str, Any]:
    """The servers ``session`` connects, by name (none; a module overrides this fixture to name its own)."""
    return {}


@pytest.fixture
def session_views() -> Any:
    """The views ``session`` draws with (none: a plain session; a module overrides this for ``NotebookViews``)."""
    return None


@pytest.fixture(name="session")  # not ``def session``: conftest.py imports this beside its ``session_of`` helper
def own_session(make_session: Callable[..., Session], session_views: Any, session_servers: dict[str, Any]) -> Session:
    """A ``Session`` of the test's own with the module's ``session_servers`` connected, closed after the test."""
    return make_session(views=session_views, **session_servers)


# ---------------------------------------------------------------------- a real kernel
Setup = str | tuple[str, ...]
"""What a kernel runs first: one cell, or several in order (a cell magic must start its own cell); ``()``: nothing."""


@pytest.fixture(scope="module")
def kernel_setup() -> Setup:
    """The cell(s) the module's ``kernel`` runs first (a module overrides this fixture to connect its servers)."""
    return "%load_ext mcp_notebook"


@contextmanager
def _set_up(cwd: Path, setup: Setup, env: dict[str, str] | None = None) -> Iterator[Kernel]:
    kernel = Kernel(cwd=str(cwd), env=env)
    try:
        for cell in (setup,) if isinstance(setup, str) else setup:
            kernel.execute(cell)  # raises if the cell failed
        yield kernel
    finally:
        kernel.close()


@pytest.fixture(scope="module")
def kernel(kernel_setup: Setup) -> Iterator[Kernel]:
    """A real kernel for the module, in the repository root, that has run ``kernel_setup`` (raising if it failed)."""
    with _set_up(REPO_ROOT, kernel_setup) as k:
        yield k


@pytest.fixture
def fresh_kernel(tmp_path: Path, kernel_setup: Setup) -> Iterator[Kernel]:
    """A real kernel for the test alone, in ``tmp_path`` with a Jupyter data folder there (its notary secret, task
    handles), that has run ``kernel_setup``."""
    with _set_up(tmp_path, kernel_setup, env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")}) as k:
        yield k
