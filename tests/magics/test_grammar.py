"""`mcp_notebook.magics.grammar`: the argparse table of ``%mcp``, its ``--help``, errors and fast path."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
from IPython.core.error import UsageError

from mcp_notebook.magics.grammar import SUMMARY, Help, Parser, build_parsers, fresh_namespace

SUBCOMMANDS = {
    "connect", "servers", "log", "disconnect", "tools", "prompts", "resources", "skills", "skill", "call", "prompt", "read",
    "flows", "resume", "forget", "trace", "replay", "server", "serve", "stop", "roots", "model", "review", "policy", "auth", "tasks", "watch", "unwatch", "map",
}  # fmt: skip
FLOW_DEFAULTS: dict[str, Any] = {
    "answer": [],
    "answers": None,
    "accept_defaults": False,
    "wait": False,
    "trace": False,
    "no_save": False,
    "timeout": None,
    "output": None,
}


@pytest.fixture
def parsers() -> dict[str, Parser]:
    return build_parsers()  # fresh: parsers cache their usage and fast-path defaults


def words(line: str) -> list[str]:
    return line.split()


def test_one_parser_per_subcommand_all_mentioned_in_the_summary() -> None:
    ps = build_parsers()
    assert set(ps) == SUBCOMMANDS
    assert all(isinstance(p, Parser) and p.prog == f"%mcp {name}" for name, p in ps.items())
    for name in SUBCOMMANDS:
        assert name in SUMMARY, name
    assert "--help" in SUMMARY and SUMMARY.startswith("%mcp SUBCOMMAND")


@pytest.mark.parametrize(
    ("command", "line", "expected"),
    [
        (
            "connect",
            "demo http://h/mcp",
            {
                "name": "demo",
                "target": "http://h/mcp",
                "header": [],
                "bearer_env": None,
                "protocol": "auto",
                "cwd": None,
                "env": [],
                "timeout": None,
            },
        ),
        (
            "connect",
            "demo --header A:1 --header B:2 --env K=V --protocol legacy --timeout 2.5 --cwd d --bearer-env TOK",
            {
                "name": "demo",
                "target": None,
                "header": ["A:1", "B:2"],
                "env": ["K=V"],
                "protocol": "legacy",
                "timeout": 2.5,
                "cwd": "d",
                "bearer_env": "TOK",
            },
        ),
        ("servers", "", {"help": False}),
        ("log", "", {"name": None, "lines": 50}),
        ("log", "demo -n 7", {"name": "demo", "lines": 7}),
        ("disconnect", "demo", {"name": "demo"}),
        ("tools", "", {"server": None}),
        ("prompts", "demo", {"server": "demo"}),
        ("resources", "demo", {"server": "demo"}),
        ("read", "file:///x", {"first": "file:///x", "uri": None, **FLOW_DEFAULTS}),
        (
            "read",
            "demo file:///x --wait --trace --no-save --timeout 3 -o r --answer a=1 --answer b=2 --answers {} --accept-defaults",
            {
                "first": "demo",
                "uri": "file:///x",
                "wait": True,
                "trace": True,
                "no_save": True,
                "timeout": 3.0,
                "output": "r",
                "answer": ["a=1", "b=2"],
                "answers": "{}",
                "accept_defaults": True,
            },
        ),
        ("flows", "", {"from_path": None}),
        ("flows", "--from a.ipynb", {"from_path": "a.ipynb"}),
        ("resume", "", {"id": None, "from_path": None, "trust": False, **FLOW_DEFAULTS}),
        (
            "resume",
            "f1 --trust --from b.ipynb --output res",
            {"id": "f1", "trust": True, "from_path": "b.ipynb", "output": "res"},
        ),
        ("forget", "f1", {"id": "f1", "all": False}),
        ("forget", "--all", {"id": None, "all": True}),
        ("trace", "", {"which": "last", "json": False, "save": None, "keep_answers": False}),
        (
            "trace",
            "last --json --save t.json --keep-answers",
            {"which": "last", "json": True, "save": "t.json", "keep_answers": True},
        ),
        (
            "replay",
            "t.json",
            {"file": "t.json", "server": None, "answer": [], "answers": None, "timeout": None, "output": None},
        ),
        (
            "replay",
            "t.json --server shop2 --answer otp=1 -o r",
            {"file": "t.json", "server": "shop2", "answer": ["otp=1"], "answers": None, "timeout": None, "output": "r"},
        ),
        ("server", "demo --var srv", {"name": "demo", "var": "srv"}),
        (
            "serve",
            "demo",
            {"name": "demo", "host": "127.0.0.1", "port": 0, "keys_env": None, "no_auth": False, "allow_host": []},
        ),
        (
            "serve",
            "demo --host 0.0.0.0 --port 8123 --keys-env K --no-auth --allow-host a --allow-host b",
            {"host": "0.0.0.0", "port": 8123, "keys_env": "K", "no_auth": True, "allow_host": ["a", "b"]},
        ),
        ("stop", "demo", {"name": "demo"}),
        ("roots", "", {"action": "list", "path": None, "name": None}),
        ("roots", "add data --name Data", {"action": "add", "path": "data", "name": "Data"}),
        (
            "model",
            "",
            {"action": "list", "name": None, "provider": None, "model": None, "base_url": None, "cost": None},
        ),
        (
            "model",
            "add local openai llama3 --base-url http://localhost:11434/v1 --api-key-env K --cost 0 --speed 0.5 --intelligence 1 --timeout 9",
            {
                "action": "add",
                "name": "local",
                "provider": "openai",
                "model": "llama3",
                "base_url": "http://localhost:11434/v1",
                "api_key_env": "K",
                "cost": 0.0,
                "speed": 0.5,
                "intelligence": 1.0,
                "timeout": 9.0,
            },
        ),
        ("review", "", {"policy": None}),
        ("review", "ask", {"policy": "ask"}),
    ],
)
def test_flags_land_in_the_namespace(
    parsers: dict[str, Parser], command: str, line: str, expected: dict[str, Any]
) -> None:
    ns, extra = parsers[command].parse(words(line))
    assert extra == []
    assert ns.help is False
    assert {k: getattr(ns, k) for k in expected} == expected


@pytest.mark.parametrize("command", ["call", "prompt"])
@pytest.mark.parametrize(
    ("line", "expected", "pairs"),
    [
        ("t", {}, []),
        ("srv.t a=1 b=x=y c=", {}, ["a=1", "b=x=y", "c="]),
        ("t a=1 --wait b=2", {"wait": True}, ["a=1", "b=2"]),
        ('t --json {"b":2} a=-1 -o out', {"json": '{"b":2}', "output": "out"}, ["a=-1"]),
        (
            "t a=1 --answer f=1 b=2 --answer g=2 --accept-defaults --timeout 1",
            {"answer": ["f=1", "g=2"], "accept_defaults": True, "timeout": 1.0},
            ["a=1", "b=2"],
        ),
        ("t x=-h y=--help", {}, ["x=-h", "y=--help"]),  # -h inside a value is not a request for help
    ],
)
def test_call_and_prompt_intermix_pairs_and_flags(
    parsers: dict[str, Parser], command: str, line: str, expected: dict[str, Any], pairs: list[str]
) -> None:
    ns, extra = parsers[command].parse(words(line), intermixed_pairs=True)
    assert getattr(ns, "tool" if command == "call" else "prompt") == words(line)[0]
    assert vars(ns) == {**vars(ns), "json": None, **FLOW_DEFAULTS, **expected}
    assert extra == pairs


@pytest.mark.parametrize("command", ["call", "prompt"])
@pytest.mark.parametrize("line", ["t", "t a=1", "srv.t a=1 b=two c= d=x=y", "t n=-3 s=--x"])
def test_the_fast_path_gives_what_argparse_gives(command: str, line: str) -> None:
    fast, fast_extra = build_parsers()[command].parse(words(line), intermixed_pairs=True)
    slow, slow_extra = build_parsers()[command].parse_known_args(words(line))
    assert (vars(fast), fast_extra) == (vars(slow), slow_extra)


def test_the_fast_path_skips_argparse_and_copies_its_defaults(
    parsers: dict[str, Parser], monkeypatch: pytest.MonkeyPatch
) -> None:
    call = parsers["call"]
    first, _ = call.parse(["t", "a=1"], intermixed_pairs=True)  # computes the cached defaults once
    first.answer.append("mutated=1")

    def no_argparse(*args: Any, **kw: Any) -> Any:
        raise AssertionError("argparse was used for a flag-less call line")

    monkeypatch.setattr(call, "parse_known_args", no_argparse)
    second, extra = call.parse(["u", "b=2"], intermixed_pairs=True)
    assert (second.tool, extra, second.answer) == ("u", ["b=2"], [])  # lists are not shared between calls
    with pytest.raises(AssertionError, match="argparse was used"):
        call.parse(["u", "--wait"], intermixed_pairs=True)  # a flag takes the slow path


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_raises_help_with_the_subcommand_text(command: str, flag: str) -> None:
    parser = build_parsers()[command]
    before = parser.format_help()
    with pytest.raises(Help) as info:
        parser.parse(["x", flag, "--no-such-flag"], intermixed_pairs=command in ("call", "prompt"))
    text = str(info.value)
    assert isinstance(info.value, Exception) and not isinstance(info.value, UsageError)
    assert text == before
    assert text.startswith(f"usage: %mcp {command} [-h]")
    assert "".join((parser.description or "").split()) in "".join(text.split())  # wrapped, also at hyphens
    assert "show this help" in text and "%%mcp" not in text.split("\n\n")[0]  # the usage block


def test_help_text_is_the_same_after_a_slow_parse(parsers: dict[str, Parser]) -> None:
    before = parsers["resume"].format_help()
    parsers["resume"].parse(["f1", "--wait"])  # sets the %-escaped usage
    with pytest.raises(Help) as info:
        parsers["resume"].parse(["--help"])
    assert str(info.value) == before
    assert "(see %mcp flows)" in before and "%mcp flows shows it whole" in before  # "%%" in help= renders as "%"


@pytest.mark.parametrize(
    ("command", "line", "intermixed", "message"),
    [
        ("connect", "demo --bogus", False, "unrecognized arguments: --bogus"),
        ("connect", "n --protocol nope", False, "argument --protocol: invalid choice: 'nope'"),
        ("connect", "demo --protocol nope", False, "argument --protocol: invalid choice: 'nope'"),
        ("log", "-n many", False, "argument -n/--lines: invalid int value: 'many'"),
        ("serve", "demo --port http", False, "argument --port: invalid int value: 'http'"),
        ("disconnect", "a b", False, "unrecognized arguments: b"),
        ("call", "t a=1 --bogus b=2", True, "unrecognized option --bogus"),
        ("call", "t --wait -1", True, "unrecognized option -1"),
        ("call", "t --ans x=1", True, "ambiguous option: --ans could match --answer, --answers"),
        ("call", "", True, "the following arguments are required: tool"),
        ("call", "t --timeout soon", True, "argument --timeout: invalid float value: 'soon'"),
        ("prompt", "p --json", True, "argument --json: expected one argument"),
        ("call", "t a=1", False, "unrecognized arguments: a=1"),  # pairs only where the caller accepts them
    ],
)
def test_bad_lines_raise_usage_error_with_the_usage(command: str, line: str, intermixed: bool, message: str) -> None:
    with pytest.raises(UsageError) as info:
        build_parsers()[command].parse(words(line), intermixed_pairs=intermixed)
    text = str(info.value)
    assert text.startswith(message)
    assert f"\nusage: %mcp {command} [-h]" in text and "%%" not in text


def test_error_raises_usage_error_instead_of_exiting(parsers: dict[str, Parser]) -> None:
    with pytest.raises(UsageError, match=r"^boom\nusage: %mcp stop \[-h\] name$"):
        parsers["stop"].error("boom")


def test_fresh_namespace() -> None:
    ns, _ = build_parsers()["resume"].parse(words("f1 -o res --answer a=1 --wait"))
    fresh = fresh_namespace(ns)
    assert fresh is not ns and fresh.output is None
    assert vars(fresh) == {**vars(ns), "output": None}
    assert ns.output == "res"  # the original is untouched
    assert vars(fresh_namespace(argparse.Namespace(id="x"))) == {"id": "x", "output": None}


def test_help_names_every_setting(capsys: pytest.CaptureFixture[str]) -> None:
    """`%mcp --help` lists every %config MCPMagics setting (connect_timeout was missing)."""
    from mcp_notebook.magics.magics import MCPMagics
    from mcp_notebook.session.session import SessionSettings

    from ..conftest import get_shell

    get_shell().run_line_magic("mcp", "--help")
    text = capsys.readouterr().out
    names = SessionSettings.class_trait_names(config=True)
    assert "connect_timeout" in names and len(names) >= 13
    settings = text.split("Settings: %config MCPMagics (", 1)[1].split(")", 1)[0].split(", ")
    assert sorted(settings) == sorted(names) == sorted(MCPMagics.class_trait_names(config=True))


def test_mcp_question_mark_shows_every_subcommands_usage_generated_from_the_parsers() -> None:
    """``%mcp?`` shows the summary, then each parser's own usage line and description (built when asked)."""
    from ..conftest import get_shell

    shell = get_shell()
    doc = shell.object_inspect_text("%mcp")  # what %mcp? pages, and a front end's inspect request shows
    doc = doc.split("Docstring:", 1)[1].strip()
    assert doc.startswith(SUMMARY.split("\n")[0])
    parsers = build_parsers()
    assert set(parsers) == SUBCOMMANDS
    for name, parser in parsers.items():
        usage = " ".join(parser.format_usage().removeprefix("usage: ").split())
        assert f"\n  {usage}\n" in doc + "\n", name
    assert "--accept-defaults" in doc and "--from-config" in doc
