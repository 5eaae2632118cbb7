"""The interactive path in a real kernel: the form appears in the cell, the answers go back.

A front end that allows stdin (JupyterLab, Notebook 7) makes the run interactive: the form is live
in the cell while the cell awaits its flow (``cell_await``), the answers go back, and the cell ends
when the result has landed in it. ``--background`` returns the ``Flow`` at once, as before.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ..support.kernel_harness import Kernel


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return "%load_ext mcp_notebook\nfrom mcp_notebook.demo import provisioner, demo\n%mcp connect prov provisioner\n%mcp connect demo demo"


def test_provision_form_answered_like_a_browser(kernel: Kernel) -> None:
    cell = kernel.execute("%mcp call prov.provision name=orders", allow_stdin=True, wait=False)
    # the cell waits for its flow; the form is live in it
    text_id = kernel.wait_for(lambda: kernel.find_widgets("TextModel"), what="the region text field")[-1]
    accept = kernel.wait_for(lambda: kernel.find_widgets("ButtonModel", description="Accept"), what="Accept")[-1]
    assert kernel.comms[text_id]["value"] == "eu-west-1"  # the schema's default is prefilled

    # an empty required field is refused inline and nothing is sent
    kernel.set_value(text_id, "")
    kernel.click(accept)
    kernel.wait_for(
        lambda: any(
            "required" in s.get("value", "") for s in kernel.comms.values() if s.get("_model_name") == "HTMLModel"
        ),
        what="the inline 'required' error",
    )
    assert "Provisioned" not in kernel.text_of_cell(cell)

    kernel.set_value(text_id, "eu-west-1")
    kernel.click(accept)
    kernel.wait_for(
        lambda: "Provisioned 'orders' in eu-west-1." in kernel.text_of_cell(cell),
        what="the tool result in the same cell",
    )
    kernel.wait_idle(cell)
    assert not [m for m in kernel.for_cell(cell) if m["msg_type"] == "error"]
    # the settled report names what was answered, never the value typed
    html = [
        m["content"]["data"].get("text/html", "")
        for m in kernel.for_cell(cell)
        if m["msg_type"] == "update_display_data"
    ]
    assert any("Which region" in h and ": accept (region)" in h for h in html)  # the question, then the field


def test_decline_reaches_the_server(kernel: Kernel) -> None:
    before = set(kernel.find_widgets("ButtonModel", description="Decline"))
    cell = kernel.execute("%mcp call prov.provision name=logs -o r", allow_stdin=True, wait=False)
    decline = kernel.wait_for(
        lambda: set(kernel.find_widgets("ButtonModel", description="Decline")) - before, what="Decline"
    )
    kernel.click(sorted(decline)[-1])
    kernel.wait_for(
        lambda: "Provisioning cancelled: the user declined." in kernel.text_of_cell(cell), what="decline result"
    )
    kernel.wait_idle(cell)
    # the provisioner answers a refusal with an isError result: a tool error, so the cell fails (Run All stops there) ...
    errors = [m["content"] for m in kernel.for_cell(cell) if m["msg_type"] == "error"]
    assert [(e["ename"], e["evalue"]) for e in errors] == [
        (
            "FlowError",
            "prov.provision reported a tool error (isError): see its result above. The cell fails so Run All stops here; -o VAR binds the result anyway.",
        )
    ]
    html = [
        m["content"]["data"].get("text/html", "")
        for m in kernel.for_cell(cell)
        if m["msg_type"] == "update_display_data"
    ]
    assert html and '<span class="badge error">error</span>' in html[-1] and ">done<" not in html[-1]
    probe = kernel.execute(
        "print(type(r).__name__, r.is_error, r.content[0].text)"
    )  # ... and -o r still binds the result
    assert kernel.text_of_cell(probe) == "CallToolResult True Provisioning cancelled: the user declined.\n"


def test_run_all_stops_at_a_tool_error(kernel: Kernel) -> None:
    """Issue 21 item 4: an isError result fails its cell, so a Run All (stop_on_error, as JupyterLab sends it) stops there."""
    # The cell first waits until the next cell's request is queued behind it in the kernel (a task waiting for the
    # kernel's cell lock), as Run All's requests are in JupyterLab: ipykernel aborts only requests queued when a
    # cell fails, and a fast failing call could end before a loaded kernel had read the next one (a CI run: "ok").
    queued = (
        "import asyncio, time\n"
        "_lock, _until = get_ipython().kernel._main_asyncio_lock, time.monotonic() + 60\n"
        "while not _lock._waiters and time.monotonic() < _until:\n"
        "    await asyncio.sleep(0.02)\n"
    )
    first = kernel.kc.execute(queued + "%mcp call demo.fail message=stop-here", allow_stdin=True, stop_on_error=True)
    second = kernel.kc.execute("print('the next cell ran')", allow_stdin=True)
    replies: dict[str, str] = {}
    deadline = time.monotonic() + 60
    while len(replies) < 2 and time.monotonic() < deadline:
        reply = kernel.kc.get_shell_msg(timeout=60)
        if reply["parent_header"].get("msg_id") in (first, second):
            replies[reply["parent_header"]["msg_id"]] = reply["content"]["status"]
    assert replies == {first: "error", second: "aborted"}
    kernel.wait_idle(first)
    assert "Tool error: Error executing tool fail: stop-here" in kernel.text_of_cell(first)
    assert [m["content"]["ename"] for m in kernel.for_cell(first) if m["msg_type"] == "error"] == ["FlowError"]
    kernel.pump(0.5)
    assert "the next cell ran" not in kernel.text_of_cell(second)


def test_await_flow_and_progress(kernel: Kernel) -> None:
    cell = kernel.execute(
        "r = %mcp call demo.slow_count n=3 delay=0.05 --background\nprint(type(r).__name__)\nres = await r\nprint('awaited', res.content[0].text)",
        allow_stdin=True,
    )
    assert "\nFlow\n" in kernel.text_of_cell(cell)  # --background: the Flow at once, after the live view
    assert "awaited Counted to 3." in kernel.text_of_cell(cell)
    bars = [s for s in kernel.comms.values() if s.get("_model_name") == "FloatProgressModel" and s.get("max") == 3.0]
    assert bars and bars[-1]["value"] == 3.0


def test_cancel_button_cancels(kernel: Kernel) -> None:
    before = set(kernel.find_widgets("ButtonModel", description="Cancel", tooltip="Cancel this call"))
    cell = kernel.execute("r = %mcp call prov.provision name=tmp --background", allow_stdin=True)
    cancel = kernel.wait_for(
        lambda: set(kernel.find_widgets("ButtonModel", description="Cancel", tooltip="Cancel this call")) - before,
        what="Cancel button",
    )
    kernel.click(sorted(cancel)[-1])
    kernel.wait_for(lambda: "cancelled" in kernel.text_of_cell(cell), what="cancelled report")
    probe = kernel.execute("print(r.state.value)")
    assert "cancelled" in kernel.text_of_cell(probe)


def test_cancel_button_ends_an_awaiting_cell_as_cancelled(kernel: Kernel) -> None:
    before = set(kernel.find_widgets("ButtonModel", description="Cancel", tooltip="Cancel this call"))
    cell = kernel.execute("c = %mcp call prov.provision name=tmp2", allow_stdin=True, wait=False)
    cancel = kernel.wait_for(
        lambda: set(kernel.find_widgets("ButtonModel", description="Cancel", tooltip="Cancel this call")) - before,
        what="Cancel button",
    )
    kernel.click(sorted(cancel)[-1])
    kernel.wait_idle(cell)
    errors = [m["content"] for m in kernel.for_cell(cell) if m["msg_type"] == "error"]
    assert [(e["ename"], e["evalue"]) for e in errors] == [("FlowError", "prov.provision was cancelled.")]


def test_run_all_waits_for_the_call_and_binds_its_result(kernel: Kernel) -> None:
    """Issue 21 item 1: the next cell of a Run All starts only after the call's form is answered."""
    before = set(kernel.find_widgets("ButtonModel", description="Accept"))
    first = kernel.execute("x = %mcp call prov.provision name=ordered", allow_stdin=True, wait=False)
    second = kernel.execute("print('second cell', type(x).__name__, x.content[0].text)", allow_stdin=True, wait=False)
    accept = kernel.wait_for(
        lambda: set(kernel.find_widgets("ButtonModel", description="Accept")) - before, what="the form"
    )
    kernel.pump(1.0)
    assert not kernel.for_cell(second), "the second cell ran while the first one's form was waiting"
    kernel.click(sorted(accept)[-1])
    kernel.wait_idle(second)
    assert kernel.text_of_cell(second) == "second cell CallToolResult Provisioned 'ordered' in eu-west-1.\n"
    done_first = max(i for i, m in enumerate(kernel.messages) if m["parent_header"].get("msg_id") == first)
    start_second = min(i for i, m in enumerate(kernel.messages) if m["parent_header"].get("msg_id") == second)
    assert done_first < start_second


