"""The form in a real browser: JupyterLab and Notebook 7 in Debian's Chromium, driven by Playwright.

A notebook defines a small server whose tool asks for a text, an e-mail, a dropdown choice, a
multi-select and a checkbox. The test opens it in JupyterLab, runs every cell, then fills the
form like a person (types key by key, picks an option, clicks boxes), first sees a wrong e-mail
refused next to the field, fixes it, presses Accept and finds the tool's result in the same
cell. A screenshot of the filled form in JupyterLab goes to ``docs/images/form.png`` (shown in
the README). It runs once in JupyterLab and once in Notebook 7 (the shared servers of
``support/lab_fixtures.py``).

Chromium is Debian's ``/usr/bin/chromium``; when missing, ``make chromium`` installs it (the
same target ``make test`` runs first). Playwright only drives it: never ``playwright install``.
"""

from __future__ import annotations

from ..conftest import REPO_ROOT
from ..support.browser import Front, notebook, put_notebook

SCREENSHOT = REPO_ROOT / "docs" / "images" / "form.png"

SERVER_CELL = """\
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
"""

CELLS = ["%load_ext mcp_notebook", SERVER_CELL, "%mcp connect beta beta", "%mcp call beta.register"]
EXPECTED = "Registered Ada Lovelace <ada@example.com> on team; topics=releases,events; newsletter=True"


def test_fill_the_form_like_a_person(front: Front) -> None:
    from playwright.sync_api import expect

    name = front.path("form.ipynb")
    put_notebook(front.url, name, notebook(CELLS))
    panel = front.open(name)
    front.run_all()

    cell = panel.locator(".jp-Cell").nth(len(CELLS) - 1)
    form = cell.locator(".mcp-elicitation")
    expect(form).to_be_visible(timeout=60_000)
    expect(form.locator(".mcp-asker")).to_contain_text("beta asks")
    expect(form.locator(".mcp-asker")).to_contain_text("Sign up for the beta programme")

    # every input is named by its field's title (screen readers, get_by_label)
    expect(form.get_by_label("Full name")).to_have_count(1)
    expect(form.get_by_label("Full name")).to_have_attribute("type", "text")
    expect(form.get_by_label("Plan")).to_have_count(1)
    expect(form.get_by_label("Newsletter")).to_have_attribute("type", "checkbox")

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
    if front.app == "lab":  # the README shows JupyterLab
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        cell.locator(".mcp-flow").screenshot(path=str(SCREENSHOT))

    form.get_by_role("button", name="Accept").click()
    expect(cell.locator(".jp-OutputArea").first).to_contain_text(EXPECTED, timeout=30_000)


BUSY_CELL = """\
import sys, threading, time
busy = threading.Event()
def _spin():  # a computation in a thread of the kernel: it hands the GIL on every 30 ms
    end = time.monotonic() + 120  # and stops by itself, should the notebook's last cell never run
    while not busy.is_set() and time.monotonic() < end:
        pass
sys.setswitchinterval(0.03)
threading.Thread(target=_spin, daemon=True).start()
"""
RACE_SERVER_CELL = """\
from typing import Annotated
from pydantic import BaseModel, Field
from mcp.server.mcpserver import Elicit, MCPServer, Resolve

class Mail(BaseModel):
    name: str = Field(title="Name")
    email: str = Field(title="E-mail", json_schema_extra={"format": "email"})

async def ask_mail() -> Elicit[Mail]:
    return Elicit("Where do we write?", Mail)

post = MCPServer("post")

@post.tool()
async def write(form: Annotated[Mail, Resolve(ask_mail)]) -> str:
    return f"Writing to {form.name} <{form.email}>"
"""
RACE_CALLS = 2


def test_a_busy_kernel_reads_the_form_as_typed(front: Front) -> None:
    """Typed fast and Accept at once, on a kernel whose other thread computes: the server gets what the
    fields show. Two races cut the value before: the page sent each keystroke as its own update, one at a
    time, while the click went at once (the server got ``a`` for ``ada@example.com``); and ipykernel 7.4
    handled a field's later edits on the widget subshell but the click on the main shell, so the click of
    Accept was read before the edit typed just before it (``forms.widgets.in_send_order``)."""
    from playwright.sync_api import expect

    cells = [
        "%load_ext mcp_notebook",
        RACE_SERVER_CELL,
        "%mcp connect post post",
        BUSY_CELL,
        *["%mcp call post.write"] * RACE_CALLS,
        "busy.set()",
    ]
    name = front.path("busy.ipynb")
    put_notebook(front.url, name, notebook(cells))
    panel = front.open(name)
    front.run_all()
    for i in range(RACE_CALLS):
        cell = panel.locator(".jp-Cell").nth(4 + i)
        form = cell.locator(".mcp-elicitation")
        expect(form).to_be_visible(timeout=60_000)
        form.locator(".mcp-field-name input").press_sequentially("Ada Lovelace")
        email = form.locator(".mcp-field-email input")
        email.press_sequentially("ada@")
        form.get_by_role("button", name="Accept").click()
        expect(form.locator(".mcp-field-email .mcp-error")).to_contain_text("not a valid e-mail address")
        email.click()
        email.press("End")
        email.press_sequentially("example.com")
        form.get_by_role("button", name="Accept").click()
        out = cell.locator(".jp-OutputArea").first
        expect(out).to_contain_text("Writing to Ada Lovelace <ada@example.com>", timeout=60_000)
