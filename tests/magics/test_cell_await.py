"""``cell_await``: which lines of a cell become awaited calls, in a real IPython shell's transformers.

The kernel-side behaviour (forms live while the cell waits, Run All in order, Interrupt) is in
``test_kernel_interactive.py``; this module checks the rewrite itself on what IPython produces.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.core.inputtransformer2 import TransformerManager
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.mcpserver import MCPServer

from mcp_notebook.magics.cell_await import HELPER, kernel_hears_comms_while_awaiting, rewrite

from ..conftest import get_shell, session_of


def transformed(cell: str) -> str:
    """The cell as IPython turns it into Python, then rewritten."""
    python = TransformerManager().transform_cell(cell)
    return "".join(rewrite(python.splitlines(keepends=True)))


def test_flow_lines_are_awaited_and_assignments_bind() -> None:
    out = transformed(
        "x = %mcp call demo.add a=1 b=2\n%mcp prompt demo.greet name=é\n%mcp read demo res://x\n%mcp resume 3f9c2a1b\n"
    )
    assert out.splitlines() == [
        f"x = (await {HELPER}.line('mcp', 'call demo.add a=1 b=2', bind=True))",
        f"(await {HELPER}.line('mcp', 'prompt demo.greet name=é', bind=False))",
        f"(await {HELPER}.line('mcp', 'read demo res://x', bind=False))",
        f"(await {HELPER}.line('mcp', 'resume 3f9c2a1b', bind=False))",
    ]
    ast.parse(out)  # a valid cell (top-level await is allowed by IPython's async cells)


def test_cell_magic_is_awaited_with_its_body() -> None:
    out = transformed('%%mcp call demo.add\n{"a": 1, "b": 2}\n')
    assert out.strip() == f"(await {HELPER}.cell('mcp', 'call demo.add', '{{\"a\": 1, \"b\": 2}}\\n', bind=False))"


def test_other_lines_and_function_bodies_stay_as_they_are() -> None:
    cell = "%mcp servers\n%mcp tools demo\ndef f():\n    %mcp call demo.add a=1 b=1\nclass C:\n    y = %mcp call demo.add\nz = [%mcp call demo.add]\n"
    python = TransformerManager().transform_cell(cell)
    assert "".join(rewrite(python.splitlines(keepends=True))) == python
    assert "await" not in python


def test_blocks_at_the_top_level_are_rewritten() -> None:
    out = transformed(
        "for i in range(2):\n    %mcp call demo.add a=1 b=1\ntry:\n    r = %mcp call demo.add\nexcept Exception:\n    pass\n"
    )
    assert out.count(f"(await {HELPER}.line(") == 2
    assert f"    r = (await {HELPER}.line('mcp', 'call demo.add', bind=True))" in out.splitlines()


def test_text_in_strings_does_not_trigger_a_rewrite() -> None:
    """Only IPython's own magic calls are rewritten, never a string that looks like one."""
    cell = "s = \"get_ipython().run_line_magic('mcp', 'call x')\"\nget_ipython().run_line_magic('mcp', 'call ' + s)\n"
    assert "".join(rewrite(cell.splitlines(keepends=True))) == cell


def test_a_syntax_error_is_left_to_ipython() -> None:
    cell = "get_ipython().run_line_magic('mcp', 'call x')\nif:\n"
    assert rewrite(cell.splitlines(keepends=True)) == cell.splitlines(keepends=True)


def test_this_venv_has_a_kernel_that_hears_clicks_while_awaiting() -> None:
    import ipykernel  # as in a kernel, where it is imported before any extension loads

    major, minor = (int(p) for p in ipykernel.__version__.split(".")[:2])
    assert kernel_hears_comms_while_awaiting() is ((major, minor) >= (7, 4))


# Every character str.splitlines() breaks at that Python does not (ast numbers lines at \n, \r\n, \r only).
SEPARATORS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
_TEXT = st.lists(st.sampled_from([*SEPARATORS, "a", " ", "é", "'", "%mcp call ctr.bump n=9"]), max_size=6).map("".join)
_LONG_TEXT = st.lists(st.sampled_from([*SEPARATORS, "\n", "\r\n", "\r", "b", "'"]), max_size=6).map("".join)
_MAGIC_TEXT = st.lists(st.sampled_from([*SEPARATORS, "x", " ", "é"]), max_size=4).map("".join)


