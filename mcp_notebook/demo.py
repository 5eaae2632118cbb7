"""Built-in demo MCP servers for the tutorials, the tests and the benchmarks.

Three servers, each a known, stable target so notebooks and tests can show real
multi-round flows without a network service of their own:

* `provisioner`: the seed page's hand-rolled low-level `Server` with one tool,
  `provision`, that asks for a region (an `InputRequiredResult` on 2026-07-28, a
  back-channel `elicitation/create` on the 2025 generation).
* `demo`: an `MCPServer` that touches every feature the notebook renders:
  two-round `Resolve` elicitation, progress and logs, every content kind, tool
  errors, a prompt and a resource template that ask before answering, and a
  form that uses every field kind of MCP's elicitation schema.
* `echo_server`: one cheap `echo` tool, the benchmarks' baseline.

Run one as a process with `python -m mcp_notebook.demo [provisioner|demo|echo]
[--transport stdio|http] ...`, or as an ASGI app through `http_app(...)` /
`http_app_from_env()` (a `uvicorn --factory` target, also for several workers).
Importing this module builds the three server objects and nothing else.

Why this module is long: it is the tutorials' and the tests' one demo server, each tool a short
scene of the protocol (a form, a confirmation, sampling, roots, a task, an App); splitting it would
scatter one server's tools over several files a reader of a tutorial has to follow.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import logging
import math
import os
import struct
import sys
import warnings
import zlib
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver import (
    Audio,
    Context,
    Elicit,
    Image,
    MCPServer,
    RequestStateSecurity,
    Resolve,
    UserMessage,
)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    BlobResourceContents,
    CallToolRequestParams,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    InputRequiredResult,
    InputResponse,
    ListToolsResult,
    PaginatedRequestParams,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

from .prototype import root_logging_kept

# The demo logs on purpose (to show the foldable server log); the SDK flags every server-side
# log call as deprecated (SEP-2577), which would print three warnings into the tutorial's cells.
warnings.filterwarnings("ignore", message="The logging capability is deprecated", category=UserWarning)

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = [
    "SERVER_NAMES",
    "demo",
    "echo_server",
    "http_app",
    "http_app_from_env",
    "main",
    "make_demo",
    "make_echo",
    "make_provisioner",
    "make_server",
    "provisioner",
]

SERVER_NAMES: tuple[str, ...] = ("provisioner", "demo", "echo")
"""The names the CLI, `make_server` and `http_app` accept."""

ENV_SERVER = "MCP_NOTEBOOK_DEMO_SERVER"
ENV_KEYS_ENV = "MCP_NOTEBOOK_DEMO_KEYS_ENV"
ENV_STATELESS = "MCP_NOTEBOOK_DEMO_STATELESS"
ENV_HOST = "MCP_NOTEBOOK_DEMO_HOST"
ENV_STATE_TTL = "MCP_NOTEBOOK_DEMO_STATE_TTL"

AnyServer = Server[Any] | MCPServer[Any]


def _is_modern(protocol_version: str | None) -> bool:
    """Whether the request speaks the 2026-07-28 generation, where servers *return* their questions."""
    return protocol_version in MODERN_PROTOCOL_VERSIONS


# --------------------------------------------------------------------------- provisioner
# The seed page's low-level server. The low-level layer has no resolvers and no
# request-state sealing, so the wire carries "provision-v1" as written: useful
# for tutorials that show the raw exchange.

PROVISION_STATE = "provision-v1"

REGION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {
            "type": "string",
            "description": "Cloud region for the database, e.g. eu-west-1",
            # A default lets headless runs (`--accept-defaults`) answer without a preset.
            "default": "eu-west-1",
        }
    },
    "required": ["region"],
}

REGION_QUESTION = "Which region should the database live in?"

ASK_REGION = ElicitRequest(params=ElicitRequestFormParams(message=REGION_QUESTION, requested_schema=REGION_SCHEMA))


def _provision_outcome(name: str, answer: InputResponse) -> CallToolResult:
    """Turn the user's answer (from either generation) into the tool's result."""
    if not isinstance(answer, ElicitResult):
        return _error_result("Provisioning failed: the answer was not an elicitation result.")
    if answer.action == "decline":
        return _error_result("Provisioning cancelled: the user declined.")
    if answer.action == "cancel":
        return _error_result("Provisioning cancelled: the user cancelled.")
    region = (answer.content or {}).get("region")
    if not isinstance(region, str) or not region:
        return _error_result("Provisioning failed: no region was given.")
    return CallToolResult(content=[TextContent(type="text", text=f"Provisioned {name!r} in {region}.")])


def _error_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


async def _provisioner_list_tools(
    ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
) -> ListToolsResult:
    return ListToolsResult(
        tools=[
            Tool(
                name="provision",
                description="Provision a database. Asks which region to put it in.",
                input_schema={
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            )
        ]
    )


async def _provisioner_call_tool(
    ctx: ServerRequestContext[Any], params: CallToolRequestParams
) -> CallToolResult | InputRequiredResult:
    """The seed's handler, plus decline/cancel and the 2025 back-channel.

    A low-level handler on a 2025 session cannot return `InputRequiredResult`
    (the result fails validation), so there it asks mid-call instead.
    """
    if params.name != "provision":
        return _error_result(f"Unknown tool: {params.name}")
    name = (params.arguments or {}).get("name")
    if not isinstance(name, str):
        return _error_result("Missing required argument 'name' (a string).")
    if _is_modern(ctx.protocol_version):
        answer = (params.input_responses or {}).get("region")
        if answer is None:
            return InputRequiredResult(input_requests={"region": ASK_REGION}, request_state=PROVISION_STATE)
    else:
        # `related_request_id` keeps the question on this request's stream (HTTP).
        answer = await ctx.session.elicit_form(REGION_QUESTION, REGION_SCHEMA, related_request_id=ctx.request_id)
    return _provision_outcome(name, answer)


def make_provisioner() -> Server[Any]:
    """A fresh "Provisioner" low-level server (one per ASGI app, since each app owns its session manager)."""
    return Server("Provisioner", on_list_tools=_provisioner_list_tools, on_call_tool=_provisioner_call_tool)


# --------------------------------------------------------------------------- demo: questions

Region = Literal["eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-southeast-1"]
Size = Literal["small", "medium", "large"]


# Elicitation models carry no docstrings on purpose: on 2025 sessions the SDK sends a
# model's docstring as the form's description (2026 wire validation drops it).


# First question of `provision_db`.
class RegionChoice(BaseModel):
    region: Region = Field("eu-west-1", description="Where the database will live")


# Second question of `provision_db`; its message names the region chosen in the first.
class Confirm(BaseModel):
    ok: bool = Field(True, description="Go ahead?")


async def ask_region(name: str) -> Elicit[RegionChoice]:
    """Resolver: round one of `provision_db` (async so the SDK does not hop to a thread)."""
    return Elicit(f"Which region should {name!r} live in?", RegionChoice)


async def ask_confirm(name: str, size: Size, choice: Annotated[RegionChoice, Resolve(ask_region)]) -> Elicit[Confirm]:
    """Resolver: round two, which can only be asked once round one is answered."""
    return Elicit(f"Create {name!r} ({size}) in {choice.region}?", Confirm)


def _titled(options: dict[str, str]) -> Callable[[dict[str, Any]], None]:
    """Render a `Literal` field as a titled single-select (`oneOf` of const/title) instead of a plain enum."""

    def fix(schema: dict[str, Any]) -> None:
        schema.pop("enum", None)
        schema["oneOf"] = [{"const": value, "title": title} for value, title in options.items()]

    return fix


def _titled_many(options: dict[str, str]) -> Callable[[dict[str, Any]], None]:
    """Render a `list[Literal]` field as a titled multi-select (`items.anyOf` of const/title)."""

    def fix(schema: dict[str, Any]) -> None:
        schema["items"] = {"anyOf": [{"const": value, "title": title} for value, title in options.items()]}

    return fix


def _legacy_titled(options: dict[str, str]) -> Callable[[dict[str, Any]], None]:
    """Add the 2025 spec's `enumNames` titles to a plain enum (the legacy titled single-select)."""

    def fix(schema: dict[str, Any]) -> None:
        schema["enumNames"] = list(options.values())

    return fix


