"""The package's public face: ``mcp_notebook.__all__`` is sorted, each name resolves, and ``dir()`` offers them (as httpx tests its own)."""

from __future__ import annotations

import subprocess
import sys

import mcp_notebook


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert mcp_notebook.__all__ == sorted(mcp_notebook.__all__)
    for name in mcp_notebook.__all__:
        assert getattr(mcp_notebook, name) is not None, name
    assert set(mcp_notebook.__all__) <= set(dir(mcp_notebook))


def test_the_lazy_api_resolves_to_its_floors() -> None:
    from mcp_notebook.flows.flow import Flow
    from mcp_notebook.mapping import map as mapping
    from mcp_notebook.session import api

    assert mcp_notebook.Flow is Flow
    assert mcp_notebook.call is api.call and mcp_notebook.connect is api.connect
    assert mcp_notebook.map is mapping.map and mcp_notebook.map_async is mapping.map_async


def test_importing_the_package_imports_no_floor() -> None:
    """``import mcp_notebook`` (and so ``%load_ext``'s first step) loads none of its subpackages, nor the SDK."""
    code = (
        "import sys, mcp_notebook; print(sorted(m for m in sys.modules if m.startswith('mcp_notebook.') or m == 'mcp'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_flow_shows_its_report_in_ipython_without_load_ext() -> None:
    """A Flow of a hand-made Session, reached through a submodule, is shown as its report, not its repr, as a cell's value."""
    code = (
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython()\n"
        "from mcp_notebook.session.session import Session\n"
        "from mcp_notebook.demo import make_echo\n"
        "s = Session()\n"
        "conn = s.connect('e', make_echo())\n"
        "ip.user_ns['flow'] = s.start('tools/call', conn, 'echo', {'text': 'hi'})\n"
        "ip.user_ns['flow'].result(timeout=60)\n"
        "shown = []\n"
        "import IPython.display\n"
        "IPython.display.display = lambda obj, **kw: shown.append(type(obj).__name__)\n"
        "import mcp_notebook.notebook.display as d\n"
        "d.display = IPython.display.display\n"
        "handled = ip.display_formatter.ipython_display_formatter(ip.user_ns['flow'])\n"
        "print(handled, shown)\n"
        "s.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "True ['FlowReport']"
