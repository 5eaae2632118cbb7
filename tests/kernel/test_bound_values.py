"""What a line binds, in a real kernel (issue 37, item 1): ``x = %mcp flows`` with a received record, and ``-o VAR``.

``x = %mcp flows`` binds the listing as every listing does (``x.columns``, ``x.rows``,
``pandas.DataFrame(x)``), also when records someone else saved are listed with their reviews, and
shows the table once. ``-o VAR`` on an interactive call binds what ``r = %mcp call`` binds: the SDK's
result as its readable subclass (one short repr), in an awaited cell and with ``--background``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import nbformat
import pytest

from ..support.kernel_harness import Kernel, running_kernel

SETUP = "%load_ext mcp_notebook\nfrom mcp_notebook.demo import demo\n%mcp connect demo demo\nimport pandas as pd"


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    work = tmp_path_factory.mktemp("bound")
    question = {"method": "elicitation/create", "params": {"message": "Go on?", "requestedSchema": {"type": "object"}}}
    record = {
        "v": 1, "id": "rec00001", "cell_id": None, "server": {"name": "demo", "target": "demo"},
        "method": "tools/call", "name": "add", "arguments": {}, "round": 1, "request_state": None,
        "pending": {"go": question}, "updated": "2026-11-30T10:00:00Z",
    }  # fmt: skip
    nb = nbformat.v4.new_notebook()
    nb.metadata["mcp_notebook"] = {"flows": {"rec00001": record}}  # saved by someone else: no signature of ours
    nbformat.write(nb, str(work / "received.ipynb"))
    with running_kernel(str(work), SETUP, env={"JUPYTER_DATA_DIR": str(work / "data")}) as kernel:
        yield kernel


def _printed(k: Kernel, cell: str) -> str:
    return "".join(m["content"]["text"] for m in k.for_cell(cell) if m["msg_type"] == "stream")


def test_flows_with_a_received_record_binds_the_listing(k: Kernel) -> None:
    cell = k.execute(
        "x = %mcp flows --from received.ipynb\n"
        "print(repr((type(x).__name__, x.columns[:3], [row[0] for row in x.rows], pd.DataFrame(x).shape)))"
    )
    printed = _printed(k, cell)
    assert "did not come from you" in printed  # the review of the received record is shown
    name, columns, ids, shape = ast.literal_eval(printed.strip().splitlines()[-1])
    assert (name, columns, ids, shape) == ("Table", ["id", "cell", "server"], ["rec00001"], (1, 8))
    tables = [
        m
        for m in k.for_cell(cell)
        if m["msg_type"] in ("display_data", "execute_result")
        and "flows waiting for input" in m["content"]["data"].get("text/plain", "")
    ]
    assert len(tables) == 1  # the table once, before the review

    last = k.execute("%mcp flows --from received.ipynb")  # the line as a cell's last: still one table
    assert [m["msg_type"] for m in k.for_cell(last) if "flows waiting" in str(m["content"].get("data", ""))] == [
        "display_data"
    ]


@pytest.mark.parametrize("background", [False, True], ids=["awaited", "background"])
def test_o_var_on_an_interactive_call_binds_the_readable_result(k: Kernel, background: bool) -> None:
    var = "bg" if background else "kept"
    flag = " --background" if background else ""
    k.execute(f"r = %mcp call demo.add a=2 b=3 -o {var}{flag}", allow_stdin=True)
    probe = f"print(repr((type({var}).__module__, repr({var}), {var}.structured_content, {var} == r)))"
    if background:  # bound on the kernel thread once the flow ends: r is the Flow here
        probe = f"r = r.result()\nimport time\nfor _ in range(100):\n    if '{var}' in dir(): break\n    time.sleep(0.1)\n{probe}"
    cell = k.execute(probe)
    assert ast.literal_eval(_printed(k, cell).strip()) == (
        "mcp_notebook.notebook.results",
        "CallToolResult: 5",
        {"result": 5},
        True,
    )