# One form with every field kind of MCP's elicitation schema, for testing form renderers.
# Every kind passes the SDK's renderer (`render_elicitation_schema`); none had to be
# dropped. `email` and `homepage` stay `str` with a `format` so the answer echoes back
# exactly (pydantic's `AnyUrl` would append a slash).
class Everything(BaseModel):
    name: str = Field(min_length=1, max_length=40, description="Required, 1 to 40 characters")
    email: str = Field("ada@example.com", description="An e-mail address", json_schema_extra={"format": "email"})
    homepage: str = Field("https://example.com", description="A URI", json_schema_extra={"format": "uri"})
    birthday: datetime.date = Field(datetime.date(1815, 12, 10), description="A date")
    meeting: datetime.datetime = Field(datetime.datetime(2026, 7, 28, 9, 30), description="A date and time")
    age: int = Field(36, ge=0, le=150, description="An integer from 0 to 150")
    ratio: float = Field(0.5, ge=0, le=1, description="A number from 0 to 1")
    subscribe: bool = Field(True, description="A yes/no switch")
    color: Literal["red", "green", "blue"] = Field("green", description="Plain single-select")
    size: Literal["s", "m", "l"] = Field(
        "m",
        description="Titled single-select",
        json_schema_extra=_titled({"s": "Small", "m": "Medium", "l": "Large"}),
    )
    tier: Literal["free", "pro"] = Field(
        "free",
        description="Legacy titled single-select (enumNames)",
        json_schema_extra=_legacy_titled({"free": "Free tier", "pro": "Pro tier"}),
    )
    toppings: list[Literal["cheese", "ham", "olives"]] = Field(
        ["cheese"], description="Plain multi-select", max_length=3
    )
    extras: list[Literal["wifi", "parking"]] = Field(
        [],
        description="Titled multi-select",
        json_schema_extra=_titled_many({"wifi": "Wi-Fi", "parking": "Parking space"}),
    )


