"""What a cell says is true (issue 36, item 10), in real kernels with the extension's comm played by ``FakeLab``.

* ``--wait`` under Run All with the extension: the page answers the hello while the cells still run,
  after the flow has stopped at its question; the record goes into the notebook's metadata, so the
  cell does not say it is kept in this kernel only because the extension is not active.
* A waiting form in a flow's live area has one Cancel: the form's (an answer); the call's shows between forms.
* A resume whose saved state the server refuses says why, and what to do, once.
* ``%mcp trace`` after a resume that stopped before sending anything shows the call's last trace,
  not an empty one.
"""

from __future__ import annotations

import html
import re

import pytest

from mcp_notebook.session.page import NOT_SAVED_NOTICE

from ..support.kernel_harness import Kernel
from .test_resume import FakeLab, run

SETUP = "%load_ext mcp_notebook\nfrom mcp_notebook.demo import demo\n%mcp connect demo demo"


@pytest.fixture(scope="module")
def kernel_setup() -> tuple[str, ...]:
    return ()  # each test a fresh kernel (``fresh_kernel``) that has run nothing: the test loads the extension itself


def _idle(k: Kernel, msg_id: str) -> bool:
    return any(m["msg_type"] == "status" and m["content"]["execution_state"] == "idle" for m in k.for_cell(msg_id))


def test_wait_under_run_all_with_the_extension_says_nothing_of_a_kernel_only_record(fresh_kernel: Kernel) -> None:
    k = fresh_kernel
    lab = FakeLab(k)
    run(k, "import mcp_notebook.magics, mcp_notebook.demo", "cell-import")  # the slow imports, before the hello
    # the hello and the call in one run: the flow stops at its question (its report is shown) before the
    # page's answer comes, as under Run All when the answer queues behind the cells
    cell = run(k, f"{SETUP}\n%mcp call demo.provision_db name=orders --wait", "cell-wait", interactive=True, wait=False)
    k.wait_for(lambda: "failed: demo.provision_db" in k.text_of_cell(cell), what="the --wait cell's report")
    lab.wait(lambda: _idle(k, cell), "the --wait cell to end")  # the page answers now, as the cell ends
    [flow_id] = lab.wait(lambda: list(lab.flows), "the record in the notebook's metadata")
    text = k.text_of_cell(cell)
    assert NOT_SAVED_NOTICE not in text and "kept in this kernel only" not in text
    assert "extension is not active" not in text  # nor a record in the cell's output saying so
    assert f"The flow is still saved as {flow_id}" in text
    assert lab.flows[flow_id]["cell_id"] == "cell-wait" and lab.flows[flow_id]["round"] == 1


def _visible(k: Kernel, comm_id: str) -> bool:
    """Whether a widget shows: its layout does not hide it."""
    layout = str(k.comms[comm_id].get("layout", "")).removeprefix("IPY_MODEL_")
    return k.comms.get(layout, {}).get("display") != "none"


def test_a_waiting_form_has_one_cancel(kernel: Kernel) -> None:
    k = kernel
    FakeLab(k)
    run(k, SETUP, "cell-load")
    before = set(k.comms)
    cell = run(k, "%mcp call demo.provision_db name=orders", "cell-form", interactive=True, wait=False)
    k.wait_for(lambda: set(k.find_widgets("ButtonModel", description="Accept")) - before, what="the form")
    k.pump(0.5)
    cancels = sorted(set(k.find_widgets("ButtonModel", description="Cancel")) - before)
    shown = [c for c in cancels if _visible(k, c)]
    # the form's Cancel (an answer, "cancel", as Decline is one); the call's own Cancel is out of sight meanwhile
    assert len(shown) == 1 and k.comms[shown[0]].get("tooltip") != "Cancel this call"
    assert [k.comms[c].get("tooltip") for c in cancels if not _visible(k, c)] == ["Cancel this call"]
    region = sorted(set(k.find_widgets("DropdownModel")) - before)[-1]
    k.set_value(region, "us-west-2")
    [first] = set(k.find_widgets("ButtonModel", description="Accept")) - before
    [call_cancel] = [c for c in cancels if k.comms[c].get("tooltip") == "Cancel this call"]
    answered = set(k.comms)
    k.click(first)
    # the next round's form: again one Cancel
    k.wait_for(
        lambda: set(k.find_widgets("ButtonModel", description="Accept")) - before - {first}, what="the next form"
    )
    k.pump(0.5)
    cancels = [call_cancel, *sorted(set(k.find_widgets("ButtonModel", description="Cancel")) - answered)]
    shown = [c for c in cancels if _visible(k, c)]
    assert len(shown) == 1 and shown[0] != call_cancel
    k.click(shown[0])  # the server is told "cancel"
    k.wait_idle(cell)
    assert "cancel" in k.text_of_cell(cell).lower()