@st.composite
def _statement(draw: st.DrawFn) -> tuple[str, str]:
    """One statement of a cell as IPython hands it on, and what the rewrite must make of it."""
    kind = draw(st.sampled_from(["string", "long string", "comment", "line", "assigned", "cell", "after ff", "in if"]))
    if kind == "string":
        text = f'"{draw(_TEXT)}"'
        return f"s = {text}", f"s = {text}"
    if kind == "long string":
        text = f'"""{draw(_LONG_TEXT)}"""'
        return f"s = {text}", f"s = {text}"
    if kind == "comment":
        text = f"# {draw(_TEXT)}"
        return text, text
    line = f"'call ctr.bump s={draw(_MAGIC_TEXT)}'"
    plain = f"get_ipython().run_line_magic('mcp', {line})"
    awaited = f"(await {HELPER}.line('mcp', {line}, bind=False))"
    if kind == "assigned":
        return f"r = {plain}", "r = " + awaited.replace("bind=False", "bind=True")
    if kind == "cell":
        body = f"'{draw(_MAGIC_TEXT)}\\n'"
        return (
            f"get_ipython().run_cell_magic('mcp', {line}, {body})",
            f"(await {HELPER}.cell('mcp', {line}, {body}, bind=False))",
        )
    if kind == "after ff":  # a form feed is whitespace to Python: one line holds two statements
        pad = " " * draw(st.integers(0, 80))
        return f"x = 1;\x0c{pad}{plain}", f"x = 1;\x0c{pad}{awaited}"
    if kind == "in if":
        return f"if True:\n    {plain}", f"if True:\n    {awaited}"
    return plain, awaited


def _strings(source: str) -> Counter[str]:
    """Every string literal of ``source``, as written."""
    tree = ast.parse(source)
    return Counter(
        ast.get_source_segment(source, node) or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def _comments(source: str) -> Counter[str]:
    readline = io.StringIO(source, newline="").readline
    return Counter(t.string for t in tokenize.generate_tokens(readline) if t.type == tokenize.COMMENT)


def _magic_calls(source: str) -> Counter[str]:
    """How many ``%mcp`` calls the cell makes: IPython's own, and the awaited ones."""
    names = (
        node.func.attr
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    )
    return Counter(name for name in names if name in ("run_line_magic", "run_cell_magic", "line", "cell"))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_statement(), st.sampled_from(["\n", "\r\n", "\r"])), min_size=1, max_size=8))
def test_every_line_separator_in_strings_and_comments_leaves_them_as_they_were(
    statements: list[tuple[tuple[str, str], str]],
) -> None:
    """Edits land where ``ast`` says, whatever separators sit in strings and comments before them.

    ``str.splitlines`` also breaks at form feed, U+2028 and the rest; counting lines that way once put
    the awaited call on an earlier line: a string overwritten, or a second, un-awaited copy of the call.
    """
    cell = "".join(plain + end for (plain, _), end in statements)
    want = "".join(awaited + end for (_, awaited), end in statements)
    out = "".join(rewrite(cell.splitlines(keepends=True)))
    assert out == want
    compile(out, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    assert _strings(out) == _strings(cell)
    assert _comments(out) == _comments(cell)
    before, after = _magic_calls(cell), _magic_calls(out)
    assert after["line"] + after["cell"] == before["run_line_magic"] + before["run_cell_magic"]
    assert after["run_line_magic"] == after["run_cell_magic"] == 0


# ---------------------------------------------------------------------- in a real IPython shell
@pytest.fixture(scope="module")
def counted() -> Iterator[tuple[InteractiveShell, list[int]]]:
    """The test shell with a real in-process server whose one tool counts its calls."""
    calls: list[int] = []
    server: MCPServer[Any] = MCPServer("ctr")

    @server.tool(name="bump")
    async def bump(n: int) -> int:
        calls.append(n)
        return len(calls)

    shell = get_shell()
    session_of(shell).connect("ctr", server)
    yield shell, calls
    session_of(shell).registry.disconnect("ctr")


def test_a_form_feed_before_a_call_does_not_call_the_tool_twice(counted: tuple[InteractiveShell, list[int]]) -> None:
    """The page shows one ``%mcp call`` line; a form feed then padding on the line before made it run twice."""
    shell, calls = counted
    calls.clear()
    result = shell.run_cell("x = 1;\x0c" + " " * 60 + "\nr = %mcp call ctr.bump n=1\n")
    assert result.success, result.error_in_exec or result.error_before_exec
    assert calls == [1]
    assert shell.user_ns["r"].content[0].text == "1"  # awaited: the result, not a Flow still running


@pytest.mark.filterwarnings("ignore:`make_tokens_by_line`")  # IPython's own splitlines sees U+2028 etc. as line ends
@pytest.mark.parametrize("separator", SEPARATORS)
def test_a_separator_in_a_string_survives_and_the_call_is_awaited(
    counted: tuple[InteractiveShell, list[int]], separator: str
) -> None:
    shell, calls = counted
    calls.clear()
    result = shell.run_cell(f's = "a{separator}b"  # c{separator}d\nr = %mcp call ctr.bump n=2\n')
    assert result.success, result.error_in_exec or result.error_before_exec
    assert shell.user_ns["s"] == f"a{separator}b"
    assert calls == [2]
    assert shell.user_ns["r"].content[0].text == "1"
