"""Tab completion from a hostile server: what it names is typed into the cell, so it is bounded, checked and encoded.

A schema with 5,000 enum values, values with line breaks or control characters, and absurdly long
ones: the menu offers at most ``MAX_ITEMS`` printable values of at most ``MAX_TEXT`` characters, and
the rest never reaches the cell.

The hostile server's brace payload (``hostile.BRACES``, a ``{expr}`` that creates ``F``) in every
name and value Tab offers and in every command a hint prints: the completed or copied line runs,
nothing is evaluated, and the server gets the text as it wrote it (issue 20, finding 1).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from IPython.core.completer import provisionalcompleter
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from mcp_notebook.magics.completion import MAX_ITEMS, MAX_TEXT, McpCompleter, shown_items
from mcp_notebook.session.session import Session

from .hostile import BRACES, make_server

pytestmark = pytest.mark.timeout(60)

VALUES = ["ok", "line\nbreak", "bell\x07", "x" * 5000, *(f"v{i:04d}" for i in range(5000))]


def hostile() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("evil")

    @server.tool()
    def pick(choice: Annotated[str, Field(json_schema_extra={"enum": VALUES})]) -> str:
        return choice

    return server


@pytest.fixture
def session_servers() -> dict[str, Any]:
    return {"evil": hostile()}


def test_a_flood_of_odd_values_is_bounded(session: Session) -> None:
    found = McpCompleter(session).complete("%mcp call evil.pick choice=")
    assert found is not None and len(found.items) > MAX_ITEMS  # everything the schema says, before the check
    items = shown_items(found.items)
    texts = [text for text, _ in items]
    assert len(items) == MAX_ITEMS and texts[0] == "ok" and texts[1] == "v0000"
    assert all(len(t) <= MAX_TEXT and t.isprintable() for t in texts)
    assert not any("\n" in t or "\x07" in t for t in texts)


# ---------------------------------------------------------------------- the brace payload (issue 20, finding 1)
# Every path where a server's or a saved record's text becomes cell text: Tab completes a line with
# the hostile server's BRACES in it, the completed line runs in a real IPython shell, and then the
# payload's file F must not exist and the server must have received the text exactly as it wrote it.
BRACE = "brace_evil"  # the connection's name in the shell
# what a %mcp line holds to mean BRACES: the text as written, inside '...' where nothing is expanded (issue 36, item 5)
IN_QUOTES = BRACES


@pytest.fixture(scope="module", autouse=True)
def brace_connected(ip: InteractiveShell) -> None:
    """The brace server, connected in the shared shell (``ip`` disconnects it after the module)."""
    ip.user_ns["brace_server"] = make_server()
    ip.run_line_magic("mcp", f"connect {BRACE} brace_server")


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The file the payload would create: the test runs in a folder of its own (``touch F``)."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path / "F"
    assert not (tmp_path / "F").exists(), "a server's {expr} ran in the kernel"


def tab(ip: InteractiveShell, line: str) -> list[str]:
    """The lines IPython's completer makes of ``line`` (each completion put in its place), as JupyterLab would."""
    with provisionalcompleter():
        return [line[: c.start] + c.text for c in ip.Completer.completions(line, len(line))]


def braced(ip: InteractiveShell, line: str) -> str:
    """The one completed line whose completion carries the payload."""
    found = [done for done in tab(ip, line) if "__import__" in done]
    assert len(found) == 1, found
    return found[0]


def run(ip: InteractiveShell, line: str) -> Any:
    """Run ``line`` as a cell (``result = %mcp ...``), raising what it raised; the result it binds (the call ends its cell)."""
    ran = ip.run_cell(f"_brace_result = {line}")
    if ran.error_in_exec is not None:
        raise ran.error_in_exec
    return ip.user_ns["_brace_result"]


def test_a_tool_name_from_tab_runs_nothing_and_reaches_the_server(ip: InteractiveShell, marker: Path) -> None:
    line = braced(ip, f"%mcp call {BRACE}.")
    assert line == f"%mcp call '{BRACE}.deploy{IN_QUOTES}'"
    assert run(ip, line).content[0].text == "brace-named ran"
    assert not marker.exists()


