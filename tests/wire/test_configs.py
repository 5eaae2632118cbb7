"""Connecting from the configs users already have: Claude Code, VS Code, Claude Desktop, jupyter-mcp-manager.

Every file is written to a temporary home with the real formats; the servers are the demo server
run as a real stdio child (``python -m mcp_notebook.demo demo``) and over streamable HTTP (the
``http_demo_server`` fixture). Variables come from the environment (monkeypatch) at connect time,
and their values must never show up in what is saved (``Target.saved()``) or shown (the rows).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook.session.from_config import COLUMNS, config_rows, connect_from_config
from mcp_notebook.session.session import CallOptions, Session
from mcp_notebook.wire.configs import (
    ConfigError,
    _parse_jsonc,
    find_configs,
    references,
    user_config_paths,
)

DEMO = {"command": sys.executable, "args": ["-m", "mcp_notebook.demo", "demo"]}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home folder (user-level files live here) with a project whose notebook folder is the working directory.

    The project is a git checkout (its ``.git`` marks the root the search stops at); approvals of
    its entries go to a Jupyter data folder of this home, never the real user's.
    """
    home = tmp_path / "home"
    (home / "proj" / "notebooks").mkdir(parents=True)
    (home / "proj" / ".git").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(home / ".jupyter"))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(home / ".local" / "share" / "jupyter"))
    for name in ("XDG_CONFIG_HOME", "JUPYTER_CONFIG_PATH", "JUPYTERLAB_SETTINGS_DIR", "APPDATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(home / "proj" / "notebooks")  # the notebook's folder, as a kernel's working directory is
    return home


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def call(session: Session, server: str, tool: str, arguments: dict[str, Any]) -> Any:
    flow = session.call(
        "tools/call", session.registry.get(server), tool, arguments, CallOptions(), interactive=False, cell_id=None
    )
    assert flow is not None
    return flow.result(timeout=60)


def shown(rows: list[Any]) -> str:
    return json.dumps(rows)


def row_of(rows: list[list[Any]], name: str) -> dict[str, Any]:
    matches = [dict(zip(COLUMNS, r, strict=True)) for r in rows if r[0] == name]
    assert len(matches) == 1, rows
    return matches[0]


def test_claude_code_project_file_found_from_the_notebook_folder(
    home: Path, session: Session, http_demo_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = home / "proj"
    write(
        project / ".mcp.json",
        {
            "mcpServers": {
                "demo": {
                    **DEMO,
                    "env": {
                        "NB_FLAVOUR": "${FLAVOUR}",
                        "NB_PLAIN": "$PLAIN costs $$5",
                        "NB_DEFAULT": "${NB_UNSET_VAR:-fallback}",
                    },
                },
                "web": {"type": "http", "url": "${DEMO_URL}", "headers": {"X-Api-Key": "${API_KEY}"}},
            }
        },
    )
    monkeypatch.setenv("FLAVOUR", "mint-secret-1")
    monkeypatch.setenv("PLAIN", "plain-secret")
    monkeypatch.setenv("API_KEY", "key-secret-2")
    monkeypatch.setenv("DEMO_URL", http_demo_server)

    files = [f for f in find_configs() if f.path.is_relative_to(home)]
    assert [(f.path, f.kind, [s.name for s in f.servers], f.problems) for f in files] == [
        (project / ".mcp.json", "claude-code", ["demo", "web"], [])
    ]

    rows, notes = connect_from_config(session, None, ["demo", "web"], False, trust_project=True)
    assert notes == ["demo: connected from ~/proj/.mcp.json (stdio).", "web: connected from ~/proj/.mcp.json (http)."]
    assert row_of(rows, "demo")["status"] == "connected" and row_of(rows, "web")["status"] == "connected"
    assert (
        "NB_FLAVOUR=${FLAVOUR}" in row_of(rows, "demo")["target"]
        and "X-Api-Key: ${API_KEY}" in row_of(rows, "web")["target"]
    )

    assert call(session, "demo", "echo", {"text": "hello"}).content[0].text == "hello"
    info = call(session, "demo", "process_info", {"var": "NB_FLAVOUR"}).structured_content
    assert info["value"] == "mint-secret-1"
    assert Path(info["cwd"]).resolve() == project.resolve()  # project servers start in the project, as in Claude Code
    assert (
        call(session, "demo", "process_info", {"var": "NB_PLAIN"}).structured_content["value"]
        == "plain-secret costs $5"
    )
    assert call(session, "demo", "process_info", {"var": "NB_DEFAULT"}).structured_content["value"] == "fallback"
    assert call(session, "web", "request_headers", {"names": ["x-api-key"]}).structured_content == {
        "x-api-key": "key-secret-2"
    }

    saved = json.dumps([session.registry.get("demo").target.saved(), session.registry.get("web").target.saved()])
    for secret in ("mint-secret-1", "plain-secret", "key-secret-2"):
        assert secret not in saved and secret not in shown(rows)
    assert session.registry.get("demo").target.saved()["env"] == ["NB_DEFAULT", "NB_FLAVOUR", "NB_PLAIN"]
    assert session.registry.get("web").target.saved() == {
        "target": http_demo_server,
        "headers": ["X-Api-Key"],
    }  # the URL's variable is no secret


def test_vscode_file_with_comments_env_references_inputs_and_env_file(
    home: Path, session: Session, http_demo_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = home / "proj"
    write(project / ".env", '# for the local server\nexport NB_FROM_FILE="from-file"\n')
    write(
        project / ".vscode" / "mcp.json",
        f"""// VS Code's mcp.json allows comments and trailing commas
{{
  "inputs": [{{"type": "promptString", "id": "pat", "description": "GitHub token", "password": true}}],
  "servers": {{
    "remote": {{"type": "http", "url": "{http_demo_server}", /* the demo over HTTP */
               "headers": {{"Authorization": "Bearer ${{env:TOKEN}}", "X-Notebook": "${{env:NB_NOTE}}"}}}},
    "local": {{"type": "stdio", "command": {json.dumps(sys.executable)}, "args": ["-m", "mcp_notebook.demo", "demo"],
              "envFile": "${{workspaceFolder}}/.env", "env": {{"NB_FROM_ENV": "${{env:NB_NOTE}}"}}}},
    "github": {{"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {{"Authorization": "Bearer ${{input:pat}}"}}}},
  }},
}}
""",
    )
    monkeypatch.setenv("TOKEN", "tok-secret-3")
    monkeypatch.setenv("NB_NOTE", "note-secret-4")

    (config,) = [f for f in find_configs() if f.path.is_relative_to(home)]
    assert (
        config.kind == "vscode"
        and config.problems == []
        and [s.name for s in config.servers] == ["remote", "local", "github"]
    )
    github = config.servers[2]
    assert github.problem is not None and "${input:pat}" in github.problem and "${env:NAME}" in github.problem

    rows, notes = connect_from_config(session, None, ["remote", "local", "github"], False, trust_project=True)
    assert notes[:2] == [
        "remote: connected from ~/proj/.vscode/mcp.json (http).",
        "local: connected from ~/proj/.vscode/mcp.json (stdio).",
    ]
    assert notes[2].startswith(
        f"github failed: {project / '.vscode' / 'mcp.json'}, server 'github': uses ${{input:pat}} in header Authorization"
    )
    assert "github" not in session.registry
    assert row_of(rows, "github")["status"].startswith("cannot connect: uses ${input:pat}")

    headers = call(session, "remote", "request_headers", {"names": ["authorization", "x-notebook"]}).structured_content
    assert headers == {"authorization": "Bearer tok-secret-3", "x-notebook": "note-secret-4"}
    remote_target = session.registry.get("remote").target
    remote = remote_target.saved()
    assert remote == {
        "target": http_demo_server,
        "headers": ["X-Notebook"],
        "bearer_env": "TOKEN",
    }  # names, never values
    assert "Authorization: ${env:TOKEN}" in row_of(rows, "remote")["target"]
    # the variables its header and env values came from, asked of the policy at each open (TOKEN is read at each open)
    assert remote_target.expanded_from == ("NB_NOTE",)
    assert session.registry.get("local").target.expanded_from == ("NB_NOTE",)

    assert call(session, "local", "process_info", {"var": "NB_FROM_FILE"}).structured_content["value"] == "from-file"
    assert call(session, "local", "process_info", {"var": "NB_FROM_ENV"}).structured_content["value"] == "note-secret-4"
    assert call(session, "local", "echo", {"text": "from VS Code's config"}).content[0].text == "from VS Code's config"

    saved = json.dumps([c.target.saved() for c in session.registry])
    for secret in ("tok-secret-3", "note-secret-4", "from-file"):
        assert secret not in saved and secret not in shown(rows) and secret not in shown(notes)


def test_claude_desktop_and_jupyter_mcp_manager_user_files(
    home: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    desktop = next(p for p, kind in user_config_paths() if kind == "claude-desktop")
    if sys.platform == "linux":
        assert desktop == home / ".config" / "Claude" / "claude_desktop_config.json"
    write(desktop, {"mcpServers": {"desk": DEMO}})
    write(
        home / ".jupyter" / "mcp_servers.json",
        {
            "mcp_servers": [
                {"name": "jmm", "type": "stdio", **DEMO, "env": [{"name": "NB_FLAVOUR", "value": "${FLAVOUR}"}]},
                {
                    "name": "off",
                    "type": "http",
                    "url": "http://127.0.0.1:9/mcp",
                    "headers": [{"name": "Authorization", "value": "Bearer literal-secret-5"}],
                },
            ]
        },
    )
    write(
        home / ".jupyter" / "lab" / "user-settings" / "jupyter-mcp-manager" / "manager.jupyterlab-settings",
        '{\n  // written by the Settings Editor\n  "mcpSettings": {"mcp_servers": [{"name": "off", "disabled": true}]}\n}\n',
    )
    monkeypatch.setenv("FLAVOUR", "mint-secret-6")

    files = [f for f in find_configs() if f.path.is_relative_to(home)]
    assert [(f.path.name, f.kind, [s.name for s in f.servers]) for f in files] == [
        ("claude_desktop_config.json", "claude-desktop", ["desk"]),
        ("manager.jupyterlab-settings", "jupyter-mcp-manager", []),  # an overlay only: it turns "off" off
        ("mcp_servers.json", "jupyter-mcp-manager", ["jmm", "off"]),
    ]
    assert files[2].servers[1].disabled

    rows, notes = connect_from_config(session, None, [], True)
    desk_from = (
        "~/.config/Claude/claude_desktop_config.json"
        if sys.platform == "linux"
        else notes[0].split(" from ")[1].split(" (")[0]
    )
    assert notes == [
        f"desk: connected from {desk_from} (stdio).",
        "jmm: connected from ~/.jupyter/mcp_servers.json (stdio).",
        "Skipped off: disabled in its file (~/.jupyter/mcp_servers.json).",
    ]
    assert sorted(c.name for c in session.registry) == ["desk", "jmm"]
    assert session.registry.get("desk").target.cwd is None  # a user-level server starts where the kernel runs
    assert call(session, "desk", "echo", {"text": "desktop"}).content[0].text == "desktop"
    assert call(session, "jmm", "process_info", {"var": "NB_FLAVOUR"}).structured_content["value"] == "mint-secret-6"
    assert row_of(rows, "off")["status"] == "disabled in its file"
    assert "literal-secret-5" not in shown(rows) and "Authorization: •••" in row_of(rows, "off")["target"]

    again_rows, again = connect_from_config(session, None, [], True)
    assert again[:2] == ["desk is already connected to that server.", "jmm is already connected to that server."]
    assert [r[-1] for r in again_rows if r[0] in ("desk", "jmm")] == ["connected", "connected"]


def test_errors_name_the_file_and_entry_and_spare_the_rest(
    home: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = home / "proj"
    mcp_json = write(
        project / ".mcp.json",
        {
            "mcpServers": {
                "good": DEMO,
                "needs": {**DEMO, "env": {"NB_X": "${NB_NOT_SET_VAR}"}},
                "broken": {"command": sys.executable, "args": "-m mcp_notebook.demo demo"},
                "leaky": {"command": "npx", "args": ["some-server", "--token", "${MY_TOKEN}"]},
                "homely": {**DEMO, "cwd": "${HOME}"},
                "literal": {
                    "command": "npx",
                    "args": ["some-server", "--api-key", "sk-literal-7"],
                    "env": {"PASSWORD": "hunter2"},
                },
                "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            }
        },
    )
    bad = write(project / ".vscode" / "mcp.json", '{\n  "servers": {\n    "x": {"command": "y",,}\n  }\n}\n')
    monkeypatch.delenv("NB_NOT_SET_VAR", raising=False)

    files = [f for f in find_configs() if f.path.is_relative_to(home)]
    by_path = {f.path: f for f in files}
    assert by_path[bad].servers == [] and len(by_path[bad].problems) == 1
    assert by_path[bad].problems[0].startswith(f"{bad}: not valid JSON (line 3, column")
    good = by_path[mcp_json]
    assert [s.name for s in good.servers] == ["good", "needs", "leaky", "homely", "literal", "old"]
    assert good.problems == [f"{mcp_json}, server 'broken': args must be a list of strings"]
    problems = {s.name: s.problem for s in good.servers}
    assert (
        problems["good"] is None
        and problems["needs"] is None
        and problems["homely"] is None
        and problems["literal"] is None
    )
    assert (
        problems["leaky"] is not None
        and "${MY_TOKEN} in args" in problems["leaky"]
        and "pass it in env" in problems["leaky"]
    )
    assert problems["old"] is not None and "SSE" in problems["old"]

    needs = good.servers[1]
    with pytest.raises(ConfigError) as info:
        needs.connect(session)
    assert (
        str(info.value)
        == f"{mcp_json}, server 'needs': environment variable NB_NOT_SET_VAR is not set (used in env NB_X)"
    )
    assert (
        info.value.details == {"file": str(mcp_json), "variable": "NB_NOT_SET_VAR"} and info.value.kind == "bad_config"
    )
    assert "needs" not in session.registry

    rows, notes = connect_from_config(session, None, ["good", "needs", "broken", "nope"], False, trust_project=True)
    assert notes == [
        "good: connected from ~/proj/.mcp.json (stdio).",
        f"needs failed: {mcp_json}, server 'needs': environment variable NB_NOT_SET_VAR is not set (used in env NB_X)",
        "broken failed: its entry in ~/proj/.mcp.json is bad: args must be a list of strings.",
        "nope failed: no server of that name in the configs found (found: good, homely, leaky, literal, needs, old).",
    ]
    assert call(session, "good", "echo", {"text": "still usable"}).content[0].text == "still usable"

    assert row_of(rows, "needs")["status"] == "approved; not connected (needs NB_NOT_SET_VAR, not set)"
    assert row_of(rows, "broken")["status"] == "bad entry: args must be a list of strings"
    assert row_of(rows, "")["status"].startswith("unreadable: not valid JSON (line 3")
    assert row_of(rows, "")["from file"] == "~/proj/.vscode/mcp.json"
    literal = row_of(rows, "literal")["target"]
    assert (
        "sk-literal-7" not in literal
        and "hunter2" not in literal
        and "--api-key •••" in literal
        and "PASSWORD=•••" in literal
    )

    homely_rows, homely_notes = connect_from_config(session, None, ["homely"], False, trust_project=True)
    assert homely_notes == ["homely: connected from ~/proj/.mcp.json (stdio)."]
    assert session.registry.get("homely").target.cwd == str(home)  # ${HOME} is a place, not a secret: resolved


def test_a_path_lists_only_and_names_what_it_cannot_find(home: Path, session: Session) -> None:
    elsewhere = write(home / "elsewhere" / "servers.json", {"mcpServers": {"one": DEMO, "two.three": DEMO}})
    write(home / "proj" / ".mcp.json", {"mcpServers": {"not-this-one": DEMO}})

    rows, notes = connect_from_config(session, str(elsewhere), [], False)
    assert len(session.registry) == 0  # no names, no --all: only a listing
    assert notes == [
        "Found 2 server(s) that can connect in 1 file(s) (2 from project files need your approval first: naming one shows it whole and asks); name them, or ask for all, to connect."
    ]  # a file given by path is not one of the user-level files: its entries wait for approval too
    assert [(r[0], r[1], r[2], r[3], r[5]) for r in rows] == [
        ("one", "mcpServers", "~/elsewhere/servers.json", "stdio", "needs approval (project file)"),
        (
            "two.three (as two_three)",
            "mcpServers",
            "~/elsewhere/servers.json",
            "stdio",
            "needs approval (project file)",
        ),  # SERVER.TOOL cannot hold a dot
    ]
    assert rows[0][4] == "-- " + " ".join([sys.executable, "-m", "mcp_notebook.demo", "demo"])

    _, notes = connect_from_config(session, str(elsewhere), ["two.three"], False, trust_project=True)
    assert notes == ["two_three: connected from ~/elsewhere/servers.json (stdio)."]
    assert call(session, "two_three", "add", {"a": 2, "b": 3}).structured_content == {"result": 5}

    with pytest.raises(ConfigError, match="no such file or folder: .*missing.json"):
        connect_from_config(session, str(home / "missing.json"), [], False)
    assert config_rows([]) == []


def test_jsonc_and_references() -> None:
    text = '{"url": "http://x/a,}", // a comment\n "b": [1, 2, ], /* c, */ }'
    assert _parse_jsonc(text) == {"url": "http://x/a,}", "b": [1, 2]}
    refs = references("${env:A} ${B:-x} $C $$D ${input:E} ${workspaceFolder} ${config:F}", bare=True)
    assert [(r.kind, r.name, r.default) for r in refs] == [
        ("env", "A", None), ("env", "B", "x"), ("env", "C", None), ("input", "E", None), ("builtin", "workspaceFolder", None), ("unsupported", "config:F", None),
    ]  # fmt: skip
    assert [r.name for r in references("sh -c 'echo $HOME' ${X}", bare=False)] == [
        "X"
    ]  # a command line's bare $ is the shell's


def test_the_magic_lists_then_connects_from_a_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``%mcp connect --from-config PATH`` lists; with a NAME it connects that one; the table never shows a value."""
    from tests.conftest import get_shell, session_of

    ip: InteractiveShell = get_shell()
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter-data"))  # the approval below is kept here
    monkeypatch.setenv("NB_MAGIC_NOTE", "magic-secret-7")
    config = tmp_path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"magic-demo": {**DEMO, "env": {"NB_NOTE": "${NB_MAGIC_NOTE}"}}}}))
    listed = ip.run_line_magic("mcp", f"connect --from-config {config}")
    text = listed._repr_mimebundle_()["text/plain"]
    assert "magic-demo" in text and "needs approval (project file)" in text and "magic-secret-7" not in text
    refused = ip.run_line_magic("mcp", f"connect --from-config {config} magic-demo")._repr_mimebundle_()["text/plain"]
    assert f"magic-demo refused: {config} is a project file and this entry is not approved as it is now; " in refused
    assert f"run %mcp connect --from-config {config} magic-demo --trust-project" in refused
    connected = ip.run_line_magic("mcp", f"connect --from-config {config} magic-demo --trust-project")
    text = connected._repr_mimebundle_()["text/plain"]
    assert "connected" in text and "magic-secret-7" not in text
    registry = session_of(ip).registry  # type: ignore[attr-defined]
    try:
        flow = ip.run_line_magic("mcp", "call magic-demo.process_info var=NB_NOTE")
        assert (
            flow.result().structured_content["value"] == "magic-secret-7"
        )  # the value reached the server, nothing else
        with pytest.raises(UsageError, match="name the servers to connect, or --all, not both"):
            ip.run_line_magic("mcp", f"connect --from-config {config} magic-demo --all")
    finally:
        registry.disconnect("magic-demo")