async def ask_all() -> Elicit[Everything]:
    """Resolver for `ask_everything`."""
    return Elicit("Fill in every kind of field MCP forms support.", Everything)


# The `briefing` prompt's question on 2025 sessions (`ctx.elicit` needs a model).
class Audience(BaseModel):
    audience: str = Field(description="Who will read the briefing")


AUDIENCE_QUESTION = "Who is the briefing for?"

ASK_AUDIENCE = ElicitRequest(
    params=ElicitRequestFormParams(
        message=AUDIENCE_QUESTION,
        requested_schema={
            "type": "object",
            "properties": {"audience": {"type": "string"}},
            "required": ["audience"],
        },
    )
)


# The `notes://{user}/latest` question; one model renders it for both generations.
class ShareNotes(BaseModel):
    share: bool = Field(True, description="Allow the notes to be shown")


SHARE_SCHEMA: dict[str, Any] = render_elicitation_schema(ShareNotes)


# --------------------------------------------------------------------------- demo: handlers
# Module-level functions registered by `make_demo`, so resolver wire keys read
# `mcp_notebook.demo:ask_region` rather than a closure's `<locals>` name.

README = """# mcp-notebook demo server

A playground for the notebook's MCP client. Everything here is safe and offline.

| name | kind | what it shows |
|---|---|---|
| `provision_db` | tool | two questions over two rounds (region, then confirm) |
| `slow_count` | tool | progress notifications and log messages |
| `echo`, `add` | tools | plain text; structured content (`{"result": ...}`) |
| `inventory` | tool | a list of records (structured content), shown as a table |
| `showcase` | tool | every content kind: text, image, audio, embedded text/blob, resource link |
| `fail` | tool | a tool error (`is_error`) |
| `ask_everything` | tool | one form with every elicitation field kind |
| `briefing` | prompt | asks who the briefing is for before answering |
| `notes://{user}/latest` | resource template | asks before sharing |
| `demo://readme` | resource | this text |
"""


