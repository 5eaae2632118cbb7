"""Issue 36 item 6: ``NaN``, ``Infinity`` and ``-Infinity`` typed by a person never reach a server as ``null``.

Python's ``json`` reads them and the SDK writes a non-finite float as ``null``, so ``a=NaN`` passed
every check and the server got ``null``. In a real IPython shell against real servers: each way a
person types a JSON value (``key=value``, ``--json``, ``--answers``, ``--answer``, a ``%%mcp call``
body) is refused with what to write instead, and the server receives nothing; the text ``"NaN"``
still goes where text is meant.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.mcpserver import MCPServer

REFUSED = "is not a finite number, and JSON carries only finite ones (the server would get null)"
WRITE = "write a finite number, or null, or"

received: list[Any] = []  # what the tools below were called with


def recording_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("rec")

    @server.tool()
    def keep(value: Any = None) -> str:  # no type: the value is read as JSON when it is JSON
        received.append(value)
        return json.dumps(value)

    @server.tool()
    def ratio(x: float) -> str:
        received.append(x)
        return json.dumps(x)

    @server.tool()
    def take(values: dict[str, Any]) -> str:
        received.append(values)
        return json.dumps(values)

    return server


@pytest.fixture(scope="module", autouse=True)
def servers(ip: InteractiveShell) -> None:
    """The recording server and the demo, connected in the shared shell (``ip`` disconnects them after the module)."""
    ip.user_ns["rec_server"] = recording_server()
    ip.run_line_magic("mcp", "connect rec rec_server")
    ip.run_line_magic("mcp", "connect nf_demo mcp_notebook.demo:demo")


def failure(ip: InteractiveShell, cell: str) -> str:
    received.clear()
    ran = ip.run_cell(cell)
    assert ran.error_in_exec is not None, f"{cell!r} did not fail; the server got {received}"
    assert received == [], "the server was called"
    return str(ran.error_in_exec)


@pytest.mark.parametrize(("cell", "where", "word"), [
    ("%mcp call rec.keep value=NaN", "argument value='NaN': ", "NaN"),
    ("%mcp call rec.keep value='[1, -Infinity]'", "argument value='[1, -Infinity]': ", "-Infinity"),
    ("%mcp call rec.ratio x=Infinity", "argument x='Infinity': ", "Infinity"),
    ("%mcp call rec.ratio x=1e999", "argument x='1e999': ", "1e999"),
    ("""%mcp call rec.take --json '{"values": {"id": NaN}}'""", "--json: ", "NaN"),
    ("""%mcp call rec.keep --json '{"value": Infinity}'""", "--json: ", "Infinity"),
    ('%%mcp call rec.take\n{"values": {"a": [NaN]}}\n', "the cell body: ", "NaN"),
])  # fmt: skip
def test_a_non_finite_argument_is_refused_before_anything_is_sent(
    ip: InteractiveShell, cell: str, where: str, word: str
) -> None:
    assert failure(ip, cell) == f'{where}{word} {REFUSED}: {WRITE} "{word}" in double quotes for the text'


def test_a_yaml_body_s_nan_is_refused_too(ip: InteractiveShell) -> None:
    pytest.importorskip("yaml")
    assert failure(ip, "%%mcp call rec.take\nvalues:\n  a: .nan\n").startswith(f"the cell body: nan {REFUSED}")


def test_form_answers_refuse_nan(ip: InteractiveShell) -> None:
    """``--answers`` JSON is refused at the line; ``--answer ratio=NaN`` (a number field) when the form asks."""
    message = failure(
        ip, """%mcp call nf_demo.ask_everything --answers '{"name": "n", "ratio": NaN}' --accept-defaults"""
    )
    assert message.startswith(f"--answers: NaN {REFUSED}")
    ran = ip.run_cell("%mcp call nf_demo.ask_everything --answer name=n --answer ratio=NaN --accept-defaults")
    assert ran.error_in_exec is not None
    assert f"ratio: NaN {REFUSED}: {WRITE}" in str(ran.error_in_exec)


def test_the_text_nan_still_goes_where_text_is_meant(ip: InteractiveShell) -> None:
    received.clear()
    ran = ip.run_cell("""_nf = %mcp call rec.keep value='"NaN"'""")
    assert ran.error_in_exec is None, ran.error_in_exec
    assert received == ["NaN"]
    ran = ip.run_cell("_nf = %mcp call nf_demo.ask_everything --answer name=NaN --answer ratio=0.25 --accept-defaults")
    assert ran.error_in_exec is None, ran.error_in_exec
    answered = json.loads(ip.user_ns["_nf"].content[0].text)
    assert (answered["name"], answered["ratio"]) == ("NaN", 0.25)  # a text field takes NaN as typed
