"""One hostile MCP server: HTML and script in every string and byte it controls.

Everything an MCP server sends is untrusted input for the notebook: its name, version and
instructions, tool titles and descriptions, argument descriptions and defaults, every kind of
result content (text, images, audio, embedded text and blob resources, resource links,
structured content), tool errors, log messages and logger names, progress messages,
elicitation messages, field titles and descriptions, choice labels and values, URL-mode URLs,
sampling requests, prompts and resources with their MIME types. This server puts a payload in
each of them. A payload that ever *runs* in the page sets ``window.__pwned`` (see ``FLAG``); the
``CANARY`` one would also write ``pwned.txt`` through Jupyter's contents API.

What can become part of a ``%mcp`` line (Tab completion, a printed command) carries ``BRACES``, a
``{expr}`` that creates the file ``F`` in the current folder if a line's expansion ever evaluates
it: tool, prompt, property and prompt-argument names, enum and const values, ``completion/complete``
values, resource URIs and template values (``brace_*`` below).

Each payload is prefixed with a short tag naming where it came from (``tool-title``,
``log-data``...), so a test that finds one leaking can say which string leaked.

Run it like the demo servers (the repository root must be the working directory, or on
``PYTHONPATH``)::

    python -m tests.security.hostile                               # stdio
    python -m tests.security.hostile --transport http --port 8123  # streamable HTTP at /mcp

or connect the object in-process: ``%mcp connect h tests.security.hostile:server``.
"""

from __future__ import annotations

import argparse
import base64
import inspect
import json
import logging
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import (
    AssistantMessage,
    Context,
    Elicit,
    Icon,
    MCPServer,
    Resolve,
    Sample,
    UserMessage,
)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import Prompt, PromptArgument
from mcp.server.mcpserver.resources import TextResource
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    Completion,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestURLParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    InputRequiredResult,
    ModelHint,
    ModelPreferences,
    ResourceLink,
    SamplingMessage,
    TextContent,
    TextResourceContents,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

warnings.filterwarnings("ignore", message="The logging capability is deprecated", category=UserWarning)

__all__ = [
    "BAD_BASE64",
    "BRACES",
    "BRACE_TOOL_NAME",
    "CANARY",
    "CANARY_DATA",
    "EVIL_URL",
    "FLAG",
    "HOSTILE",
    "HOSTILE_TOOL_NAME",
    "JS_URL",
    "PAYLOADS",
    "h",
    "main",
    "make_server",
    "server",
]

FLAG = "__pwned"
"""The one page-side flag: any payload that runs sets ``window.__pwned = 1``."""

CANARY = (
    "<img src=x onerror=\"fetch('/api/contents/pwned.txt',{method:'PUT',headers:{'Content-Type':'application/json'},"
    "body:JSON.stringify({type:'file',format:'text',content:'pwned'})});window.__pwned=1\">"
)
"""Would write ``pwned.txt`` in the Jupyter server's root if it ever ran (and set the flag)."""

PAYLOADS: tuple[str, ...] = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    '"><svg onload=window.__pwned=1>',
    "javascript:window.__pwned=1",
    "' onmouseover='window.__pwned=1' x='",
    '</textarea></pre></code><iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
    CANARY,
)
"""Script in every shape: a script tag, an event handler, an attribute break-out with either
quote, a ``javascript:`` URL, closing the tags a renderer may have opened, and the canary."""

HOSTILE = " ".join(PAYLOADS)

BAD_BASE64 = 'AAAA" onerror="window.__pwned=1" x="A'
"""Image/audio ``data`` (and a blob) that breaks out of a ``src="data:...;base64,..."`` attribute."""

CANARY_DATA = (
    "AAAA\" onerror=\"fetch('/api/contents/pwned.txt',{method:'PUT',headers:{'Content-Type':'application/json'},"
    "body:JSON.stringify({type:'file',format:'text',content:'pwned'})});window.__pwned=1\" x=\"A"
)
"""Audio ``data`` that, copied into an attribute, would write ``pwned.txt`` as soon as the clip fails to load."""

EVIL_URL = "https://evil.example\\@accounts.google.com/"
"""WHATWG parsing (browsers) opens evil.example: ``\\`` ends the host in special schemes.
``urllib.parse`` reads the host as accounts.google.com."""

JS_URL = "javascript:window.__pwned=1"

HOSTILE_TOOL_NAME = "<img src=x onerror=window.__pwned=1>"
"""A tool *name* with markup (no quotes, so ``%mcp call 'SERVER.NAME'`` can still reach it)."""

