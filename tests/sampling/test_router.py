"""Sampling answered by a configured model: payload mapping over real HTTP, routing, review, failures.

Models are served by ``tests/support/model_server.py`` (a loopback fake of the OpenAI chat-completions and
Anthropic Messages APIs that records what it receives). Servers are the built-in demo server in
process, on both protocol generations: 2026-07-28 (sampling inside ``input_requests``) and 2025
(sampling over the back-channel). The review checkpoints run in a real kernel with simulated
widget comm messages at the end of the file.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.mcpserver import MCPServer, Resolve, Sample
from mcp.types import (
    AudioContent,
    CreateMessageRequestParams,
    CreateMessageResult,
    ImageContent,
    ModelHint,
    ModelPreferences,
    SamplingMessage,
    TextContent,
    Tool,
    ToolChoice,
    ToolResultContent,
    ToolUseContent,
)

from mcp_notebook.errors import FlowError
from mcp_notebook.flows.ui import HeadlessUI
from mcp_notebook.notebook.display import FlowReport
from mcp_notebook.sampling.providers import create_message
from mcp_notebook.sampling.providers.anthropic import anthropic_payload
from mcp_notebook.sampling.providers.base import SamplingContext, SamplingError
from mcp_notebook.sampling.providers.openai import openai_payload
from mcp_notebook.sampling.router import ModelConfig, ModelRouter, Reviewed

from ..support.model_server import ModelServer, Reply

KEY_ENV = "MCPNB_TEST_MODEL_KEY"
KEY = "sk-test-0123456789abcdef-secret"
GENERATIONS = {"modern": "d26", "legacy": "d25"}
SUMMARY_SYSTEM = "You summarize text in one short sentence."
WEATHER_SYSTEM = "You answer questions about the weather. Call get_weather for current conditions; never guess them."
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def fake() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture(scope="module", autouse=True)
def demo_reviewed(ip: InteractiveShell) -> None:
    """The demo in both generations, in the shared shell with every sampling reviewed (``ip`` undoes both after)."""
    ip.run_line_magic("config", "MCPMagics.review = 'ask'")  # the fake model is on loopback: 'remote' never reviews
    mcp(ip, "connect d26 mcp_notebook.demo:demo")
    mcp(ip, "connect d25 mcp_notebook.demo:demo --protocol legacy")


@pytest.fixture(autouse=True)
def clean(fake: ModelServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    fake.reset()
    monkeypatch.setenv(KEY_ENV, KEY)
    yield
    router = hub().router
    router.use("echo")
    for name in [n for n in router.models if n != "echo"]:
        router.remove(name)


def hub() -> Any:
    from IPython import get_ipython

    from ..conftest import session_of

    return session_of(get_ipython())


def mcp(shell: Any, line: str) -> Any:
    return shell.run_line_magic("mcp", line)


def add_fake(ip: InteractiveShell, fake: ModelServer, name: str, provider: str, extra: str = "") -> None:
    url = fake.openai_url if provider == "openai" else fake.anthropic_url
    model = "gpt-test" if provider == "openai" else "claude-test"
    mcp(ip, f"model add {name} {provider} {model} --base-url {url} --api-key-env {KEY_ENV} {extra}")


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def params(**kw: Any) -> CreateMessageRequestParams:
    kw.setdefault("messages", [SamplingMessage(role="user", content=TextContent(type="text", text="hi"))])
    kw.setdefault("max_tokens", 50)
    return CreateMessageRequestParams(**kw)


def text_of_flow(flow: Any) -> str:
    return flow.result(timeout=30).content[0].text


# ---------------------------------------------------------------------- payloads over real HTTP
@pytest.mark.parametrize("generation", GENERATIONS)
def test_openai_request_is_exactly_the_chat_completions_shape(
    ip: InteractiveShell, fake: ModelServer, generation: str
) -> None:
    add_fake(ip, fake, "gpt", "openai")
    mcp(ip, "model use gpt")
    flow = mcp(ip, f"call {GENERATIONS[generation]}.summarize text='the cat sat on the mat' max_tokens=42")
    assert text_of_flow(flow) == "Summary (fake-gpt): fake reply to: Summarize: the cat sat on the mat"
    [sent] = fake.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": SUMMARY_SYSTEM},
            {"role": "user", "content": "Summarize: the cat sat on the mat"},
        ],
        "max_tokens": 42,
        "temperature": 0.2,
        "stop": ["\n\n"],
    }
    # the cell says which model answered, which model name the provider reported, and why
    assert any(
        "answered by gpt (openai gpt-test) as 'fake-gpt', stop reason endTurn — default model" in n for n in flow.notes
    )


@pytest.mark.parametrize("generation", GENERATIONS)
def test_anthropic_request_is_exactly_the_messages_shape(
    ip: InteractiveShell, fake: ModelServer, generation: str
) -> None:
    add_fake(ip, fake, "claude", "anthropic")
    mcp(ip, "model use claude")
    flow = mcp(ip, f"call {GENERATIONS[generation]}.summarize text='a long story' max_tokens=7")
    assert text_of_flow(flow) == "Summary (fake-claude): fake reply to: Summarize: a long story"
    [sent] = fake.requests
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY and sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    assert sent.body == {
        "model": "claude-test",
        "max_tokens": 7,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Summarize: a long story"}]}],
        "system": SUMMARY_SYSTEM,
        "temperature": 0.2,
        "stop_sequences": ["\n\n"],
    }


def _rich_params(**kw: Any) -> CreateMessageRequestParams:
    """A conversation with an image, a tool call and its result, and settings of every kind."""
    tool = Tool(
        name="lookup",
        description="Look a word up",
        input_schema={"type": "object", "properties": {"w": {"type": "string"}}},
    )
    return params(
        messages=[
            SamplingMessage(
                role="user",
                content=[
                    TextContent(type="text", text="What is this?"),
                    ImageContent(type="image", data="iVBORw0K", mime_type="image/png"),
                ],
            ),
            SamplingMessage(
                role="assistant",
                content=[
                    TextContent(type="text", text="Let me check."),
                    ToolUseContent(type="tool_use", id="t1", name="lookup", input={"w": "cat"}),
                ],
            ),
            SamplingMessage(
                role="user",
                content=[
                    ToolResultContent(
                        type="tool_result", tool_use_id="t1", content=[TextContent(type="text", text="a small feline")]
                    )
                ],
            ),
        ],
        system_prompt="Be brief.",
        max_tokens=64,
        temperature=0.5,
        stop_sequences=["END"],
        tools=[tool],
        tool_choice=ToolChoice(mode="required"),
        **kw,
    )


def test_openai_mapping_of_images_tools_and_results(fake: ModelServer) -> None:
    config = ModelConfig("gpt", "openai", "gpt-test", base_url=fake.openai_url)
    result = run(create_message(config, _rich_params(), SamplingContext()))
    assert result.model == "fake-gpt" and result.content_as_list[0].text.startswith("fake reply")
    assert fake.requests[0].body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
                ],
            },
            {
                "role": "assistant",
                "content": "Let me check.",
                "tool_calls": [
                    {"id": "t1", "type": "function", "function": {"name": "lookup", "arguments": '{"w": "cat"}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "t1", "content": "a small feline"},
        ],
        "max_tokens": 64,
        "temperature": 0.5,
        "stop": ["END"],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "lookup",
                    "description": "Look a word up",
                    "parameters": {"type": "object", "properties": {"w": {"type": "string"}}},
                },
            }
        ],
        "tool_choice": "required",
    }
    # OpenAI's own endpoint gets max_completion_tokens (its reasoning models refuse max_tokens)
    official = openai_payload(ModelConfig("o", "openai", "gpt-4o-mini"), params(max_tokens=9))
    assert official["max_completion_tokens"] == 9 and "max_tokens" not in official


def test_anthropic_mapping_of_images_tools_and_results(fake: ModelServer) -> None:
    config = ModelConfig("claude", "anthropic", "claude-test", base_url=fake.anthropic_url)
    run(create_message(config, _rich_params(), SamplingContext()))
    assert fake.requests[0].body == {
        "model": "claude-test",
        "max_tokens": 64,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"w": "cat"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "a small feline"}],
                    }
                ],
            },
        ],
        "system": "Be brief.",
        "temperature": 0.5,
        "stop_sequences": ["END"],
        "tools": [
            {
                "name": "lookup",
                "description": "Look a word up",
                "input_schema": {"type": "object", "properties": {"w": {"type": "string"}}},
            }
        ],
        "tool_choice": {"type": "any"},
    }
    assert anthropic_payload(config, params(tools=_rich_params().tools, tool_choice=ToolChoice(mode="none")))[
        "tool_choice"
    ] == {"type": "none"}


def test_audio_goes_to_openai_and_is_refused_clearly_elsewhere(fake: ModelServer) -> None:
    def audio(mime: str) -> CreateMessageRequestParams:
        return params(
            messages=[SamplingMessage(role="user", content=AudioContent(type="audio", data="UklGRg==", mime_type=mime))]
        )

    run(
        create_message(
            ModelConfig("gpt", "openai", "gpt-audio", base_url=fake.openai_url), audio("audio/wav"), SamplingContext()
        )
    )
    assert fake.requests[0].body["messages"] == [
        {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}]}
    ]
    with pytest.raises(SamplingError, match="audio only as wav or mp3"):
        run(
            create_message(
                ModelConfig("gpt", "openai", "gpt-audio", base_url=fake.openai_url),
                audio("audio/ogg"),
                SamplingContext(),
            )
        )
    with pytest.raises(SamplingError, match="does not take audio"):
        run(
            create_message(
                ModelConfig("c", "anthropic", "claude-test", base_url=fake.anthropic_url),
                audio("audio/wav"),
                SamplingContext(),
            )
        )
    assert len(fake.requests) == 1  # nothing was sent for the refused ones


def test_stop_reasons_and_model_name_come_back(fake: ModelServer) -> None:
    config = ModelConfig("gpt", "openai", "gpt-test", base_url=fake.openai_url)
    fake.queue(fake.openai_text("cut", model="gpt-test-2026", finish="length"))
    result = run(create_message(config, params(), SamplingContext()))
    assert (result.model, result.stop_reason) == ("gpt-test-2026", "maxTokens")
    claude = ModelConfig("c", "anthropic", "claude-test", base_url=fake.anthropic_url)
    fake.queue(fake.anthropic_text("and then", stop="stop_sequence"))
    assert run(create_message(claude, params(), SamplingContext())).stop_reason == "stopSequence"


# ---------------------------------------------------------------------- tool-enabled sampling, end to end
@pytest.mark.parametrize("generation", GENERATIONS)
def test_tool_enabled_sampling_with_openai(ip: InteractiveShell, fake: ModelServer, generation: str) -> None:
    add_fake(ip, fake, "gpt", "openai")
    mcp(ip, "model use gpt")
    fake.queue(fake.openai_tool_call("get_weather", {"city": "Paris"}), fake.openai_text("Light rain in Paris, 18 °C."))
    flow = mcp(ip, f"call {GENERATIONS[generation]}.sample_with_tools question='Do I need an umbrella in Paris?'")
    assert text_of_flow(flow) == "Light rain in Paris, 18 °C."
    first, second = (r.body for r in fake.requests)
    tool = {
        "type": "function",
        "function": {"name": "get_weather", "description": "Current weather for a city", "parameters": WEATHER_SCHEMA},
    }
    assert first["tools"] == [tool] and first["tool_choice"] == "auto"
    assert second["messages"] == [
        {"role": "system", "content": WEATHER_SYSTEM},
        {"role": "user", "content": "Do I need an umbrella in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Paris: 18 °C, light rain"},
    ]
    assert second["tool_choice"] == "none"
    assert any("stop reason toolUse" in n for n in flow.notes)
    if generation == "modern":
        assert flow.round == 2  # two sampling requests, each returned in its own round


@pytest.mark.parametrize("generation", GENERATIONS)
def test_tool_enabled_sampling_with_anthropic(ip: InteractiveShell, fake: ModelServer, generation: str) -> None:
    add_fake(ip, fake, "claude", "anthropic")
    mcp(ip, "model use claude")
    fake.queue(
        fake.anthropic_tool_use("get_weather", {"city": "Oslo"}, text="Checking."), fake.anthropic_text("Snow in Oslo.")
    )
    flow = mcp(ip, f"call {GENERATIONS[generation]}.sample_with_tools question='Weather in Oslo?'")
    assert text_of_flow(flow) == "Snow in Oslo."
    first, second = (r.body for r in fake.requests)
    assert first["tools"] == [
        {"name": "get_weather", "description": "Current weather for a city", "input_schema": WEATHER_SCHEMA}
    ]
    assert first["tool_choice"] == {"type": "auto"}
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "Oslo: -3 °C, snow"}],
                }
            ],
        },
    ]


# ---------------------------------------------------------------------- routing
def _router() -> ModelRouter:
    router = ModelRouter()
    router.add(ModelConfig("mini", "openai", "gpt-4o-mini", base_url="http://x", cost=0.1, speed=0.9, intelligence=0.4))
    router.add(
        ModelConfig(
            "sonnet", "anthropic", "claude-sonnet-4-5", base_url="http://x", cost=0.6, speed=0.5, intelligence=0.9
        )
    )
    router.add(ModelConfig("local", "openai", "llama3.2", base_url="http://x", cost=0.0, speed=0.3, intelligence=0.2))
    router.add(ModelConfig("mine", "callable", function=lambda p: "x"))
    return router


@pytest.mark.parametrize(
    ("hints", "priorities", "expected", "why"),
    [
        ([], {}, "echo", "default model"),
        (["claude"], {}, "sonnet", "model hint 'claude'"),  # substring of the model id
        (["sonnet"], {}, "sonnet", "model hint 'sonnet'"),  # substring of the name
        (["gpt-5", "llama"], {}, "local", "model hint 'llama'"),  # tried in order; the first that matches wins
        (["CLAUDE-SONNET"], {}, "sonnet", "model hint 'CLAUDE-SONNET'"),  # case does not matter
        (["gemini"], {}, "echo", "no model matches the hints 'gemini'; default model"),
        ([], {"cost_priority": 1.0}, "local", "priorities cost 1"),
        ([], {"speed_priority": 1.0}, "mini", "priorities speed 1"),
        ([], {"intelligence_priority": 1.0}, "sonnet", "priorities intelligence 1"),
        ([], {"cost_priority": 0.3, "intelligence_priority": 0.8}, "sonnet", "priorities cost 0.3, intelligence 0.8"),
        (
            ["gemini"],
            {"cost_priority": 0.9, "speed_priority": 0.9},
            "mini",
            "no model matches the hints 'gemini'; priorities",
        ),
        (["mini"], {"intelligence_priority": 1.0}, "mini", "model hint 'mini'"),  # a hint beats priorities
    ],
)
def test_routing_by_hints_then_priorities_then_default(
    hints: list[str], priorities: dict[str, float], expected: str, why: str
) -> None:
    prefs = ModelPreferences(hints=[ModelHint(name=h) for h in hints] or None, **priorities)
    choice = _router().choose(params(model_preferences=prefs))
    assert choice.config.name == expected
    assert choice.why.startswith(why)


def test_routing_prefers_the_default_among_hint_matches_and_skips_unrated_models() -> None:
    router = _router()
    router.add(ModelConfig("mini-2", "openai", "gpt-4o-mini-2", base_url="http://x"))
    router.use("mini-2")
    assert (
        router.choose(params(model_preferences=ModelPreferences(hints=[ModelHint(name="mini")]))).config.name
        == "mini-2"
    )
    unrated = ModelRouter()
    unrated.add(ModelConfig("plain", "openai", "m", base_url="http://x"))
    choice = unrated.choose(params(model_preferences=ModelPreferences(cost_priority=1.0)))
    assert choice.config.name == "echo" and "no model is rated" in choice.why


def test_routing_end_to_end_names_the_model_and_why(ip: InteractiveShell, fake: ModelServer) -> None:
    add_fake(ip, fake, "gpt", "openai", "--cost 0.8 --speed 0.4 --intelligence 0.9")
    add_fake(ip, fake, "claude", "anthropic", "--cost 0.2 --speed 0.7 --intelligence 0.6")
    by_hint = mcp(ip, "call d26.summarize text=x hint=claude")
    assert text_of_flow(by_hint).startswith("Summary (fake-claude)")
    assert any("model hint 'claude'" in n for n in by_hint.notes)
    by_cost = mcp(ip, "call d25.summarize text=x prefer=cost")
    assert text_of_flow(by_cost).startswith("Summary (fake-claude)")
    by_brains = mcp(ip, "call d26.summarize text=x prefer=intelligence")
    assert text_of_flow(by_brains).startswith("Summary (fake-gpt)")
    assert any("priorities intelligence 1: best score" in n for n in by_brains.notes)
    html = FlowReport(by_brains)._repr_mimebundle_()["text/html"]
    assert "answered by gpt (openai gpt-test)" in html
    assert mcp(ip, "call d26.summarize text=x").result().content[0].text.startswith("Summary (echo)")  # default


# ---------------------------------------------------------------------- configuration
def test_model_commands_and_config(ip: InteractiveShell, fake: ModelServer, capsys: Any) -> None:
    add_fake(ip, fake, "gpt", "openai", "--cost 0.5 --timeout 5")
    table = mcp(ip, "model list")._repr_mimebundle_()["text/plain"]
    assert "gpt" in table and KEY_ENV in table and KEY not in table and "0.5" in table
    assert "* echo" in table
    mcp(ip, "model use gpt")
    assert hub().router.default == "gpt"
    with pytest.raises(UsageError, match="default model"):
        mcp(ip, "model remove gpt")
    mcp(ip, "model use echo")
    mcp(ip, "model remove gpt")
    assert "gpt" not in hub().router.models
    for line, message in [
        ("model add x nosuch", "unknown provider 'nosuch'"),
        ("model add x openai", "needs a MODEL"),
        ("model add x callable not_a_function", "name of a function"),
        ("model add x echo --cost 2", "between 0 and 1"),
        ("model use nobody", "no model named 'nobody'"),
        ("model add", "%mcp model add NAME PROVIDER"),
        ("model frob", "'frob' is not one of add, use, remove, list"),
        ("review sometimes", "'sometimes' is not one of remote, ask, always, never"),
    ]:
        with pytest.raises(UsageError, match=message):
            mcp(ip, line)
    # official endpoints read the conventional variable unless told otherwise
    mcp(ip, "model add official openai gpt-4o-mini")
    assert hub().router.models["official"].api_key_env == "OPENAI_API_KEY"
    mcp(ip, "review --help")
    assert "%mcp review" in capsys.readouterr().out


def test_models_through_config(ip: InteractiveShell, fake: ModelServer, caplog: pytest.LogCaptureFixture) -> None:
    spec = {
        "cfg": {
            "provider": "anthropic",
            "model": "claude-test",
            "base_url": fake.anthropic_url,
            "api_key_env": KEY_ENV,
            "speed": 1.0,
        }
    }
    ip.run_line_magic("config", f"MCPMagics.models = {spec!r}")
    ip.run_line_magic("config", "MCPMagics.default_model = 'cfg'")
    try:
        assert hub().router.default == "cfg"
        assert text_of_flow(mcp(ip, "call d26.summarize text=y")).startswith("Summary (fake-claude)")
        ip.run_line_magic(
            "config", "MCPMagics.models = {'bad': {'provider': 'nosuch'}}"
        )  # %config reports, never raises
        assert "MCPMagics.models['bad']: unknown provider 'nosuch'" in caplog.text
        assert "cfg" in hub().router.models and "bad" not in hub().router.models  # a bad table changes nothing
        ip.run_line_magic("config", "MCPMagics.default_model = 'ghost'")
        assert "no model named 'ghost'" in caplog.text and hub().router.default == "cfg"
        ip.run_line_magic("config", "MCPMagics.review = 'never'")
        assert hub().router.review == "never"
        mcp(ip, "review always")
        assert hub().router.review == "always"
    finally:
        ip.run_line_magic("config", "MCPMagics.review = 'ask'")
        ip.run_line_magic("config", "MCPMagics.default_model = 'echo'")
        ip.run_line_magic("config", "MCPMagics.models = {}")
    assert "cfg" not in hub().router.models


# ---------------------------------------------------------------------- local providers
def test_echo_is_deterministic_and_respects_max_tokens_and_stops(ip: InteractiveShell) -> None:
    assert text_of_flow(mcp(ip, "call d26.summarize text=hello")) == "Summary (echo): echo: Summarize: hello"
    clipped = mcp(ip, "call d25.summarize text='a very long text indeed' max_tokens=3")
    assert text_of_flow(clipped) == "Summary (echo): echo: Summar"  # 3 tokens ~ 12 characters
    assert any("stop reason maxTokens" in n for n in clipped.notes)
    stopped = run(
        ModelRouter().sample(
            params(
                messages=[SamplingMessage(role="user", content=TextContent(type="text", text="one END two"))],
                stop_sequences=["END"],
            )
        )
    )
    assert (stopped[0].content.text, stopped[0].stop_reason) == ("echo: one ", "stopSequence")


def test_callable_provider_sync_and_async(ip: InteractiveShell) -> None:
    seen: list[Any] = []

    def shout(p: Any) -> str:
        seen.append(p)
        return p.messages[-1].content.text.upper()

    async def polite(p: Any) -> Any:
        return TextContent(type="text", text=f"please: {p.system_prompt}")

    def broken(p: Any) -> str:
        raise RuntimeError("no idea")

    ip.user_ns.update(shout=shout, polite=polite, broken=broken)
    mcp(ip, "model add loud callable shout")
    mcp(ip, "model use loud")
    assert text_of_flow(mcp(ip, "call d26.summarize text=quiet")) == "Summary (shout): SUMMARIZE: QUIET"
    assert seen[0].max_tokens == 100 and seen[0].system_prompt == SUMMARY_SYSTEM  # given the request params
    mcp(ip, "model add nice callable polite")
    mcp(ip, "model use nice")
    assert (
        text_of_flow(mcp(ip, "call d25.summarize text=q max_tokens=4"))
        == f"Summary (polite): {('please: ' + SUMMARY_SYSTEM)[:16]}"
    )
    mcp(ip, "model add oops callable broken")
    mcp(ip, "model use oops")
    with pytest.raises(FlowError, match=r"broken\(\) raised RuntimeError: no idea"):
        mcp(ip, "call d26.summarize text=q")


def test_human_provider_headless_is_a_clear_error(ip: InteractiveShell) -> None:
    mcp(ip, "model add me human")
    mcp(ip, "model use me")
    with pytest.raises(FlowError, match="human provider .* this run is headless"):
        mcp(ip, "call d26.summarize text=q")


# ---------------------------------------------------------------------- failures
FAILURES = [
    (
        "openai",
        lambda f: f.openai_error(500, "The server is overloaded"),
        "answered HTTP 500: The server is overloaded (server_error)",
    ),
    (
        "anthropic",
        lambda f: f.anthropic_error(529, "Overloaded", "overloaded_error"),
        "answered HTTP 529: Overloaded (overloaded_error)",
    ),
    (
        "openai",
        lambda f: f.openai_error(401, f"Incorrect API key provided: {KEY}", "invalid_request_error"),
        "answered HTTP 401: Incorrect API key provided: ***",
    ),
    ("openai", lambda f: Reply({"id": "x", "object": "chat.completion"}), "malformed reply: no choices"),
    ("openai", lambda f: Reply("<html>bad gateway</html>"), "not JSON"),
    (
        "anthropic",
        lambda f: Reply({"type": "message", "content": "oops", "stop_reason": "end_turn"}),
        "malformed reply: no content list",
    ),
    (
        "openai",
        lambda f: Reply(
            {
                "model": "m",
                "choices": [
                    {
                        "message": {"role": "assistant", "content": None, "refusal": "I can't help with that."},
                        "finish_reason": "stop",
                    }
                ],
            }
        ),
        "the model refused: I can't help with that.",
    ),
    ("anthropic", lambda f: f.anthropic_text("I won't.", stop="refusal"), "the model refused: I won't."),
    ("openai", lambda f: Reply(f.openai_text("late").body, delay=1.5), "did not answer within 0.3 s"),
]


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize(("provider", "reply", "reason"), FAILURES)
def test_provider_failures_answer_the_server_with_the_reason(
    ip: InteractiveShell, fake: ModelServer, generation: str, provider: str, reply: Any, reason: str
) -> None:
    # only the late reply's case measures the timeout; the others get a ceiling no loaded machine reaches
    add_fake(ip, fake, "m", provider, "--timeout 0.3" if "within 0.3 s" in reason else "--timeout 30")
    mcp(ip, "model use m")
    fake.queue(reply(fake))
    with pytest.raises(FlowError) as info:
        mcp(ip, f"call {GENERATIONS[generation]}.summarize text=q")
    text = str(info.value)
    assert reason in text
    assert KEY not in text
    flow = hub().last_flow
    assert any(reason in n for n in flow.notes)  # the cell shows why
    assert KEY not in json.dumps(FlowReport(flow)._repr_mimebundle_()) + json.dumps(flow.trace(), default=str)
    if generation == "legacy":
        assert "MCP error -32603" in text  # the 2025 server received the error answer and failed the call with it
    # the flow failed cleanly; the connection and the model router still work
    mcp(ip, "model use echo")
    assert (
        text_of_flow(mcp(ip, f"call {GENERATIONS[generation]}.summarize text=ok"))
        == "Summary (echo): echo: Summarize: ok"
    )


def test_unreachable_provider_and_missing_key(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    from ..conftest import free_port

    mcp(ip, f"model add gone openai m --base-url http://127.0.0.1:{free_port()}/v1")
    mcp(ip, "model use gone")
    with pytest.raises(FlowError, match="could not reach openai at 127.0.0.1"):
        mcp(ip, "call d26.summarize text=q")
    mcp(
        ip, "model add keyless anthropic claude-test --base-url http://127.0.0.1:9 --api-key-env MCPNB_NOT_SET_ANYWHERE"
    )
    mcp(ip, "model use keyless")
    monkeypatch.delenv("MCPNB_NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(FlowError, match="MCPNB_NOT_SET_ANYWHERE, which is not set"):
        mcp(ip, "call d25.summarize text=q")


# ---------------------------------------------------------------------- includeContext
def ask_recap() -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text="recap"))],
        max_tokens=20,
        include_context="thisServer",
    )


async def recap(r: Annotated[CreateMessageResult, Resolve(ask_recap)]) -> str:
    return r.content.text


@pytest.fixture(scope="module")
def context_server(ip: InteractiveShell) -> Any:
    srv = MCPServer("ctx")
    srv.tool()(recap)
    ip.user_ns["ctx_server"] = srv
    mcp(ip, "connect ctx26 ctx_server")
    mcp(ip, "connect ctx25 ctx_server --protocol legacy")
    return srv


@pytest.mark.parametrize("name", ["ctx26", "ctx25"])
def test_include_context_is_answered_without_context_and_said_so(
    ip: InteractiveShell, fake: ModelServer, context_server: Any, name: str
) -> None:
    add_fake(ip, fake, "gpt", "openai")
    mcp(ip, "model use gpt")
    flow = mcp(ip, f"call {name}.recap")
    assert text_of_flow(flow) == "fake reply to: recap"
    assert fake.requests[0].body["messages"] == [{"role": "user", "content": "recap"}]
    assert any(
        "include context (thisServer); answered without it" in n.replace("to include context", "include context")
        for n in flow.notes
    )


# ---------------------------------------------------------------------- review logic (a scripted UI; widgets below)
class ScriptedUI(HeadlessUI):
    """Plays the user at both checkpoints: edits or denies, and records what it was shown."""

    interactive = True  # the review policy applies

    def __init__(self, request: Any = None, reply: Any = None) -> None:
        self.request, self.reply = request, reply
        self.shown: list[Any] = []

    async def ask(self, flow: Any, questions: Any, answers: Any) -> Any:  # elicitation: not used here
        raise AssertionError("no elicitation expected")

    async def review_request(self, flow: Any, key: str, params: Any, choice: Any, models: list[str]) -> Reviewed:
        self.shown.append(("request", params, choice.config.name))
        return self.request(params) if self.request else Reviewed(True, params)

    async def review_reply(self, flow: Any, key: str, params: Any, result: Any, choice: Any) -> Reviewed:
        self.shown.append(("reply", result))
        return self.reply(result) if self.reply else Reviewed(True, result)

    def show_sampling(self, flow: Any, key: str, params: Any, choice: Any, result: Any) -> None:
        self.shown.append(("shown", result))


def _start(conn: str, ui: Any, text: str = "the cat") -> Any:
    h = hub()
    c, tool = h.resolve(f"{conn}.summarize")
    return h.start("tools/call", c, tool, {"text": text}, ui=ui, save=False)


@pytest.mark.parametrize("generation", GENERATIONS)
def test_review_edits_reach_the_model_and_the_server(fake: ModelServer, ip: InteractiveShell, generation: str) -> None:
    from mcp_notebook.notebook.review import edit_reply, edit_request

    add_fake(ip, fake, "gpt", "openai")
    mcp(ip, "model use gpt")

    def edit_prompt(p: Any) -> Reviewed:
        edited, what = edit_request(p, system="Answer in French.", texts={(0, 0): "Summarize: the dog"}, max_tokens=11)
        return Reviewed(True, edited, edited=what)

    def edit_answer(r: Any) -> Reviewed:
        edited, what = edit_reply(r, texts={0: "Le chien."}, tool_inputs={})
        return Reviewed(True, edited, edited=what)

    flow = _start(GENERATIONS[generation], ScriptedUI(edit_prompt, edit_answer))
    assert text_of_flow(flow) == "Summary (fake-gpt): Le chien."
    assert fake.requests[0].body["messages"] == [
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Summarize: the dog"},
    ]
    assert fake.requests[0].body["max_tokens"] == 11
    assert any(
        "you edited request system prompt, request message 1, request maxTokens, reply text" in n for n in flow.notes
    )


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("where", ["request", "reply"])
def test_review_deny_tells_the_server_the_user_declined(
    fake: ModelServer, ip: InteractiveShell, generation: str, where: str
) -> None:
    add_fake(ip, fake, "gpt", "openai")
    mcp(ip, "model use gpt")
    deny = lambda _: Reviewed(False)  # noqa: E731 - a one-line stand-in reviewer
    ui = ScriptedUI(request=deny) if where == "request" else ScriptedUI(reply=deny)
    flow = _start(GENERATIONS[generation], ui)
    with pytest.raises(FlowError, match="The user declined the sampling request"):
        flow.result(timeout=30)
    assert len(fake.requests) == (0 if where == "request" else 1)  # denied before sending: the model saw nothing
    if generation == "legacy":
        assert flow.error.code == -1  # the 2025 server got the error answer and failed the call with its code


def test_review_always_shows_without_waiting_and_never_shows_nothing(fake: ModelServer, ip: InteractiveShell) -> None:
    add_fake(ip, fake, "gpt", "openai")
    mcp(ip, "model use gpt")
    try:
        mcp(ip, "review always")
        ui = ScriptedUI(request=lambda p: pytest.fail("always must not wait"))
        assert text_of_flow(_start("d26", ui)).startswith("Summary (fake-gpt)")
        assert (
            [s[0] for s in ui.shown] == ["shown", "shown"]
            and ui.shown[0][1] is None
            and ui.shown[1][1].model == "fake-gpt"
        )
        mcp(ip, "review never")
        quiet = ScriptedUI(request=lambda p: pytest.fail("never must not ask"))
        assert text_of_flow(_start("d25", quiet)).startswith("Summary (fake-gpt)")
        assert quiet.shown == []
    finally:
        mcp(ip, "review ask")


@pytest.mark.parametrize(
    ("provider", "base_url", "leaves"),
    [
        ("echo", None, False),
        ("human", None, False),
        ("openai", None, True),  # the official endpoint
        ("anthropic", None, True),
        ("openai", "http://localhost:11434/v1", False),  # a local Ollama
        ("openai", "http://127.0.0.1:8000/v1", False),
        ("openai", "http://127.5.6.7:8000/v1", False),  # all of 127.0.0.0/8
        ("openai", "http://[::1]:8000/v1", False),
        ("openai", "http://models.localhost/v1", True),  # a resolver need not keep *.localhost here: not trusted
        ("openai", "http://127.0.0.1.evil.example/v1", True),
        ("openai", "http://localhost@evil.example/v1", True),  # user info: the host is evil.example
        ("openai", "http://192.168.1.20:11434/v1", True),  # another machine on the LAN
        ("anthropic", "https://llm.example.com", True),
        ("openai", "http://localhost.example.com/v1", True),  # a name, not this machine
    ],
)
def test_which_models_leave_the_machine(provider: str, base_url: str | None, leaves: bool) -> None:
    config = ModelConfig(
        "m", provider, "some-model" if provider in ("openai", "anthropic") else None, base_url=base_url, api_key_env="K"
    )
    assert config.leaves_machine is leaves
    assert ModelConfig("f", "callable", "f", function=lambda p: "x").leaves_machine is False


def test_a_loopback_model_behind_a_proxy_leaves_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx sends a request through HTTP_PROXY unless NO_PROXY covers the host: then it leaves the machine."""
    local = ModelConfig("m", "openai", "llama", base_url="http://127.0.0.1:11434/v1", api_key_env="K")
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert local.leaves_machine is False
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert local.leaves_machine is True
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert local.leaves_machine is False


