"""Issue 34, finding 8: no server escape sequence reaches a terminal through a ``text/plain`` output.

A ``text/plain`` twin is what ``jupyter console``, ``nbconvert --to script``/``markdown``, CI logs and
VS Code's text renderer show, and terminals obey escape sequences: OSC 52 writes the clipboard,
``ESC [2J`` clears the screen, a C1 ``CSI`` (``\\x9b``) starts a sequence in one byte, a bidi override
turns the line around. In a real kernel, a ``%%mcp server`` cell whose server's name, tool
description, log lines (Python logging and MCP log messages), results and tool errors carry all of
them: every ``text/plain`` of ``%mcp call``'s report, ``%mcp log``, ``%mcp tools`` and ``%mcp servers``,
every printed line and every error message holds no control character but newline and tab; the
text is there, spelled out (``\\u001b``).
"""

from __future__ import annotations

import unicodedata

import pytest

from ..support.kernel_harness import Kernel

HOSTILE = "A\x1b]52;c;cHduZWQ=\x07B\x1b[2JC\x9b31mD\u202eE\x85F\u2028G"
SPELLED = "A\\u001b]52;c;cHduZWQ=\\u0007B\\u001b[2JC\\u009b31mD\\u202eE\\u0085F\\u2028G"

SERVER = f"""%%mcp server loud
import logging
from mcp.server.mcpserver import MCPServer, Context
from mcp.server.mcpserver.exceptions import ToolError
HOSTILE = {HOSTILE!r}
loud = MCPServer("loud" + HOSTILE)
log = logging.getLogger("loud.tools")

@loud.tool(description="lists" + HOSTILE)
async def shout(ctx: Context) -> str:
    log.warning("logged " + HOSTILE + "\\nsecond line\\tand a tab")
    await ctx.info("told " + HOSTILE)
    return "result " + HOSTILE

@loud.tool()
async def fail() -> str:
    raise ToolError("failed " + HOSTILE)
"""


def raw_controls(text: str) -> list[str]:
    """The characters a terminal could act on: controls, format (bidi) and separators, but newline and tab."""
    return sorted(
        {f"U+{ord(c):04X}" for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")}
    )


@pytest.fixture(scope="module")
def kernel_setup() -> tuple[str, ...]:
    return ("%load_ext mcp_notebook", SERVER)  # the server's cell starts with its cell magic


def plain_outputs(kernel: Kernel, msg_id: str) -> list[str]:
    """Every text a terminal front end would print for the cell: text/plain twins, streams, error messages."""
    out = []
    for m in kernel.for_cell(msg_id):
        c = m["content"]
        if m["msg_type"] in ("display_data", "update_display_data", "execute_result"):
            out.append(c["data"].get("text/plain", ""))
        elif m["msg_type"] == "stream":
            out.append(c["text"])
        elif m["msg_type"] == "error":
            out.append(c["evalue"])  # (IPython colours the traceback itself with its own escapes)
    return out


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("%mcp call loud.shout", ["result " + SPELLED, "while serving this call: %mcp log loud"]),
        ("%mcp log loud", ["logged", SPELLED[:30], "second line\tand a tab", "told"]),  # the message column is folded
        ("%mcp tools loud", ["lists" + SPELLED[:20]]),
        ("%mcp servers", ["loudA ]52;c;cHduZWQ"]),  # the server's own name: its controls were already blanked
        ("%mcp call loud.fail", ["failed " + SPELLED]),
    ],
)
def test_every_plain_text_output_spells_server_escapes_out(kernel: Kernel, line: str, expected: list[str]) -> None:
    cell = kernel.execute(line, wait=False)
    kernel.wait_idle(cell)
    outputs = plain_outputs(kernel, cell)
    text = "\n".join(outputs)
    assert outputs and all(raw_controls(o) == [] for o in outputs), (line, [raw_controls(o) for o in outputs], text)
    for part in expected:
        assert part in text, (part, text)


def test_every_text_plain_twin_of_the_notebook_side_goes_through_plain_text() -> None:
    """A guard for the next output: in ``notebook/`` (everything that draws), each ``"text/plain"`` value of a
    bundle is ``plain_text(...)``, another bundle's ``["text/plain"]`` (already spelled out) or a literal."""
    import ast
    from pathlib import Path

    import mcp_notebook.notebook as side

    unspelled = []
    for path in sorted(Path(side.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Dict):
                continue
            for key, value in zip(node.keys, node.values, strict=True):
                if not (isinstance(key, ast.Constant) and key.value == "text/plain"):
                    continue
                spelled = isinstance(value, ast.Call) and getattr(value.func, "id", None) == "plain_text"
                twin = isinstance(value, ast.Subscript) and getattr(value.slice, "value", None) == "text/plain"
                if not (spelled or twin or isinstance(value, ast.Constant)):
                    unspelled.append(f"{path.name}:{node.lineno}")
    assert unspelled == []