HOSTILE_MIME = 'text/html"><script>window.__pwned=1</script>'

BRACES = '{[__import__("os").system("touch F")]and""}'
"""Python for a ``%mcp`` line's ``{expr}`` expansion: creates ``F`` in the current folder if ever evaluated
(issue 20, finding 1). A test runs in a folder of its own and checks that ``F`` never appears."""

BRACE_TOOL_NAME = "deploy" + BRACES
"""A tool name with the brace payload (the SDK warns of SEP-986 and registers it)."""

_SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=1"><script>window.__pwned=1</script></svg>'
_HTML = b"<html><body><script>window.__pwned=1</script></body></html>"


def h(where: str) -> str:
    """``HOSTILE`` tagged with where it came from (``tool-title``, ``log-data``...)."""
    return f"[{where}] {HOSTILE}"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


_ICONS = [Icon(src=JS_URL), Icon(src="data:image/svg+xml;base64," + _b64(_SVG), mime_type="image/svg+xml")]

# --------------------------------------------------------------------------- elicitation forms
# Hostile choice *values* too: they come back in the answer and land in the result text.
HOSTILE_VALUE = '"><svg onload=window.__pwned=1>'
Choice = Literal["plain", '"><svg onload=window.__pwned=1>']


def _titled(schema: dict[str, Any]) -> None:
    """A titled single-select (``oneOf`` of const/title) with hostile titles."""
    schema.pop("enum", None)
    schema["oneOf"] = [
        {"const": "plain", "title": h("oneof-title-1")},
        {"const": HOSTILE_VALUE, "title": h("oneof-title-2")},
    ]


def _legacy_titled(schema: dict[str, Any]) -> None:
    """The 2025 spec's ``enumNames`` titles, hostile."""
    schema["enumNames"] = [h("enumnames-1"), h("enumnames-2")]


def _titled_many(schema: dict[str, Any]) -> None:
    """A titled multi-select (``items.anyOf``) with hostile titles."""
    schema["items"] = {
        "anyOf": [
            {"const": "plain", "title": h("anyof-title-1")},
            {"const": HOSTILE_VALUE, "title": h("anyof-title-2")},
        ]
    }


class HostileForm(BaseModel):
    """[form-docstring] <script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">"""

    text: str = Field(h("field-default"), title=h("field-title"), description=h("field-description"), max_length=2000)
    pick: Choice = Field("plain", title=h("pick-title"), description=h("pick-description"), json_schema_extra=_titled)
    legacy: Choice = Field(
        "plain", title=h("legacy-title"), description=h("legacy-description"), json_schema_extra=_legacy_titled
    )
    plain_enum: Choice = Field(HOSTILE_VALUE, title=h("enum-title"), description=h("enum-description"))  # type: ignore[assignment]
    many: list[Choice] = Field(
        ["plain"], title=h("many-title"), description=h("many-description"), json_schema_extra=_titled_many
    )
    plain_many: list[Choice] = Field(
        [HOSTILE_VALUE], title=h("plain-many-title"), description=h("plain-many-description")
    )  # type: ignore[list-item]
    flag: bool = Field(True, title=h("flag-title"), description=h("flag-description"))
    count: int = Field(3, ge=0, le=10, title=h("count-title"), description=h("count-description"))
    when: str = Field(
        "2026-07-28", title=h("date-title"), description=h("date-description"), json_schema_extra={"format": "date"}
    )


async def ask_hostile() -> Elicit[HostileForm]:
    """Resolver: the hostile form, with a hostile message."""
    return Elicit(h("elicit-message"), HostileForm)


# --------------------------------------------------------------------------- sampling
async def ask_model() -> Sample:
    """Resolver: a sampling request whose every string is hostile."""
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=h("sampling-message")))],
        max_tokens=64,
        system_prompt=h("sampling-system"),
        model_preferences=ModelPreferences(hints=[ModelHint(name=h("sampling-hint"))]),
        stop_sequences=[h("sampling-stop")],
    )


# --------------------------------------------------------------------------- tools
async def hostile_echo(
    text: Annotated[str, Field(description=h("arg-description"))] = h("arg-default"),
) -> str:
    """[tool-description] <script>window.__pwned=1</script> <img src=x onerror="window.__pwned=1"> "><svg onload=window.__pwned=1>

    Second line of the description: javascript:window.__pwned=1
    """
    return f"{h('echo-result')} {text}"


