"""Browser-test fixtures, one set for ``tests/browser`` and the browser modules of ``tests/security``.

A pytest plugin (``pytest_plugins`` in ``tests/conftest.py``), not a conftest of ``tests/browser``:
the security folder's browser modules use the same fixtures, and a session-scoped server defined in
two conftests would be two servers. What it gives:

* ``shared_labs(app)``: one JupyterLab and one Notebook 7 per pytest session, so one per xdist
  worker (``make test`` runs ``-n 2 --dist loadfile``), each started on first use and stopped at the
  session's end. Its kernels sign with a notary secret in a private ``JUPYTER_DATA_DIR``
  (``SharedLab.data_dir``), never the user's.
* ``served``: the (URL, app) a module's tests run on, by default the shared JupyterLab and Notebook 7
  (``browser.LAB_ONLY`` narrows a test or a module to JupyterLab). A module that needs a server of its
  own (collaboration on, the labextension disabled) defines its own ``served``.
* ``page``: one Chromium page per module and front end (a fresh profile: a module never sees another's
  cache or storage).
* ``front``: the page driven as a person would, in a folder of the served root that is this test's
  alone (``Front.path``): its notebooks, and its kernels' working folder, are nobody else's. At its
  end the page leaves the server and the server's kernels are shut down, so the next test starts
  from no kernel and, in JupyterLab, from a fresh workspace (no tab of another test comes back).
"""

from __future__ import annotations

import itertools
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .browser import APPS, Front, api, chromium_page, running_lab, shut_down_kernels


@dataclass(frozen=True)
class SharedLab:
    """A JupyterLab (``app="lab"``) or Notebook 7 shared by the session's tests."""

    app: str
    url: str
    root: Path  # the served folder; each test works in a folder of its own inside it
    data_dir: Path  # its kernels' JUPYTER_DATA_DIR (the notary secret that signs this user's outputs)


@pytest.fixture(scope="session")
def shared_labs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], SharedLab]]:
    """``shared_labs(app)``: the session's JupyterLab or Notebook 7, started on first use."""
    started: dict[str, SharedLab] = {}
    with ExitStack() as stack:

        def get(app: str) -> SharedLab:
            if app not in APPS:
                raise ValueError(f"app must be one of {APPS}, not {app!r}")
            if app not in started:
                base = tmp_path_factory.mktemp(f"shared-{app}")
                data = base / "data"
                data.mkdir()
                url, root = stack.enter_context(
                    running_lab(base, app=app, expose_app=True, env={"JUPYTER_DATA_DIR": str(data)})
                )
                started[app] = SharedLab(app, url, root, data)
            return started[app]

        yield get


@pytest.fixture(scope="module", params=APPS)
def served(request: pytest.FixtureRequest, shared_labs: Callable[[str], SharedLab]) -> tuple[str, str]:
    """The (URL, app) of the shared JupyterLab or Notebook 7 this module's tests run on."""
    app = str(request.param)
    return shared_labs(app).url, app


@pytest.fixture(scope="module")
def page(served: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One Chromium page per browser-test module and front end, with a fresh profile."""
    with chromium_page(tmp_path_factory.mktemp("chromium-profile")) as page:
        yield page


_folders = itertools.count(1)


def _reset_workspace(url: str) -> None:
    """Forget JupyterLab's default workspace (its open tabs), so a new page opens only what it is asked to."""
    request = urllib.request.Request(f"{url}/lab/api/workspaces/default", method="DELETE")
    try:
        urllib.request.urlopen(request, timeout=10).close()
    except urllib.error.HTTPError as exc:
        if exc.code != 404:  # none saved yet
            raise


@contextmanager
def own_folder(url: str, app: str, name: str) -> Iterator[str]:
    """A new folder of the served root for one test (its path). JupyterLab's workspace is forgotten at the
    start and the end (no tab of another test comes back), and the server's kernels are shut down at the end:
    only one test at a time uses a shared server (its xdist worker's)."""
    if app == "lab":
        _reset_workspace(url)
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", name)[:60].strip("-")
    folder = f"t{next(_folders):03d}-{slug}"
    api(url, f"contents/{folder}", "PUT", {"type": "directory"})
    try:
        yield folder
    finally:
        shut_down_kernels(url)
        if app == "lab":
            _reset_workspace(url)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report on the test (``front`` looks whether the test itself failed)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def front(served: tuple[str, str], page: Any, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Front]:
    """The page driven as a person would (``browser.Front``), on the module's ``served`` server, in a
    folder of the served root that is this test's alone (``own_folder``). A failed test leaves a
    screenshot of the page as it was (``page-at-failure.png`` in its ``tmp_path``)."""
    url, app = served
    page.set_default_timeout(30_000)
    with own_folder(url, app, request.node.name) as folder:
        try:
            yield Front(page, url, app, folder)
        finally:
            report = getattr(request.node, "report_call", None)
            if report is not None and report.failed:
                shot = tmp_path / "page-at-failure.png"
                page.screenshot(path=str(shot), full_page=True)
                print(f"the page when the test failed: {shot}")
            page.goto("about:blank")  # the page lets go of the kernels and the workspace before they go