def test_default_review_asks_only_where_the_request_leaves_the_machine(fake: ModelServer, ip: InteractiveShell) -> None:
    """``remote`` (the default): echo, callables and loopback models answer at once; a model elsewhere is reviewed first."""
    assert ModelRouter().review == "remote"
    from ..conftest import session_of

    session: Any = session_of(ip)
    try:
        mcp(ip, "review remote")
        assert session.router.review == "remote"
        quiet = ScriptedUI(request=lambda p: pytest.fail("echo is not reviewed"))
        assert text_of_flow(_start("d26", quiet)).startswith("Summary (echo)") and quiet.shown == []
        add_fake(ip, fake, "gpt", "openai")  # on 127.0.0.1: this machine
        mcp(ip, "model use gpt")
        local = ScriptedUI(request=lambda p: pytest.fail("a loopback model is not reviewed"))
        assert text_of_flow(_start("d25", local)).startswith("Summary (fake-gpt)") and local.shown == []
        mcp(
            ip, f"model add far openai far-model --base-url http://192.0.2.1:9/v1 --api-key-env {KEY_ENV}"
        )  # TEST-NET-1: elsewhere
        mcp(ip, "model use far")
        asked = ScriptedUI(request=lambda p: Reviewed(False))
        flow = _start("d26", asked)
        with pytest.raises(FlowError, match="The user declined the sampling request"):
            flow.result(timeout=30)
        assert [(what, name) for what, _, name in asked.shown] == [
            ("request", "far")
        ]  # asked first; denied, nothing was sent
    finally:
        mcp(ip, "model use echo")
        mcp(ip, "review ask")