async def hostile_content() -> CallToolResult:
    """[content-description] <img src=x onerror="window.__pwned=1"> One hostile block of every content kind."""
    return CallToolResult(
        content=[
            TextContent(type="text", text=h("result-text")),
            ImageContent(type="image", data=BAD_BASE64, mime_type="image/png"),
            ImageContent(
                type="image", data=_b64(b"\x89PNG\r\n\x1a\n"), mime_type='image/png" onerror="window.__pwned=1'
            ),
            ImageContent(type="image", data=_b64(_SVG), mime_type="image/svg+xml"),
            ImageContent(type="image", data=_b64(_HTML), mime_type="text/html"),
            AudioContent(type="audio", data=BAD_BASE64, mime_type="audio/wav"),
            AudioContent(type="audio", data=CANARY_DATA, mime_type="audio/wav"),
            AudioContent(type="audio", data=_b64(b"RIFF"), mime_type='audio/wav" onerror="window.__pwned=1'),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="hostile://blob/bad-base64", mime_type=HOSTILE_MIME, blob=BAD_BASE64),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="hostile://blob/page.html", mime_type="text/html", blob=_b64(_HTML)),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="hostile://blob/image.svg", mime_type="image/svg+xml", blob=_b64(_SVG)
                ),
            ),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri="hostile://text/page.html", mime_type="text/html", text=h("embedded-text")
                ),
            ),
            ResourceLink(
                type="resource_link",
                name=h("link-name"),
                title=h("link-title"),
                uri=JS_URL,
                description=h("link-description"),
                mime_type=HOSTILE_MIME,
            ),
            ResourceLink(
                type="resource_link",
                name="svg",
                uri="data:image/svg+xml;base64," + _b64(_SVG),
                mime_type="image/svg+xml",
            ),
        ],
        structured_content={
            "note": h("structured-value"),
            h("structured-key"): ['<img src=x onerror="window.__pwned=1">', {"nested": h("structured-nested")}],
        },
    )


async def hostile_error() -> str:
    """[error-description] <script>window.__pwned=1</script> Fails with script in its message."""
    raise ToolError(h("tool-error"))


async def hostile_error_blocks() -> CallToolResult:
    """[error-blocks-description] An is_error result with hostile text and a hostile image."""
    return CallToolResult(
        content=[
            TextContent(type="text", text=h("error-result-text")),
            ImageContent(type="image", data=BAD_BASE64, mime_type='image/png" onerror="window.__pwned=1'),
        ],
        is_error=True,
    )


async def hostile_records() -> list[dict[str, Any]]:
    """[records-description] A list of records (a table) with markup in its keys and values, one row nested."""
    return [
        {
            "[record-key] " + PAYLOADS[0]: "[record-value] " + PAYLOADS[1],
            "name": "[record-name] " + PAYLOADS[2],
            PAYLOADS[5]: PAYLOADS[4],
        },
        {"name": CANARY, "nested": {"[record-nested] " + PAYLOADS[1]: [PAYLOADS[0], JS_URL]}},
    ]


async def hostile_progress(
    ctx: Context, steps: Annotated[int, Field(ge=1, le=5, description=h("steps-description"))] = 2
) -> str:
    """[progress-description] <svg onload=window.__pwned=1> Reports hostile progress and logs."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, h(f"progress-{i}"))
        await ctx.info(h(f"log-info-{i}"), logger_name=h("logger-name"))
    await ctx.log("warning", {"data": h("log-data"), h("log-key"): [HOSTILE_VALUE]}, logger_name=h("logger-name"))
    await ctx.error(h("log-error"))
    return h("progress-result")


async def hostile_form(answers: Annotated[HostileForm, Resolve(ask_hostile)]) -> str:
    """[form-tool-description] <img src=x onerror="window.__pwned=1"> Asks a hostile form and echoes the answers."""
    return f"{h('form-result')} {json.dumps(answers.model_dump(mode='json'), ensure_ascii=False)}"


async def hostile_url(
    ctx: Context, which: Literal["both", "evil", "javascript"] = "both"
) -> CallToolResult | InputRequiredResult:
    """[url-tool-description] <script>window.__pwned=1</script> Asks the user to open a look-alike and a javascript: URL."""
    asks = {
        "evil": ElicitRequestURLParams(message=h("url-message-evil"), url=EVIL_URL, elicitation_id=h("url-id-evil")),
        "javascript": ElicitRequestURLParams(message=h("url-message-js"), url=JS_URL, elicitation_id=h("url-id-js")),
    }
    if which != "both":
        asks = {which: asks[which]}
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answers = ctx.input_responses or {}
        if not all(isinstance(answers.get(k), ElicitResult) for k in asks):
            return InputRequiredResult(
                input_requests={
                    k: ElicitRequest(params=p.model_copy(update={"elicitation_id": None})) for k, p in asks.items()
                }
            )
        actions = {k: answers[k].action for k in asks}  # type: ignore[union-attr]
    else:
        actions = {}
        for k, p in asks.items():
            outcome = await ctx.elicit_url(p.message, p.url, p.elicitation_id or k)
            actions[k] = outcome.action
    return CallToolResult(content=[TextContent(type="text", text=f"{h('url-result')} {json.dumps(actions)}")])


async def hostile_sample(reply: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """[sample-tool-description] <img src=x onerror="window.__pwned=1"> Asks the client's model with hostile text."""
    text = reply.content.text if reply.content.type == "text" else reply.content.type  # type: ignore[union-attr]
    return f"{h('sample-result')} model={reply.model} {text}"


