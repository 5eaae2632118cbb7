"""The ``%mcp`` magic's own choices, seen from a fresh process."""

from __future__ import annotations

import json
import subprocess
import sys

HEADLESS_CALL = """
import json, sys
from IPython.testing.globalipapp import start_ipython
ip = start_ipython()
ip.run_line_magic("load_ext", "mcp_notebook")
ip.run_line_magic("config", "MCPMagics.interactive = False")
ip.run_line_magic("mcp", "connect demo mcp_notebook.demo:demo")
flow = ip.run_line_magic("mcp", "call demo.echo text=hello -o out")
print(json.dumps({
    "text": ip.user_ns["out"].content[0].text,
    "widgets": sorted(m for m in sys.modules if m == "ipywidgets" or m.endswith("live_view")),
}))
"""


def test_a_headless_call_imports_no_widgets() -> None:
    """A call nobody answers in a form (papermill, a script, ``interactive = False``) loads no ipywidgets.

    The widgets and the live view cost about 0.1 s of a fresh kernel's first call (bench/first_call.py P10).
    """
    out = subprocess.run([sys.executable, "-c", HEADLESS_CALL], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"text": "hello", "widgets": []}