def test_review_panels_edit_request_and_reply_without_a_kernel() -> None:
    """The widgets' own logic, with ipywidgets' dummy comms (the kernel tests below click them for real)."""
    from mcp.types import CreateMessageResultWithTools

    from mcp_notebook.notebook.review import ReplyReview, RequestReview
    from mcp_notebook.sampling.router import Choice

    got: list[Any] = []
    p = params(system_prompt="sys", max_tokens=30)
    choice = Choice(ModelConfig("echo"), "default model")
    panel = RequestReview("srv", "k", p, choice, ["echo", "other"], got.append)
    panel.texts[(0, 0)].value = "edited prompt"
    panel.max_tokens.value = 5
    panel.model.value = "other"
    panel.send()
    panel.send()  # a second click does nothing
    assert len(got) == 1 and got[0].approved and got[0].model == "other"
    assert got[0].value.messages[0].content.text == "edited prompt" and got[0].value.max_tokens == 5
    assert got[0].edited == ["message 1", "maxTokens"]

    result = CreateMessageResultWithTools(
        role="assistant",
        model="m",
        stop_reason="toolUse",
        content=[
            TextContent(type="text", text="calling"),
            ToolUseContent(type="tool_use", id="1", name="get_weather", input={"city": "Rome"}),
        ],
    )
    reply = ReplyReview("srv", "k", result, choice, got.append)
    reply.tools[1].value = "{not json"
    assert reply.send() is False and "not valid JSON" in reply.error.value  # shown inline, nothing sent
    reply.tools[1].value = '{"city": "Milan"}'
    reply.texts[0].value = "calling again"
    assert reply.send() is True
    assert got[-1].value.content[1].input == {"city": "Milan"} and got[-1].value.content[0].text == "calling again"


