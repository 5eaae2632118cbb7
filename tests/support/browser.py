"""JupyterLab or Notebook 7 in Debian's Chromium, for the browser tests: one way to start each, shared.

Chromium is Debian's ``/usr/bin/chromium``; when missing, ``make chromium`` installs it (the same
target ``make test`` runs first). Playwright only drives it: never ``playwright install``.

``running_lab(..., app=...)`` starts JupyterLab (``"lab"``) or Notebook 7 (``"notebook7"``, the
``notebook`` package); ``Front`` hides where the two differ (notebook URLs, tabs, how a test
knows the kernel is ready), so one test body runs in both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..conftest import REPO_ROOT, free_port

CHROMIUM = "/usr/bin/chromium"
APPS = ("lab", "notebook7")
"""The front ends the browser tests run in: JupyterLab 4 and Notebook 7 (the ``notebook`` package)."""
LAB_ONLY = pytest.mark.parametrize("served", ["lab"], indirect=True)
"""For a test of a module whose ``served`` runs in both front ends: this one in JupyterLab only.

JupyterLab is the reference; Notebook 7 shares its notebook, output and widget code, and differs in
the shell (one notebook a page, no status bar, its own URLs). Each module keeps in Notebook 7 the
tests that meet those differences (opening, saving and reloading a notebook, a form, a sign-in from
a cell, an App's frames, a flow without the extension) and runs the ones that only add more of the
same in JupyterLab alone: the suite keeps within its time on a two-core machine."""
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


EXPECT_TIMEOUT_MS = 20_000
"""How long an ``expect(...)`` waits for a page to come round (Playwright's own default, 5 s, is too short
for a loaded two-core CI machine: an App's activation once took longer there). A failing check waits it
out; a passing one returns as soon as it holds, so this costs nothing when the page is quick."""


def ensure_chromium() -> str:
    """Debian's Chromium, installed through ``make chromium`` when it is missing (never skipped);
    also sets Playwright's ``expect`` timeout for every browser test (``EXPECT_TIMEOUT_MS``)."""
    from playwright.sync_api import expect

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    if not Path(CHROMIUM).exists():
        subprocess.run(["make", "-C", str(REPO_ROOT), "chromium"], check=True)
    assert Path(CHROMIUM).exists(), "make chromium did not install /usr/bin/chromium"
    return CHROMIUM


def notebook(cells: list[str]) -> dict[str, Any]:
    """A notebook of code cells with the ids ``cell-0``, ``cell-1`` ... (what the tests click into)."""
    return {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"cell-{i}",
                "metadata": {},
                "outputs": [],
                "source": src,
            }
            for i, src in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def quiet_settings(root: Path) -> None:
    """Quiet JupyterLab: no news toast, no update check (they would cover the page in screenshots), no autosave."""
    notify = root / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notify.parent.mkdir(parents=True, exist_ok=True)
    notify.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # no autosave: a test saves when its text says so, and an autosave that starts beside that save can stop it
    # at JupyterLab's "File Changed" dialog (the file on disk newer than the page's copy by the other save)
    docmanager = root / "@jupyterlab" / "docmanager-extension" / "plugin.jupyterlab-settings"
    docmanager.parent.mkdir(parents=True, exist_ok=True)
    docmanager.write_text(json.dumps({"autosave": False}))


@contextmanager
def running_lab(
    base: Path,
    notebooks: dict[str, dict[str, Any]] | None = None,
    app: str = "lab",
    expose_app: bool = False,
    base_url: str = "/",
    token: str = "",
    env: dict[str, str] | None = None,
    collaborative: bool = False,
    disabled: tuple[str, ...] = (),
    args: tuple[str, ...] = (),
) -> Iterator[tuple[str, Path]]:
    """JupyterLab (``app="lab"``) or Notebook 7 (``"notebook7"``) on a free port serving ``base/root``
    (with ``notebooks`` written there); yields (url, root).

    Its config, IPython, runtime, settings and workspaces folders are private to ``base``; a clean
    shutdown at the end also stops the kernels it started. ``expose_app`` sets the page's
    ``window.jupyterapp`` (``--expose-app-in-browser``), for tests that call the front end's API.
    ``base_url`` (like JupyterHub's ``/user/NAME/``) is part of the yielded url (without its last
    ``/``); with a ``token`` the server requires it (the helpers here that call the REST API do not send it).
    ``env`` adds to (or overrides) the server's environment, which its kernels inherit: e.g.
    ``JUPYTER_DATA_DIR``, so a kernel's sign-in tokens go to a temp folder, never the user's.
    ``collaborative`` keeps real-time collaboration on when jupyter-collaboration is installed (pages
    on one notebook share one document); otherwise it is switched off (``YDocExtension.disable_rtc``),
    so the other tests see the plain one-page-one-model JupyterLab whatever is installed.
    ``disabled`` names labextensions switched off for this server only, as a user does it
    (``jupyter labextension disable --level=user NAME``, into this server's private config folder).
    ``args`` are more options on the server's command line (e.g. ``--LabApp.labextensions_path=DIR``).
    """
    if app not in APPS:
        raise ValueError(f"app must be one of {APPS}, not {app!r}")
    root, settings, workspaces = base / "root", base / "settings", base / "workspaces"
    for d in (root, settings, workspaces, base / "config", base / "ipython", base / "runtime"):
        d.mkdir()
    quiet_settings(settings)
    for name, nb in (notebooks or {}).items():
        (root / name).write_text(json.dumps(nb))
    port = free_port()
    server_env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "IPYTHONDIR": str(base / "ipython"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
        **(env or {}),
    }
    for extension in disabled:
        subprocess.run(
            [sys.executable, "-m", "jupyter", "labextension", "disable", "--level=user", extension],
            env=server_env, check=True, capture_output=True,
        )  # fmt: skip
    log_path = base / "lab.log"
    log = log_path.open("wb")
    module, app_class = ("jupyterlab", "LabApp") if app == "lab" else ("notebook", "JupyterNotebookApp")
    proc = subprocess.Popen(
        [
            sys.executable, "-m", module, "--allow-root", "--no-browser", "--ip", "127.0.0.1", f"--port={port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
            f"--ServerApp.root_dir={root}", f"--{app_class}.user_settings_dir={settings}", f"--{app_class}.workspaces_dir={workspaces}",
            f"--ServerApp.base_url={base_url}", *(["--expose-app-in-browser"] if expose_app else []),
            *([] if collaborative else ["--YDocExtension.disable_rtc=True"]), *args,
        ],
        env=server_env, stdout=log, stderr=subprocess.STDOUT, cwd=root,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}{base_url.rstrip('/')}"
    auth = {"Authorization": f"token {token}"} if token else {}
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"jupyter {app} exited with {proc.returncode}:\n{log_path.read_text(errors='replace')}"
                )
            try:
                with urllib.request.urlopen(
                    urllib.request.Request(f"{url}/api/status", headers=auth), timeout=1
                ) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter {app} not answering:\n{log_path.read_text(errors='replace')}")
            time.sleep(0.2)
        yield url, root
    finally:
        try:  # a clean shutdown also stops the kernels it started
            urllib.request.urlopen(
                urllib.request.Request(f"{url}/api/shutdown", method="POST", headers=auth), timeout=5
            ).close()
            proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


@contextmanager
def chromium_page(profile: Path, width: int = 1100, height: int = 900) -> Iterator[Any]:
    """A Playwright page in headless Debian Chromium with a fresh profile folder."""
    from playwright.sync_api import sync_playwright

    executable = ensure_chromium()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=executable,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": width, "height": height},
        )
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


