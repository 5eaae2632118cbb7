"""The demo servers, driven by the raw SDK `Client` over every transport and both protocol generations.

Everything here runs the real SDK: in-process (direct dispatch on 2026-07-28,
`InMemoryTransport` for `mode="legacy"`), stdio subprocesses and streamable-HTTP
subprocesses. The exact texts checked here are what tutorials and other tests rely on.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import struct
import zlib
from collections.abc import Iterator
from typing import Any, Literal

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.types import (
    AudioContent,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    LoggingMessageNotificationParams,
    ResourceLink,
    TextContent,
)

from mcp_notebook import demo as demo_module
from mcp_notebook.demo import STOCK, demo, echo_server, make_demo, make_server, provisioner

from .conftest import StartHttpServer, stdio_params

pytestmark = [
    pytest.mark.anyio,
    # slow_count logs on purpose (2025 servers still do); the SDK flags logging as deprecated.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

Mode = Literal["auto", "legacy"]
Transport = Literal["memory", "stdio", "http"]
ANSWERS: dict[str, Any] = {"region": "us-east-1", "audience": "engineers", "name": "Ada"}
COMBOS = [(t, m) for t in ("memory", "stdio", "http") for m in ("auto", "legacy")]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


class Answerer:
    """An elicitation callback that records each question and answers with defaults plus `overrides`."""

    def __init__(self, action: Literal["accept", "decline", "cancel"] = "accept", **overrides: Any) -> None:
        self.action = action
        self.overrides = overrides or ANSWERS
        self.asked: list[tuple[Any, str, dict[str, Any]]] = []

    async def __call__(
        self, ctx: ClientRequestContext, params: ElicitRequestFormParams | ElicitRequestURLParams
    ) -> ElicitResult:
        assert isinstance(params, ElicitRequestFormParams)
        self.asked.append((ctx.request_id, params.message, params.requested_schema))
        if self.action != "accept":
            return ElicitResult(action=self.action)
        props: dict[str, Any] = params.requested_schema["properties"]
        content = {key: spec["default"] for key, spec in props.items() if "default" in spec}
        content.update({key: value for key, value in self.overrides.items() if key in props})
        return ElicitResult(action="accept", content=content)

    @property
    def messages(self) -> list[str]:
        return [message for _, message, _ in self.asked]


@pytest.fixture(scope="module")
def http_provisioner(start_http_server: StartHttpServer) -> str:
    return start_http_server("provisioner")


@pytest.fixture
def targets(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """Per transport, what `Client(...)` is given for the demo and the provisioner server."""
    transport: Transport = request.node.callspec.params["transport"]
    if transport == "memory":
        yield {"demo": demo, "provisioner": provisioner}
    elif transport == "stdio":
        yield {"demo": stdio_params("demo"), "provisioner": stdio_params("provisioner")}
    else:
        yield {
            "demo": request.getfixturevalue("http_demo_server"),
            "provisioner": request.getfixturevalue("http_provisioner"),
        }


def text_of(block: Any) -> str:
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.parametrize(("transport", "mode"), COMBOS)
async def test_demo_flows(transport: Transport, mode: Mode, targets: dict[str, Any]) -> None:
    """Two-round tool, prompt and resource template that ask, plus progress and logs, on one connection."""
    answer = Answerer()
    logs: list[LoggingMessageNotificationParams] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async with Client(
        targets["demo"], mode=mode, elicitation_callback=answer, logging_callback=on_log, log_level="info"
    ) as client:
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")

        result = await client.call_tool("provision_db", {"name": "orders", "size": "medium"})
        assert not result.is_error
        assert text_of(result.content[0]) == "Provisioned 'orders' in us-east-1 (size medium)."
        # Round two's question depends on round one's answer.
        assert answer.messages == ["Which region should 'orders' live in?", "Create 'orders' (medium) in us-east-1?"]
        if mode == "auto":
            # Resolver keys are stable whether the server runs in-process or via `python -m`.
            assert [key for key, _, _ in answer.asked] == [
                "mcp_notebook.demo:ask_region",
                "mcp_notebook.demo:ask_confirm",
            ]

        prompt = await client.get_prompt("briefing", {"topic": "MCP"})
        assert [(m.role, text_of(m.content)) for m in prompt.messages] == [
            ("user", "Write a briefing for engineers about MCP.")
        ]
        assert answer.messages[-1] == "Who is the briefing for?"

        read = await client.read_resource("notes://ada/latest")
        assert [c.text for c in read.contents if hasattr(c, "text")] == ["note for ada"]
        assert answer.messages[-1] == "Share notes of ada?"

        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total, message))

        counted = await client.call_tool("slow_count", {"n": 3, "delay": 0.01}, progress_callback=on_progress)
        assert text_of(counted.content[0]) == "Counted to 3."
        assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert [(p.level, p.data) for p in logs] == [("info", f"step {i} of 3") for i in (1, 2, 3)]


@pytest.mark.parametrize(("transport", "mode"), COMBOS)
async def test_provisioner(transport: Transport, mode: Mode, targets: dict[str, Any]) -> None:
    """The seed's low-level server: `InputRequiredResult` on 2026-07-28, back-channel on 2025."""
    answer = Answerer()
    async with Client(targets["provisioner"], mode=mode, elicitation_callback=answer) as client:
        result = await client.call_tool("provision", {"name": "orders"})
    assert not result.is_error
    assert text_of(result.content[0]) == "Provisioned 'orders' in us-east-1."
    (key, message, schema) = answer.asked[0]
    assert message == "Which region should the database live in?"
    assert schema["properties"]["region"]["type"] == "string"
    assert schema["properties"]["region"]["default"] == "eu-west-1"
    assert schema["required"] == ["region"]
    if mode == "auto":
        assert key == "region"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_refusals(mode: Mode) -> None:
    """Decline and cancel reach every asking feature as a clear outcome, not a hang or a crash."""
    async with Client(provisioner, mode=mode, elicitation_callback=Answerer("decline")) as client:
        result = await client.call_tool("provision", {"name": "orders"})
    assert result.is_error
    assert text_of(result.content[0]) == "Provisioning cancelled: the user declined."

    async with Client(provisioner, mode=mode, elicitation_callback=Answerer("cancel")) as client:
        result = await client.call_tool("provision", {"name": "orders"})
    assert result.is_error
    assert text_of(result.content[0]) == "Provisioning cancelled: the user cancelled."

    async with Client(demo, mode=mode, elicitation_callback=Answerer("decline")) as client:
        read = await client.read_resource("notes://bob/latest")
        assert [c.text for c in read.contents if hasattr(c, "text")] == ["withheld"]
        prompt = await client.get_prompt("briefing", {"topic": "MCP"})
        assert text_of(prompt.messages[0].content) == "Write a briefing for a general audience about MCP."
        declined = await client.call_tool("provision_db", {"name": "orders"})
        assert declined.is_error

    async with Client(demo, mode=mode, elicitation_callback=Answerer(share=False, ok=False)) as client:
        read = await client.read_resource("notes://bob/latest")
        assert [c.text for c in read.contents if hasattr(c, "text")] == ["withheld"]
        unconfirmed = await client.call_tool("provision_db", {"name": "orders"})
        assert unconfirmed.is_error
        assert text_of(unconfirmed.content[0]).endswith("Provisioning cancelled: 'orders' was not confirmed.")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_plain_tools_and_content(mode: Mode) -> None:
    """echo, add, fail, showcase (every content kind), the readme and the listing."""
    async with Client(demo, mode=mode) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == {
            "provision_db",
            "slow_count",
            "echo",
            "add",
            "inventory",
            "showcase",
            "fail",
            "ask_everything",
            "request_headers",
            "process_info",  # transport checks
            "summarize",
            "sample_with_tools",
            "list_my_roots",  # sampling and roots (issue 4)
        }

        echoed = await client.call_tool("echo", {"text": "hello"})
        assert [text_of(b) for b in echoed.content] == ["hello"]
        assert echoed.structured_content is None

        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == {"result": 5}

        stock = await client.call_tool("inventory", {})
        assert stock.structured_content == {"result": [dict(row) for row in STOCK]}
        assert [json.loads(text_of(b)) for b in stock.content] == [
            dict(row) for row in STOCK
        ]  # the SDK: one text block per record

        failed = await client.call_tool("fail", {"message": "no luck"})
        assert failed.is_error
        assert text_of(failed.content[0]) == "Error executing tool fail: no luck"

        shown = await client.call_tool("showcase", {})
        kinds = [type(block) for block in shown.content]
        assert kinds == [TextContent, ImageContent, AudioContent, EmbeddedResource, EmbeddedResource, ResourceLink]
        _, image, audio, embedded_text, embedded_blob, link = shown.content
        assert isinstance(image, ImageContent) and image.mime_type == "image/png"
        _assert_valid_png(base64.b64decode(image.data))
        assert isinstance(audio, AudioContent) and audio.mime_type == "audio/wav"
        wav = base64.b64decode(audio.data)
        assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE" and struct.unpack("<I", wav[4:8])[0] == len(wav) - 8
        assert isinstance(embedded_text, EmbeddedResource) and hasattr(embedded_text.resource, "text")
        assert isinstance(embedded_blob, EmbeddedResource) and hasattr(embedded_blob.resource, "blob")
        assert isinstance(link, ResourceLink) and str(link.uri) == "demo://readme"

        readme = await client.read_resource("demo://readme")
        assert readme.contents[0].mime_type == "text/markdown"
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["notes://{user}/latest"]