# ---------------------------------------------------------------------- review in a real kernel (simulated clicks)
@pytest.fixture(scope="module")
def kernel_setup(fake: ModelServer) -> str:
    return (
        "%load_ext mcp_notebook\n"
        "%mcp connect demo mcp_notebook.demo:demo\n"
        "%mcp connect legacy mcp_notebook.demo:demo --protocol legacy\n"
        f"%mcp model add fake openai fake-gpt --base-url {fake.openai_url}\n"
        "%mcp model use fake\n"
        "%mcp review ask"
    )


def newest(kernel: Any, before: set[str], model: str, **state: Any) -> str | None:
    """The most recent widget of ``model`` with ``state`` that appeared after ``before``."""
    found = [c for c in kernel.find_widgets(model, **state) if c not in before]
    return found[-1] if found else None


def waited(kernel: Any, before: set[str], model: str, **state: Any) -> str:
    return kernel.wait_for(lambda: newest(kernel, before, model, **state), what=f"{model} {state}")


@pytest.mark.parametrize("conn", ["demo", "legacy"])
def test_both_checkpoints_edited_in_a_kernel(kernel: Any, fake: ModelServer, conn: str) -> None:
    kernel.execute("%mcp review ask")
    before = set(kernel.comms)
    cell = kernel.execute(f"%mcp call {conn}.summarize text='the cat sat on the mat'", allow_stdin=True, wait=False)
    prompt = waited(kernel, before, "TextareaModel", description="#1 user")
    assert kernel.comms[prompt]["value"] == "Summarize: the cat sat on the mat"
    system = waited(kernel, before, "TextareaModel", description="system")
    kernel.set_value(prompt, "Summarize: the dog sat on the log")
    kernel.set_value(system, "Be terse.")
    kernel.click(waited(kernel, before, "ButtonModel", description="Send"))
    kernel.wait_for(lambda: fake.requests, what="the request to reach the model")
    assert fake.requests[0].body["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Summarize: the dog sat on the log"},
    ]
    reply = waited(kernel, before, "TextareaModel", description="reply")
    assert kernel.comms[reply]["value"] == "fake reply to: Summarize: the dog sat on the log"
    kernel.set_value(reply, "A dog sat on a log.")
    kernel.click(waited(kernel, before, "ButtonModel", description="Return"))
    kernel.wait_for(
        lambda: "Summary (fake-gpt): A dog sat on a log." in kernel.text_of_cell(cell),
        what="the edited reply in the result",
    )
    html = "".join(
        m["content"]["data"].get("text/html", "")
        for m in kernel.for_cell(cell)
        if m["msg_type"] == "update_display_data"
    )
    assert "you edited request system prompt, request message 1, reply text" in html