def _shown_text(k: Kernel, cell: str, widgets: set[str]) -> str:
    """All a person reads of ``cell``: its outputs' text and the text of the widgets it showed."""
    markup = " ".join(
        str(k.comms[c].get("value") or "") for c in widgets if k.comms[c].get("_model_name") == "HTMLModel"
    )
    markup = re.sub(r"<style>.*?</style>", " ", markup, flags=re.S)
    return k.text_of_cell(cell) + "\n" + html.unescape(re.sub(r"<[^>]+>", " ", markup))


def test_a_refused_resume_says_its_advice_once(fresh_kernel: Kernel) -> None:
    k = fresh_kernel
    lab = FakeLab(k)
    run(k, SETUP, "cell-load")
    lab.wait(lambda: lab.ops("hello"), "hello")
    run(k, "%mcp call demo.provision_db name=orders --wait", "cell-wait", ok=False)
    run(
        k,
        "from mcp_notebook.session.api import default_session\n"
        "r = default_session().store.all()[-1]\n"
        "r['request_state'] = r['request_state'][:-8] + 'AAAAAAAA'",
        "cell-tamper",
    )
    before = set(k.comms)
    cell = run(k, "%mcp resume --answer region=eu-west-1", "cell-resume", interactive=True, ok=False)
    k.wait_for(lambda: k.find_widgets("ButtonModel", description="Start over"), what="Start over")
    k.pump(0.5)
    shown = _shown_text(k, cell, set(k.comms) - before)
    assert "This flow cannot continue" in shown  # the panel says what Start over does
    # why a server refuses a saved state, and the line that starts it again: once each
    assert shown.count("RequestStateSecurity") == 1, shown
    assert shown.count("the state expired") == 1, shown
    assert shown.count("%mcp call demo.provision_db --json") == 1, shown


def test_trace_after_a_resume_that_sent_nothing_is_the_calls_last_trace(fresh_kernel: Kernel) -> None:
    k = fresh_kernel
    lab = FakeLab(k)
    run(k, SETUP, "cell-load")
    lab.wait(lambda: lab.ops("hello"), "hello")
    run(k, "%mcp call demo.provision_db name=orders --wait", "cell-wait", ok=False)
    probe = "t = %mcp trace --json\nprint([(m['from'], m['kind']) for m in t])"
    seen = run(k, probe)
    first = k.text_of_cell(seen).strip()
    assert first == "[('client', 'request'), ('server', 'result')]"
    # headless, no answer given: the resume stops at the saved question, nothing crosses the wire
    resumed = run(k, "%mcp resume", "cell-resume", ok=False)
    assert "has no answer" in k.text_of_cell(resumed)
    again = run(k, probe)
    assert k.text_of_cell(again).strip() == first
    # a call that did send something is the one shown next
    run(k, "%mcp call demo.add a=1 b=2")
    last = run(k, "t = %mcp trace --json\nprint([m['message'].get('method') for m in t if m['kind'] == 'request'])")
    assert k.text_of_cell(last).strip() == "['tools/call']"
