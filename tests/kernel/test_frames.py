"""Into pandas in one step, and a bound result that reads well, in a real kernel (issue 37, items 1, 4 and 6).

``df = %mcp call SERVER.TOOL ... --frame`` binds a DataFrame of the result's records; a listing bound
by ``x = %mcp tools`` (servers, prompts, resources, flows, tasks) converts with ``pandas.DataFrame(x)``;
``r = %mcp call`` binds the SDK's result with a short repr and the report's HTML; ``%mcp flows`` names
a flow's cell by its number and first line.
"""

from __future__ import annotations

import ast
from typing import Any

import pytest

from ..support.kernel_harness import Kernel

MODES = [pytest.param(True, id="interactive"), pytest.param(False, id="headless")]
SETUP = "%load_ext mcp_notebook\nfrom mcp_notebook.demo import demo\n%mcp connect demo demo\nimport pandas as pd"


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return SETUP


def _of(kernel: Kernel, cell: str, *kinds: str) -> list[dict[str, Any]]:
    return [m["content"] for m in kernel.for_cell(cell) if m["msg_type"] in kinds]


def _printed(kernel: Kernel, cell: str) -> str:
    return "".join(c["text"] for c in _of(kernel, cell, "stream"))


def _said(kernel: Kernel, cell: str) -> str:
    """What the cell wrote on stderr (a ``UsageError`` is shown there, as IPython shows it, without a traceback)."""
    return "".join(c["text"] for c in _of(kernel, cell, "stream") if c["name"] == "stderr")


def _run(kernel: Kernel, code: str, cell_id: str, interactive: bool = False) -> str:
    """Execute as JupyterLab does: the cell's id in the request's metadata."""
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {}}
    content |= {"allow_stdin": interactive, "stop_on_error": False}
    msg = kernel.kc.session.msg("execute_request", content, metadata={"cellId": cell_id})
    kernel.kc.shell_channel.send(msg)
    kernel.wait_idle(msg["header"]["msg_id"])
    return str(msg["header"]["msg_id"])


@pytest.mark.parametrize("interactive", MODES)
def test_frame_binds_a_dataframe_of_the_records(kernel: Kernel, interactive: bool) -> None:
    cell = kernel.execute(
        "df = %mcp call demo.inventory --frame\n"
        "print(type(df).__module__.split('.')[0], type(df).__name__, list(df.columns), df.shape)\n"
        "print(df.to_dict(orient='records')[2])",
        allow_stdin=interactive,
    )
    assert _printed(kernel, cell).splitlines() == [
        "pandas DataFrame ['fruit', 'kilos', 'price', 'organic', 'note'] (3, 5)",
        "{'fruit': 'plum', 'kilos': 0.0, 'price': 0.3, 'organic': False, 'note': 'back on Monday'}",
    ]


def test_a_bare_frame_line_shows_the_report_and_the_frame(kernel: Kernel) -> None:
    cell = kernel.execute("%mcp call demo.inventory --frame", allow_stdin=True)
    (result,) = _of(kernel, cell, "execute_result")  # the frame is the cell's value, shown as pandas shows it
    assert result["data"]["text/html"].count("<tr") == 4 and "plum" in result["data"]["text/html"]
    assert not [c for c in _of(kernel, cell, "display_data") if "plum" in c["data"].get("text/html", "")]  # one report
    probe = kernel.execute("print(type(_).__name__, _.shape)")
    assert _printed(kernel, probe) == "DataFrame (3, 5)\n"


@pytest.mark.parametrize("interactive", MODES)
def test_a_result_that_is_no_table_is_refused_naming_its_shape(kernel: Kernel, interactive: bool) -> None:
    cell = kernel.kc.execute("notframed = %mcp call demo.add a=2 b=3 --frame -o kept", allow_stdin=interactive)
    kernel.wait_idle(cell)
    assert _said(kernel, cell) == (
        "UsageError: demo.add's result is not a table: a number; a table is a list of records (objects) (the call ran: "
        "its report is above; without --frame the line binds the result itself, and -o VAR keeps it beside a frame)\n"
    )
    probe = kernel.execute("print(kept.structured_content, 'notframed' in dir())")
    assert _printed(kernel, probe) == "{'result': 5} False\n"  # the result kept by -o; nothing bound to notframed