@pytest.mark.parametrize(("conn", "where"), [("demo", "request"), ("legacy", "reply")])
def test_deny_in_a_kernel(kernel: Any, fake: ModelServer, conn: str, where: str) -> None:
    kernel.execute("%mcp review ask")
    before = set(kernel.comms)
    cell = kernel.execute(f"%mcp call {conn}.summarize text=secret", allow_stdin=True, wait=False)
    deny = waited(kernel, before, "ButtonModel", description="Deny")  # the request panel's
    if where == "reply":
        kernel.click(waited(kernel, before, "ButtonModel", description="Send"))
        waited(kernel, before, "TextareaModel", description="reply")
        # the reply panel's own Deny: its widgets open after its text areas, so "the newest Deny" just
        # after the text area arrived can still be the request panel's, which no longer answers
        request_deny = deny
        deny = kernel.wait_for(
            lambda: (d := newest(kernel, before, "ButtonModel", description="Deny")) != request_deny and d,
            what="the reply panel's Deny",
        )
    kernel.click(deny)
    kernel.wait_for(
        lambda: "The user declined the sampling request" in kernel.text_of_cell(cell),
        what="the declined error in the cell",
    )
    assert len(fake.requests) == (0 if where == "request" else 1)
    probe = kernel.execute("print(_mcp_alive := 'kernel fine')")
    assert "kernel fine" in kernel.text_of_cell(probe)


