"""Connecting to real servers that do not behave like the SDK's own (issue 36, item 9).

Each server is a real one: a stdio script in the test's folder, run as a subprocess, or the demo over
streamable HTTP on 127.0.0.1. What the connect cell of a real kernel shows is in
tests/kernel/test_connect_real_servers.py.

* a stdio server that logs to stdout: its line is kept in the connection's log, the SDK's parse
  traceback is not logged, and the connection works;
* a server on an old SDK (1.6), which exits on a request it does not know before ``initialize``
  (the automatic ``server/discover`` probe): it is connected with the 2025 handshake by itself;
  one that exits on both says so, naming ``--protocol legacy``;
* a command that crashes at start (its stderr says why, and not about the probe) is run once, not
  started again with the 2025 handshake (issue 38);
* a URL that answers HTTP 404 says so, not "-32601 the server does not offer this method".

A mistyped URL is tests/wire/test_target.py's.
"""

from __future__ import annotations

import logging
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook.errors import FlowError
from mcp_notebook.wire.connection import ConnectionFailed

LOGS_ON_STDOUT = """\
from mcp.server.mcpserver import MCPServer

print("Starting the weather server v1...", flush=True)  # what many servers do: stdout is the protocol's pipe
server = MCPServer("weather")


@server.tool()
def forecast(city: str) -> str:
    return f"sunny in {city}"


server.run()
"""

# What a server on mcp 1.6 does, reduced to its wire behaviour: its session validates every request
# against the methods it knows, and a method it does not know (server/discover, sent before initialize)
# fails that validation in its read loop, which ends the process with a traceback on stderr.
OLD_SDK_SERVER = """\
import json
import sys

KNOWN = {"initialize", "ping", "tools/list", "tools/call"}
for raw in sys.stdin:
    message = json.loads(raw)
    method = message.get("method")
    if method is not None and method not in KNOWN and not method.startswith("notifications/"):
        sys.stderr.write(f"pydantic_core._pydantic_core.ValidationError: 1 validation error for ClientRequest: {method}\\n")
        sys.exit(1)
    if "id" not in message:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": "2025-03-26",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "old-weather", "version": "1.6.0"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in ("forecast", "die")]}
    elif method == "tools/call" and message["params"]["name"] == "die":
        sys.exit(0)
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "sunny"}], "isError": False}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\\n")
    sys.stdout.flush()
"""

# Each start is counted in a file beside the script, so a test can tell how often it ran.
EXITS_AT_ONCE = """\
import sys

open(__file__ + ".runs", "a").write("run\\n")
sys.stderr.write("weather: no API key configured\\n")
sys.exit(3)
"""

# Exits on its first request, whatever it is, and says nothing: it may have stopped on the probe.
EXITS_SILENTLY_ON_ANY_REQUEST = """\
import sys

open(__file__ + ".runs", "a").write("run\\n")
sys.stdin.readline()
sys.exit(1)
"""


def registry(shell: Any = None) -> Any:
    from ..conftest import get_shell, session_of

    return session_of(shell or get_shell()).registry


def command(tmp_path: Path, name: str, source: str) -> str:
    script = tmp_path / f"{name}.py"
    script.write_text(source)
    return shlex.join([sys.executable, str(script)])


