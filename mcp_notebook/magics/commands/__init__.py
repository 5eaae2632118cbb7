"""Every ``%mcp`` subcommand, one module each, and ``COMMANDS``: the registry the magic routes by.

A module holds one subcommand's ``parser()`` (its grammar, built with ``magics.parser``) and its
``run(magic, words, cell)`` (parse the words, call the session, return what the cell shows). The
three listings share one module (``offered``), being one handler over a kind. A new subcommand is
a module here and its entry below; its line in ``grammar.SUMMARY`` says what it does in ``%mcp --help``.

The order of ``COMMANDS`` is the order of ``%mcp?`` (``grammar.full_usage``) and of the command
reference. ``%load_ext`` builds every parser (for ``%mcp?`` and Tab), so every module here is
imported then: a handler imports what it shows (``notebook.display``, widgets) inside ``run``,
when the line first runs, to keep ``%load_ext`` cheap (bench/overhead.py P3).
"""

from __future__ import annotations

from functools import partial

from ..command import Command
from . import (
    auth,
    call,
    connect,
    disconnect,
    flows,
    forget,
    log,
    map,
    model,
    offered,
    policy,
    prompt,
    read,
    replay,
    resume,
    review,
    roots,
    serve,
    server,
    servers,
    skill,
    skills,
    stop,
    tasks,
    trace,
    unwatch,
    watch,
)

__all__ = ["COMMANDS"]

COMMANDS: dict[str, Command] = {
    "connect": Command(connect.parser, connect.run),
    "auth": Command(auth.parser, auth.run),
    "servers": Command(servers.parser, servers.run),
    "log": Command(log.parser, log.run),
    "disconnect": Command(disconnect.parser, disconnect.run),
    "tools": Command(partial(offered.parser, "tools"), partial(offered.run, "tools")),
    "prompts": Command(partial(offered.parser, "prompts"), partial(offered.run, "prompts")),
    "resources": Command(partial(offered.parser, "resources"), partial(offered.run, "resources")),
    "call": Command(call.parser, call.run),
    "prompt": Command(prompt.parser, prompt.run),
    "skills": Command(skills.parser, skills.run),
    "skill": Command(skill.parser, skill.run),
    "read": Command(read.parser, read.run),
    "tasks": Command(tasks.parser, tasks.run),
    "map": Command(map.parser, map.run),
    "watch": Command(watch.parser, watch.run),
    "unwatch": Command(unwatch.parser, unwatch.run),
    "flows": Command(flows.parser, flows.run),
    "resume": Command(resume.parser, resume.run),
    "forget": Command(forget.parser, forget.run),
    "trace": Command(trace.parser, trace.run),
    "replay": Command(replay.parser, replay.run),
    "server": Command(server.parser, server.run),
    "serve": Command(serve.parser, serve.run),
    "stop": Command(stop.parser, stop.run),
    "roots": Command(roots.parser, roots.run),
    "model": Command(model.parser, model.run),
    "review": Command(review.parser, review.run),
    "policy": Command(policy.parser, policy.run),
}
