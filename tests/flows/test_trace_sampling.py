"""A call answered by a model shows its ``sampling/createMessage`` and the model's reply in ``%mcp trace`` (issue 36, item 8).

The built-in demo server in process, on both generations: 2026-07-28 asks in the round's
``input_requests`` and gets the reply in the next request's ``inputResponses``; a 2025 server asks
over the back-channel while its call is in flight, which the trace showed for elicitation but not
for sampling. The model is the loopback fake of ``tests/support/model_server.py``, reached with an API
key from the environment: the key is in no trace.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from mcp.types import CreateMessageRequestParams, ImageContent, SamplingMessage

from mcp_notebook.flows.trace import sampling_request

from ..conftest import session_of
from ..support.model_server import ModelServer

KEY_ENV = "MCPNB_TRACE_MODEL_KEY"
KEY = "sk-trace-0123456789abcdef-secret"
SERVERS = {"modern": "trace26", "legacy": "trace25"}


@pytest.fixture(scope="module", autouse=True)
def servers(ip: InteractiveShell) -> None:
    """The demo in both generations, connected in the shared shell (``ip`` disconnects them after the module)."""
    ip.run_line_magic("mcp", f"connect {SERVERS['modern']} mcp_notebook.demo:demo")
    ip.run_line_magic("mcp", f"connect {SERVERS['legacy']} mcp_notebook.demo:demo --protocol legacy")


@pytest.fixture
def model(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelServer]:
    """The fake OpenAI model, used for sampling (its key read from the environment), on loopback (which the default review policy never asks about)."""
    monkeypatch.setenv(KEY_ENV, KEY)
    with ModelServer() as fake:
        ip.run_line_magic(
            "mcp",
            f"model add tracegpt openai gpt-test --base-url {fake.openai_url} --api-key-env {KEY_ENV}",
        )
        ip.run_line_magic("mcp", "model use tracegpt")
        yield fake
        session_of(ip).router.use("echo")
        session_of(ip).router.remove("tracegpt")


def _steps(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Each event as (from, kind, what it carries of sampling): the request's method, or the reply's summary."""
    out: list[tuple[Any, ...]] = []
    for event in events:
        message = event["message"]
        params = message.get("params") or {}
        if message.get("method") == "tools/call":  # our request; a later round carries the reply
            out.append(
                (event["from"], event["kind"], "tools/call", list((params.get("inputResponses") or {}).values()))
            )
        elif message.get("resultType") == "input_required":  # 2026-07-28: the server asks in its result
            out.append((event["from"], event["kind"], [r["method"] for r in message["inputRequests"].values()]))
        elif "result" in message and isinstance(message["result"], dict):  # 2025: the client's answer to the server
            out.append((event["from"], event["kind"], list(message["result"].values())))
        elif message.get("resultType") == "complete":
            out.append((event["from"], event["kind"], message["result"]))
        else:  # 2025: the server's back-channel request, keyed by its JSON-RPC id
            out.append((event["from"], event["kind"], [r["method"] for r in message.values()]))
    return out


@pytest.mark.parametrize("generation", SERVERS)
def test_the_trace_lists_the_sampling_request_and_the_models_reply(
    ip: InteractiveShell, model: ModelServer, generation: str
) -> None:
    server = SERVERS[generation]
    flow = ip.run_line_magic("mcp", f"call {server}.summarize text='the cat sat on the mat'")
    assert (
        flow.result(timeout=30).content[0].text
        == "Summary (fake-gpt): fake reply to: Summarize: the cat sat on the mat"
    )
    assert [r.path for r in model.requests] == ["/v1/chat/completions"]
    events = ip.run_line_magic("mcp", "trace --json")
    reply = {"model": "fake-gpt", "stopReason": "endTurn"}
    if generation == "modern":
        expected = [
            ("client", "request", "tools/call", []),
            ("server", "result", ["sampling/createMessage"]),
            ("client", "request", "tools/call", [reply]),
            ("server", "result", "CallToolResult"),
        ]
    else:
        expected = [
            ("client", "request", "tools/call", []),
            ("server", "request", ["sampling/createMessage"]),
            ("client", "result", [reply]),
            ("server", "result", "CallToolResult"),
        ]
    assert _steps(events) == expected
    asked = next(e["message"] for e in events if "sampling/createMessage" in json.dumps(e["message"]))
    [request] = (asked.get("inputRequests") or asked).values()
    assert request["params"]["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Summarize: the cat sat on the mat"}}
    ]
    assert request["params"]["maxTokens"] == 100
    shown = ip.run_line_magic("mcp", "trace")._repr_mimebundle_()
    plain = shown["text/plain"]
    assert plain.index("sampling/createMessage") < plain.index('"model": "fake-gpt"')
    assert "sampling/createMessage" in shown["text/html"]
    for text in (json.dumps(events), plain, shown["text/html"]):
        assert KEY not in text and "sk-trace" not in text  # the model's key is in no trace


def test_a_sampling_requests_media_is_shortened_in_the_trace() -> None:
    """An image the server sends to the model is kept in the trace as a token is: its start, its end, its length."""
    data = "A" * 400_000
    params = CreateMessageRequestParams(
        messages=[SamplingMessage(role="user", content=ImageContent(type="image", data=data, mime_type="image/png"))],
        max_tokens=5,
    )
    entry = sampling_request(params)
    assert entry["method"] == "sampling/createMessage"
    assert entry["params"]["messages"][0]["content"] == {
        "type": "image",
        "data": "AAAAAAAAAAAA…AAAAAA (400000 chars)",
        "mimeType": "image/png",
    }