def test_interrupt_cancels_the_flow_and_says_so(kernel: Kernel) -> None:
    before = set(kernel.find_widgets("ButtonModel", description="Accept"))
    cell = kernel.execute("%mcp call prov.provision name=interrupted", allow_stdin=True, wait=False)
    kernel.wait_for(lambda: set(kernel.find_widgets("ButtonModel", description="Accept")) - before, what="the form")
    kernel.km.interrupt_kernel()
    kernel.wait_idle(cell)
    text = kernel.text_of_cell(cell)
    assert "Interrupted: prov.provision stopped waiting here; it stays saved as flow " in text
    assert [m["content"]["ename"] for m in kernel.for_cell(cell) if m["msg_type"] == "error"] == ["Interrupted"]
    probe = kernel.execute(
        "from mcp_notebook.session.api import default_session\nprint([r['id'] for r in default_session().store.all() if r['arguments'] == {'name': 'interrupted'}])"
    )
    (flow_id,) = eval(kernel.text_of_cell(probe))  # noqa: S307 - the kernel printed a list of ids
    assert f"%mcp resume {flow_id} continues it" in text  # a shutdown interrupts first: the saved flow must survive it
    kernel.execute(f"%mcp forget {flow_id}")
    after = kernel.execute("x = %mcp call demo.add a=2 b=5\nprint(x.content[0].text)", allow_stdin=True)
    assert kernel.text_of_cell(after).endswith("7\n")  # the kernel goes on