async def provision_db(
    name: str,
    region: Annotated[RegionChoice, Resolve(ask_region)],
    confirm: Annotated[Confirm, Resolve(ask_confirm)],
    size: Size = "small",
) -> str:
    """Provision a database. Asks for the region, then asks to confirm."""
    if not confirm.ok:
        raise ToolError(f"Provisioning cancelled: {name!r} was not confirmed.")
    return f"Provisioned {name!r} in {region.region} (size {size})."


async def slow_count(
    ctx: Context,
    n: Annotated[int, Field(ge=0, le=10_000)] = 5,
    delay: Annotated[float, Field(ge=0, le=10)] = 0.05,
) -> str:
    """Count to n slowly, reporting progress and logging each step."""
    # `ctx.info` is the deprecated (SEP-2577) logging capability; the demo keeps it
    # because 2025 servers still log and the notebook must show it.
    for i in range(1, n + 1):
        await anyio.sleep(delay)
        await ctx.report_progress(i, n, f"step {i}")
        await ctx.info(f"step {i} of {n}")
    return f"Counted to {n}."


async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


async def add(a: int, b: int) -> int:
    """Add two integers (the result is also structured content)."""
    return a + b


STOCK: tuple[dict[str, str | float | bool], ...] = (
    {"fruit": "apple", "kilos": 10.0, "price": 0.5, "organic": False},
    {"fruit": "pear", "kilos": 4.5, "price": 0.75, "organic": True},
    {"fruit": "plum", "kilos": 0.0, "price": 0.3, "organic": False, "note": "back on Monday"},
)


async def inventory() -> list[dict[str, str | float | bool]]:
    """The fruit in stock: a list of records (its structured content reads as a table)."""
    return [dict(row) for row in STOCK]


@cache
def _png() -> bytes:
    """An 8x8 RGB gradient PNG, written by hand so no imaging library is needed."""
    width = height = 8
    rows = b"".join(b"\x00" + b"".join(bytes((x * 32, y * 32, 160)) for x in range(width)) for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@cache
def _wav() -> bytes:
    """A 0.1 s, 440 Hz, 8 kHz mono 16-bit WAV tone."""
    rate, count = 8000, 800
    samples = b"".join(struct.pack("<h", int(12000 * math.sin(2 * math.pi * 440 * i / rate))) for i in range(count))
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


async def showcase() -> list[TextContent | Image | Audio | EmbeddedResource | ResourceLink]:
    """Return one content block of every kind: text, image, audio, embedded text and blob, resource link."""
    return [
        TextContent(type="text", text="One block of every content kind follows."),
        Image(data=_png(), format="png"),
        Audio(data=_wav(), format="wav"),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(uri="demo://readme", mime_type="text/markdown", text=README),
        ),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(
                uri="demo://pixel.png", mime_type="image/png", blob=base64.b64encode(_png()).decode()
            ),
        ),
        ResourceLink(
            type="resource_link",
            name="readme",
            uri="demo://readme",
            mime_type="text/markdown",
            description="What this demo server offers",
        ),
    ]


async def fail(message: str = "boom") -> str:
    """Fail on purpose with the given message (an is_error result)."""
    raise ToolError(message)


async def ask_everything(answers: Annotated[Everything, Resolve(ask_all)]) -> str:
    """Ask one question with every form field kind and return the answers as sorted JSON."""
    return json.dumps(answers.model_dump(mode="json"), sort_keys=True)


async def briefing(topic: str, ctx: Context) -> list[UserMessage] | InputRequiredResult:
    """Draft a briefing tuned to its audience. Asks who the briefing is for."""
    if _is_modern(ctx.protocol_version):
        answer = (ctx.input_responses or {}).get("audience")
        if not isinstance(answer, ElicitResult):
            return InputRequiredResult(input_requests={"audience": ASK_AUDIENCE})
        audience = (answer.content or {}).get("audience") if answer.action == "accept" else None
    else:
        outcome = await ctx.elicit(AUDIENCE_QUESTION, Audience)
        audience = outcome.data.audience if outcome.action == "accept" else None
    if not isinstance(audience, str) or not audience:
        return [UserMessage(f"Write a briefing for a general audience about {topic}.")]
    return [UserMessage(f"Write a briefing for {audience} about {topic}.")]


