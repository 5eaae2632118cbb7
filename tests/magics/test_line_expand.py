"""Issue 11 item 15: ``{expr}`` in a ``%mcp`` line is expanded like in ``!`` commands, JSON is left alone."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell

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
    ("eu-west-1" + BRACES, """'eu-west-1{{[__import__("os").system("touch F")]and""}}'"""),
    ("new zealand english", "'new zealand english'"),
    ("it's", """'it'"'"'s'"""),
    ("#fff", "'#fff'"),
    ("}", "'}}'"),
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
    ("'a{{b", "a{b"),
    ("{x}", "{x}"),  # never evaluated at Tab
    ("a\\", "a\\"),
])  # fmt: skip
def test_typed_word(fragment: str, text: str) -> None:
    assert typed_word(fragment) == text