def test_schema_values_from_tab_run_nothing_and_reach_the_server_as_written(ip: InteractiveShell, marker: Path) -> None:
    tool = f"%mcp call {BRACE}.brace_deploy"
    assert tab(ip, f"{tool} region=") == [f"{tool} region=us-east-1", f"{tool} region='eu-west-1{IN_QUOTES}'"]  # enum
    line = braced(ip, f"{tool} region=")
    line = braced(ip, f"{line} zone=")  # oneOf of const
    assert line.endswith(f" zone='zone{IN_QUOTES}'")
    line = braced(ip, f"{line} shape=")  # an object enum value, as JSON
    received = json.loads(run(ip, line).content[0].text)
    assert received == {
        "region": "eu-west-1" + BRACES,
        "zone": "zone" + BRACES,
        "shape": {"k": "shape" + BRACES},
        "note" + BRACES: "",
    }
    assert not marker.exists()
    # what is typed is compared with the raw values, its quotes undone
    assert tab(ip, f"{tool} region='eu") == [f"{tool} region='eu-west-1{IN_QUOTES}'"]
    assert tab(ip, f"{tool} region=us") == [f"{tool} region=us-east-1"]


def test_a_property_name_from_tab_runs_nothing_and_reaches_the_server(ip: InteractiveShell, marker: Path) -> None:
    tool = f"%mcp call {BRACE}.brace_deploy region=us-east-1"
    line = braced(ip, f"{tool} ")
    assert line == f"{tool} 'note{IN_QUOTES}'="
    assert json.loads(run(ip, line + "hello").content[0].text)["note" + BRACES] == "hello"
    assert not marker.exists()


def test_a_prompt_its_argument_and_its_completion_values_from_tab(ip: InteractiveShell, marker: Path) -> None:
    line = braced(ip, f"%mcp prompt {BRACE}.")
    assert line == f"%mcp prompt '{BRACE}.ask{IN_QUOTES}'"
    line = braced(ip, line + " ")
    assert line.endswith(f" 'topic{IN_QUOTES}'=")
    line = braced(ip, line)  # the server's completion/complete value
    assert line.endswith(f" 'topic{IN_QUOTES}'='v{IN_QUOTES}'")
    assert json.loads(run(ip, line).messages[0].content.text) == {"topic" + BRACES: "v" + BRACES}
    assert not marker.exists()


def test_resource_uris_and_template_values_from_tab(ip: InteractiveShell, marker: Path) -> None:
    line = braced(ip, f"%mcp read {BRACE} ")
    assert line == f"%mcp read {BRACE} 'brace://static/x{IN_QUOTES}'"
    (contents,) = run(ip, line).contents
    assert (contents.uri, contents.text) == ("brace://static/x" + BRACES, "brace static text")
    assert f"%mcp read {BRACE} brace://item/" in tab(ip, f"%mcp read {BRACE} bra")  # a template's fixed start
    line = braced(ip, f"%mcp read {BRACE} brace://item/")
    assert line == f"%mcp read {BRACE} 'brace://item/v{IN_QUOTES}'"
    assert json.loads(run(ip, line).contents[0].text) == {"item": "v" + BRACES}
    assert not marker.exists()


def test_a_received_flow_id_from_tab_and_the_commands_its_errors_print(
    ip: InteractiveShell, marker: Path, tmp_path: Path
) -> None:
    """A received notebook's record: its id is offered by Tab, its id and server name are in the printed hints."""
    import nbformat
    from IPython.core.error import UsageError

    from mcp_notebook.errors import FlowError

    from .test_saved_records import planted

    flow_id, server = "flow" + BRACES, "srv" + BRACES
    nb = nbformat.v4.new_notebook()
    nb.metadata["mcp_notebook"] = {
        "flows": {flow_id: planted(flow_id, {"name": server, "target": "http://127.0.0.1:9/mcp"})}
    }
    nbformat.write(nb, str(tmp_path / "received.ipynb"))
    ip.run_line_magic("mcp", f"flows --from {tmp_path / 'received.ipynb'}")
    hub = ip.magics_manager.registry["MCPMagics"].session
    try:
        line = braced(ip, "%mcp resume ")
        assert line == f"%mcp resume 'flow{IN_QUOTES}'"
        with pytest.raises(
            UsageError
        ) as refused:  # not saved by this user: refused headless, with the commands to go on
            run(ip, line)
        message = str(refused.value)
        assert f"{line} --trust" in message and f"%mcp connect 'srv{IN_QUOTES}' TARGET" in message
        with pytest.raises(FlowError) as unreachable:  # the printed command, run: the literal id reaches resume
            run(ip, f"{line} --trust --accept-defaults")
        assert f"Flow {flow_id} stays saved" in str(unreachable.value)
        assert f"Continue it with {line} once the server answers again." in str(unreachable.value)
        assert not marker.exists()
    finally:
        hub.store.delete(flow_id)


