"""A server author's regression test in a real kernel: ``%%mcp server``, ``%mcp trace --save``, ``%mcp replay``.

nbclient runs a notebook as nbval and papermill do: the server is defined in a cell, called with
preset answers, its flow saved; a replay against the same server passes its cell; the author edits
the server (another wording, another result) and the replay cell fails with what changed, which is
what makes a notebook run (nbval, papermill, CI) fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbclient
import nbformat
import pytest

SERVER = """%%mcp server shop
from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from pydantic import BaseModel, Field
from typing import Annotated

class Size(BaseModel):
    size: str = Field(description="S, M or L")

async def ask_size(item: str) -> Elicit[Size]:
    return Elicit(f"Which size of {{item}}?", Size)

shop = MCPServer("shop")

@shop.tool()
async def order(item: str, size: Annotated[Size, Resolve(ask_size)]) -> str:
    return f"{{item}} ({{size.size}}) costs {price}"
"""


def test_a_replay_cell_passes_on_the_same_server_and_fails_the_run_when_it_changed(tmp_path: Path) -> None:
    cells = [
        "%load_ext mcp_notebook",
        SERVER.format(price=10),
        "%mcp call shop.order item=shirt --answer size=M",
        "%mcp trace --save orders.json --keep-answers",
        "%mcp replay orders.json -o same",
        "print(same.same, same.differences)",
        SERVER.format(price=12),
        "%mcp replay orders.json",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    with pytest.raises(nbclient.exceptions.CellExecutionError) as raised:
        client.execute()
    assert raised.value.ename == "FlowError"
    assert "Replayed shop.order from orders.json: 1 difference" in raised.value.evalue
    assert '"text": "shirt (M) costs 12"' in str(raised.value)

    def text(index: int) -> str:
        return "".join(o.get("text", "") for o in nb.cells[index].outputs if o.output_type == "stream")

    [report] = [o for o in nb.cells[2].outputs if o.output_type == "display_data"]
    assert "shirt (M) costs 10" in report.data["text/plain"]
    assert (
        text(4).strip() == "Replayed shop.order from orders.json: the same (2 requests, 1 question, the same result)."
    )
    assert text(5).strip() == "True []"
    [error] = [o for o in nb.cells[7].outputs if o.output_type == "error"]
    assert error.ename == "FlowError" and "the result changed:" in error.evalue
    saved = json.loads((tmp_path / "orders.json").read_text())
    assert saved["replay"]["asked"][0]["answer"]["content"] == {"size": "M"}
