"""Issue 11 item 15: ``{expr}`` in a ``%mcp`` line is expanded like in ``!`` commands, JSON is left alone."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from mcp_notebook.line_expand import expand_braces

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
    from .conftest import get_shell

    ip: Any = get_shell()
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
    from mcp_notebook.line_expand import strip_comment

    assert strip_comment(line) == kept