def test_a_server_logging_to_stdout_connects_and_its_line_goes_to_the_log(
    ip: InteractiveShell, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    ip.run_line_magic("mcp", f"connect chatty -- {command(tmp_path, 'chatty', LOGS_ON_STDOUT)}")
    conn = registry().get("chatty")
    assert conn.state == "open" and conn.protocol_version == "2026-07-28"
    assert conn.stdout_noise == 1
    assert list(conn.logs) == [
        {"level": "warning", "logger": "stdout (not MCP)", "data": "Starting the weather server v1..."}
    ]
    flow = ip.run_line_magic("mcp", "call chatty.forecast city=Oslo --no-save")
    assert flow.result().structured_content == {"result": "sunny in Oslo"}
    assert conn.stdout_noise == 1  # this SDK moves a running server's prints to stderr
    # the SDK's "Failed to parse JSONRPC message" and its twenty-line traceback are no longer logged
    assert [r.getMessage() for r in caplog.records if r.name == "mcp.client.stdio"] == []


def test_a_server_on_an_old_sdk_is_connected_with_the_2025_handshake(ip: InteractiveShell, tmp_path: Path) -> None:
    ip.run_line_magic("mcp", f"connect old -- {command(tmp_path, 'old_sdk', OLD_SDK_SERVER)}")
    conn = registry().get("old")
    assert conn.state == "open" and conn.fell_back
    assert conn.protocol_version == "2025-03-26" and conn.server_label == "old-weather 1.6.0"
    assert conn.protocol == "auto"  # what the person asked stays; only this connection used the handshake
    flow = ip.run_line_magic("mcp", "call old.forecast --no-save")
    assert [block.text for block in flow.result().content] == ["sunny"]
    assert {"level": "notice", "logger": "mcp-notebook", "data": "closed on server/discover: connected with initialize"} in list(conn.logs)  # fmt: skip
    with pytest.raises(FlowError) as info:  # it exits under a call: said once, not "Connection closed" twice
        ip.run_line_magic("mcp", "call old.die --no-save")
    assert str(info.value) == "old.die failed: The connection to the server closed (MCP error -32000)"


def test_a_server_that_exits_on_both_handshakes_says_so_once(ip: InteractiveShell, tmp_path: Path) -> None:
    line = command(tmp_path, "silent", EXITS_SILENTLY_ON_ANY_REQUEST)
    with pytest.raises(ConnectionFailed) as info:
        registry().connect("silent", _stdio(line))
    assert str(info.value) == (
        f"Could not connect 'silent' to {line}: the server exited without answering, both on the 2026-07-28 probe "
        "(server/discover) and on the 2025 handshake (initialize, as with --protocol legacy)"
    )
    assert info.value.code == -32000
    assert (tmp_path / "silent.py.runs").read_text() == "run\nrun\n"  # it said nothing: tried with both handshakes


def test_a_command_that_crashes_at_start_runs_once(ip: InteractiveShell, tmp_path: Path) -> None:
    line = command(tmp_path, "no_key", EXITS_AT_ONCE)
    with pytest.raises(ConnectionFailed) as info:
        registry().connect("nokey", _stdio(line))
    assert str(info.value) == (
        f"Could not connect 'nokey' to {line}: the server exited without answering; it was not started again, as "
        "what it wrote on stderr (below) does not name the 2026-07-28 probe (server/discover). A server on an older "
        "SDK that stops on that probe connects with --protocol legacy.\n"
        "The server wrote on stderr:\nweather: no API key configured"
    )
    assert info.value.code == -32000 and "nokey" not in registry()
    assert (tmp_path / "no_key.py.runs").read_text() == "run\n"  # started once: its stderr said why it stopped


def test_a_url_answering_404_says_the_path_may_be_wrong(ip: InteractiveShell, start_http_server: Any) -> None:
    url = start_http_server("demo")
    wrong = url.removesuffix("/mcp") + "/mpc"
    with pytest.raises(ConnectionFailed) as info:
        ip.run_line_magic("mcp", f"connect typo {wrong}")
    assert (
        str(info.value) == f"Could not connect 'typo' to {wrong}: HTTP 404: is the path right (most servers use /mcp)?"
    )
    assert info.value.code is None and info.value.data == {"status": 404}
    ip.run_line_magic("mcp", f"connect typo {url}")  # the right path connects
    assert registry().get("typo").protocol_version == "2026-07-28"


def _stdio(line: str) -> Any:
    from mcp_notebook.wire.target import parse_target

    return parse_target("-- " + line)