async def notes(user: str, ctx: Context) -> str | InputRequiredResult:
    """The latest note of a user; asks before sharing it."""
    message = f"Share notes of {user}?"
    if _is_modern(ctx.protocol_version):
        answer = (ctx.input_responses or {}).get("share")
        if not isinstance(answer, ElicitResult):
            ask = ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=SHARE_SCHEMA))
            return InputRequiredResult(input_requests={"share": ask})
        share = answer.action == "accept" and ShareNotes.model_validate(answer.content or {}).share
    else:
        outcome = await ctx.elicit(message, ShareNotes)
        share = outcome.action == "accept" and outcome.data.share
    return f"note for {user}" if share else "withheld"


async def readme() -> str:
    """What the demo server offers."""
    return README


# --------------------------------------------------------------------------- demo: sampling and roots
# `Sample` asks the client's model, `ListRoots` the client's roots: inside `input_requests` on
# 2026-07-28, over the back-channel on 2025. Both features are deprecated at 2026-07-28
# (SEP-2577); the demo keeps them for servers that still use them and for teaching.

from mcp.server.mcpserver import ListRoots, Sample  # noqa: E402 - the sampling and roots part of the demo imports its own names here
from mcp.types import (  # noqa: E402 - the sampling and roots part of the demo imports its own names here
    CreateMessageResult,
    CreateMessageResultWithTools,
    ListRootsResult,
    ModelHint,
    ModelPreferences,
    SamplingMessage,
    SamplingMessageContentBlock,
    ToolChoice,
    ToolResultContent,
)

Preference = Literal["", "cost", "speed", "intelligence"]

SUMMARY_SYSTEM = "You summarize text in one short sentence."

WEATHER_SYSTEM = "You answer questions about the weather. Call get_weather for current conditions; never guess them."

