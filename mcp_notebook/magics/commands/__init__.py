"""Every ``%mcp`` subcommand, one module each, and ``COMMANDS``: the registry the magic routes by.

A module holds one subcommand's ``parser()`` (its grammar, built with ``magics.parser``) and its
``run(magic, words, cell)`` (parse the words, call the session, return what the cell shows). The
three listings share one module (``offered``), being one handler over a kind. A new subcommand is
a module here and its entry below; its line in ``grammar.SUMMARY`` says what it does in ``%mcp --help``.

The order of ``COMMANDS`` is the order of ``%mcp?`` (``grammar.full_usage``) and of the command
reference. An entry names its module, which ``Command`` imports on the subcommand's first use:
``%load_ext`` imports this registry and none of the modules (bench/overhead.py P3). A handler
imports what it shows (``notebook.display``, widgets) inside ``run`` all the same: ``%mcp?``, the
command reference and Tab on a subcommand's flags import its module to build its parser.
"""

from __future__ import annotations

from ..command import Command

__all__ = ["COMMANDS"]

COMMANDS: dict[str, Command] = {
    "connect": Command("connect"),
    "auth": Command("auth"),
    "servers": Command("servers"),
    "log": Command("log"),
    "disconnect": Command("disconnect"),
    "tools": Command("offered", ("tools",)),
    "prompts": Command("offered", ("prompts",)),
    "resources": Command("offered", ("resources",)),
    "call": Command("call"),
    "prompt": Command("prompt"),
    "skills": Command("skills"),
    "skill": Command("skill"),
    "read": Command("read"),
    "tasks": Command("tasks"),
    "map": Command("map"),
    "watch": Command("watch"),
    "unwatch": Command("unwatch"),
    "flows": Command("flows"),
    "resume": Command("resume"),
    "forget": Command("forget"),
    "trace": Command("trace"),
    "replay": Command("replay"),
    "server": Command("server"),
    "serve": Command("serve"),
    "stop": Command("stop"),
    "roots": Command("roots"),
    "model": Command("model"),
    "review": Command("review"),
    "policy": Command("policy"),
}