def _assert_valid_png(data: bytes) -> None:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, kinds = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0] == zlib.crc32(kind + body)
        kinds.append(kind)
        pos += 12 + length
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_ask_everything(mode: Mode) -> None:
    """One form covering every field kind; the answers come back as sorted JSON."""
    answer = Answerer(name="Ada", age=37, color="blue", size="l", tier="pro", extras=["wifi"])
    async with Client(demo, mode=mode, elicitation_callback=answer) as client:
        result = await client.call_tool("ask_everything", {})
    assert not result.is_error
    text = text_of(result.content[0])
    assert json.loads(text) == {
        "name": "Ada",
        "email": "ada@example.com",
        "homepage": "https://example.com",
        "birthday": "1815-12-10",
        "meeting": "2026-07-28T09:30:00",
        "age": 37,
        "ratio": 0.5,
        "subscribe": True,
        "color": "blue",
        "size": "l",
        "tier": "pro",
        "toppings": ["cheese"],
        "extras": ["wifi"],
    }
    assert text == json.dumps(json.loads(text), sort_keys=True)
    props = answer.asked[0][2]["properties"]
    assert answer.asked[0][2]["required"] == ["name"]
    assert (props["name"]["minLength"], props["name"]["maxLength"]) == (1, 40)
    assert (props["email"]["format"], props["homepage"]["format"]) == ("email", "uri")
    assert (props["birthday"]["format"], props["meeting"]["format"]) == ("date", "date-time")
    assert (props["age"]["type"], props["age"]["minimum"], props["age"]["maximum"]) == ("integer", 0, 150)
    assert props["ratio"]["type"] == "number" and props["subscribe"]["type"] == "boolean"
    assert props["color"]["enum"] == ["red", "green", "blue"]
    assert "enum" not in props["size"] and props["size"]["oneOf"][0] == {"const": "s", "title": "Small"}
    assert props["tier"]["enumNames"] == ["Free tier", "Pro tier"]
    assert props["toppings"]["items"] == {"type": "string", "enum": ["cheese", "ham", "olives"]}
    assert props["extras"]["items"]["anyOf"][0] == {"const": "wifi", "title": "Wi-Fi"}