def test_headless_assignment_binds_the_result_and_cell_magic_awaits(kernel: Kernel) -> None:
    cell = kernel.execute("y = %mcp call demo.add a=4 b=5\nprint(type(y).__name__, y.content[0].text)")
    assert "CallToolResult 9\n" in kernel.text_of_cell(cell)
    body = kernel.execute('%%mcp call demo.add\n{"a": 1, "b": 2}', allow_stdin=True)
    assert "3" in kernel.text_of_cell(body)
    inside = kernel.execute(
        "def f():\n    r = %mcp call demo.add a=1 b=1 --wait\n    return r\nprint(type(f()).__name__)"
    )
    assert kernel.text_of_cell(inside).endswith("Flow\n")  # a line inside a def cannot be awaited: the Flow, as before


def test_blocking_on_a_waiting_form_is_refused_not_frozen(kernel: Kernel) -> None:
    kernel.execute("w = %mcp call prov.provision name=blocked --background", allow_stdin=True)
    kernel.wait_for(lambda: kernel.find_widgets("ButtonModel", description="Accept"), what="the form")
    msg_id = kernel.kc.execute("w.result()", allow_stdin=True, stop_on_error=False)
    kernel.wait_idle(msg_id, timeout=30)
    text = kernel.text_of_cell(msg_id)
    assert "waiting for your answer in its form" in text and "await" in text
    kernel.execute("w.cancel()")
    kernel.wait_for(
        lambda: "cancelled" in kernel.text_of_cell(kernel.execute("print(w.state.value)")), what="cancelled"
    )


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
    cell = kernel.execute(
        '%mcp call demo.provision_db name=presets --answers \'{"region": "us-east-1"}\' --accept-defaults',
        allow_stdin=True,
    )
    kernel.wait_for(
        lambda: "Provisioned 'presets' in us-east-1 (size small)." in kernel.text_of_cell(cell),
        what="the result with no click",
    )
    html = " ".join(m["content"]["data"].get("text/html", "") for m in kernel.for_cell(cell) if "data" in m["content"])
    summaries = [
        s["value"]
        for s in kernel.comms.values()
        if s.get("_model_name") == "HTMLModel" and "answered by the presets given" in s.get("value", "")
    ]
    assert len(summaries) == 2 and all("answers sent to <b>demo</b>" in s for s in summaries)  # one per round, no click
    assert "fields: region" in summaries[0] and "<b>accepted</b>" in summaries[1]
    assert "mcp-elicitation" not in html

    # presets that leave a required field open: the form waits, prefilled with what was given
    before = set(kernel.find_widgets("ButtonModel", description="Accept"))
    partial = kernel.execute("%mcp call prov.provision name=partial --answer unrelated=1", allow_stdin=True, wait=False)
    accept = kernel.wait_for(
        lambda: set(kernel.find_widgets("ButtonModel", description="Accept")) - before, what="a waiting form"
    )
    kernel.pump(0.5)
    assert "Provisioned" not in kernel.text_of_cell(partial)
    kernel.click(sorted(accept)[-1])
    kernel.wait_for(
        lambda: "Provisioned 'partial' in eu-west-1." in kernel.text_of_cell(partial), what="the result after Accept"
    )

    # --confirm: the same complete presets, but the form waits for a look first
    before = set(kernel.find_widgets("ButtonModel", description="Accept"))
    confirm = kernel.execute(
        "%mcp call prov.provision name=confirmed --answer region=ap-south-1 --confirm", allow_stdin=True, wait=False
    )
    accept = kernel.wait_for(
        lambda: set(kernel.find_widgets("ButtonModel", description="Accept")) - before, what="the --confirm form"
    )
    kernel.pump(0.5)
    assert "Provisioned" not in kernel.text_of_cell(confirm)
    kernel.click(sorted(accept)[-1])
    kernel.wait_for(
        lambda: "Provisioned 'confirmed' in ap-south-1." in kernel.text_of_cell(confirm), what="the result after Accept"
    )


