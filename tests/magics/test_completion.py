"""Tab completion of ``%mcp`` lines in a real kernel: ``complete_request`` as JupyterLab sends it.

The kernel defines its servers in a cell (``MCPServer`` objects, in-process transport): ``shop``
has a tool whose arguments take an enum, an ``Enum`` class (``$ref``), a ``oneOf`` of ``const``
and a boolean; a prompt and a resource template whose values come from its ``completion/complete``
handler, which notes the context it was given. ``plain`` has no completion handler; ``lag`` lists
its tools slowly, to show that Tab does not wait for it.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import pytest

from mcp_notebook.magics.grammar import build_parsers

from ..support.kernel_harness import Kernel

SETUP = '''
import asyncio, enum
from typing import Annotated, Literal
from pydantic import BaseModel, Field
from mcp.server.mcpserver import MCPServer, Elicit, Resolve
from mcp.types import Completion, PromptReference, ResourceTemplateReference

shop_server = MCPServer("shop")
seen = []  # (argument, value, context) of every completion/complete the server answered


class Size(enum.Enum):
    small = "small"
    large = "large"


class Colour(BaseModel):
    colour: str


async def ask_colour() -> Elicit[Colour]:
    return Elicit("Favourite colour?", Colour)


@shop_server.tool()
def order(
    item: str,
    color: Literal["red", "green", "blue"],
    gift: bool = False,
    size: Size = Size.small,
    speed: Annotated[str, Field(json_schema_extra={"oneOf": [{"const": "slow", "title": "Slow"}, {"const": "fast", "title": "Fast"}]})] = "slow",
) -> str:
    return f"{item} {color}"


@shop_server.tool()
async def paint(thing: str, choice: Annotated[Colour, Resolve(ask_colour)]) -> str:
    return f"painted {thing} {choice.colour}"


@shop_server.prompt()
def greet(language: str, style: str = "plain") -> str:
    return f"hello in {language}"


@shop_server.resource("notes://{topic}/{page}")
def note(topic: str, page: str) -> str:
    return f"{topic} {page}"


@shop_server.resource("docs://readme")
def readme() -> str:
    return "read me"


@shop_server.completion()
async def complete(ref, argument, context):
    seen.append((argument.name, argument.value, dict(context.arguments or {}) if context else {}))
    if isinstance(ref, PromptReference) and argument.name == "language":
        values = ["english", "esperanto", "french", "new zealand english"]
    elif isinstance(ref, ResourceTemplateReference) and argument.name == "topic":
        values = ["alpha", "beta"]
    elif isinstance(ref, ResourceTemplateReference) and argument.name == "page":
        values = {"alpha": ["intro", "index"], "beta": ["summary"]}.get((context.arguments or {}).get("topic") if context else None, [])
    else:
        return None
    return Completion(values=[v for v in values if v.startswith(argument.value)])


plain_server = MCPServer("plain")  # no completion handler: no `completions` capability


@plain_server.prompt()
def ask(topic: str) -> str:
    return topic


@plain_server.tool()
def ping() -> str:
    return "pong"


class SlowLister(MCPServer):
    """Lists its tools after `delay` seconds."""

    delay = 0.0

    async def list_tools(self):
        await asyncio.sleep(self.delay)
        return await super().list_tools()


lag_server = SlowLister("lag")


@lag_server.tool()
def ping_lag() -> str:
    return "pong"


%load_ext mcp_notebook
from mcp_notebook.magics.completion import completer_of, register
register(get_ipython(), get_ipython().magics_manager.registry["MCPMagics"].session)
%mcp connect shop shop_server
'''

# every type this completer gives its completions (the reply's metadata carries them)
OURS = {
    "subcommand",
    "flag",
    "value",
    "server",
    "tool",
    "prompt",
    "argument",
    "resource",
    "template",
    "connection",
    "flow",
    "model",
}


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return SETUP


@pytest.fixture(scope="module", autouse=True)
def jedi_warmed(kernel: Kernel) -> None:
    complete(kernel, "import o")  # Jedi's first run is slow (seconds); not what these tests measure


def reply_of(k: Kernel, code: str, cursor: int | None = None) -> dict[str, Any]:
    reply = k.kc.complete(code, len(code) if cursor is None else cursor, reply=True, timeout=10)
    content: dict[str, Any] = reply["content"]
    assert content["status"] == "ok"
    return content


def complete(k: Kernel, code: str) -> list[str]:
    return list(reply_of(k, code)["matches"])


def printed(k: Kernel, code: str) -> str:
    return k.text_of_cell(k.execute(code)).strip()


def test_subcommands_and_flags(kernel: Kernel) -> None:
    parsers = build_parsers()
    assert complete(kernel, "%mcp ") == sorted(parsers)
    assert complete(kernel, "%mcp re") == ["read", "replay", "resources", "resume", "review"]
    assert complete(kernel, "%%mcp ser") == ["serve", "server", "servers"]
    assert complete(kernel, "r = %mcp cal") == ["call"]
    reply = reply_of(kernel, "%mcp call shop.order --t")
    assert reply["matches"] == ["--task", "--timeout", "--trace", "--ttl"]
    assert (reply["cursor_start"], reply["cursor_end"]) == (
        len("%mcp call shop.order "),
        len("%mcp call shop.order --t"),
    )
    # a flag given once is not offered again; one that may repeat (--answer) is
    every = sorted(o for a in parsers["call"]._actions for o in a.option_strings if o.startswith("--"))
    assert complete(kernel, "%mcp call shop.order --wait --answer a=1 --") == [o for o in every if o != "--wait"]
    # a flag's choices, after a space or an `=`
    assert complete(kernel, "%mcp connect x http://h --protocol ") == ["auto", "legacy", "2026-07-28"]
    assert complete(kernel, "%mcp connect x http://h --protocol=le") == ["legacy"]
    assert complete(kernel, "%mcp connect x http://h --client-id a --iss") == ["--issuer"]  # the sign-in pin
    # positional words of the grammar
    assert complete(kernel, "%mcp auth ") == ["list", "logout"]
    assert complete(kernel, "%mcp roots ") == ["list", "add", "remove", "reset"]
    assert complete(kernel, "%mcp review a") == ["ask", "always"]
    assert complete(kernel, "%mcp trace ") == ["last"]


def test_tools_and_their_arguments(kernel: Kernel) -> None:
    # one server connected: SERVER. and the bare tool names
    assert complete(kernel, "%mcp call ") == ["shop.", "order", "paint"]
    assert complete(kernel, "%mcp call shop.") == ["shop.order", "shop.paint"]
    reply = reply_of(kernel, "%mcp call shop.o")
    assert reply["matches"] == ["shop.order"]
    assert reply["cursor_start"] == len("%mcp call ")
    types = {c["text"]: c["type"] for c in reply["metadata"]["_jupyter_types_experimental"]}
    assert types == {"shop.order": "tool"}
    assert complete(kernel, "%mcp call or") == ["order"]
    # argument names, without the ones typed
    assert complete(kernel, "%mcp call shop.order ") == ["item=", "color=", "gift=", "size=", "speed="]
    assert complete(kernel, "%mcp call order color=red --wait s") == ["size=", "speed="]
    # values from the input schema: enum, Enum ($ref), oneOf of const, boolean
    reply = reply_of(kernel, "%mcp call shop.order color=")
    assert reply["matches"] == ["red", "green", "blue"]
    assert reply["cursor_start"] == reply["cursor_end"] == len("%mcp call shop.order color=")
    assert complete(kernel, "%mcp call shop.order item=x color=g") == ["green"]
    assert complete(kernel, "%mcp call shop.order size=") == ["small", "large"]
    assert complete(kernel, "%mcp call shop.order speed=") == ["slow", "fast"]
    assert complete(kernel, "%mcp call shop.order gift=") == ["true", "false"]
    # the cell magic's first line completes the same way
    assert complete(kernel, "%%mcp call shop.order g") == ["gift="]
    cell = '%%mcp call shop.order gift=t\n{"item": "x"}'
    assert reply_of(kernel, cell, cursor=cell.index("\n"))["matches"] == ["true"]


def test_prompt_arguments_from_the_servers_completion(kernel: Kernel) -> None:
    assert complete(kernel, "%mcp prompt ") == ["shop.", "greet"]
    assert complete(kernel, "%mcp prompt shop.") == ["shop.greet"]
    assert complete(kernel, "%mcp prompt shop.greet ") == ["language=", "style="]
    assert complete(kernel, "%mcp prompt greet style=formal ") == ["language="]
    printed(kernel, "seen.clear()")
    assert complete(kernel, "%mcp prompt shop.greet style=formal language=e") == ["english", "esperanto"]
    # the arguments already typed go along as context
    assert printed(kernel, "print(seen)") == "[('language', 'e', {'style': 'formal'})]"
    # a value with a space comes quoted, as the magic's line splitting needs it
    assert complete(kernel, "%mcp prompt greet language=new") == ["'new zealand english'"]


def test_resources_and_template_variables(kernel: Kernel) -> None:
    assert complete(kernel, "%mcp read ") == ["shop", "docs://readme", "notes://"]
    assert complete(kernel, "%mcp read shop ") == ["docs://readme", "notes://"]
    assert complete(kernel, "%mcp read no") == ["notes://"]
    reply = reply_of(kernel, "%mcp read notes://")
    assert reply["matches"] == ["notes://alpha", "notes://beta"]
    assert reply["cursor_start"] == len("%mcp read ")
    assert complete(kernel, "%mcp read shop notes://b") == ["notes://beta"]
    # the second variable: the first one's value is the context
    printed(kernel, "seen.clear()")
    assert complete(kernel, "%mcp read shop notes://alpha/in") == ["notes://alpha/intro", "notes://alpha/index"]
    assert printed(kernel, "print(seen)") == "[('page', 'in', {'topic': 'alpha'})]"
    assert complete(kernel, "%mcp read notes://beta/") == ["notes://beta/summary"]


def test_names_flow_ids_and_models(kernel: Kernel) -> None:
    for sub in ("disconnect", "log", "tools", "prompts", "resources", "tasks"):
        assert complete(kernel, f"%mcp {sub} ") == ["shop"], sub
    assert complete(kernel, "%mcp auth logout ") == ["shop"]
    printed(kernel, "%mcp model add quick echo")
    assert complete(kernel, "%mcp model use ") == ["echo", "quick"]
    assert complete(kernel, "%mcp model remove q") == ["quick"]
    assert complete(kernel, "%mcp model ") == ["add", "use", "remove", "list"]
    # two flows waiting for a form: their saved records' ids
    for thing in ("wall", "door"):
        kernel.execute(f"%mcp call shop.paint thing={thing} --background", allow_stdin=True)  # both wait at once
    ids = kernel.wait_for(lambda: _flow_ids(kernel) if len(_flow_ids(kernel)) == 2 else None, what="two saved flows")
    assert complete(kernel, "%mcp resume ") == sorted(ids)
    assert complete(kernel, "%mcp forget ") == sorted(ids)
    assert complete(kernel, f"%mcp resume {ids[0][:3]}") == sorted(i for i in ids if i.startswith(ids[0][:3]))


def _flow_ids(kernel: Kernel) -> list[str]:
    text = printed(
        kernel,
        "print(' '.join(r['id'] for r in get_ipython().magics_manager.registry['MCPMagics'].session.store.all()))",
    )
    return text.split()


def test_several_servers_and_one_without_completions(kernel: Kernel) -> None:
    kernel.execute("%mcp connect plain plain_server")
    try:
        # tools of a server not listed yet are listed on Tab (in-process: at once)
        assert (
            printed(
                kernel,
                "print(get_ipython().magics_manager.registry['MCPMagics'].session.registry.get('plain').cached_tools)",
            )
            == "None"
        )
        assert complete(kernel, "%mcp call plain.") == ["plain.ping"]
        # two servers: SERVER. only, no bare names
        assert complete(kernel, "%mcp call ") == ["plain.", "shop."]
        assert complete(kernel, "%mcp prompt ") == ["plain.", "shop."]
        assert complete(kernel, "%mcp read ") == ["plain", "shop"]
        assert complete(kernel, "%mcp disconnect ") == ["plain", "shop"]
        assert complete(kernel, "%mcp prompt plain.ask ") == ["topic="]
        # no `completions` capability: this completer offers nothing and asks nothing
        assert (
            printed(kernel, "print(completer_of(get_ipython()).complete('%mcp prompt plain.ask topic=a'))")
            == "Found(fragment='a', items=[])"
        )
        reply = reply_of(kernel, "%mcp prompt plain.ask topic=a")
        assert not {c["type"] for c in reply["metadata"]["_jupyter_types_experimental"]} & OURS
    finally:
        kernel.execute("%mcp disconnect plain")
    assert complete(kernel, "%mcp disconnect ") == ["shop"]


def test_a_slow_listing_never_blocks_tab(kernel: Kernel) -> None:
    kernel.execute("lag_server.delay = 0\n%mcp connect lag lag_server\nlag_server.delay = 1.5")
    try:
        # this completer's own time (the rest of a reply is IPython's other matchers: Jedi on `lag.`)
        timed = "import time\nt = time.perf_counter(); found = completer_of(get_ipython()).complete('%mcp call lag.')\nprint(found.items, round(time.perf_counter() - t, 3))"
        items, waited = printed(kernel, timed).rsplit(" ", 1)
        assert items == "[]"
        assert 0.25 <= float(waited) < 0.3 + 0.1, f"Tab waited {waited} s for a listing that takes 1.5 s"
        first = reply_of(kernel, "%mcp call lag.")
        assert not {c["type"] for c in first["metadata"]["_jupyter_types_experimental"]} & OURS
        # the listing went on in the background: a later Tab has it
        kernel.wait_for(
            lambda: complete(kernel, "%mcp call lag.") == ["lag.ping_lag"], timeout=10, what="the late tools listing"
        )
    finally:
        kernel.execute("%mcp disconnect lag")


def test_latency_with_the_server_connected(kernel: Kernel) -> None:
    figures = {}
    for label, code in (
        ("tools", "%mcp call shop."),
        ("schema argument names", "%mcp call shop.order "),
        ("schema values", "%mcp call shop.order color="),
        ("server completion/complete", "%mcp prompt shop.greet language=e"),
    ):
        complete(kernel, code)
        times = []
        for _ in range(20):
            started = time.perf_counter()
            assert complete(kernel, code)
            times.append((time.perf_counter() - started) * 1000)
        figures[label] = (statistics.median(times), max(times))
    print(
        "Tab round trip (complete_request to reply), ms, median / max of 20:",
        {k: f"{m:.1f} / {x:.1f}" for k, (m, x) in figures.items()},
    )
    for label, (median, _) in figures.items():
        assert median < 50, f"{label}: median {median:.1f} ms"


def test_dir_lists_the_lazy_api() -> None:
    import mcp_notebook

    assert {"connect", "call", "prompt", "read", "Flow"} <= set(dir(mcp_notebook))


def test_register_again_replaces_and_unregister_removes(kernel: Kernel) -> None:
    count = "print(sum(getattr(m, 'matcher_identifier', '') == 'mcp_notebook.completion' for m in get_ipython().Completer.custom_matchers))"
    kernel.execute("register(get_ipython(), get_ipython().magics_manager.registry['MCPMagics'].session)")
    assert printed(kernel, count) == "1"
    kernel.execute("from mcp_notebook.magics.completion import unregister\nunregister(get_ipython())")
    try:
        assert printed(kernel, count) == "0"
        assert "shop." not in complete(kernel, "%mcp call ")
    finally:
        kernel.execute("register(get_ipython(), get_ipython().magics_manager.registry['MCPMagics'].session)")
    assert complete(kernel, "%mcp call shop.") == ["shop.order", "shop.paint"]