def test_human_provider_in_a_kernel(kernel: Any, fake: ModelServer) -> None:
    kernel.execute("%mcp model add me human\n%mcp model use me")
    try:
        before = set(kernel.comms)
        cell = kernel.execute("%mcp call demo.summarize text='a poem'", allow_stdin=True, wait=False)
        box = waited(kernel, before, "TextareaModel", description="your reply")
        kernel.set_value(box, "Roses are red.")
        kernel.click(waited(kernel, before, "ButtonModel", description="Send reply"))
        kernel.wait_for(
            lambda: "Summary (human): Roses are red." in kernel.text_of_cell(cell), what="the typed reply in the result"
        )
        assert fake.requests == []  # no review panels for the human provider, no model called
        assert not newest(kernel, before, "ButtonModel", description="Return")
    finally:
        kernel.execute("%mcp model use fake")


def test_review_always_in_a_kernel(kernel: Any, fake: ModelServer) -> None:
    kernel.execute("%mcp review always")
    try:
        before = set(kernel.comms)
        cell = kernel.execute("%mcp call legacy.summarize text=shown", allow_stdin=True)
        kernel.wait_for(
            lambda: "Summary (fake-gpt): fake reply to: Summarize: shown" in kernel.text_of_cell(cell),
            what="the result, without any click",
        )
        shown = [m["content"]["data"] for m in kernel.for_cell(cell) if m["msg_type"] == "display_data"]
        plain = "\n".join(d.get("text/plain", "") for d in shown)
        assert "asks for a model reply" in plain and "reply from fake-gpt: fake reply to: Summarize: shown" in plain
        assert "Summarize: shown" in "".join(d.get("text/html", "") for d in shown)
        assert not newest(kernel, before, "ButtonModel", description="Send")
    finally:
        kernel.execute("%mcp review ask")