@contextmanager
def chromium_pages(base: Path, count: int, width: int = 1100, height: int = 900) -> Iterator[list[Any]]:
    """``count`` pages in headless Debian Chromium, each in its own browser context and profile
    folder under ``base``: separate people on one server (Playwright's sync API runs one at a time,
    so several pages share one driver)."""
    from playwright.sync_api import sync_playwright

    executable = ensure_chromium()
    with sync_playwright() as pw:
        contexts = []
        try:
            for i in range(count):
                contexts.append(pw.chromium.launch_persistent_context(
                    str(base / f"chromium-profile-{i}"), executable_path=executable, headless=True, args=CHROMIUM_FLAGS,
                    viewport={"width": width, "height": height},
                ))  # fmt: skip
            yield [c.pages[0] if c.pages else c.new_page() for c in contexts]
        finally:
            for context in contexts:
                context.close()


# ---------------------------------------------------------------------- the server's REST API
def api(url: str, path: str, method: str = "GET", body: Any = None) -> Any:
    """Call the Jupyter server's REST API at ``url`` (``/api/PATH``); the decoded JSON reply, if any."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{url}/api/{path}", data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        text = reply.read()
    return json.loads(text) if text else None


def put_notebook(url: str, name: str, nb: dict[str, Any]) -> None:
    api(url, f"contents/{name}", "PUT", {"type": "notebook", "format": "json", "content": nb})


def saved_flows(url: str, name: str) -> dict[str, Any]:
    """The records on disk; ``{}`` while the server is still writing the file.

    Caught mid-write, the contents API answers 500, 400 "Unreadable Notebook" for a half-written file,
    or 404 for an instant while a save swaps the file (seen once in a fresh clone's Notebook 7 run).
    """
    try:
        model = api(url, f"contents/{name}?content=1")
    except urllib.error.HTTPError as exc:
        if exc.code in (400, 404) or exc.code >= 500:
            return {}
        raise
    return dict(model["content"]["metadata"].get("mcp_notebook", {}).get("flows", {}))


def shut_down_kernels(url: str) -> None:
    for session in api(url, "sessions"):
        api(url, f"sessions/{session['id']}", "DELETE")


_WATCH_SAVE = """() => {
  const context = window.jupyterapp.shell.currentWidget.context;
  window.__mcpSaved = new Promise((resolve) => {
    const seen = (_, state) => {
      if (state === 'completed' || state === 'failed') {
        context.saveState.disconnect(seen);
        resolve(state);
      }
    };
    context.saveState.connect(seen);
  });
}"""
_SAVED = """(ms) => Promise.race([
  window.__mcpSaved,
  new Promise((resolve) => setTimeout(() => resolve('not finished after ' + ms + ' ms'), ms)),
])"""


def has_class(name: str) -> Any:
    """A pattern for ``expect(...).to_have_class``: the element's classes include ``name``."""
    import re

    return re.compile(rf"(^|\s){re.escape(name)}(\s|$)")


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = 30) -> Any:
    """Poll ``predicate`` until it returns something true (returned), else fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


# ---------------------------------------------------------------------- the page
_CURRENT_NOTEBOOK_READY = """(name) => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  const session = panel && panel.sessionContext;
  if (!session || !panel.context) return false;
  return (name === null || panel.context.path === name) && session.kernelDisplayStatus === 'idle';
}"""


_UNSETTLED = r"""() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const off = {};
  panel.content.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code' || !cell.model.sharedModel.getSource().trim()) return;
    const node = cell.node.querySelector('.jp-InputPrompt');
    const prompt = node ? node.textContent.trim() : `(not rendered; count ${cell.model.executionCount})`;
    if (!/^\[\d+\]:?$/.test(prompt)) off[`cell ${i}`] = prompt;
  });
  const kernel = panel.sessionContext.kernelDisplayStatus;
  if (kernel !== 'idle') off.kernel = kernel;
  const indicator = panel.node.querySelector('.jp-Notebook-ExecutionIndicator')
    || document.querySelector('.jp-Notebook-ExecutionIndicator');
  if (indicator && indicator.dataset.status !== 'idle') off.indicator = String(indicator.dataset.status);
  return off;
}"""


@dataclass(frozen=True)
class Front:
    """A JupyterLab or Notebook 7 page (``app`` in ``APPS``) at ``url``, served with ``expose_app=True``.

    Both show a notebook in a ``.jp-NotebookPanel`` with the same menus ("Run" > "Run All Cells",
    "File" > "Save Notebook"). They differ in the notebook's URL (``/lab/tree/PATH`` against
    ``/notebooks/PATH``), in tabs (JupyterLab keeps every opened notebook in a tab, restored from
    the workspace; Notebook 7 shows one per page) and in where the kernel's state shows (no
    status bar in Notebook 7), so the kernel is asked through ``window.jupyterapp`` in both.
    """

    page: Any
    url: str
    app: str
    folder: str = ""
    """This test's own folder in the served root (the ``front`` fixture makes one), ``""`` for the root."""

    def path(self, name: str) -> str:
        """``name`` in this test's folder: the path to give ``open``, ``put_notebook`` and the contents API."""
        return f"{self.folder}/{name}" if self.folder else name

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}" if self.app == "lab" else f"{self.url}/notebooks/{name}"

    def wait_idle(self, name: str | None = None, timeout: float = 60_000) -> None:
        """Wait until the current notebook (``name`` if given) has a connected, idle kernel."""
        self.page.wait_for_function(_CURRENT_NOTEBOOK_READY, arg=name, timeout=timeout)

    def open(self, name: str) -> Any:
        """Show notebook ``name`` (in JupyterLab as the only tab) and wait for its kernel; returns the panel."""
        if self.app == "lab" and self.page.url.startswith(f"{self.url}/lab"):
            self.menu("File", "Close All Tabs")  # otherwise the workspace brings the old tabs back
        self.page.goto(self.notebook_url(name))
        self.wait_idle(name)
        return self.page.locator(".jp-NotebookPanel:visible")

    def menu(self, top: str, item: str) -> None:
        self.page.locator(".lm-MenuBar-itemLabel").get_by_text(top, exact=True).click()
        self.page.locator(".lm-Menu-itemLabel").get_by_text(item, exact=True).click()

    def run_all(self) -> None:
        self.page.locator(".jp-NotebookPanel:visible .jp-Cell").first.click()
        self.menu("Run", "Run All Cells")

    def save(self, timeout: float = 60_000) -> None:
        """File > Save Notebook, as a person saves; returns once the front end says the save completed.

        A menu click that did not land, or a save that JupyterLab stopped at a dialog ("File Changed"),
        used to show up a minute later as "timed out waiting for the record on disk"; now the click is
        checked at once: the document's ``saveState`` must say ``completed``, else the test fails here,
        naming any dialog on the page.
        """
        self.page.evaluate(_WATCH_SAVE)
        self.menu("File", "Save Notebook")
        state = self.page.evaluate(_SAVED, timeout)
        if state != "completed":
            dialog = self.page.locator(".jp-Dialog")
            shown = dialog.first.inner_text() if dialog.count() else "no dialog"
            raise AssertionError(f"File > Save Notebook did not complete ({state}); on the page: {shown}")

    def restart_kernel(self) -> None:
        """Restart the current notebook's kernel through the front end's API (no dialog, no page reload)."""
        self.page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.restartKernel()")

    def run_in_cell(self, index: int, source: str, timeout: float = 60_000, wait: bool = True) -> Any:
        """Type ``source`` into the empty cell ``index`` as a person would, run it, wait until it ran; returns the cell.

        "Ran" is the prompt showing an execution count (an empty cell's prompt has none). ``wait=False``
        waits only until it runs (``[*]``), for a call that ends its cell only after a click in its form.
        """
        import re

        from playwright.sync_api import expect

        cell = self.page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(index)
        editor = cell.locator(".jp-InputArea-editor .cm-editor")
        for _ in range(5):  # an App above may still be resizing, moving the cell as the click lands: check, retry
            cell.locator(".jp-InputArea-editor").click()
            try:
                expect(editor).to_have_class(re.compile(r"\bcm-focused\b"), timeout=2_000)
            except AssertionError:
                continue
            self.page.keyboard.insert_text(source)  # CodeMirror closes no brackets, indents nothing
            break
        typed = (
            "([i, s]) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel.getSource() === s"
        )
        self.page.wait_for_function(typed, arg=[index, source], timeout=10_000)
        self.page.keyboard.press("Shift+Enter")
        expect(cell.locator(".jp-InputPrompt")).to_have_text(
            re.compile(r"\[(\d+|\*)\]" if not wait else r"\[\d+\]"), timeout=timeout
        )
        return cell

    def settled_prompts(self, timeout: float = 30) -> dict[str, str]:
        """What of the current notebook has not settled after a run: ``{}`` once every code cell that has
        source shows its execution count (``[12]:``) and the kernel (``sessionContext.kernelDisplayStatus``)
        and the toolbar's execution indicator (``jp-Notebook-ExecutionIndicator``, where shown) say idle.

        Waits up to ``timeout`` seconds for that (the page takes in the last messages), then names what is
        still off: ``{"cell 7": "[*]:", "kernel": "busy", "indicator": "busy"}``, so a test asserts
        ``front.settled_prompts() == {}`` after Run All and a failure says which cell and what it shows.
        """
        deadline = time.monotonic() + timeout
        while True:
            off: dict[str, str] = self.page.evaluate(_UNSETTLED)
            if not off or time.monotonic() > deadline:
                return off
            time.sleep(0.25)


# ---------------------------------------------------------------------- waits on what the page did
_WATCH_RESTORE = """() => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  window.__mcpnbRestores = 0;
  kernel.anyMessage.connect((_, args) => {
    const msg = args.msg;
    const data = msg.content && msg.content.data;
    if (args.direction === 'send' && msg.header.msg_type === 'comm_msg' && data && data.op === 'restore') window.__mcpnbRestores++;
  });
}"""


def load_extension(front: Front, index: int) -> Any:
    """Run ``%load_ext mcp_notebook`` in the empty cell ``index`` and wait until the page answered the kernel's
    hello (its ``restore`` went out), so the next cell runs with the extension known; returns the cell.

    The answer goes out after the cell (the kernel's hello arrives with it), and the kernel reads it before
    the next cell only when it was sent first: a fixed pause only made that likely.
    """
    front.page.evaluate(_WATCH_RESTORE)
    cell = front.run_in_cell(index, "%load_ext mcp_notebook")
    front.page.wait_for_function("() => window.__mcpnbRestores > 0", timeout=30_000)
    return cell


def wait_saved(front: Front) -> None:
    """Wait until the current notebook has no unsaved change (a save through the menu has landed)."""
    front.page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)
