"""Issue 34, finding 6: a look-alike host is never shown unmarked in a consent screen.

``https://api.gіthub.com/mcp`` (a Cyrillic ``і``) is what a received notebook's record, a project's
``.mcp.json`` or a connection may name; the client reaches ``api.xn--gthub-n2e.com``. Every consent
screen (the record review of ``%mcp flows`` and its headless refusal, the Resume panel in a real
kernel, a project config's row, headless refusal and approval panel, a replay's refusal, a
"connection now points elsewhere" concern) must show the punycode host and a look-alike warning,
and the Unicode form only inside a warning (⚠). A URL with a bidi override and an escape sequence
is shown with both spelled out, and warned about.

The replay and "points elsewhere" screens need a connection that really reached the look-alike
host: a DNS stand-in (``socket.getaddrinfo``) resolves only ``api.xn--gthub-n2e.com`` to 127.0.0.1,
records the name the client asked for, and a real MCP server there accepts only that Host header.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from ..conftest import REPO_ROOT, _wait_until_listening, free_port, session_of
from ..support.kernel_harness import Kernel
from ..support.ready_process import stop
from .test_configs_hostile import home, session_views, write  # noqa: F401 - fixtures of the project-config screens
from .test_saved_records import planted, write_nb

LOOKALIKE = "https://api.gіthub.com/mcp"  # the і is CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I
RAW = "gіthub"
PUNY = "api.xn--gthub-n2e.com"
BIDI = "https://login.example.com/\u202etxt.exe\x1b[2J"  # a bidi override and a screen clear in the path


def assert_text_marked(text: str) -> None:
    """Plain text: the punycode host and the look-alike warning are there; the Unicode form only after a ⚠."""
    assert PUNY in text and "mixes Cyrillic and Latin letters and looks like api.github.com" in text, text
    assert_none_unmarked(text)


def assert_none_unmarked(text: str) -> None:
    for line in text.splitlines():
        for found in re.finditer(RAW, line):
            assert "⚠" in line[: found.start()], f"unmarked look-alike in: {line}"


def assert_bidi_spelled(text: str) -> None:
    assert "\u202e" not in text and "\x1b" not in text, text
    assert "\\u202etxt.exe\\u001b[2J" in text and "invisible or control characters" in text, text


def assert_html_marked(page: str) -> None:
    """HTML: the host reached is highlighted as punycode; the Unicode form appears only inside a warning."""
    assert (
        f'<b class="mcp-domain" style="background:color-mix(in srgb,var(--jp-warn-color1,#f57c00) 25%,var(--jp-layout-color1,#fff));color:var(--jp-ui-font-color1,#000);padding:0 2px">{PUNY}</b>'
        in page
    ), page
    warnings = re.findall(r'<div class="mcp-url-warning"[^>]*>([^<]*)</div>', page)
    assert any("mixes Cyrillic and Latin letters" in w for w in warnings), warnings
    outside = re.sub(r'<div class="mcp-url-warning"[^>]*>[^<]*</div>', "", page)
    assert RAW not in outside, outside


def record_with_lookalikes(flow_id: str) -> dict[str, Any]:
    """A received notebook's record: the look-alike host gets the user's token; its sign-in names the bidi URL."""
    server = {
        "name": "gh",
        "target": LOOKALIKE,
        "bearer_env": "GITHUB_TOKEN",
        "oauth": {"sign_in": "oauth", "issuer": BIDI},
    }
    return planted(flow_id, server)


# ---------------------------------------------------------------------- a received notebook's record
def test_the_record_review_and_the_headless_refusal_show_the_host_reached(ip: InteractiveShell, tmp_path: Path) -> None:
    path = write_nb(tmp_path / "received.ipynb", record_with_lookalikes("look0001"))
    with capture_output() as listing:
        ip.run_line_magic("mcp", f"flows --from {path}")
    (review,) = [o.data for o in listing.outputs if "mcp-record-review" in o.data.get("text/html", "")]
    assert_text_marked(review["text/plain"])
    assert_bidi_spelled(review["text/plain"])
    assert_html_marked(review["text/html"])
    assert "\u202e" not in review["text/html"] and "\x1b" not in review["text/html"]
    line = next(x for x in review["text/plain"].splitlines() if x.strip().startswith("connects to:"))
    assert line.startswith(f"  connects to: https://{PUNY}/mcp  ⚠ "), line
    with pytest.raises(UsageError) as refused:
        ip.run_line_magic("mcp", "resume look0001")
    assert "not saved by you" in str(refused.value)
    assert_text_marked(str(refused.value))
    assert_bidi_spelled(str(refused.value))
    session_of(ip).store.delete("look0001")


def test_the_resume_panel_in_a_kernel_shows_the_host_reached(tmp_path: Path) -> None:
    write_nb(tmp_path / "received.ipynb", record_with_lookalikes("look0002"))
    k = Kernel(cwd=str(tmp_path), env={"PYTHONPATH": str(REPO_ROOT)})
    try:
        k.execute("%load_ext mcp_notebook")
        k.execute("%mcp flows --from received.ipynb")
        before = set(k.comms)
        cell = k.execute("%mcp resume look0002", allow_stdin=True, wait=False)  # the cell waits for the click
        (page,) = k.wait_for(
            lambda: [
                s["value"]
                for c, s in k.comms.items()
                if c not in before
                and s.get("_model_name") == "HTMLModel"
                and "mcp-record-review" in str(s.get("value"))
            ],
            what="the Resume panel",
        )
        assert_html_marked(page)
        assert "\u202e" not in page and "\x1b" not in page and "\\u202etxt.exe\\u001b[2J" in page
        (no,) = [c for c in k.find_widgets("ButtonModel", description="Don't resume") if c not in before]
        k.click(no)
        k.wait_idle(cell)
    finally:
        k.close()


# ---------------------------------------------------------------------- a project's config file
def test_a_project_config_row_refusal_and_approval_show_the_host_reached(
    home: Path,  # noqa: F811 - the fixture imported above
    session: Any,  # noqa: F811 - the fixture imported above
    ip: InteractiveShell,
) -> None:
    from mcp_notebook.session.from_config import COLUMNS, connect_from_config

    write(
        home / "clone" / ".mcp.json",
        {"mcpServers": {"github": {"type": "http", "url": LOOKALIKE}, "login": {"type": "http", "url": BIDI}}},
    )
    with capture_output() as listing:  # the rows a --trust-project approves, through the magic
        ip.run_line_magic("mcp", "connect --from-config")
        ip.run_line_magic("mcp", "connect --from-config github")  # headless: refused, pointing at its row
    (table, refusal) = [o.data for o in listing.outputs if "MCP server configs" in o.data.get("text/plain", "")]
    assert "github refused" in refusal["text/plain"] and "if you trust what its row shows" in refusal["text/plain"]
    for shown in (table, refusal):
        plain = shown["text/plain"]
        row = next(line for line in plain.splitlines() if line.startswith("github "))
        assert f"https://{PUNY}/mcp  ⚠ " in row, row  # cut at 60 characters: the warning starts there
        assert_none_unmarked(plain)
        assert "\u202e" not in plain and "\x1b" not in plain and "%E2%80%AEtxt.exe%1B[2J  ⚠ " in plain
        # the HTML row is whole (a long cell folded: its expanded text): text, warnings after ⚠
        cells = re.findall(
            r"<td[^>]*>(?:<details class=\"fold\"><summary[^>]*>[^<]*</summary><div>)?([^<]*)", shown["text/html"]
        )
        assert_text_marked(next(c for c in cells if PUNY in c))
    rows, _ = connect_from_config(session, None, [], False)
    targets = {r[0]: r[COLUMNS.index("target")] for r in rows}
    assert_text_marked(targets["github"])
    assert_bidi_spelled(targets["login"])

    panels: list[Any] = []
    connect_from_config(session, None, ["github", "login"], False, interactive=True, panels=panels)
    github, login = panels
    assert_html_marked(github.text.value)
    assert "\u202e" not in login.text.value and "\\u202etxt.exe\\u001b[2J" in login.text.value
    assert_text_marked(str(dict(github.lines)["connects to"]))
    for panel in panels:
        panel.no.click()
    assert len(session.registry) == 0


# ---------------------------------------------------------------------- a connection that reached the look-alike host
LOOKALIKE_SERVER = """
import sys, uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