async def hostile_named() -> str:
    """[named-description] A tool whose very name is markup."""
    return h("named-result")


def _brace_deploy_parameters(
    region: Annotated[str, Field(json_schema_extra={"enum": ["us-east-1", "eu-west-1" + BRACES]})],
    zone: Annotated[str, Field(json_schema_extra={"oneOf": [{"const": "zone" + BRACES, "title": "braced"}]})] = "",
    shape: Annotated[dict[str, str], Field(json_schema_extra={"enum": [{"k": "shape" + BRACES}]})] = {},  # noqa: B006 - never called
    note: Annotated[str, Field(alias="note" + BRACES)] = "",  # a property named with the payload
) -> str:
    """The parameters of ``brace_deploy`` (its ``__signature__``), with a property named by alias."""
    raise NotImplementedError


async def brace_deploy(**received: Any) -> str:
    """[brace-deploy] What it received, as JSON: a test compares it with the text the server offered."""
    return json.dumps(received)


# the SDK builds the input schema from the signature and passes an aliased argument under its alias,
# which no Python parameter can be named: the function takes keywords, the signature says what they are
setattr(brace_deploy, "__signature__", inspect.signature(_brace_deploy_parameters, eval_str=True))  # noqa: B010 - a function's __signature__ is set by name, as inspect reads it


async def brace_named() -> str:
    """[brace-named] A tool whose name carries the brace payload."""
    return "brace-named ran"


def brace_prompt(**arguments: str) -> str:
    """The arguments the braced prompt received, as JSON."""
    return json.dumps(arguments)


async def brace_template(item: str) -> str:
    """[brace-template] The template variable received, as JSON."""
    return json.dumps({"item": item})


async def brace_complete(ref: Any, argument: Any, context: Any) -> Completion | None:
    """``completion/complete``: the brace payload as the one value of every prompt argument and template variable."""
    return Completion(values=[f"{argument.value}v{BRACES}"])


# --------------------------------------------------------------------------- prompts and resources
async def hostile_prompt(
    topic: Annotated[str, Field(description=h("prompt-arg-description"))] = "x",
) -> list[UserMessage | AssistantMessage]:
    """[prompt-description] <script>window.__pwned=1</script> A prompt made of hostile messages."""
    return [
        UserMessage(f"{h('prompt-user')} {topic}"),
        AssistantMessage(h("prompt-assistant")),
        UserMessage(ImageContent(type="image", data=BAD_BASE64, mime_type="image/png")),
        UserMessage(
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="hostile://prompt/blob", mime_type=HOSTILE_MIME, blob=BAD_BASE64),
            )
        ),
    ]


async def hostile_text_resource() -> str:
    """[resource-description] <img src=x onerror="window.__pwned=1">"""
    return h("resource-text")


HOSTILE_MARKDOWN = f"""# [markdown-heading] {PAYLOADS[0]}

[markdown-text] {HOSTILE}

<div onclick="window.__pwned=1">[markdown-raw-block]</div>

[js link](javascript:window.__pwned=1) [entity link](&#106;avascript:window.__pwned=1) <javascript:window.__pwned=1>
[data link](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0xPC9zY3JpcHQ+) [relative](/api/contents/pwned.txt)
![pixel]({JS_URL}) ![beacon](https://evil.example/beacon.png) [ref][bad]

[bad]: javascript:window.__pwned=1

| [markdown-cell] {PAYLOADS[1]} | {PAYLOADS[2]} |
|---|---|
| {CANARY} | [x](javascript:window.__pwned=1) |

```html" onmouseover="window.__pwned=1
{PAYLOADS[5]}
```
"""
"""Markdown that tries raw HTML, script links of every spelling, images (a beacon), a table and a fence."""


