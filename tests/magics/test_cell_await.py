"""``cell_await``: which lines of a cell become awaited calls, in a real IPython shell's transformers.

The kernel-side behaviour (forms live while the cell waits, Run All in order, Interrupt) is in
``test_kernel_interactive.py``; this module checks the rewrite itself on what IPython produces.
"""

from __future__ import annotations

import ast

from IPython.core.inputtransformer2 import TransformerManager

from mcp_notebook.magics.cell_await import HELPER, kernel_hears_comms_while_awaiting, rewrite


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
    from importlib.metadata import version

    major, minor = (int(p) for p in version("ipykernel").split(".")[:2])
    assert kernel_hears_comms_while_awaiting() is ((major, minor) >= (7, 4))