srv = MCPServer("lookalike")

@srv.tool()
def drop_table(table: str) -> str:
    return f"dropped {table}"

only = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=["api.xn--gthub-n2e.com:*"])
uvicorn.run(srv.streamable_http_app(transport_security=only), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


@pytest.fixture(scope="module")
def lookalike_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The look-alike URL of a real MCP server on 127.0.0.1 that answers only to the punycode Host."""
    port = free_port()
    log = tmp_path_factory.mktemp("lookalike") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", LOOKALIKE_SERVER, str(port)],
            cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        _wait_until_listening(proc, port, log)
        yield f"http://api.gіthub.com:{port}/mcp"
    finally:
        stop(proc)


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A DNS stand-in: the punycode host resolves to 127.0.0.1; every name asked for it is kept."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name == PUNY:
            asked.append(name)
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_a_replay_refusal_and_a_moved_connection_show_the_host_reached(
    ip: InteractiveShell, lookalike_url: str, dns: list[str], tmp_path: Path
) -> None:
    hub = session_of(ip)
    ip.run_line_magic("mcp", f"connect gh {lookalike_url}")
    try:
        assert dns and set(dns) == {PUNY}  # the host the screens show is the one the client looked up
        port = lookalike_url.rsplit(":", 1)[1].split("/")[0]
        trace = tmp_path / "received-trace.json"
        trace.write_text(json.dumps({"replay": {
            "version": 1, "purpose": "mcp-notebook replay", "method": "tools/call", "server": "gh", "name": "drop_table",
            "arguments": {"table": "customers"}, "withheld": [], "answers_kept": False, "requests": 1, "asked": [],
            "outcome": {"state": "done"},
        }}))  # fmt: skip
        with pytest.raises(UsageError) as refused:
            ip.run_line_magic("mcp", f"replay {trace}")
        message = str(refused.value)
        assert "was not written by you" in message and "Nothing was sent" in message
        assert f'on connection "gh" (which reaches http://{PUNY}:{port}/mcp  ⚠ ' in message, message
        assert_text_marked(message)

        # a record of mine saved against another server, while "gh" now points at the look-alike host
        record = hub.store.signer.sign(planted("look0003", {"name": "gh", "target": BIDI}))
        ip.run_line_magic("mcp", f"flows --from {write_nb(tmp_path / 'mine.ipynb', record)}")
        with pytest.raises(UsageError) as moved:
            ip.run_line_magic("mcp", "resume look0003")
        assert "now points to" in str(moved.value)
        assert_text_marked(str(moved.value))
        assert_bidi_spelled(str(moved.value))
    finally:
        hub.store.delete("look0003")
        hub.registry.disconnect("gh")
