"""Issue 36 items 2, 5 and 6 in a real kernel: what a ``%mcp`` line sends is what the person wrote.

* ``{expr}`` reads the caller's frame: a function's locals (not the notebook's global of that name),
  and in a top-level line (which the kernel awaits, ``cell_await``) the cell's own names, not the
  awaiting helper's;
* JSON in single quotes arrives as typed, nested objects included;
* ``NaN`` / ``Infinity`` are refused with what to write instead, and the server gets nothing.

The values are the ones the real servers answer with: the demo's ``add`` and ``echo``, and an
in-kernel server that records each call.
"""

from __future__ import annotations

import json

import pytest

from ..support.kernel_harness import Kernel

SETUP = """\
%load_ext mcp_notebook
import json
from typing import Any
from mcp.server.mcpserver import MCPServer
rec_server = MCPServer("rec")
rec_calls = []

@rec_server.tool()
def keep(value: Any = None) -> str:
    rec_calls.append(value)
    return json.dumps(value)

%mcp connect demo mcp_notebook.demo:demo
%mcp connect rec rec_server
"""


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return SETUP


def printed(kernel: Kernel, code: str, allow_stdin: bool = False) -> str:
    """The cell's printed lines that start with ``=>`` (the cell also shows the call's report)."""
    cell = kernel.execute(code, allow_stdin=allow_stdin)
    return "\n".join(line for line in kernel.text_of_cell(cell).splitlines() if line.startswith("=>"))


def test_a_function_s_line_reads_its_locals(kernel: Kernel) -> None:
    code = "i = 99\ndef f(i):\n    x = %mcp call demo.add a={i} b=0\n    return x\nprint('=>', f(2).result().structured_content)"
    assert printed(kernel, code) == "=> {'result': 2}"  # the global i (99) went out, silently


@pytest.mark.parametrize("allow_stdin", [True, False], ids=["interactive", "headless"])
def test_an_awaited_line_reads_the_cell_s_names(kernel: Kernel, allow_stdin: bool) -> None:
    code = "line = 5\nmagic = 7\nr = %mcp call demo.add a={line} b={magic}\nprint('=>', r.structured_content)"
    assert printed(kernel, code, allow_stdin) == "=> {'result': 12}"


def test_nested_json_in_single_quotes_arrives_as_typed(kernel: Kernel) -> None:
    nested = {"values": {"id": 2, "tags": {"a": [1, {"b": None}]}}}
    line = f"r = %mcp call demo.echo --json '{json.dumps({'text': json.dumps(nested)})}'"
    assert "}}" in line  # what broke: }} became }
    assert printed(kernel, f"{line}\nprint('=>', r.content[0].text)", allow_stdin=True) == f"=> {json.dumps(nested)}"


@pytest.mark.parametrize(("line", "where", "word"), [
    ("%mcp call rec.keep value=NaN", "argument value='NaN': ", "NaN"),
    ("""%mcp call rec.keep --json '{"value": [1, {"x": -Infinity}]}'""", "--json: ", "-Infinity"),
])  # fmt: skip
def test_non_finite_numbers_are_refused_and_nothing_is_sent(kernel: Kernel, line: str, where: str, word: str) -> None:
    kernel.execute("rec_calls.clear()")
    cell = kernel.execute(line, allow_stdin=True, wait=False)
    kernel.wait_idle(cell)
    shown = kernel.text_of_cell(cell)  # IPython shows a UsageError as one line on stderr, no traceback
    assert f"UsageError: {where}{word} is not a finite number, and JSON carries only finite ones" in shown, shown
    assert printed(kernel, "print('=>', rec_calls)") == "=> []"
