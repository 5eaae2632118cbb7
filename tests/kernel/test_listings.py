"""Every listing a cell asks for is shown, once, in order, in a real kernel; and what connecting says.

``%mcp servers`` / ``tools`` / ... in the middle of a cell used to show nothing (IPython shows a
line magic's value only as the cell's last line). See ``mcp_notebook/listing.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from ..support.kernel_harness import Kernel

SETUP = "%load_ext mcp_notebook\nfrom mcp_notebook.demo import provisioner, demo\n%mcp connect prov provisioner"


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return SETUP


def outputs(kernel: Kernel, msg_id: str) -> list[tuple[str, str]]:
    """The cell's outputs in order: (message type, its text)."""
    shown: list[tuple[str, str]] = []
    for m in kernel.for_cell(msg_id):
        c: dict[str, Any] = m["content"]
        if m["msg_type"] == "stream":
            shown.append(("stream", c["text"]))
        elif m["msg_type"] in ("display_data", "execute_result"):
            shown.append((m["msg_type"], c["data"].get("text/plain", "")))
        elif m["msg_type"] == "error":
            shown.append(("error", f"{c['ename']}: {c['evalue']}"))
    return shown


def test_listings_in_the_middle_of_a_cell_show_once_each_in_order(kernel: Kernel) -> None:
    cell = kernel.execute("%mcp servers\n%mcp tools prov\nprint(1)")
    shown = outputs(kernel, cell)
    assert [kind for kind, _ in shown] == ["display_data", "display_data", "stream"], shown
    servers, tools, printed = (text for _, text in shown)
    assert servers.splitlines()[0].split() == [
        "name",
        "server",
        "kind",
        "target",
        "protocol",
        "/",
        "state",
        "active",
        "flows",
    ]  # "served at" is empty (no server is served here), and a listing hides its empty columns
    assert servers.splitlines()[1].split()[:3] == ["prov", "Provisioner", "inproc"]
    assert tools.splitlines()[0].split()[:2] == ["server", "tool"]
    assert [line.split()[:2] for line in tools.splitlines()[1:]] == [["prov", "provision"]]
    assert printed == "1\n"


def test_a_listing_as_the_last_line_shows_once(kernel: Kernel) -> None:
    shown = outputs(kernel, kernel.execute("%mcp tools prov"))
    assert [kind for kind, _ in shown] == ["display_data"], shown  # shown by the magic; the displayhook adds nothing
    assert shown[0][1].splitlines()[1].split()[:2] == ["prov", "provision"]


def test_a_bound_listing_is_shown_and_kept_as_data(kernel: Kernel) -> None:
    shown = outputs(kernel, kernel.execute("x = %mcp servers"))
    assert [kind for kind, _ in shown] == ["display_data"], shown
    probe = outputs(kernel, kernel.execute("print(x.columns[0], [row[0] for row in x.rows])"))
    assert probe == [("stream", "name ['prov']\n")]
    again = outputs(kernel, kernel.execute("x"))  # a later cell that asks for the value shows it again
    assert [kind for kind, _ in again] == ["display_data"] and again[0][1] == shown[0][1]


def test_trace_and_roots_in_the_middle_of_a_cell(kernel: Kernel) -> None:
    cell = kernel.execute(
        "%mcp call prov.provision name=a --answer region=eu-west-1\n%mcp trace\n%mcp roots\nprint('end')"
    )
    shown = outputs(kernel, cell)
    kinds = [kind for kind, _ in shown]
    assert kinds[-3:] == ["display_data", "display_data", "stream"], shown
    assert "tools/call" in shown[-3][1] and shown[-2][1].startswith("No roots are offered") and shown[-1][1] == "end\n"


def test_a_change_shows_its_confirmation_only_as_the_last_line(kernel: Kernel) -> None:
    cell = kernel.execute(
        "def f(p):\n    return 'x'\n%mcp model add a callable f\n%mcp model add b callable f\n%mcp model list\n%mcp model remove a\n%mcp model remove b"
    )
    shown = outputs(kernel, cell)
    assert [kind for kind, _ in shown] == ["display_data", "display_data"], (
        shown
    )  # the asked-for list, then the last line's value
    assert [line.split()[0] for line in shown[0][1].splitlines()[2:]] == ["*", "a", "b"]
    assert [line.split()[0] for line in shown[1][1].splitlines()[2:]] == ["*"]


def test_connect_names_the_server_by_its_own_name(kernel: Kernel) -> None:
    said = outputs(
        kernel,
        kernel.execute(
            "%mcp connect modern --protocol 2026-07-28 mcp_notebook.demo:demo\n%mcp connect legacy --protocol legacy mcp_notebook.demo:demo"
        ),
    )
    text = "".join(t for kind, t in said if kind == "stream")
    assert [kind for kind, _ in said] == ["stream"] * len(said), said
    assert text == (
        "Connected 'modern' to demo at mcp_notebook.demo:demo (protocol 2026-07-28).\n"
        "Connected 'legacy' to demo at mcp_notebook.demo:demo (protocol 2025-11-25).\n"
    )
