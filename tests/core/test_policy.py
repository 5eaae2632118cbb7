"""The administrator's policy (core/policy.py): where it is found, how a file is checked, what each rule answers."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.core import policy as policy_module
from mcp_notebook.core.policy import POLICY_FILE, Policy, current_policy, load_policy, policy_dirs


def write(folder: Path, data: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / POLICY_FILE
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def one(tmp_path: Path, data: Any) -> Policy:
    write(tmp_path / "hub", data)
    return load_policy([tmp_path / "hub"])


@dataclass
class Target:
    kind: str
    command: list[str] = field(default_factory=list)
    url: str = ""
    env: dict[str, str] = field(default_factory=dict)
    bearer_env: str | None = None
    expanded_from: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------- where
def test_dirs_are_jupyters_shared_ones_never_the_users_own(tmp_path: Path) -> None:
    hub, mine = tmp_path / "hub", tmp_path / "mine"
    environ = {"JUPYTER_CONFIG_PATH": os.pathsep.join([str(hub), str(mine), str(Path.home() / ".jupyter")]),
               "JUPYTER_CONFIG_DIR": str(mine)}  # fmt: skip
    dirs = policy_dirs(environ, at_start="")
    assert dirs[0] == hub
    assert dirs[1:] == [Path(sys.prefix) / "etc" / "jupyter", Path("/usr/local/etc/jupyter"), Path("/etc/jupyter")]
    assert mine not in dirs and Path.home() / ".jupyter" not in dirs


def test_the_path_the_kernel_started_with_stays_when_a_cell_unsets_it(tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    assert hub in policy_dirs({}, at_start=str(hub))


def test_no_file_no_limits(tmp_path: Path) -> None:
    policy = load_policy([tmp_path])
    assert not policy.in_force
    assert policy.stdio_refusal(["anything"]) is None
    assert policy.url_refusal("https://anywhere.example/mcp") is None
    assert policy.least_review() is None


# ---------------------------------------------------------------------------------------------- bad files fail closed
@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "not valid JSON"),
        ({"alowed_urls": ["https://x.example/*"]}, "Additional properties are not allowed ('alowed_urls'"),
        ({"allowed_urls": "https://x.example/*"}, "at allowed_urls: 'https://x.example/*' is not of type 'array'"),
        ({"least_review": "never"}, "at least_review: 'never' is not one of ['remote', 'ask']"),
        ({"allowed_urls": ["x.example"]}, "allowed_urls entry 'x.example' is not SCHEME://HOST[:PORT][/PATH]"),
    ],
)
def test_a_bad_file_refuses_everything_and_names_itself(tmp_path: Path, content: Any, said: str) -> None:
    path = write(tmp_path / "hub", content)
    policy = load_policy([tmp_path / "hub"])
    assert policy.broken is not None and policy.broken[0] == path and said in policy.broken[1]
    for refusal in (
        policy.stdio_refusal(["python"]),
        policy.url_refusal("https://x.example/mcp"),
        policy.env_refusal("HOME", "passed to a stdio server"),
        policy.sampling_refusal("echo"),
        policy.project_config_refusal(),
        policy.serve_refusal(),
    ):
        assert refusal is not None and str(path) in refusal and "is not valid" in refusal
    assert policy.least_review() == ("ask", path)
    assert policy.rows()[0][1].startswith("NOT VALID")


def test_an_unreadable_file_fails_closed(tmp_path: Path) -> None:
    """A policy file the kernel cannot read refuses everything (here a folder in its place: unreadable even for
    root, where a chmod 0 file is not)."""
    (tmp_path / "hub" / POLICY_FILE).mkdir(parents=True)
    policy = load_policy([tmp_path / "hub"])
    assert policy.broken is not None and "cannot read it" in policy.broken[1]
    assert policy.stdio_refusal(["sh"]) is not None and policy.url_refusal("https://ok.example/") is not None


# ---------------------------------------------------------------------------------------------- stdio
def test_stdio_commands_by_name_path_and_glob(tmp_path: Path) -> None:
    python = os.path.basename(sys.executable)
    policy = one(tmp_path, {"allowed_stdio_commands": [python, "/opt/tools/*", "uv?"]})
    assert policy.stdio_refusal([python, "-m", "server"]) is None
    assert policy.stdio_refusal(["uvx", "thing"]) is None
    refused = policy.stdio_refusal(["node", "server.js"])
    assert refused == (
        f"the administrator's policy ({tmp_path / 'hub' / POLICY_FILE}) allows only these stdio commands: "
        f"{python}, /opt/tools/*, uv?; 'node' is not one of them"
    )
    # a name is a program looked up on PATH: the same name elsewhere is another program
    fake = tmp_path / python
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert policy.stdio_refusal([str(fake)]) is not None
    assert policy.stdio_refusal(["./" + python]) is not None


def test_stdio_path_patterns_match_where_the_program_is_found(tmp_path: Path) -> None:
    found = shutil.which("sh")
    assert found is not None
    folder = os.path.dirname(found)
    policy = one(tmp_path, {"allowed_stdio_commands": [folder + "/*"]})
    assert policy.stdio_refusal(["sh", "-c", "true"]) is None  # found on PATH in that folder
    assert policy.stdio_refusal([found]) is None
    link = tmp_path / "bin" / "sh"
    link.parent.mkdir()
    link.symlink_to(found)  # the same program under another name: its real path is allowed
    assert policy.stdio_refusal([str(link)]) is None
    assert policy.stdio_refusal([str(tmp_path / "bin" / "missing")]) is not None
    assert one(tmp_path, {"allowed_stdio_commands": []}).stdio_refusal(["sh"]) is not None


# ---------------------------------------------------------------------------------------------- URLs
def test_urls_match_as_a_browser_reads_them(tmp_path: Path) -> None:
    policy = one(
        tmp_path,
        {"allowed_urls": ["https://mcp.example.com/mcp", "https://*.tools.example/*", "http://127.0.0.1:*/mcp"]},
    )
    allowed = [
        "https://mcp.example.com/mcp",
        "HTTPS://MCP.EXAMPLE.COM:443/mcp",  # case and the default port, as a browser normalises them
        "https://mcp.example.com/x/../mcp",  # dot segments resolved
        "https://a.tools.example/any/path",
        "http://127.0.0.1:8123/mcp",
    ]
    for url in allowed:
        assert policy.url_refusal(url) is None, url
    refused = [
        "http://mcp.example.com/mcp",  # another scheme
        "https://mcp.example.com:8443/mcp",  # another port
        "https://mcp.example.com/mcp/more",
        "https://mcp.example.com.evil.example/mcp",  # a * in the host never runs into the path
        "https://tools.example/x",  # *.tools.example is its subdomains
        "https://a.tools.example@evil.example/x",  # user info: the host is evil.example
        "http://127.0.0.1:8123/other",
        "not a url",
    ]
    for url in refused:
        refusal = policy.url_refusal(url)
        assert refusal is not None and str(tmp_path / "hub" / POLICY_FILE) in refusal, url
    assert "(host evil.example) is not among them" in (
        policy.url_refusal("https://a.tools.example@evil.example/x") or ""
    )


def test_ipv6_and_no_path(tmp_path: Path) -> None:
    policy = one(tmp_path, {"allowed_urls": ["http://[::1]:8000", "https://only.example"]})
    assert policy.url_refusal("http://[::1]:8000/mcp") is None
    assert policy.url_refusal("http://[::2]:8000/mcp") is not None
    assert policy.url_refusal("https://only.example/a/b") is None


# ---------------------------------------------------------------------------------------------- environment
def test_denied_env_globs(tmp_path: Path) -> None:
    policy = one(tmp_path, {"denied_env": ["AWS_*", "HUB_TOKEN"]})
    assert policy.env_refusal("AWS_SECRET_ACCESS_KEY", "passed to a stdio server") == (
        f"the administrator's policy ({tmp_path / 'hub' / POLICY_FILE}) denies environment variable "
        "AWS_SECRET_ACCESS_KEY (rule 'AWS_*'): it is never used passed to a stdio server"
    )
    assert policy.env_refusal("aws_lower", "x") is None  # names are case-sensitive, as the environment's are
    assert policy.env_refusal("GITHUB_TOKEN", "x") is None


def test_target_refusal_covers_command_url_env_and_bearer(tmp_path: Path) -> None:
    policy = one(
        tmp_path,
        {"allowed_stdio_commands": ["sh"], "allowed_urls": ["https://ok.example/*"], "denied_env": ["SECRET*"]},
    )
    assert policy.target_refusal(Target("stdio", ["sh"], env={"PLAIN": "1"})) is None
    assert "SECRET_KEY" in (policy.target_refusal(Target("stdio", ["sh"], env={"SECRET_KEY": "v"})) or "")
    assert "'node'" in (policy.target_refusal(Target("stdio", ["node"])) or "")
    assert policy.target_refusal(Target("http", url="https://ok.example/mcp", bearer_env="TOKEN")) is None
    assert "Authorization" in (
        policy.target_refusal(Target("http", url="https://ok.example/mcp", bearer_env="SECRET_T")) or ""
    )
    assert policy.target_refusal(Target("inproc")) is None  # the notebook's own code
    # a config's ${VAR} already expanded into a header or an env value: the name it came from is judged at each open
    header = policy.target_refusal(Target("http", url="https://ok.example/mcp", expanded_from=("PLAIN", "SECRET_X")))
    assert header == (
        f"the administrator's policy ({tmp_path / 'hub' / POLICY_FILE}) denies environment variable SECRET_X (rule 'SECRET*'): "
        "it is never used expanded into a header"
    )
    assert "SECRET_X (rule 'SECRET*'): it is never used expanded into a stdio server's environment" in (
        policy.target_refusal(Target("stdio", ["sh"], env={"PLAIN": "v"}, expanded_from=("SECRET_X",))) or ""
    )
    assert policy.target_refusal(Target("stdio", ["sh"], env={"K": "v"}, expanded_from=("PLAIN",))) is None


def test_a_server_started_by_name_keeps_the_kernels_path(tmp_path: Path) -> None:
    """``--env PATH=...`` would make an allowed name (``sh``) start another file of that name: refused under a
    command list; a full path, or no command list at all, is not affected."""
    policy = one(tmp_path, {"allowed_stdio_commands": ["sh", "/usr/bin/*", "/bin/*"]})
    refused = policy.target_refusal(Target("stdio", ["sh"], env={"PATH": str(tmp_path)}))
    assert refused is not None and "PATH" in refused and str(tmp_path / "hub") in refused
    sh = os.path.realpath(shutil.which("sh") or "/bin/sh")
    assert policy.target_refusal(Target("stdio", [sh], env={"PATH": str(tmp_path)})) is None
    assert one(tmp_path / "open", {}).target_refusal(Target("stdio", ["sh"], env={"PATH": "/x"})) is None


# ---------------------------------------------------------------------------------------------- sampling and review
def test_sampling_providers_and_hosts(tmp_path: Path) -> None:
    policy = one(tmp_path, {"allowed_sampling_providers": ["echo", "openai"], "allowed_sampling_hosts": ["llm.campus.example", "127.0.0.1"]})  # fmt: skip
    assert policy.sampling_refusal("echo") is None
    assert "not 'anthropic'" in (policy.sampling_refusal("anthropic") or "")
    assert policy.sampling_refusal("openai", "https://llm.campus.example/v1/chat/completions") is None
    assert policy.sampling_refusal("openai", "http://127.0.0.1:11434/v1/chat/completions") is None
    assert "not 'api.openai.com'" in (policy.sampling_refusal("openai", "https://api.openai.com/v1/chat") or "")


def test_least_review_is_the_strictest_of_all_files(tmp_path: Path) -> None:
    write(tmp_path / "a", {"least_review": "remote"})
    second = write(tmp_path / "b", {"least_review": "ask"})
    assert load_policy([tmp_path / "a", tmp_path / "b"]).least_review() == ("ask", second)
    assert one(tmp_path, {}).least_review() is None


def test_project_configs_and_serve(tmp_path: Path) -> None:
    policy = one(tmp_path, {"project_configs": False, "serve": False})
    assert "forbids servers from project config files" in (policy.project_config_refusal() or "")
    assert "forbids %mcp serve" in (policy.serve_refusal() or "")
    assert policy.config_entry_refusal("project", "stdio", ["sh"], "") == policy.project_config_refusal()
    assert policy.config_entry_refusal("user", "stdio", ["sh"], "") is None
    open_one = one(tmp_path, {"allowed_urls": ["https://ok.example/*"]})
    assert open_one.project_config_refusal() is None and open_one.serve_refusal() is None
    assert open_one.config_entry_refusal("user", "http", [], "https://no.example/mcp") is not None
    assert open_one.config_entry_refusal("user", "http", [], "${env:URL}") is None  # judged when it connects


# ---------------------------------------------------------------------------------------------- several files, records
def test_every_file_must_allow(tmp_path: Path) -> None:
    write(tmp_path / "a", {"allowed_urls": ["https://*.example/*"], "denied_env": ["A"]})
    second = write(
        tmp_path / "b", {"allowed_urls": ["https://ok.example/*", "https://other.test/*"], "denied_env": ["B"]}
    )
    policy = load_policy([tmp_path / "a", tmp_path / "b"])
    assert policy.url_refusal("https://ok.example/mcp") is None
    assert str(second) in (policy.url_refusal("https://no.example/mcp") or "")
    assert policy.url_refusal("https://other.test/mcp") is not None  # the first file does not allow it
    assert policy.env_refusal("A", "x") and policy.env_refusal("B", "x")
    assert {row[0] for row in policy.rows()} == {str(tmp_path / "a" / POLICY_FILE), str(second)}


def test_saved_server_refusal(tmp_path: Path) -> None:
    policy = one(tmp_path, {"allowed_stdio_commands": ["sh"], "allowed_urls": ["https://ok.example/*"], "denied_env": ["TOKEN"]})  # fmt: skip
    assert policy.saved_server_refusal({"target": "-- sh -c true"}) is None
    assert policy.saved_server_refusal({"target": "-- node evil.js"}) is not None
    assert policy.saved_server_refusal({"target": "-- sh", "env": ["TOKEN"]}) is not None
    assert policy.saved_server_refusal({"target": "https://ok.example/mcp"}) is None
    assert policy.saved_server_refusal({"target": "https://evil.example/mcp"}) is not None
    assert policy.saved_server_refusal({"target": "https://ok.example/mcp", "bearer_env": "TOKEN"}) is not None
    assert policy.saved_server_refusal({"target": "demo", "in_process": True}) is None


def test_current_policy_follows_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hub = tmp_path / "hub"
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(hub))
    monkeypatch.setattr(policy_module, "_AT_START", "")
    assert current_policy().serve_refusal() is None
    write(hub, {"serve": False})
    assert current_policy().serve_refusal() is not None
    write(hub, {"serve": True, "$comment": "changed"})
    assert current_policy().serve_refusal() is None