def test_cancel_while_reviewing_a_2025_request_clears_the_panel(kernel: Any, fake: ModelServer) -> None:
    kernel.execute("%mcp review ask")
    before = set(kernel.comms)
    cell = kernel.execute("%mcp call legacy.summarize text=later", allow_stdin=True, wait=False)
    waited(kernel, before, "ButtonModel", description="Send")
    kernel.click(waited(kernel, before, "ButtonModel", description="Cancel", tooltip="Cancel this call"))
    kernel.wait_for(lambda: "cancelled" in kernel.text_of_cell(cell), what="the cancelled report")
    # the back-channel request is answered outside the flow's task: it must stop waiting too
    kernel.wait_for(
        lambda: any(
            "no longer needed" in s.get("value", "")
            for s in kernel.comms.values()
            if s.get("_model_name") == "HTMLModel"
        ),
        what="the dismissed review panel",
    )
    assert fake.requests == []


def test_a_provider_owns_its_rules_and_help(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new kind of model is one Provider in PROVIDERS: ModelConfig checks its rules, the review policy reads ``hosted``,
    ``%mcp model --help`` lists it in its own words, and create_message answers through it."""
    from mcp.types import CreateMessageRequestParams, SamplingMessage, TextContent

    from mcp_notebook.magics.grammar import build_parsers
    from mcp_notebook.sampling import providers
    from mcp_notebook.sampling.providers.base import Provider, build_result

    async def answer(config: ModelConfig, params: Any, ctx: SamplingContext) -> Any:
        return build_result(
            [TextContent(type="text", text=f"{config.model} says hi")], config.model or "", None, params
        )

    remote = Provider(
        "farfetch", answer, hosted=True, key_env="FARFETCH_KEY", model_example="ff-1", described="a remote test API"
    )
    monkeypatch.setitem(providers.PROVIDERS, "farfetch", remote)
    with pytest.raises(ValueError) as info:
        ModelConfig("ff", "farfetch")
    assert str(info.value) == "the farfetch provider needs a MODEL (for example ff-1)"
    config = ModelConfig("ff", "farfetch", "ff-1")
    assert config.api_key_env == "FARFETCH_KEY" and config.leaves_machine
    assert not ModelConfig("local-ff", "farfetch", "ff-1", base_url="http://127.0.0.1:9/v1").leaves_machine
    assert "farfetch (a remote test API)" in (build_parsers()["model"].description or "")
    params = CreateMessageRequestParams(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text="hello"))], max_tokens=10
    )
    result = asyncio.run(create_message(config, params, SamplingContext()))
    assert result.content.text == "ff-1 says hi" and result.model == "ff-1"
