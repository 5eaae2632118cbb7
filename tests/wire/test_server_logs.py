"""`mcp_notebook.wire.server_logs`: an in-process server's log lines and tracebacks go to ``%mcp log``, not the cell.

In a real kernel, a server written in a ``%%mcp server`` cell as the SDK's page writes one: a tool
that logs a warning and uses the deprecated ``ctx.info``, and a tool that raises. Its calls' cells
show no stderr, only the result and a one-line pointer; ``%mcp log`` holds the lines, the traceback
whole. Both protocol generations (2026-07-28 runs the server inside the call's task, 2025 in the
connection's). Records that are not a server's reach Python's last resort as before, once.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_notebook.wire.server_logs import entry_of, install, serving

from ..support.kernel_harness import Kernel

SERVER = """%%mcp server {name}
import logging
from mcp.server.mcpserver import MCPServer, Context
{name} = MCPServer("noisy")
log = logging.getLogger("noisy.tools")

@{name}.tool()
async def chatty(ctx: Context) -> str:
    log.warning("stock is low")
    await ctx.info("an MCP log message")
    return "ok"

@{name}.tool()
async def broken() -> str:
    raise ValueError("broken on purpose")
"""


def streams(kernel: Kernel, msg_id: str, name: str) -> str:
    return "".join(m["content"]["text"] for m in kernel.for_cell(msg_id) if m["msg_type"] == "stream" and m["content"]["name"] == name)  # fmt: skip


def shown(kernel: Kernel, msg_id: str) -> list[str]:
    return [m["content"]["data"]["text/plain"] for m in kernel.for_cell(msg_id) if m["msg_type"] == "display_data"]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_a_cell_shows_the_result_and_a_pointer_and_the_log_holds_the_lines(kernel: Kernel, protocol: str) -> None:
    name = f"noisy_{protocol}"
    kernel.execute(SERVER.format(name=name))
    if protocol == "legacy":
        kernel.execute(f"%mcp connect {name} {name} --protocol legacy")
    ok = kernel.execute(f"%mcp call {name}.chatty")
    assert streams(kernel, ok, "stderr") == ""  # neither the warning nor the SDK's deprecation warnings
    [report] = shown(kernel, ok)
    lines = report.splitlines()
    assert lines[0] == "ok"
    logged = (
        4 if protocol == "auto" else 2
    )  # the warning, and the SDK's deprecation warnings (three lines on 2026-07-28)
    assert (
        lines[-1] == f"{name} logged {logged} line{'s' if logged != 1 else ''} while serving this call: %mcp log {name}"
    )

    failed = kernel.execute(f"%mcp call {name}.broken", wait=False)
    kernel.wait_idle(failed)
    assert streams(kernel, failed, "stderr") == ""  # no twenty-line traceback in the cell
    [report] = shown(kernel, failed)
    assert report.splitlines() == [
        "Tool error: Error executing tool broken",
        f"{name} logged 1 line while serving this call: %mcp log {name}",
    ]
    entries = kernel.execute(
        "s = get_ipython().magics_manager.registry['MCPMagics'].session\n"
        f"print([(e['level'], e['logger'], e['data'].splitlines()[0], 'ValueError: broken on purpose' in e['data']) for e in s.registry.get({name!r}).logs])"
    )
    listed = eval(kernel.text_of_cell(entries))  # noqa: S307 - our own kernel's print of plain tuples
    warned = [e for e in listed if e[1] == "warnings.MCPDeprecationWarning"]
    assert [e[:3] for e in listed if e not in warned] == [
        ("warning", "noisy.tools", "stock is low"),
        ("info", None, "an MCP log message"),  # the server's MCP log notification, as before
        ("error", "mcp.server.mcpserver.server", "Tool 'broken' raised an unexpected exception"),
    ]
    assert listed[-1][3] is True  # the traceback whole: the tool's own exception is in it
    assert len(warned) == logged - 1 and all(
        "MCPDeprecationWarning: The logging capability is deprecated" in e[2] for e in warned
    )
    log = kernel.text_of_cell(kernel.execute(f"%mcp log {name}"))
    assert "stock is low" in log and "broken on purpose" in log


def test_a_record_of_the_kernel_s_own_code_still_reaches_the_last_resort_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])  # as in a kernel: no handler (pytest adds its own)
    handler = install()
    assert install() is handler and logging.lastResort is handler and root.handlers == []  # basicConfig still works
    plain = logging.getLogger("tests.not_a_server")
    plain.warning("said once")
    assert capsys.readouterr().err == "said once\n"  # as Python prints it with no handler at all
    kept: list[dict[str, Any]] = []
    with serving(kept.append):
        logging.getLogger("a.server.tool").error("kept, not printed")
        logging.getLogger("mcp_notebook.wire").warning("the client's own: printed")
        logging.getLogger("a.server.tool").info("below the last resort's level: nowhere, as before")
    assert capsys.readouterr().err == "the client's own: printed\n"
    assert [(e["level"], e["logger"], e["data"]) for e in kept] == [("error", "a.server.tool", "kept, not printed")]
    own = logging.StreamHandler()  # a user's own set-up: records find it, not the last resort (server's too)
    root.addHandler(own)
    try:
        with serving(kept.append):
            logging.getLogger("a.server.tool").warning("through the user's handler")
        assert capsys.readouterr().err == "through the user's handler\n" and len(kept) == 1
    finally:
        root.removeHandler(own)


def test_a_record_is_bounded_and_a_bad_format_does_not_break_the_call() -> None:
    record = logging.LogRecord("srv", logging.ERROR, __file__, 1, "x" * 30_000, None, None)
    entry = entry_of(record)
    assert len(entry["data"]) < 20_100 and entry["data"].endswith("(10,000 more characters)")
    broken = logging.LogRecord("srv", logging.WARNING, __file__, 1, "%d items", ("many",), None)
    assert entry_of(broken)["data"] == "%d items"


def test_answering_a_server_s_question_is_the_user_s_own_code(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a server's call, the answer (a form, the user's sampling function) logs as the user's code, not the server's."""
    from mcp_notebook.wire.server_logs import not_serving

    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    install()
    kept: list[dict[str, Any]] = []
    with serving(kept.append):
        with not_serving():
            logging.getLogger("my.sampling.function").warning("my own warning")
        logging.getLogger("a.server.tool").warning("the server's")
    assert capsys.readouterr().err == "my own warning\n"
    assert [e["data"] for e in kept] == ["the server's"]
