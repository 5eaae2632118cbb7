"""One multi-field form in a real kernel, filled with the comm messages a browser sends.

``%mcp call demo.ask_everything`` runs interactively (the execute request allows stdin, as in
JupyterLab) and puts the form in the cell. The test then plays the front end: it types into
Text models (``update`` of ``value``), picks Dropdown options (``update`` of ``index``, which is
what ipywidgets 8 syncs for selections), ticks Checkboxes, sets the DatePicker (the serialized
``{year, month, date}`` form, month counted from 0 as in JavaScript) and clicks buttons
(``custom`` ``click``). See shared/reference/kernel.md, section 2.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ..support.kernel_harness import Kernel


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return "%load_ext mcp_notebook\n%mcp connect demo mcp_notebook.demo:demo"


def _model_id(ref: str) -> str:
    return ref.removeprefix("IPY_MODEL_")


def field_parts(kernel: Kernel, name: str) -> dict[str, str]:
    """Comm ids of field ``name``'s input and error line, found through its DOM class."""
    box = kernel.wait_for(
        lambda: [cid for cid, s in kernel.comms.items() if f"mcp-field-{name}" in (s.get("_dom_classes") or [])],
        what=f"field {name}",
    )[-1]
    row, _help, error = (_model_id(r) for r in kernel.comms[box]["children"])
    _label, control = (_model_id(r) for r in kernel.comms[row]["children"])
    return {"input": control, "error": error}


def tick(kernel: Kernel, name: str, *labels: str) -> None:
    """Tick the checkboxes of multi-select ``name`` whose labels are given (untick the rest)."""
    group = field_parts(kernel, name)["input"]
    for ref in kernel.comms[group]["children"]:
        box = _model_id(ref)
        kernel.set_value(box, kernel.comms[box]["description"] in labels)


def pick(kernel: Kernel, name: str, label: str) -> None:
    """Choose the Dropdown option shown as ``label`` (the browser sends its index)."""
    control = field_parts(kernel, name)["input"]
    index = kernel.comms[control]["_options_labels"].index(label)
    kernel._comm_msg(control, {"method": "update", "state": {"index": index}, "buffer_paths": []})


def html_of(kernel: Kernel, comm_id: str) -> str:
    return str(kernel.comms.get(comm_id, {}).get("value", ""))


def test_every_kind_filled_through_comm_messages(kernel: Kernel) -> None:
    cell = kernel.execute("%mcp call demo.ask_everything", allow_stdin=True, wait=False)
    accept = kernel.wait_for(
        lambda: kernel.find_widgets("ButtonModel", description="Accept"), what="the Accept button"
    )[-1]
    header = [s["value"] for s in kernel.comms.values() if "mcp-asker" in (s.get("_dom_classes") or [])]
    assert "<b>demo</b> asks" in header[-1] and "Fill in every kind of field" in header[-1]
    email = field_parts(kernel, "email")
    assert kernel.comms[email["input"]]["value"] == "ada@example.com"  # the default, prefilled

    # a person types: a name, a wrong e-mail, an age out of range
    kernel.set_value(field_parts(kernel, "name")["input"], "Grace")
    kernel.set_value(email["input"], "grace-at-navy")
    age = field_parts(kernel, "age")
    kernel.set_value(age["input"], "151")
    kernel.click(accept)
    kernel.wait_for(
        lambda: "not a valid e-mail address" in html_of(kernel, email["error"]), what="the inline e-mail error"
    )
    kernel.wait_for(lambda: "must be ≤ 150" in html_of(kernel, age["error"]), what="the inline age error")
    assert "Grace" not in kernel.text_of_cell(cell)  # nothing was sent

    # fixes them, and fills the rest
    kernel.set_value(email["input"], "grace@navy.mil")
    kernel.set_value(age["input"], "85")
    kernel.set_value(field_parts(kernel, "ratio")["input"], "0.75")
    kernel.set_value(field_parts(kernel, "homepage")["input"], "https://example.org/cobol")
    kernel.set_value(field_parts(kernel, "meeting")["input"], "2026-07-28T10:00:00Z")
    kernel.set_value(field_parts(kernel, "birthday")["input"], {"year": 1906, "month": 11, "date": 9})
    kernel.set_value(field_parts(kernel, "subscribe")["input"], False)
    pick(kernel, "color", "red")
    pick(kernel, "size", "Large")
    pick(kernel, "tier", "Pro tier")
    tick(kernel, "toppings", "ham", "olives")
    tick(kernel, "extras", "Wi-Fi", "Parking space")
    kernel.click(accept)

    def result() -> dict[str, Any] | None:
        for line in kernel.text_of_cell(cell).splitlines():
            if line.startswith('{"age"'):
                return json.loads(line)
        return None

    got = kernel.wait_for(result, what="the tool result in the same cell")
    assert got == {
        "age": 85, "birthday": "1906-12-09", "color": "red", "email": "grace@navy.mil", "extras": ["wifi", "parking"],
        "homepage": "https://example.org/cobol", "meeting": "2026-07-28T10:00:00Z", "name": "Grace", "ratio": 0.75, "size": "l",
        "subscribe": False, "tier": "pro", "toppings": ["ham", "olives"],
    }  # fmt: skip

    # what stays in the notebook: a summary naming fields, and no widget holding a typed value
    summaries = [s["value"] for s in kernel.comms.values() if "mcp-summary" in str(s.get("value", ""))]
    assert (
        summaries and "accepted" in summaries[-1] and "email" in summaries[-1] and "grace@navy.mil" not in summaries[-1]
    )
    closed = {m["content"]["comm_id"] for m in kernel.messages if m["msg_type"] == "comm_close"}
    assert email["input"] in closed and age["input"] in closed
