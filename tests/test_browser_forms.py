"""The form in a real browser: JupyterLab in Debian's Chromium, driven by Playwright.

A notebook defines a small server whose tool asks for a text, an e-mail, a dropdown choice, a
multi-select and a checkbox. The test opens it in JupyterLab, runs every cell, then fills the
form like a person (types key by key, picks an option, clicks boxes), first sees a wrong e-mail
refused next to the field, fixes it, presses Accept and finds the tool's result in the same
cell. A screenshot of the filled form goes to ``docs/images/form.png`` (shown in the README).

Chromium is Debian's ``/usr/bin/chromium``; when missing, ``make chromium`` installs it (the
same target ``make test`` runs first). Playwright only drives it: never ``playwright install``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO_ROOT, free_port

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOT = REPO_ROOT / "docs" / "images" / "form.png"

SERVER_CELL = '''\
from typing import Annotated, Literal
from pydantic import BaseModel, Field
from mcp.server.mcpserver import Elicit, MCPServer, Resolve

class SignUp(BaseModel):
    name: str = Field(title="Full name", min_length=1, description="As you like to be addressed")
    email: str = Field(title="E-mail", description="We send the invitation here", json_schema_extra={"format": "email"})
    plan: Literal["free", "team", "enterprise"] = Field("free", title="Plan")
    topics: list[Literal["news", "releases", "events"]] = Field([], title="Topics", description="What to hear about")
    newsletter: bool = Field(False, title="Newsletter", description="Send me the monthly newsletter")

async def ask_signup() -> Elicit[SignUp]:
    return Elicit("Sign up for the beta programme", SignUp)

beta = MCPServer("beta")

@beta.tool()
async def register(form: Annotated[SignUp, Resolve(ask_signup)]) -> str:
    topics = ",".join(form.topics) or "none"
    return f"Registered {form.name} <{form.email}> on {form.plan}; topics={topics}; newsletter={form.newsletter}"
'''

CELLS = ["%load_ext mcp_notebook", SERVER_CELL, "%mcp connect beta beta", "%mcp call beta.register"]
EXPECTED = "Registered Ada Lovelace <ada@example.com> on team; topics=releases,events; newsletter=True"


def ensure_chromium() -> str:
    """Debian's Chromium, installed through ``make chromium`` when it is missing (never skipped)."""
    if not Path(CHROMIUM).exists():
        subprocess.run(["make", "-C", str(REPO_ROOT), "chromium"], check=True)
    assert Path(CHROMIUM).exists(), "make chromium did not install /usr/bin/chromium"
    return CHROMIUM


def _notebook(cells: list[str]) -> dict[str, Any]:
    return {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"cell-{i}", "metadata": {}, "outputs": [], "source": src}
            for i, src in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _settings(root: Path) -> None:
    """Quiet JupyterLab: no news toast, no update check (they would cover the form in screenshots)."""
    notify = root / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notify.parent.mkdir(parents=True, exist_ok=True)
    notify.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A JupyterLab server on a free port serving a temp folder with ``form.ipynb``; yields its URL."""
    base = tmp_path_factory.mktemp("lab")
    root, settings, workspaces = base / "root", base / "settings", base / "workspaces"
    for d in (root, settings, workspaces, base / "config", base / "ipython", base / "runtime"):
        d.mkdir()
    _settings(settings)
    (root / "form.ipynb").write_text(json.dumps(_notebook(CELLS)))
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "IPYTHONDIR": str(base / "ipython"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    log = (base / "lab.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "jupyterlab", "--allow-root", "--no-browser", "--ip", "127.0.0.1", f"--port={port}",
            "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
            f"--ServerApp.root_dir={root}", f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={workspaces}",
        ],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{(base / 'lab.log').read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=1) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter lab not answering:\n{(base / 'lab.log').read_text(errors='replace')}")
            time.sleep(0.2)
        yield url
    finally:
        try:  # a clean shutdown also stops the kernels it started
            urllib.request.urlopen(urllib.request.Request(f"{url}/api/shutdown", method="POST"), timeout=5).close()
            proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


@pytest.fixture(scope="module")
def page(lab: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = ensure_chromium()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=executable,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1100, "height": 900},
        )
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


def test_fill_the_form_like_a_person(lab: str, page: Any) -> None:
    from playwright.sync_api import expect

    page.set_default_timeout(30_000)
    page.goto(f"{lab}/lab/tree/form.ipynb")
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=60_000)

    page.locator(".lm-MenuBar-itemLabel").get_by_text("Run", exact=True).click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()

    cell = page.locator(".jp-Notebook .jp-Cell").nth(len(CELLS) - 1)
    form = cell.locator(".mcp-elicitation")
    expect(form).to_be_visible(timeout=60_000)
    expect(form.locator(".mcp-asker")).to_contain_text("beta asks")
    expect(form.locator(".mcp-asker")).to_contain_text("Sign up for the beta programme")

    # type like a person, with a mistake in the e-mail
    form.locator(".mcp-field-name input").press_sequentially("Ada Lovelace", delay=20)
    email = form.locator(".mcp-field-email input")
    email.press_sequentially("ada@", delay=20)
    form.locator(".mcp-field-plan select").select_option(label="team")
    topics = form.locator(".mcp-field-topics")
    topics.get_by_text("releases", exact=True).click()
    topics.get_by_text("events", exact=True).click()
    form.locator(".mcp-field-newsletter input[type=checkbox]").click()

    form.get_by_role("button", name="Accept").click()
    expect(form.locator(".mcp-field-email .mcp-error")).to_contain_text("not a valid e-mail address")
    expect(cell).not_to_contain_text("Registered")

    email.click()
    email.press("End")
    email.press_sequentially("example.com", delay=20)
    form.get_by_role("button", name="Accept").focus()  # the field loses focus, as when a person moves on
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    cell.locator(".mcp-flow").screenshot(path=str(SCREENSHOT))

    form.get_by_role("button", name="Accept").click()
    expect(cell.locator(".jp-OutputArea").first).to_contain_text(EXPECTED, timeout=30_000)