def _hints() -> list[tuple[str, dict[str, Any], list[str]]]:
    """(kind, fields, the commands its hint must print), with the payload in every field a server or record gave."""
    from mcp_notebook.auth.sdk_provider import OAuthOptions
    from mcp_notebook.wire.connection import Connection
    from mcp_notebook.wire.target import Target

    flow, name, field, url = "flow" + BRACES, "srv" + BRACES, "field" + BRACES, "http://127.0.0.1:9/" + BRACES
    d = IN_QUOTES
    stdio = Connection(
        name,
        Target(kind="stdio", command=["python" + BRACES, "-m", "x"], cwd="/srv" + BRACES, env={"VAR" + BRACES: "v"}),
    )
    http = Connection(name, Target(kind="http", url=url, headers={"X-Key" + BRACES: "v"}, bearer_env="TOKEN" + BRACES,
                                   oauth=OAuthOptions(client_id="client" + BRACES, scope="read" + BRACES)))  # fmt: skip
    stdio_line = f"%mcp connect 'srv{d}' --cwd '/srv{d}' --env 'VAR{d}=…' -- 'python{d}' -m x"
    http_words = f"--header 'X-Key{d}:…' --bearer-env 'TOKEN{d}' --client-id 'client{d}' --scope 'read{d}' 'http://127.0.0.1:9/{d}'"
    return [
        ("still_saved", {"flow_id": flow, "reason": "unanswered", "missing_field": field}, [f"%mcp resume 'flow{d}' --answer 'field{d}=VALUE'"]),
        ("still_saved", {"flow_id": flow, "reason": "task"}, [f"%mcp resume 'flow{d}'"]),
        ("connection_dead", {"details": {"connection": stdio}}, [stdio_line]),
        ("connection_closed", {"details": {"connection": http}}, [f"%mcp connect 'srv{d}' {http_words}"]),
        ("needs_legacy", {"details": {"connection": stdio}}, [f"%mcp connect 'srv{d}' --protocol legacy --cwd '/srv{d}' --env 'VAR{d}=…' -- 'python{d}' -m x"]),
        ("sign_in_denied", {"details": {"connection": http}}, [f"%mcp connect 'srv{d}' {http_words}"]),
        ("reconnect_needed", {"flow_id": flow, "server": name, "reason": "headers", "details": {"target": url}},
         [f"%mcp connect 'srv{d}' 'http://127.0.0.1:9/{d}' --header NAME:VALUE", f"%mcp resume 'flow{d}'"]),
        ("reconnect_needed", {"flow_id": flow, "server": name, "reason": "inproc"}, [f"%mcp connect 'srv{d}' ...", f"%mcp resume 'flow{d}'"]),
        ("auth_required", {"server": name, "details": {"url": url}}, [f"%mcp connect 'srv{d}' 'http://127.0.0.1:9/{d}' --bearer-env VAR"]),
        ("connect_timeout", {"server": name}, [f"%mcp connect 'srv{d}' ... --timeout SECONDS"]),
        ("consent_needed", {"flow_id": flow, "server": name}, [f"%mcp resume 'flow{d}' --trust", f"%mcp connect 'srv{d}' TARGET"]),
        ("saved_flow_waiting", {"flow_id": flow}, [f"%mcp resume 'flow{d}'"]),
        ("task_handle_missing", {"flow_id": flow}, [f"%mcp forget 'flow{d}'"]),
    ]  # fmt: skip


@pytest.mark.parametrize("case", range(13))
def test_printed_commands_carry_server_and_record_text_encoded(ip: InteractiveShell, marker: Path, case: int) -> None:
    """Each hint prints its command with the payload encoded; copied into a cell, the line reads back the raw text."""
    from mcp_notebook.magics.hints import hint
    from mcp_notebook.magics.line_expand import expand_braces, strip_comment
    from mcp_notebook.magics.magics import MCPMagics

    kind, fields, commands = _hints()[case]
    text = hint(kind, fields)
    assert text is not None and "__import__" not in re.sub(r"'[^']*'", "", text), text  # the payload only ever in '...'
    for command in commands:
        assert command in text, (command, text)
        words = MCPMagics._split(
            expand_braces(strip_comment(command.removeprefix("%mcp ")), ip.user_ns)
        )  # what the magic reads of it
        assert sum(BRACES in w for w in words) == command.count(IN_QUOTES)
        assert all(w.count(BRACES) == 1 for w in words if "__import__" in w)
    assert not marker.exists()


def test_a_hint_run_as_printed_sends_the_literal_id(ip: InteractiveShell, marker: Path) -> None:
    """``%mcp forget ID`` as the hint prints it, run: the error names the raw id (the line's words arrived literally)."""
    from IPython.core.error import UsageError

    from mcp_notebook.magics.hints import hint

    text = hint("task_handle_missing", {"flow_id": "flow" + BRACES}) or ""
    line = text[text.index("%mcp forget") :].removesuffix(".")
    with pytest.raises(UsageError) as info:
        ip.run_line_magic("mcp", line.removeprefix("%mcp "))
    assert str(info.value).startswith(f"no saved flow {'flow' + BRACES!r} ")
    assert not marker.exists()