async def test_multi_worker_http_with_shared_keys(start_http_server: StartHttpServer) -> None:
    """Two stateless uvicorn workers sharing a key: every retry verifies, whichever worker takes it.

    Keep-alive is off so each round opens a new connection and rounds spread over
    both workers (with one kept-alive connection every round would reach the same
    worker). Without shared keys about a third of these calls fail with -32602.
    """
    url = start_http_server("demo", keys_env="MCP_NOTEBOOK_TEST_STATE_KEY", workers=2)
    http = httpx2.AsyncClient(timeout=30, limits=httpx2.Limits(max_keepalive_connections=0))
    async with http, Client(streamable_http_client(url, http_client=http), elicitation_callback=Answerer()) as client:
        for _ in range(8):
            result = await client.call_tool("provision_db", {"name": "orders"})
            assert text_of(result.content[0]) == "Provisioned 'orders' in us-east-1 (size small)."


@pytest.mark.parametrize("workers", [1, 2])
async def test_http_cli_prints_its_url_once_listening(workers: int) -> None:
    """`python -m mcp_notebook.demo demo --transport http` says where it listens, once it does (flushed: a pipe sees it)."""
    import subprocess
    import sys
    import time

    from .conftest import REPO_ROOT

    command = [
        sys.executable,
        "-m",
        "mcp_notebook.demo",
        "demo",
        "--transport",
        "http",
        "--port",
        "0",
        "--workers",
        str(workers),
    ]
    env = {**os.environ, "MCP_NOTEBOOK_TEST_STATE_KEY": "k" * 32}
    if workers > 1:
        command += ["--keys-env", "MCP_NOTEBOOK_TEST_STATE_KEY"]
    proc = subprocess.Popen(
        command, cwd=str(REPO_ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until the line comes: it is flushed when the server is up
        prefix, suffix = (
            "Serving demo on http://127.0.0.1:",
            "/mcp" + (f" ({workers} workers)" if workers > 1 else "") + ". Ctrl-C stops it.\n",
        )
        assert line.startswith(prefix) and line.endswith(suffix), line
        port = int(line[len(prefix) : -len(suffix)])
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 120  # generous: two worker processes import the SDK on a loaded machine
        while True:  # with workers the socket is bound (and queues) before they start serving
            try:
                async with Client(streamable_http_client(url)) as client:
                    result = await client.call_tool("add", {"a": 1, "b": 2})
                break
            except Exception:
                if workers == 1 or time.monotonic() > deadline:
                    raise
                await anyio.sleep(0.2)
        assert result.structured_content == {"result": 3}
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert "Serving" not in out  # said once


def test_factories_and_cli_errors() -> None:
    """Servers build with and without keys, leave the host's logging alone, and the CLI rejects bad input."""
    root = logging.getLogger()
    before = (root.handlers[:], root.level)
    assert isinstance(make_demo(keys=["k" * 32]), MCPServer)
    assert (root.handlers, root.level) == before
    assert isinstance(make_server("provisioner"), Server)
    assert isinstance(make_server("echo"), MCPServer)
    with pytest.raises(ValueError, match="unknown demo server"):
        make_server("nope")
    assert "MCP_NOTEBOOK_SURELY_UNSET" not in os.environ
    with pytest.raises(SystemExit) as exit_info:
        demo_module.main(["demo", "--keys-env", "MCP_NOTEBOOK_SURELY_UNSET"])
    assert exit_info.value.code == 2


async def test_echo_server() -> None:
    """The benchmarks' baseline: one tool, text in, the same text out, no structured content."""
    async with Client(echo_server) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == ["echo"]
        result = await client.call_tool("echo", {"text": "ping"})
    assert [text_of(b) for b in result.content] == ["ping"] and result.structured_content is None


def test_keys_env_holds_one_key_or_several_for_a_rotation(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--keys-env VAR``: one key, or ``OLD,NEW`` (the first seals, every one verifies), as tutorial 10 rotates them."""
    from mcp_notebook.demo import _keys_from_env

    old, new = "a" * 64, "b" * 64
    monkeypatch.setenv("FLEET_KEYS", old)
    assert _keys_from_env("FLEET_KEYS") == [old]
    monkeypatch.setenv("FLEET_KEYS", f"{new}, {old}")
    assert _keys_from_env("FLEET_KEYS") == [new, old]
    monkeypatch.setenv("FLEET_KEYS", " , ")
    with pytest.raises(ValueError, match="holds no request-state key"):
        _keys_from_env("FLEET_KEYS")
    assert _keys_from_env(None) is None