WEATHER_TOOL = Tool(
    name="get_weather",
    description="Current weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)

_WEATHER = {"paris": "18 °C, light rain", "tokyo": "24 °C, sunny", "oslo": "-3 °C, snow"}


def _user(text: str) -> SamplingMessage:
    return SamplingMessage(role="user", content=TextContent(type="text", text=text))


def _texts(blocks: Any) -> str:
    return " ".join(b.text for b in (blocks if isinstance(blocks, list) else [blocks]) if b.type == "text")


async def ask_summary(text: str, max_tokens: int, hint: str, prefer: Preference) -> Sample:
    """Resolver: one sampling request; `hint` and `prefer` become its model preferences."""
    preferences = None
    if hint or prefer:
        priorities = {f"{prefer}_priority": 1.0} if prefer else {}
        preferences = ModelPreferences(hints=[ModelHint(name=hint)] if hint else None, **priorities)
    return Sample(
        [_user(f"Summarize: {text}")],
        max_tokens=max_tokens,
        system_prompt=SUMMARY_SYSTEM,
        temperature=0.2,
        stop_sequences=["\n\n"],
        model_preferences=preferences,
    )


async def summarize(
    text: str,
    summary: Annotated[CreateMessageResult, Resolve(ask_summary)],
    max_tokens: Annotated[int, Field(ge=1, le=4096)] = 100,
    hint: str = "",
    prefer: Preference = "",
) -> str:
    """Summarize text with the client's model (sampling). `hint` names a model; `prefer` weighs cost, speed or intelligence."""
    return f"Summary ({summary.model}): {_texts(summary.content)}"


async def ask_with_tools(question: str) -> Sample:
    """Resolver: round one of `sample_with_tools`; the model may call `get_weather`."""
    return Sample(
        [_user(question)],
        max_tokens=300,
        system_prompt=WEATHER_SYSTEM,
        tools=[WEATHER_TOOL],
        tool_choice=ToolChoice(mode="auto"),
    )


async def answer_with_tool_results(
    question: str, first: Annotated[CreateMessageResultWithTools, Resolve(ask_with_tools)]
) -> Sample | CreateMessageResultWithTools:
    """Resolver: run the tool calls of round one and ask again with their results (or keep a direct answer)."""
    calls = [b for b in first.content_as_list if b.type == "tool_use"]
    if not calls:
        return first
    results: list[SamplingMessageContentBlock] = []
    for call in calls:
        city = str(call.input.get("city", "")) if call.name == WEATHER_TOOL.name else ""
        if call.name != WEATHER_TOOL.name or not city:
            content = f"unknown tool {call.name!r}" if call.name != WEATHER_TOOL.name else "get_weather needs a city"
            results.append(
                ToolResultContent(
                    type="tool_result",
                    tool_use_id=call.id,
                    content=[TextContent(type="text", text=content)],
                    is_error=True,
                )
            )
            continue
        weather = _WEATHER.get(city.strip().lower(), "12 °C, cloudy")
        results.append(
            ToolResultContent(
                type="tool_result", tool_use_id=call.id, content=[TextContent(type="text", text=f"{city}: {weather}")]
            )
        )
    history = [
        _user(question),
        SamplingMessage(role="assistant", content=first.content_as_list),
        SamplingMessage(role="user", content=results),
    ]
    return Sample(
        history, max_tokens=300, system_prompt=WEATHER_SYSTEM, tools=[WEATHER_TOOL], tool_choice=ToolChoice(mode="none")
    )


async def sample_with_tools(
    question: str, answer: Annotated[CreateMessageResultWithTools, Resolve(answer_with_tool_results)]
) -> str:
    """Ask the client's model a weather question; it may call this server's `get_weather` tool (tool-enabled sampling)."""
    text = _texts(answer.content_as_list)
    if any(b.type == "tool_use" for b in answer.content_as_list):
        return f"The model still wanted to call a tool after the results: {text}".strip()
    return text


async def ask_roots() -> ListRoots:
    """Resolver: the client's roots."""
    return ListRoots()


async def list_my_roots(roots: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """List the roots (folders) the client offers this server."""
    if not roots.roots:
        return "The client offers no roots."
    return "\n".join(f"{r.name or '(no name)'}: {r.uri}" for r in roots.roots)


async def request_headers(names: list[str], ctx: Context) -> dict[str, str | None]:
    """Show which of the named HTTP headers reached the server (for checking --header/--bearer-env)."""
    headers = {k.lower(): v for k, v in (ctx.headers or {}).items()}
    return {name: headers.get(name.lower()) for name in names}


async def process_info(var: str = "HOME") -> dict[str, str | None]:
    """The server process's working directory and one environment variable (for --cwd/--env)."""
    return {"cwd": os.getcwd(), "var": var, "value": os.environ.get(var)}


def _security(keys: list[str] | None, ttl: float | None) -> RequestStateSecurity | None:
    """Shared keys (state survives restarts and workers) and/or a state lifetime in seconds."""
    if keys:
        return RequestStateSecurity(keys=keys, ttl=ttl) if ttl else RequestStateSecurity(keys=keys)
    return RequestStateSecurity.ephemeral(ttl=ttl) if ttl else None


def make_demo(keys: list[str] | None = None, ttl: float | None = None) -> MCPServer[Any]:
    """Build the "demo" server; `keys` are shared request-state keys (>= 32 bytes) for multi-process setups.

    `ttl` is how long a request state stays valid (seconds; the SDK's default is 600).
    """
    security = _security(keys, ttl)
    with root_logging_kept():
        srv: MCPServer[Any] = MCPServer(
            "demo", instructions="A playground for the notebook's MCP client.", request_state_security=security
        )
    srv.tool(name="provision_db")(provision_db)
    srv.tool(name="slow_count")(slow_count)
    # No output schema: echo is the benchmarks' cheapest possible call.
    srv.tool(name="echo", structured_output=False)(echo)
    srv.tool(name="add")(add)
    srv.tool(name="inventory")(inventory)
    srv.tool(name="showcase")(showcase)
    srv.tool(name="fail")(fail)
    srv.tool(name="ask_everything", structured_output=False)(ask_everything)
    srv.tool(name="summarize", structured_output=False)(summarize)
    srv.tool(name="sample_with_tools", structured_output=False)(sample_with_tools)
    srv.tool(name="list_my_roots", structured_output=False)(list_my_roots)
    srv.tool(name="request_headers")(request_headers)
    srv.tool(name="process_info")(process_info)
    srv.prompt(name="briefing")(briefing)
    srv.resource("notes://{user}/latest", name="notes", mime_type="text/plain")(notes)
    srv.resource("demo://readme", name="readme", mime_type="text/markdown")(readme)
    return srv


def make_echo(keys: list[str] | None = None, ttl: float | None = None) -> MCPServer[Any]:
    """Build the minimal "echo" server the benchmarks compare against."""
    security = _security(keys, ttl)
    with root_logging_kept():
        srv: MCPServer[Any] = MCPServer("echo", request_state_security=security)
    srv.tool(name="echo", structured_output=False)(echo)
    return srv


def make_server(name: str, keys: list[str] | None = None, ttl: float | None = None) -> AnyServer:
    """A fresh server by CLI name; `keys` and `ttl` apply to the `MCPServer` ones (the low-level one seals nothing)."""
    if name == "provisioner":
        return make_provisioner()
    if name == "demo":
        return make_demo(keys, ttl)
    if name == "echo":
        return make_echo(keys, ttl)
    raise ValueError(f"unknown demo server {name!r}; expected one of {', '.join(SERVER_NAMES)}")


provisioner: Server[Any] = make_provisioner()
demo: MCPServer[Any] = make_demo()
echo_server: MCPServer[Any] = make_echo()


# --------------------------------------------------------------------------- running


def _keys_from_env(keys_env: str | None) -> list[str] | None:
    """The request-state keys in ``$keys_env``: one key, or several separated by commas (the first seals, all verify).

    Several keys are how a key is rotated (tutorial 10): ``OLD,NEW``, then ``NEW,OLD``, then ``NEW``.
    """
    if not keys_env:
        return None
    try:
        value = os.environ[keys_env]
    except KeyError:
        raise ValueError(f"environment variable {keys_env!r} (request-state key) is not set") from None
    keys = [k.strip() for k in value.split(",") if k.strip()]
    if not keys:
        raise ValueError(f"environment variable {keys_env!r} holds no request-state key")
    return keys


def _ttl_from_env() -> float | None:
    """MCP_NOTEBOOK_DEMO_STATE_TTL: request-state lifetime in seconds (tests of expired state)."""
    value = os.environ.get(ENV_STATE_TTL, "").strip()
    if not value:
        return None
    try:
        ttl = float(value)
    except ValueError:
        raise ValueError(f"{ENV_STATE_TTL} must be a number of seconds, not {value!r}") from None
    if ttl <= 0:
        raise ValueError(f"{ENV_STATE_TTL} must be positive, not {value!r}")
    return ttl


def http_app(name: str, keys_env: str | None = None, *, stateless: bool = False, host: str = "127.0.0.1") -> Starlette:
    """A streamable-HTTP ASGI app (path `/mcp`) serving a fresh instance of the named server.

    `stateless=True` is for several workers: 2026-07-28 requests are single POSTs
    that any worker can answer (given shared keys), but 2025 sessions then have
    no back-channel, so their elicitations fail. `host` drives the SDK's
    DNS-rebinding protection, which is on for localhost hosts.
    """
    server = make_server(name, _keys_from_env(keys_env), _ttl_from_env())
    return server.streamable_http_app(stateless_http=stateless, host=host)


def http_app_from_env() -> Starlette:
    """`uvicorn 'mcp_notebook.demo:http_app_from_env' --factory [--workers N]`.

    Reads MCP_NOTEBOOK_DEMO_SERVER (default "demo"), MCP_NOTEBOOK_DEMO_KEYS_ENV (name of
    the variable holding the shared key), MCP_NOTEBOOK_DEMO_STATELESS (default "1",
    since this factory exists for multi-worker runs) and MCP_NOTEBOOK_DEMO_HOST (the
    host uvicorn binds, default 127.0.0.1, for the DNS-rebinding check). Like every HTTP
    app here it also honours MCP_NOTEBOOK_DEMO_STATE_TTL (request-state lifetime, seconds).
    """
    stateless = os.environ.get(ENV_STATELESS, "1").strip().lower() not in ("0", "false", "no", "")
    return http_app(
        os.environ.get(ENV_SERVER, "demo"),
        os.environ.get(ENV_KEYS_ENV) or None,
        stateless=stateless,
        host=os.environ.get(ENV_HOST, "127.0.0.1"),
    )


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m mcp_notebook.demo", description="Run a built-in demo MCP server.")
    parser.add_argument("server", nargs="?", default="demo", choices=SERVER_NAMES)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--keys-env", metavar="VAR",
        help="environment variable holding the shared request-state key, or several separated by commas (the first seals)",
    )  # fmt: skip
    parser.add_argument("--workers", type=int, default=1, help="HTTP worker processes (implies --stateless)")
    parser.add_argument("--stateless", action="store_true", help="stateless HTTP (no 2025 back-channel)")
    args = parser.parse_args(argv)
    if args.keys_env and args.keys_env not in os.environ:
        parser.error(f"--keys-env: environment variable {args.keys_env!r} is not set")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.workers > 1 and args.transport != "http":
        parser.error("--workers needs --transport http")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the exit status."""
    args = _parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.transport == "stdio":
        server = make_server(args.server, _keys_from_env(args.keys_env), _ttl_from_env())
        anyio.run(_serve_stdio, server)
        return 0

    import uvicorn

    if args.workers > 1:
        # Workers are separate processes: hand them the choice through the factory's environment.
        os.environ.update({ENV_SERVER: args.server, ENV_STATELESS: "1", ENV_HOST: args.host})
        if args.keys_env:
            os.environ[ENV_KEYS_ENV] = args.keys_env
        else:
            os.environ.pop(ENV_KEYS_ENV, None)
        from uvicorn.supervisors import Multiprocess

        config = uvicorn.Config(
            "mcp_notebook.demo:http_app_from_env",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            log_level="warning",
        )
        sock = config.bind_socket()  # what uvicorn.run does for workers; bound here so the address can be announced
        _announce(args.server, args.host, sock.getsockname()[1], f" ({args.workers} workers)")
        try:
            Multiprocess(config, sockets=[sock]).run()
        except KeyboardInterrupt:
            pass
        return 0
    app = http_app(args.server, args.keys_env, stateless=args.stateless, host=args.host)
    server = _make_announcing_server()(
        uvicorn.Config(app, host=args.host, port=args.port, log_level="warning"), args.server
    )
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    return 0 if server.started else 1


def _announce(name: str, host: str, port: int, extra: str = "") -> None:
    """One line once the server listens (uvicorn says nothing at log level warning), flushed for pipes."""
    shown = f"[{host}]" if ":" in host else host
    print(f"Serving {name} on http://{shown}:{port}/mcp{extra}. Ctrl-C stops it.", flush=True)


def _make_announcing_server() -> type:
    import uvicorn

    class AnnouncingServer(uvicorn.Server):
        """``uvicorn.Server`` that prints its URL once it listens (``--port 0``: the port it got)."""

        def __init__(self, config: uvicorn.Config, name: str) -> None:
            super().__init__(config)
            self.demo_name = name

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started and not self.should_exit:
                port = self.servers[0].sockets[0].getsockname()[1] if self.servers else self.config.port
                _announce(self.demo_name, self.config.host, port)

    return AnnouncingServer


async def _serve_stdio(server: AnyServer) -> None:
    if isinstance(server, MCPServer):
        await server.run_stdio_async()
        return
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    # Re-enter through the importable module so resolver wire keys read
    # `mcp_notebook.demo:...` (not `__main__:...`) whichever way the server runs.
    from mcp_notebook.demo import main as _main

    sys.exit(_main())