def test_frame_with_background_is_refused_before_the_call(kernel: Kernel) -> None:
    cell = kernel.kc.execute("%mcp call demo.echo text=zzqq --frame --background", allow_stdin=True)
    kernel.wait_idle(cell)
    assert _said(kernel, cell).startswith("UsageError: --frame needs the call's result in this cell")
    assert "zzqq" not in kernel.text_of_cell(cell)  # nothing was called


def test_frame_from_python(kernel: Kernel) -> None:
    cell = kernel.execute(
        "import mcp_notebook\nr = %mcp call demo.inventory\nprint(mcp_notebook.frame(r).equals(pd.DataFrame(r.structured_content['result'])))"
    )
    assert _printed(kernel, cell) == "True\n"


def test_bound_listings_convert_with_pandas_and_keep_their_columns(kernel: Kernel) -> None:
    cell = kernel.execute(
        "import mcp_notebook\n"
        "for line in ['tools demo', 'servers', 'prompts demo', 'resources demo', 'flows', 'tasks']:\n"
        "    x = get_ipython().run_line_magic('mcp', line)\n"
        "    f = pd.DataFrame(x)\n"
        "    g = mcp_notebook.frame(x)\n"
        "    print(line, '|', list(g.columns) == x.columns, len(g) == len(x.rows), f.equals(g) if x.rows else f.empty)"
    )
    printed = _printed(kernel, cell).splitlines()
    assert [line for line in printed if "|" in line] == [
        f"{line} | True True True"
        for line in ["tools demo", "servers", "prompts demo", "resources demo", "flows", "tasks"]
    ]
    probe = kernel.execute(
        "x = %mcp tools demo\nf = pd.DataFrame(x)\n"
        "print(list(f.columns) == x.columns, f.loc[f.tool == 'add', 'server'].tolist())"
    )
    assert _printed(kernel, probe) == "True ['demo']\n"


@pytest.mark.parametrize("interactive", MODES)
def test_a_bound_result_reads_well_and_stays_the_sdks(kernel: Kernel, interactive: bool) -> None:
    cell = kernel.execute(
        "import mcp.types\nr = %mcp call demo.add a=2 b=3\n"
        "print(repr(r)); print(r); print([r])\n"
        "print(isinstance(r, mcp.types.CallToolResult), type(r).__name__, r.structured_content, r.content[0].text)\n"
        "print(r == mcp.types.CallToolResult.model_validate(r.model_dump()))",
        allow_stdin=interactive,
    )
    assert _printed(kernel, cell).splitlines()[-5:] == [
        "CallToolResult: 5",
        "CallToolResult: 5",
        "[CallToolResult: 5]",
        "True CallToolResult {'result': 5} 5",
        "True",
    ]
    shown = kernel.execute("r")  # later, the value shows as the report shows a result
    (data,) = [c["data"] for c in _of(kernel, shown, "display_data", "execute_result")]
    assert data["text/plain"] == "5"
    assert 'class="mcpnb"' in data["text/html"] and "CallToolResult" not in data["text/html"]


def test_flows_names_the_cell_by_its_number_and_first_line(kernel: Kernel) -> None:
    started = _run(
        kernel, "# provision\n%mcp call demo.provision_db name=cellnamed --background", "3f2a-cell-uuid", True
    )
    assert not _of(kernel, started, "error")
    kernel.wait_for(lambda: kernel.find_widgets("ButtonModel", description="Accept"), what="the flow to wait")
    count = _of(kernel, started, "execute_input")[0]["execution_count"]
    listing = kernel.execute("x = %mcp flows\nprint([row[1] for row in x.rows])")
    (cells,) = [ast.literal_eval(line) for line in _printed(kernel, listing).splitlines() if line.startswith("[")]
    assert f"[{count}] # provision" in cells
    assert "3f2a-cell-uuid" not in kernel.text_of_cell(listing)
    kernel.execute("%mcp forget --all")
