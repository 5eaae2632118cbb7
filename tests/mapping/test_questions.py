"""``await mcp_notebook.map_async(...)`` in a real kernel: the rows' questions in one form, answered once for all.

The cell awaits the map, so ipykernel (7.4 and later) handles the form's comm messages while it
runs. The test plays the front end with the messages a browser sends (``kernel_harness``): it
picks a region, ticks "Use this answer for every remaining row that asks this", clicks Accept,
and does the same for the confirmation; twenty rows then finish with two forms shown in all.
"""

from __future__ import annotations

import pytest

from ..kernel.test_forms import pick
from ..support.kernel_harness import Kernel

FOR_ALL = "Use this answer for every remaining row that asks this"


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return "%load_ext mcp_notebook\nimport mcp_notebook\n%mcp connect demo mcp_notebook.demo:demo\n%mcp connect legacy --protocol legacy mcp_notebook.demo:demo"


def next_form(kernel: Kernel, seen: set[str]) -> tuple[str, str]:
    """The next question's "for all" checkbox and Accept button (widgets not seen before)."""
    check = kernel.wait_for(
        lambda: [c for c in kernel.find_widgets("CheckboxModel", description=FOR_ALL) if c not in seen],
        what="a map question",
    )[-1]
    seen.add(check)
    accept = kernel.wait_for(
        lambda: [b for b in kernel.find_widgets("ButtonModel", description="Accept", disabled=False) if b not in seen],
        what="its Accept button",
    )[-1]
    seen.add(accept)
    return check, accept


def headers(kernel: Kernel) -> list[str]:
    return [
        str(s.get("value", ""))
        for s in kernel.comms.values()
        if s.get("_model_name") == "HTMLModel" and "asks, for the row with" in str(s.get("value", ""))
    ]


def test_answered_once_for_all_twenty_rows(kernel: Kernel) -> None:
    # the rows' names carry markup: shown above the form as text, never as HTML
    cell = kernel.execute(
        "rows = [{'name': f'<i>db{i}</i>'} for i in range(20)]\nout = await mcp_notebook.map_async('demo.provision_db', rows, concurrency=4)",
        allow_stdin=True,
        wait=False,
    )
    seen: set[str] = set()
    check, accept = next_form(kernel, seen)  # round one: the region
    pick(kernel, "region", "us-west-2")
    kernel.set_value(check, True)
    kernel.click(accept)
    check, accept = next_form(kernel, seen)  # round two: the confirmation (another question, another form)
    kernel.set_value(check, True)
    kernel.click(accept)
    kernel.wait_idle(cell, timeout=60)
    errors = [m for m in kernel.for_cell(cell) if m["msg_type"] == "error"]
    assert not errors, errors[0]["content"]
    probe = kernel.execute(
        "print([r.content[0].text for r in out] == [f\"Provisioned '<i>db{i}</i>' in us-west-2 (size small).\" for i in range(20)])"
    )
    assert kernel.text_of_cell(probe).strip() == "True"
    assert (
        len(kernel.find_widgets("CheckboxModel", description=FOR_ALL)) == 2
    )  # two questions, two forms, for twenty rows
    shown = headers(kernel)
    assert shown and all("&lt;i&gt;db" in h and "<i>db" not in h for h in shown)
    notes = [
        str(s.get("value", "")) for s in kernel.comms.values() if "mcp-map-for-all-note" in str(s.get("value", ""))
    ]
    assert (
        notes and "accept (region)" in "".join(notes) and "us-west-2" not in "".join(notes)
    )  # field names, never the answers
    bars = kernel.find_widgets("IntProgressModel", value=20, max=20)
    assert len(bars) == 1 and kernel.comms[bars[0]]["bar_style"] == "success"


def test_a_2025_server_asking_over_the_back_channel_meets_the_same_form(kernel: Kernel) -> None:
    cell = kernel.execute(
        "old = await mcp_notebook.map_async('legacy.provision_db', [{'name': f'v{i}'} for i in range(6)], concurrency=1)",
        allow_stdin=True,
        wait=False,
    )
    seen: set[str] = set(kernel.find_widgets("CheckboxModel", description=FOR_ALL)) | set(
        kernel.find_widgets("ButtonModel", description="Accept")
    )
    check, accept = next_form(kernel, seen)
    pick(kernel, "region", "eu-central-1")
    kernel.set_value(check, True)
    kernel.click(accept)
    check, accept = next_form(kernel, seen)
    kernel.set_value(check, True)
    kernel.click(accept)
    kernel.wait_idle(cell, timeout=60)
    probe = kernel.execute("print(old[0].content[0].text, old[5].content[0].text, len(old))")
    assert (
        kernel.text_of_cell(probe).strip()
        == "Provisioned 'v0' in eu-central-1 (size small). Provisioned 'v5' in eu-central-1 (size small). 6"
    )
    assert (
        len([c for c in kernel.find_widgets("CheckboxModel", description=FOR_ALL) if c not in seen]) == 0
    )  # two forms for six rows


