"""What the connect cell of a real kernel shows for real servers that misbehave (issue 36, item 9).

* a stdio server that logs to stdout: one line saying where its lines went, no SDK traceback;
* a server on an old SDK that exits on the ``server/discover`` probe: connected, with one line saying
  how (and the ``--protocol legacy`` line that skips the probe);
* a URL answering 404, and a mistyped URL: one short error saying what to check.

The servers are the stdio scripts of tests/wire/test_connection_real_servers.py, run as subprocesses,
and the demo over streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from ..support.kernel_harness import Kernel
from ..wire.test_connection_real_servers import LOGS_ON_STDOUT, OLD_SDK_SERVER


def run(kernel: Kernel, code: str) -> tuple[str, list[dict[str, Any]]]:
    """The cell's text and its messages (its error, if any, included)."""
    cell = kernel.execute(code, wait=False)
    kernel.wait_idle(cell, 90)
    return kernel.text_of_cell(cell), kernel.for_cell(cell)


def stderr_of(messages: list[dict[str, Any]]) -> str:
    return "".join(
        m["content"]["text"] for m in messages if m["msg_type"] == "stream" and m["content"]["name"] == "stderr"
    )


def error_of_none(messages: list[dict[str, Any]]) -> bool:
    return not [m for m in messages if m["msg_type"] == "error"] and stderr_of(messages) == ""


def error_of(messages: list[dict[str, Any]]) -> tuple[str, str]:
    errors = [m["content"] for m in messages if m["msg_type"] == "error"]
    assert len(errors) == 1, errors
    return errors[0]["ename"], errors[0]["evalue"]


def test_a_server_logging_to_stdout_gets_one_line_not_a_traceback(kernel: Kernel, tmp_path: Path) -> None:
    script = tmp_path / "chatty.py"
    script.write_text(LOGS_ON_STDOUT)
    command = shlex.join([sys.executable, str(script)])
    text, messages = run(kernel, f"%mcp connect chatty -- {command}")
    assert text == (
        f"Connected 'chatty' to weather at {command} (protocol 2026-07-28).\n"
        "It wrote 1 line on stdout that is not MCP (a stdio server logs to stderr): kept in %mcp log chatty.\n"
    )
    assert stderr_of(messages) == ""  # no "Failed to parse JSONRPC message from server" and its traceback
    log, _ = run(kernel, "%mcp log chatty")
    assert "warning  stdout (not MCP)  Starting the weather server v1..." in log.splitlines()


def test_a_server_on_an_old_sdk_connects_and_the_cell_says_how(kernel: Kernel, tmp_path: Path) -> None:
    script = tmp_path / "old_sdk.py"
    script.write_text(OLD_SDK_SERVER)
    command = shlex.join([sys.executable, str(script)])
    text, messages = run(kernel, f"%mcp connect old -- {command}")
    assert text == (
        f"Connected 'old' to old-weather 1.6.0 at {command} (protocol 2025-03-26).\n"
        "It exited on the 2026-07-28 probe (server/discover), as servers on older SDKs do, so the 2025 handshake "
        f"was used; %mcp connect old --protocol legacy -- {command} skips the probe.\n"
    )
    assert error_of_none(messages)
    called, _ = run(kernel, "r = %mcp call old.forecast --no-save\nprint('=>', r.content[0].text)")
    assert "=> sunny" in called.splitlines()


def test_a_url_answering_404_asks_about_the_path(kernel: Kernel, start_http_server: Any) -> None:
    wrong = start_http_server("demo").removesuffix("/mcp") + "/api"
    _, messages = run(kernel, f"%mcp connect api {wrong}")
    assert error_of(messages) == (
        "ConnectionFailed",
        f"Could not connect 'api' to {wrong}: HTTP 404: is the path right (most servers use /mcp)?",
    )


def test_a_mistyped_url_is_not_read_as_a_module_name(kernel: Kernel) -> None:
    _, messages = run(kernel, "%mcp connect api http//127.0.0.1:8000/mcp")
    assert error_of(messages) == (
        "FlowError",
        "'http//127.0.0.1:8000/mcp' is not a URL: a URL starts with http:// or https://. "
        "Did you mean http://127.0.0.1:8000/mcp?",
    )
