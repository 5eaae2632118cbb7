"""``magics.commands``: one module per subcommand, each with its parser and its handler, and one registry.

The magic routes by ``COMMANDS`` alone, so a new subcommand is a module and an entry: a test adds
one to a running shell and sees it parsed, helped, run and refused as every other is. An entry
names its module, imported on the subcommand's first use: ``%load_ext`` imports none of them.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from mcp_notebook.magics import commands
from mcp_notebook.magics.command import Command, Magic
from mcp_notebook.magics.commands import COMMANDS
from mcp_notebook.magics.completion import completer_of
from mcp_notebook.magics.grammar import SUMMARY, build_parsers
from mcp_notebook.magics.parser import Parser

from ..conftest import get_shell

FOLDER = Path(commands.__file__).parent


def test_every_module_in_the_folder_is_registered_and_every_entry_names_one() -> None:
    """A module without an entry would never run; an entry's parser and handler are its module's ``parser`` and ``run``."""
    modules = {p.stem for p in FOLDER.glob("*.py") if p.stem != "__init__"}
    assert {c.module for c in COMMANDS.values()} == modules
    for name, command in COMMANDS.items():
        assert isinstance(command, Command)
        code = command.code()
        assert code.__name__ == f"{commands.__name__}.{command.module}", name
        assert callable(code.parser) and callable(code.run), name
        parser = command.parser()
        assert isinstance(parser, Parser) and parser.prog == f"%mcp {name}", name
        assert name in SUMMARY, name  # %mcp --help names it


def test_build_parsers_is_the_registry_in_its_order_and_fresh_each_time() -> None:
    """The command reference and ``%mcp?`` read the registry's order; parsers cache state, so each call builds anew."""
    first, second = build_parsers(), build_parsers()
    assert list(first) == list(second) == list(COMMANDS)
    assert list(COMMANDS)[:5] == ["connect", "auth", "servers", "log", "disconnect"]  # as %mcp? has always listed them
    assert all(first[name] is not second[name] for name in first)
    assert first["call"] is first["call"]  # built once, then kept (its usage and fast path are cached)
    assert "call" in first and "nosuch" not in first and first.get("nosuch") is None
    with pytest.raises(KeyError):
        first["nosuch"]


def test_a_command_imports_neither_the_router_nor_the_grammar() -> None:
    """Both import the commands: a command importing them (a function-local import too) runs the imports in a circle."""
    for path in FOLDER.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2:
                assert node.module not in ("magics", "grammar", "completion", "cell_await"), (
                    f"{path.name}: {ast.unparse(node)}"
                )


def _hello_parser() -> Parser:
    p = Parser("hello", "Say hello to NAME.")
    p.add_argument("name")
    p.add_argument("--loud", action="store_true", help="in capitals")
    return p


def _hello(magic: Magic, words: list[str], cell: str | None) -> Any:
    ns, _ = magic.parsers["hello"].parse(words)
    text = f"hello {ns.name}" + (f" and {cell.strip()}" if cell else "")
    return text.upper() if ns.loud else text


