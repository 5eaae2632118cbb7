"""Connection options reach the server for real, and nothing secret is kept where it could leak."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.connections import registry
from mcp_notebook.errors import FlowError

from .conftest import REPO_ROOT


@pytest.fixture(scope="module")
def ip() -> Iterator[Any]:
    from .conftest import get_shell

    shell: Any = get_shell()
    yield shell
    registry.disconnect_all()


def structured(flow: Any) -> Any:
    return flow.result().structured_content


def test_headers_and_bearer_reach_the_http_server(ip: Any, start_http_server: Any, monkeypatch: Any) -> None:
    url = start_http_server("demo")
    monkeypatch.setenv("NB_TEST_TOKEN", "s3cret-token")
    ip.run_line_magic("mcp", f"connect hdr {url} --header X-Notebook:tutorial-1 --bearer-env NB_TEST_TOKEN")
    flow = ip.run_line_magic("mcp", "call hdr.request_headers --json '{\"names\": [\"x-notebook\", \"authorization\"]}'")
    assert structured(flow) == {"x-notebook": "tutorial-1", "authorization": "Bearer s3cret-token"}
    # what could be saved names the header and the variable, never their values
    saved = json.dumps(flow.conn.target.saved())
    assert "tutorial-1" not in saved and "s3cret-token" not in saved
    assert "x-notebook".lower() in saved.lower() and "NB_TEST_TOKEN" in saved
    record = json.dumps(flow.record("state"))
    assert "tutorial-1" not in record and "s3cret-token" not in record


def test_missing_bearer_variable_is_explained(ip: Any, start_http_server: Any) -> None:
    url = start_http_server("echo")
    with pytest.raises(FlowError) as info:
        ip.run_line_magic("mcp", f"connect nobearer {url} --bearer-env NB_TEST_UNSET_VARIABLE")
    assert "NB_TEST_UNSET_VARIABLE is not set" in str(info.value)


def test_stdio_cwd_and_env(ip: Any, tmp_path: Path) -> None:
    ip.run_line_magic(
        "mcp",
        f"connect envd --cwd {tmp_path} --env NB_FLAVOUR=mint --env PYTHONPATH={REPO_ROOT} -- {sys.executable} -m mcp_notebook.demo demo",
    )
    info = structured(ip.run_line_magic("mcp", "call envd.process_info var=NB_FLAVOUR"))
    assert info["value"] == "mint"
    assert Path(info["cwd"]).resolve() == tmp_path.resolve()
    saved = json.dumps(registry.get("envd").target.saved())
    assert "mint" not in saved and "NB_FLAVOUR" in saved


def test_protocol_pinned_and_legacy(ip: Any) -> None:
    ip.run_line_magic("mcp", "connect pinned --protocol 2026-07-28 mcp_notebook.demo:demo")
    assert registry.get("pinned").protocol_version == "2026-07-28"
    flow = ip.run_line_magic("mcp", "call pinned.provision_db name=p --accept-defaults")
    assert flow.result().content[0].text == "Provisioned 'p' in eu-west-1 (size small)."
    ip.run_line_magic("mcp", "connect old --protocol legacy mcp_notebook.demo:demo")
    assert registry.get("old").is_legacy


def test_reconnect_replaces_and_disconnect_closes(ip: Any) -> None:
    ip.run_line_magic("mcp", "connect again mcp_notebook.demo:echo_server")
    first = registry.get("again")
    ip.run_line_magic("mcp", "connect again mcp_notebook.demo:demo")
    assert registry.get("again") is not first and not first.is_open
    ip.run_line_magic("mcp", "disconnect again")
    assert "again" not in registry
    with pytest.raises(FlowError, match="No connection named 'again'"):
        ip.run_line_magic("mcp", "call again.echo text=x")


def test_failed_reconnect_keeps_the_old_connection(ip: Any) -> None:
    ip.run_line_magic("mcp", "connect keep mcp_notebook.demo:echo_server")
    with pytest.raises(FlowError):
        ip.run_line_magic("mcp", "connect keep -- no-such-binary-anywhere")
    assert registry.get("keep").is_open
    assert ip.run_line_magic("mcp", "call keep.echo text=still").result().content[0].text == "still"


def test_flow_timeout_setting(ip: Any) -> None:
    ip.run_line_magic("mcp", "connect slow mcp_notebook.demo:demo")
    ip.run_line_magic("config", "MCPMagics.flow_timeout = 0.2")
    try:
        with pytest.raises(FlowError, match="longer than 0.2 s"):
            ip.run_line_magic("mcp", "call slow.slow_count n=50 delay=0.05")
    finally:
        ip.run_line_magic("config", "MCPMagics.flow_timeout = None")
    assert ip.run_line_magic("mcp", "call slow.slow_count n=2 delay=0.01").result().content[0].text == "Counted to 2."