def test_a_form_change_during_the_awaiting_cell_gets_its_idle_status(kernel: Kernel) -> None:
    """The ipywidgets page sends a model's next change only after the idle status of its last one.

    ipykernel 7.4 publishes none for comm messages handled beside an awaiting cell; without it only
    the first keystroke of a field reached the kernel in JupyterLab (cell_await._comm_status_replies).
    """
    before = set(kernel.find_widgets("TextModel")) | set(kernel.find_widgets("ButtonModel", description="Accept"))
    cell = kernel.execute("%mcp call prov.provision name=typed", allow_stdin=True, wait=False)
    text = sorted(kernel.wait_for(lambda: set(kernel.find_widgets("TextModel")) - before, what="the region field"))[-1]
    sent = []
    for value in ("a", "ap", "ap-south-1"):  # three keystrokes, as a page sends them one after the other
        msg = kernel.kc.session.msg(
            "comm_msg", {"comm_id": text, "data": {"method": "update", "state": {"value": value}, "buffer_paths": []}}
        )
        kernel.kc.shell_channel.send(msg)
        sent.append(msg["header"]["msg_id"])
        kernel.wait_for(
            lambda: (
                [m["content"]["execution_state"] for m in kernel.for_cell(sent[-1]) if m["msg_type"] == "status"]
                == ["busy", "idle"]
            ),
            what="the comm message's busy and idle",
        )
    assert not any(
        m["msg_type"] == "status" and m["content"]["execution_state"] == "idle" for m in kernel.for_cell(cell)
    )  # still waiting
    (accept,) = [b for b in kernel.find_widgets("ButtonModel", description="Accept") if b not in before]
    kernel.click(accept)
    kernel.wait_idle(cell)
    assert "Provisioned 'typed' in ap-south-1." in kernel.text_of_cell(cell)