def test_a_new_subcommand_is_a_module_and_an_entry(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A module with ``parser`` and ``run`` (what a file under ``commands/`` makes) and its entry: it runs as the built-in ones do."""
    shell = get_shell()
    hello = types.ModuleType(f"{commands.__name__}.hello")
    hello.parser, hello.run = _hello_parser, _hello  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, hello.__name__, hello)
    monkeypatch.setitem(COMMANDS, "hello", Command("hello"))
    assert shell.run_line_magic("mcp", "hello world") == "hello world"
    assert shell.run_line_magic("mcp", "hello 'big world' --loud") == "HELLO BIG WORLD"
    assert shell.run_cell_magic("mcp", "hello world", "the cell\n") == "hello world and the cell"
    assert shell.run_line_magic("mcp", "hello --help") is None
    assert capsys.readouterr().out.startswith("usage: %mcp hello [-h] [--loud] name\n\nSay hello to NAME.")
    with pytest.raises(UsageError) as refused:
        shell.run_line_magic("mcp", "hello")
    assert str(refused.value) == "the following arguments are required: name\nusage: %mcp hello [-h] [--loud] name"
    found = completer_of(shell).complete("%mcp hel")
    assert found is not None and found.items == [("hello", "subcommand")]  # Tab offers it
    monkeypatch.delitem(COMMANDS, "hello")
    with pytest.raises(UsageError, match=r"^unknown subcommand 'hello'\. Try %mcp --help$"):
        shell.run_line_magic("mcp", "hello world")


def test_load_ext_imports_the_registry_and_no_command_module_until_one_is_used() -> None:
    """``%load_ext`` (and Tab on the subcommands' names) imports no command module; a line imports its own alone.

    Importing every command module, with what they import, was a tenth of ``%load_ext`` (bench/overhead.py P3).
    """
    script = (
        "import json, sys\n"
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython()\n"
        "def loaded(): return sorted(m for m in sys.modules if m.startswith('mcp_notebook.magics.commands'))\n"
        "seen = []\n"
        "ip.run_line_magic('load_ext', 'mcp_notebook')\n"
        "seen.append(loaded())\n"
        "from mcp_notebook.magics.completion import completer_of\n"
        "seen.append(completer_of(ip).complete('%mcp dis').items)\n"
        "seen.append(loaded())\n"
        "ip.run_line_magic('mcp', 'disconnect --help')\n"
        "seen.append(loaded())\n"
        "print(json.dumps(seen))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    after_load, offered, after_tab, after_line = json.loads(out.stdout.strip().splitlines()[-1])
    assert after_load == after_tab == ["mcp_notebook.magics.commands"]
    assert offered == [["disconnect", "subcommand"]]
    assert after_line == ["mcp_notebook.magics.commands", "mcp_notebook.magics.commands.disconnect"]


def test_the_flow_lines_share_the_answer_flags_from_the_parser_module() -> None:
    """``call``, ``prompt``, ``read`` and ``resume`` take one set of flow flags; ``map`` the answers alone."""
    parsers = build_parsers()
    flow_flags = {"--answer", "--answers", "--accept-defaults", "--decline", "--cancel", "--confirm", "--background"}
    for name in ("call", "prompt", "read", "resume"):
        assert flow_flags <= set(parsers[name]._option_string_actions), name
    assert {"--answer", "--accept-defaults"} <= set(parsers["map"]._option_string_actions)
    assert "--background" not in parsers["map"]._option_string_actions
    ns = parsers["map"].parse(["demo.echo", "--over", "rows", "--answer", "a=1"])[0]
    assert isinstance(ns, argparse.Namespace) and (ns.tool, ns.over, ns.answer) == ("demo.echo", "rows", ["a=1"])


def test_a_subcommand_whose_module_cannot_be_imported_says_so_and_tab_stays_quiet(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A module imported on first use can fail there (a broken install): the line says which and what to do, Tab offers nothing.

    Before the modules were imported on first use, such a failure stopped ``%load_ext``; now the line
    showed a bare ``ModuleNotFoundError`` traceback, and Tab after ``%mcp NAME`` printed IPython's
    "ugly traceback" of a failed matcher (the completer's parser lookup was outside its guard).
    """
    shell = get_shell()
    monkeypatch.setitem(sys.modules, f"{commands.__name__}.gone", None)  # import_module raises ModuleNotFoundError
    monkeypatch.setitem(COMMANDS, "gone", Command("gone"))
    with pytest.raises(UsageError) as refused:
        shell.run_line_magic("mcp", "gone world")
    assert str(refused.value).startswith(
        f"this %mcp subcommand cannot run: its module {commands.__name__}.gone could not be imported (import of "
    )
    assert str(refused.value).endswith("reinstall mcp-notebook in this kernel's environment and restart the kernel")
    completer = completer_of(shell)
    assert completer.complete("%mcp gone --") is None  # nothing offered, no traceback
    assert capsys.readouterr().err == ""
    found = completer.complete("%mcp gon")
    assert found is not None and found.items == [("gone", "subcommand")]  # the name is the registry's, still offered