def test_each_row_asked_on_its_own_without_the_tick(kernel: Kernel) -> None:
    cell = kernel.execute(
        "out = await mcp_notebook.map_async('demo.provision_db', [{'name': 'a'}, {'name': 'b'}], concurrency=1)",
        allow_stdin=True,
        wait=False,
    )
    seen: set[str] = set(kernel.find_widgets("CheckboxModel", description=FOR_ALL)) | set(
        kernel.find_widgets("ButtonModel", description="Accept")
    )
    regions = iter(["eu-central-1", "ap-southeast-1"])
    asked = set(region_fields(kernel))
    for _ in range(4):  # two rows, two rounds each, one form at a time (concurrency 1: row a, then row b)
        _check, accept = next_form(kernel, seen)
        fresh = [f for f in region_fields(kernel) if f not in asked]
        if fresh:  # this form asks the region: each row gets its own
            asked.update(fresh)
            pick(kernel, "region", next(regions))
        kernel.click(accept)
    kernel.wait_idle(cell, timeout=60)
    probe = kernel.execute("print([r.content[0].text for r in out])")
    assert (
        kernel.text_of_cell(probe).strip()
        == "[\"Provisioned 'a' in eu-central-1 (size small).\", \"Provisioned 'b' in ap-southeast-1 (size small).\"]"
    )


def region_fields(kernel: Kernel) -> list[str]:
    return [c for c, s in kernel.comms.items() if "mcp-field-region" in (s.get("_dom_classes") or [])]


def test_without_a_person_the_rows_fail_unanswered_and_the_table_says_how_to_answer(kernel: Kernel) -> None:
    cell = kernel.execute(
        "try:\n    await mcp_notebook.map_async('demo.provision_db', [{'name': 'x'}])\nexcept mcp_notebook.mapping.map.MapError as e:\n    print(e.failures[0][2].kind, e.failures[0][2].missing_field)\n    print(e)",
        allow_stdin=False,
    )
    text = kernel.text_of_cell(cell)
    assert "\nunanswered region\n" in text
    assert "await mcp_notebook.map_async(...)" in text and "--answer FIELD=VALUE" in text


def test_stop_ends_a_map_waiting_on_a_form_and_the_kernel_goes_on(kernel: Kernel) -> None:
    """A cell that awaits is not interrupted at once (ipykernel 7.4 cancels it only when its await ends): Stop is the way out."""
    cell = kernel.execute(
        "await mcp_notebook.map_async('demo.provision_db', [{'name': f'n{i}'} for i in range(8)], concurrency=4)",
        allow_stdin=True,
        wait=False,
    )
    next_form(
        kernel,
        set(kernel.find_widgets("CheckboxModel", description=FOR_ALL))
        | set(kernel.find_widgets("ButtonModel", description="Accept")),
    )
    stop = [
        c
        for c in kernel.find_widgets("ButtonModel", description="Stop")
        if "mcp-map-stop" in kernel.comms[c].get("_dom_classes", [])
    ][-1]
    kernel.click(stop)
    kernel.wait_idle(cell, timeout=30)
    errors = [m["content"] for m in kernel.for_cell(cell) if m["msg_type"] == "error"]
    assert [e["ename"] for e in errors] == ["MapError"]
    assert (
        "8 of 8 calls of demo.provision_db failed" in errors[0]["evalue"]
        and "the map was stopped" in errors[0]["evalue"]
    )
    # no row of it is left waiting, and the next map (answered by presets) runs at once
    probe = kernel.execute(
        "s = get_ipython().magics_manager.registry['MCPMagics'].session\n"
        "print(sum(1 for c in s.registry for f in list(c.flows) if not f.finished))\n"
        "print([r.content[0].text for r in await mcp_notebook.map_async('demo.provision_db', [{'name': 'z'}], answers={'region': 'us-east-1'}, accept_defaults=True)])"
    )
    lines = [
        line for line in kernel.text_of_cell(probe).splitlines() if line and not line.startswith(("HBox(", "VBox("))
    ]  # not the map's bar, as text
    assert lines == ["0", "[\"Provisioned 'z' in us-east-1 (size small).\"]"]
