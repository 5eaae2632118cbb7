"""``await mcp_notebook.map_async(...)`` in real JupyterLab (the shared one of ``support/lab_fixtures.py``) and Chromium: the rows' question in one form, answered once for all.

The kernel (ipykernel 7.4) hears the form's clicks while the cell awaits the map; JupyterLab 4.6
sends widget messages over subshells. A person picks a region, ticks "Use this answer for every
remaining row that asks this" and presses Accept, then does the same for the confirmation; twelve
rows finish, and Run All's next cell waits for them. A screenshot of the form goes to
``docs/images/map-questions.png`` (README).
"""

from __future__ import annotations

from ..conftest import REPO_ROOT
from ..support.browser import LAB_ONLY, Front, has_class, notebook, put_notebook

SCREENSHOT = REPO_ROOT / "docs" / "images" / "map-questions.png"
ROWS = 12
CELLS = [
    "%load_ext mcp_notebook",
    "import mcp_notebook\n%mcp connect demo mcp_notebook.demo:demo",
    f"out = await mcp_notebook.map_async('demo.provision_db', [{{'name': f'db{{i}}'}} for i in range({ROWS})], concurrency=4)",
    "print(len(out), out[0].content[0].text, out[-1].content[0].text)",
]


@LAB_ONLY
def test_a_question_answered_once_for_every_row(front: Front) -> None:
    from playwright.sync_api import expect

    name = front.path("map.ipynb")
    put_notebook(front.url, name, notebook(CELLS))
    panel = front.open(name)
    front.run_all()
    cell = panel.locator(".jp-Cell").nth(2)
    question = cell.locator(".mcp-map-question")
    expect(question).to_be_visible(timeout=60_000)
    expect(question).to_have_class(has_class("mcp-notebook-form"))
    expect(question).to_contain_text("demo.provision_db asks, for the row with name='db")
    expect(question.locator(".mcp-elicitation")).to_contain_text("Which region should")
    question.locator(".mcp-field-region select").select_option(label="us-west-2")
    expect(cell.locator(".mcp-notebook-map")).to_contain_text(f"demo.provision_db: 0 of {ROWS}")
    expect(cell.locator(".mcp-notebook-map")).to_contain_text("· waiting for your answer")
    for_all = question.locator(".mcp-map-for-all input[type=checkbox]")
    for_all.check()
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    cell.locator(".jp-OutputArea").first.screenshot(path=str(SCREENSHOT))
    question.get_by_role("button", name="Accept").click()

    confirm = cell.locator(".mcp-map-question")  # round two: another question, another form
    expect(confirm.locator(".mcp-elicitation")).to_contain_text("Create 'db", timeout=30_000)
    confirm.locator(".mcp-map-for-all input[type=checkbox]").check()
    confirm.get_by_role("button", name="Accept").click()

    result = panel.locator(".jp-Cell").nth(3).locator(".jp-OutputArea-output")
    expect(result).to_contain_text(
        f"{ROWS} Provisioned 'db0' in us-west-2 (size small). Provisioned 'db{ROWS - 1}' in us-west-2 (size small).",
        timeout=60_000,
    )
    expect(cell.locator(".mcp-map-question")).to_have_count(0)  # no form left
    expect(cell.locator(".mcp-notebook-map")).to_contain_text(f"demo.provision_db: {ROWS} of {ROWS}")
    expect(cell.locator(".mcp-notebook-map")).not_to_contain_text("waiting for your answer")
    notes = cell.locator(".mcp-map-for-all-note")
    expect(notes).to_contain_text("accept (region)")
    expect(notes).to_contain_text("accept (ok)")
    expect(notes).not_to_contain_text("us-west-2")  # field names, never the answers
