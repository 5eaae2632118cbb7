"""Issue 11 item 15: ``{expr}`` in a ``%mcp`` line is expanded like in ``!`` commands, JSON is left alone.

Issue 36 items 2 and 5: ``{expr}`` reads the caller's frame (a function's locals, a comprehension's
variable, the cell's own names in an awaited line), and nothing inside ``'...'`` is expanded, so a
JSON value in single quotes (nested or not) arrives as typed.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.mcpserver import MCPServer

from mcp_notebook.magics.line_expand import expand_braces, line_word, strip_comment, typed_word

NS: dict[str, Any] = {"sys": sys, "name": "orders", "n": 3, "spaced": "/tmp/my dir/python"}


@pytest.mark.parametrize(("line", "expanded"), [
    ("connect demo -- {sys.executable} -m mcp_notebook.demo demo", f"connect demo -- {sys.executable} -m mcp_notebook.demo demo"),
    ("call prov.provision name={name} count={n + 1}", "call prov.provision name=orders count=4"),
    ("connect x -- {spaced} server.py", "connect x -- '/tmp/my dir/python' server.py"),
    ('call a.b text="hello {name}"', 'call a.b text="hello orders"'),
    ("""call a.b --answers '{"region": "us-east-1"}' name={name}""", """call a.b --answers '{"region": "us-east-1"}' name=orders"""),
    ("""call a.b --answers '{"a":1}'""", """call a.b --answers '{"a":1}'"""),
    ("call a.b tags={'x', 'y'} text={undefined_name}", "call a.b tags={'x', 'y'} text={undefined_name}"),
    ("call a.b text={{name}}", "call a.b text={name}"),
    ('call a.b text="{{name}} {name}"', 'call a.b text="{name} orders"'),
    # inside '...' nothing is expanded, {{ and }} included: JSON passes as typed, nested or not
    ("""call a.b --json '{"values": {"id": 2}}'""", """call a.b --json '{"values": {"id": 2}}'"""),
    ("""call a.b --json '{"a": {"b": {"c": [{}]}}}' n={n}""", """call a.b --json '{"a": {"b": {"c": [{}]}}}' n=3"""),
    ("call a.b text='{name}' other={name}", "call a.b text='{name}' other=orders"),
    ("call a.b text='{{name}}'", "call a.b text='{{name}}'"),
    ("""call a.b text='it'"'"'s {name}'""", """call a.b text='it'"'"'s {name}'"""),
    ("call a.b text='open {name}", "call a.b text='open {name}"),
    ("call a.b text={name}'{n}'{n}", "call a.b text=orders'{n}'3"),
    ("call a.b price=$5 text={", "call a.b price=$5 text={"),
    ("call a.b key=value", "call a.b key=value"),
])  # fmt: skip
def test_expand(line: str, expanded: str) -> None:
    assert expand_braces(line, NS) == expanded


def test_expansion_in_a_real_shell_reaches_the_server() -> None:
    from ..conftest import get_shell

    ip: InteractiveShell = get_shell()
    ip.user_ns["who"] = "braces"
    ip.run_line_magic("mcp", "connect expand_demo mcp_notebook.demo:demo")
    try:
        flow = ip.run_line_magic("mcp", "call expand_demo.echo text={who.upper()}")
        assert flow.result().content[0].text == "BRACES"
        flow = ip.run_line_magic("mcp", """call expand_demo.echo --json '{"text": "{x}"}'""")
        assert flow.result().content[0].text == "{x}"  # inside a JSON object nothing is expanded
    finally:
        ip.run_line_magic("mcp", "disconnect expand_demo")


# ---------------------------------------------------------------------- in a real shell: the caller's frame, JSON as typed
def typed_server() -> MCPServer[Any]:
    """A real server whose one tool gives back the object it received, as JSON."""
    server: MCPServer[Any] = MCPServer("typed")

    @server.tool()
    def take(values: dict[str, Any]) -> str:
        return json.dumps(values, sort_keys=True)

    return server


@pytest.fixture(scope="module")
def shell() -> Iterator[InteractiveShell]:
    """The test shell with the demo server (``add``, ``echo``) and ``typed.take`` connected."""
    from ..conftest import get_shell

    ip: InteractiveShell = get_shell()
    ip.user_ns["typed_server"] = typed_server()
    ip.run_line_magic("mcp", "connect frame_demo mcp_notebook.demo:demo")
    ip.run_line_magic("mcp", "connect typed typed_server")
    yield ip
    ip.run_line_magic("mcp", "disconnect frame_demo")
    ip.run_line_magic("mcp", "disconnect typed")


def ran(ip: InteractiveShell, cell: str) -> None:
    result = ip.run_cell(cell)
    assert result.success, result.error_in_exec or result.error_before_exec


def test_a_line_in_a_function_reads_its_locals(shell: InteractiveShell) -> None:
    """Issue 36 item 2: ``{i}`` in a function's ``%mcp`` line is the function's ``i``; the global ``i`` went out silently."""
    ran(shell, "i = 99\ndef f(i):\n    x = %mcp call frame_demo.add a={i} b=0\n    return x\n_r = f(2)")
    assert shell.user_ns["_r"].result().structured_content == {"result": 2}  # what the server added
    # a comprehension's own variable, and a function's local seen from a comprehension in the expression
    ran(shell, "_rs = [get_ipython().run_line_magic('mcp', 'call frame_demo.add a={j} b=0') for j in range(3)]")
    assert [flow.result().structured_content["result"] for flow in shell.user_ns["_rs"]] == [0, 1, 2]
    ran(
        shell,
        "def h(k):\n    x = %mcp call frame_demo.add a={sum(k * m for m in (1, 2))} b={i}\n    return x\n_r = h(5)",
    )
    assert shell.user_ns["_r"].result().structured_content == {"result": 15 + 99}  # locals first, then globals


def test_an_awaited_line_reads_the_cell_s_names_not_the_helper_s(shell: InteractiveShell) -> None:
    """The awaiting rewrite (``cell_await``) runs the line from a helper whose own names are ``line``, ``magic`` and ``bind``."""
    from IPython.core.inputtransformer2 import TransformerManager

    from mcp_notebook.magics.cell_await import HELPER, rewrite

    cell = "line = 5\nmagic = 7\nbind = 3\n_r = %mcp call frame_demo.add a={line} b={magic * bind}"
    python = TransformerManager().transform_cell(cell)
    assert f"(await {HELPER}.line(" in "".join(rewrite(python.splitlines(keepends=True)))
    ran(shell, cell)
    assert shell.user_ns["_r"].structured_content == {"result": 5 + 21}


@pytest.mark.parametrize("typed", [
    {"id": 2},
    {"a": {"b": {"c": [{"d": None}, {}]}}, "e": "}}{{"},
    {"text": "{x}", "also": "{{x}}", "it's": "{__import__('os').getcwd()}"},
])  # fmt: skip
def test_json_in_single_quotes_arrives_as_typed(shell: InteractiveShell, typed: dict[str, Any]) -> None:
    """Issue 36 item 5: ``--json '{"values": {"id": 2}}'`` failed (``}}`` became ``}``); nothing in '...' is expanded."""
    shell.user_ns["x"] = "EXPANDED"
    text = json.dumps({"values": typed})
    ran(shell, f"_r = %mcp call typed.take --json {shlex.quote(text)}")
    assert json.loads(shell.user_ns["_r"].content[0].text) == typed  # what the server received
    ran(shell, '_r = %mcp call frame_demo.echo text="{x} {{x}}"')  # inside "..." and bare words {expr} still expands
    assert shell.user_ns["_r"].content[0].text == "EXPANDED {x}"


@pytest.mark.parametrize(("line", "kept"), [
    ("connect prov provisioner                        # a server object", "connect prov provisioner"),
    ("call a.b color=#fff  # the colour", "call a.b color=#fff"),
    ('call a.b text="a # b" # c', 'call a.b text="a # b"'),
    ("call a.b text='it''s #1'", "call a.b text='it''s #1'"),
    (r"call a.b text=\#x", r"call a.b text=\#x"),
    ("# all comment", ""),
])  # fmt: skip
def test_strip_comment(line: str, kept: str) -> None:
    from mcp_notebook.magics.line_expand import strip_comment

    assert strip_comment(line) == kept


# ---------------------------------------------------------------------- line_word: server text as one word of a line
BRACES = '{[__import__("os").system("touch F")]and""}'


@pytest.mark.parametrize(("text", "word"), [
    ("eu-west-1", "eu-west-1"),
    ("eu-west-1" + BRACES, """'eu-west-1{[__import__("os").system("touch F")]and""}'"""),
    ('{"name":"n0"}', """'{"name":"n0"}'"""),  # as a person writes it (it was '{{"name":"n0"}}')
    ("it's {x}", """'it'"'"'s {x}'"""),
    ("new zealand english", "'new zealand english'"),
    ("it's", """'it'"'"'s'"""),
    ("#fff", "'#fff'"),
    ("}", "'}'"),
    ("", "''"),
])  # fmt: skip
def test_line_word(text: str, word: str) -> None:
    assert line_word(text) == word


def _reads_back(word: str, ns: dict[str, Any]) -> list[str]:
    """The words the magic reads from a line holding ``word``: comment stripped, braces expanded, split."""
    from mcp_notebook.magics.magics import MCPMagics

    return MCPMagics._split(expand_braces(strip_comment(word), ns))


@settings(max_examples=500, deadline=None)
@given(
    st.text(st.characters(codec="utf-8")).filter(str.isprintable)
    | st.text(alphabet="{}'\"\\# x=#$")
    | st.builds(
        lambda a, b: a + BRACES + b,
        st.text(max_size=5).filter(str.isprintable),
        st.text(max_size=5).filter(str.isprintable),
    )
)
def test_line_word_reads_back_as_the_text(text: str) -> None:
    ns: dict[str, Any] = {"__builtins__": __builtins__, "x": "EXPANDED"}
    assert shlex.split(expand_braces(line_word(text), ns)) == [text]
    assert _reads_back(line_word(text), ns) == [text]
    assert _reads_back(f"call a.b key={line_word(text)}  # note", ns) == ["call", "a.b", f"key={text}"]
    assert typed_word(line_word(text)) == text


def test_line_word_never_runs_the_text(tmp_path: Path) -> None:
    marker = tmp_path / "F"
    text = "eu-west-1" + BRACES.replace("touch F", f"touch {marker}")
    ns: dict[str, Any] = {}
    assert expand_braces(text, ns) == "eu-west-1''" and marker.exists()  # what the raw text does in a line: it runs
    marker.unlink()
    assert shlex.split(expand_braces(f"call evil.deploy region={line_word(text)}", ns)) == [
        "call",
        "evil.deploy",
        f"region={text}",
    ]
    assert not marker.exists()


@pytest.mark.parametrize(("fragment", "text"), [
    ("eu-", "eu-"),
    ("'new zea", "new zea"),
    ('"it', "it"),
    ("'a{{b", "a{{b"),  # inside '...' as typed
    ("a{{b", "a{b"),
    ('"a{{b', "a{b"),
    ("{x}", "{x}"),  # never evaluated at Tab
    ("a\\", "a\\"),
])  # fmt: skip
def test_typed_word(fragment: str, text: str) -> None:
    assert typed_word(fragment) == text