async def hostile_markdown_resource() -> str:
    """[markdown-description] <img src=x onerror="window.__pwned=1">"""
    return HOSTILE_MARKDOWN


async def hostile_blob_resource() -> bytes:
    """[blob-resource-description] "><svg onload=window.__pwned=1>"""
    return _HTML


async def hostile_template(item: str) -> str:
    """[template-description] <script>window.__pwned=1</script>"""
    return f"{h('template-text')} {item}"


# --------------------------------------------------------------------------- the server
@contextmanager
def _root_logging_untouched() -> Iterator[None]:
    """``MCPServer()`` calls ``logging.basicConfig``; a server built inside a kernel must not."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


TOOLS = (
    "hostile_echo",
    "hostile_content",
    "hostile_error",
    "hostile_error_blocks",
    "hostile_records",
    "hostile_progress",
    "hostile_form",
    "hostile_url",
    "hostile_sample",
    HOSTILE_TOOL_NAME,
    "brace_deploy",
    BRACE_TOOL_NAME,
)


def make_server() -> MCPServer[Any]:
    """A fresh hostile server (one per ASGI app, since each app owns its session manager)."""
    with _root_logging_untouched():
        srv: MCPServer[Any] = MCPServer(
            h("server-name"),
            title=h("server-title"),
            description=h("server-description"),
            instructions=h("server-instructions"),
            version=h("server-version"),
            website_url=JS_URL,
            icons=_ICONS,
        )
    srv.tool(name="hostile_echo", title=h("echo-title"), icons=_ICONS)(hostile_echo)
    srv.tool(name="hostile_content", title=h("content-title"))(hostile_content)
    srv.tool(name="hostile_error", title=h("error-title"))(hostile_error)
    srv.tool(name="hostile_error_blocks", title=h("error-blocks-title"))(hostile_error_blocks)
    srv.tool(name="hostile_records", title=h("records-title"))(hostile_records)
    srv.tool(name="hostile_progress", title=h("progress-title"), structured_output=False)(hostile_progress)
    srv.tool(name="hostile_form", title=h("form-title"), structured_output=False)(hostile_form)
    srv.tool(name="hostile_url", title=h("url-title"))(hostile_url)
    srv.tool(name="hostile_sample", title=h("sample-title"), structured_output=False)(hostile_sample)
    # the SDK warns that this name breaks SEP-986 (registration goes on); that warning is not news here
    naming = logging.getLogger("mcp.shared.tool_name_validation")
    level, naming.level = naming.level, logging.ERROR
    try:
        srv.tool(name=HOSTILE_TOOL_NAME, title=h("named-title"), structured_output=False)(hostile_named)
        srv.tool(name=BRACE_TOOL_NAME, structured_output=False)(brace_named)
    finally:
        naming.setLevel(level)
    srv.tool(name="brace_deploy", structured_output=False)(brace_deploy)
    srv.add_prompt(
        Prompt(name="ask" + BRACES, arguments=[PromptArgument(name="topic" + BRACES, required=True)], fn=brace_prompt)
    )
    srv.add_resource(TextResource(uri="brace://static/x" + BRACES, name="braced", text="brace static text"))
    srv.resource("brace://item/{item}", name="brace-template")(brace_template)
    srv.completion()(brace_complete)
    srv.prompt(name="hostile_prompt", title=h("prompt-title"), icons=_ICONS)(hostile_prompt)
    srv.resource(
        "hostile://text", name=h("resource-name"), title=h("resource-title"), mime_type=HOSTILE_MIME, icons=_ICONS
    )(hostile_text_resource)
    srv.resource("hostile://blob", name=h("blob-name"), title=h("blob-title"), mime_type="text/html")(
        hostile_blob_resource
    )
    srv.resource("hostile://markdown", name=h("markdown-name"), title=h("markdown-title"), mime_type="text/markdown")(
        hostile_markdown_resource
    )
    srv.resource("hostile://item/{item}", name=h("template-name"), title=h("template-title"), mime_type=HOSTILE_MIME)(
        hostile_template
    )
    return srv


server: MCPServer[Any] = make_server()


# --------------------------------------------------------------------------- running
def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.security.hostile", description="Run the hostile MCP server.")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the exit status."""
    args = _parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    srv = make_server()
    if args.transport == "stdio":
        anyio.run(srv.run_stdio_async)
        return 0
    import uvicorn

    uvicorn.run(srv.streamable_http_app(host=args.host), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    # Re-enter through the importable module so resolver wire keys read
    # `tests.security.hostile:...` (not `__main__:...`) whichever way the server runs.
    from tests.security.hostile import main as _main

    sys.exit(_main())
