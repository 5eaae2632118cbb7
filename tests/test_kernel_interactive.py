"""The interactive path in a real kernel: the form appears in the cell, the answers go back.

A front end that allows stdin (JupyterLab, Notebook 7) makes the run interactive: ``%mcp call``
returns at once, the form lives on after the cell, and the result lands in that same cell.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import REPO_ROOT
from .kernel_harness import Kernel, running_kernel


@pytest.fixture(scope="module")
def kernel() -> Iterator[Kernel]:
    with running_kernel(str(REPO_ROOT), "%load_ext mcp_notebook\nfrom mcp_notebook.demo import provisioner, demo\n%mcp connect prov provisioner\n%mcp connect demo demo") as k:
        yield k


def test_provision_form_answered_like_a_browser(kernel: Kernel) -> None:
    cell = kernel.execute("%mcp call prov.provision name=orders", allow_stdin=True)
    # the cell is already finished; the form is live in it
    text_id = kernel.wait_for(lambda: kernel.find_widgets("TextModel"), what="the region text field")[-1]
    accept = kernel.wait_for(lambda: kernel.find_widgets("ButtonModel", description="Accept"), what="Accept")[-1]
    assert kernel.comms[text_id]["value"] == "eu-west-1"  # the schema's default is prefilled

    # an empty required field is refused inline and nothing is sent
    kernel.set_value(text_id, "")
    kernel.click(accept)
    kernel.wait_for(
        lambda: any("required" in s.get("value", "") for s in kernel.comms.values() if s.get("_model_name") == "HTMLModel"),
        what="the inline 'required' error",
    )
    assert "Provisioned" not in kernel.text_of_cell(cell)

    kernel.set_value(text_id, "eu-west-1")
    kernel.click(accept)
    kernel.wait_for(lambda: "Provisioned 'orders' in eu-west-1." in kernel.text_of_cell(cell), what="the tool result in the same cell")
    # the settled report names what was answered, never the value typed
    html = [m["content"]["data"].get("text/html", "") for m in kernel.for_cell(cell) if m["msg_type"] == "update_display_data"]
    assert any("Which region" in h and ": accept (region)" in h for h in html)  # the question, then the field


def test_decline_reaches_the_server(kernel: Kernel) -> None:
    cell = kernel.execute("r = %mcp call prov.provision name=logs", allow_stdin=True)
    before = set(kernel.find_widgets("ButtonModel", description="Decline"))
    decline = kernel.wait_for(lambda: set(kernel.find_widgets("ButtonModel", description="Decline")) - before or kernel.find_widgets("ButtonModel", description="Decline"), what="Decline")
    kernel.click(sorted(decline)[-1] if isinstance(decline, set) else decline[-1])
    kernel.wait_for(lambda: "Provisioning cancelled: the user declined." in kernel.text_of_cell(cell), what="decline result")
    probe = kernel.execute("print(r.state.value, r.result().is_error)")
    assert "done True" in kernel.text_of_cell(probe)


def test_await_flow_and_progress(kernel: Kernel) -> None:
    cell = kernel.execute("r = %mcp call demo.slow_count n=3 delay=0.05\nres = await r\nprint('awaited', res.content[0].text)", allow_stdin=True)
    assert "awaited Counted to 3." in kernel.text_of_cell(cell)
    bars = [s for s in kernel.comms.values() if s.get("_model_name") == "FloatProgressModel" and s.get("max") == 3.0]
    assert bars and bars[-1]["value"] == 3.0


def test_cancel_button_cancels(kernel: Kernel) -> None:
    cell = kernel.execute("r = %mcp call prov.provision name=tmp", allow_stdin=True)
    kernel.wait_for(lambda: kernel.find_widgets("ButtonModel", description="Cancel", tooltip="Cancel this call"), what="Cancel button")
    cancel = kernel.find_widgets("ButtonModel", description="Cancel", tooltip="Cancel this call")[-1]
    kernel.click(cancel)
    kernel.wait_for(lambda: "cancelled" in kernel.text_of_cell(cell), what="cancelled report")
    probe = kernel.execute("print(r.state.value)")
    assert "cancelled" in kernel.text_of_cell(probe)


def test_blocking_on_a_waiting_form_is_refused_not_frozen(kernel: Kernel) -> None:
    kernel.execute("w = %mcp call prov.provision name=blocked", allow_stdin=True)
    kernel.wait_for(lambda: kernel.find_widgets("ButtonModel", description="Accept"), what="the form")
    msg_id = kernel.kc.execute("w.result()", allow_stdin=True, stop_on_error=False)
    kernel.wait_idle(msg_id, timeout=30)
    text = kernel.text_of_cell(msg_id)
    assert "waiting for your answer in its form" in text and "await" in text
    kernel.execute("w.cancel()")
    kernel.wait_for(lambda: "cancelled" in kernel.text_of_cell(kernel.execute("print(w.state.value)")), what="cancelled")


def test_headless_error_shown_once_with_only_its_own_stderr(kernel: Kernel, tmp_path: Path) -> None:
    """Issue 11 item 8: the error appears once in the cell, with stderr written during that call only."""
    script = tmp_path / "grumpy.py"
    script.write_text(
        "import sys\nfrom mcp.server.mcpserver import MCPServer\n"
        "print('OLD CRASH TRACEBACK from start-up', file=sys.stderr, flush=True)\n"
        "srv = MCPServer('grumpy')\n"
        "@srv.tool()\ndef fine() -> str:\n    return 'fine'\n"
        "@srv.tool()\ndef crash() -> str:\n    import os\n    print('crashing now', file=sys.stderr, flush=True)\n    os._exit(5)\n"
        "srv.run()\n"
    )
    kernel.execute(f"import sys\n%mcp connect grumpy -- {{sys.executable}} {script}")
    kernel.execute("%mcp call grumpy.fine")
    cell = kernel.execute("%mcp call grumpy.crash", wait=False)
    kernel.wait_idle(cell)
    errors = [m["content"] for m in kernel.for_cell(cell) if m["msg_type"] == "error"]
    assert [e["ename"] for e in errors] == ["FlowError"]  # the cell fails, once
    text = kernel.text_of_cell(cell)
    assert text.count("crashing now") == 1 and "grumpy.crash failed" in text
    assert "OLD CRASH TRACEBACK" not in text  # written long before this call
    assert "failed: grumpy.crash" in text  # the report keeps its header; the error itself is the error output


def test_presets_that_answer_everything_are_sent_without_waiting(kernel: Kernel) -> None:
    """Issue 11 item 12: Run All in JupyterLab does not stop at forms the presets already answer."""
    cell = kernel.execute("%mcp call demo.provision_db name=presets --answers '{\"region\": \"us-east-1\"}' --accept-defaults", allow_stdin=True)
    kernel.wait_for(lambda: "Provisioned 'presets' in us-east-1 (size small)." in kernel.text_of_cell(cell), what="the result with no click")
    html = " ".join(m["content"]["data"].get("text/html", "") for m in kernel.for_cell(cell) if "data" in m["content"])
    summaries = [s["value"] for s in kernel.comms.values() if s.get("_model_name") == "HTMLModel" and "answered by the presets given" in s.get("value", "")]
    assert len(summaries) == 2 and all("answers sent to <b>demo</b>" in s for s in summaries)  # one per round, no click
    assert "fields: region" in summaries[0] and "<b>accepted</b>" in summaries[1]
    assert "mcp-elicitation" not in html

    # presets that leave a required field open: the form waits, prefilled with what was given
    before = set(kernel.find_widgets("ButtonModel", description="Accept"))
    partial = kernel.execute("%mcp call prov.provision name=partial --answer unrelated=1", allow_stdin=True)
    accept = kernel.wait_for(lambda: set(kernel.find_widgets("ButtonModel", description="Accept")) - before, what="a waiting form")
    kernel.pump(0.5)
    assert "Provisioned" not in kernel.text_of_cell(partial)
    kernel.click(sorted(accept)[-1])
    kernel.wait_for(lambda: "Provisioned 'partial' in eu-west-1." in kernel.text_of_cell(partial), what="the result after Accept")

    # --confirm: the same complete presets, but the form waits for a look first
    before = set(kernel.find_widgets("ButtonModel", description="Accept"))
    confirm = kernel.execute("%mcp call prov.provision name=confirmed --answer region=ap-south-1 --confirm", allow_stdin=True)
    accept = kernel.wait_for(lambda: set(kernel.find_widgets("ButtonModel", description="Accept")) - before, what="the --confirm form")
    kernel.pump(0.5)
    assert "Provisioned" not in kernel.text_of_cell(confirm)
    kernel.click(sorted(accept)[-1])
    kernel.wait_for(lambda: "Provisioned 'confirmed' in ap-south-1." in kernel.text_of_cell(confirm), what="the result after Accept")
