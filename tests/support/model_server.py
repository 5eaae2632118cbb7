"""A loopback fake of the OpenAI chat-completions and Anthropic Messages APIs, for tests.

A stdlib ``ThreadingHTTPServer`` on 127.0.0.1 (a free port) in a daemon thread. It records every
request (path, headers with lower-case names, JSON body) and answers from a queue of scripted
``Reply`` objects (status, body, delay), or, when the queue is empty, with a text reply in the shape
of the API that was called: ``fake reply to: <the last user text>``.

    with ModelServer() as fake:
        fake.queue(fake.openai_tool_call("get_weather", {"city": "Paris"}), fake.openai_text("Rainy."))
        ... %mcp model add gpt openai fake-gpt --base-url {fake.openai_url} ...
        fake.requests[0].body["tools"]
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ModelServer", "Recorded", "Reply"]


@dataclass
class Reply:
    """One scripted answer: a JSON-able body (or raw text), an HTTP status, a delay in seconds."""

    body: Any
    status: int = 200
    delay: float = 0.0


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ModelServer:
    requests: list[Recorded] = field(default_factory=list)
    _replies: list[Reply] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> ModelServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                reply = owner._take(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.body.encode() if isinstance(reply.body, str) else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header(
                        "Content-Type", "text/plain" if isinstance(reply.body, str) else "application/json"
                    )
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="fake-model-server", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_url(self) -> str:
        """What ``--base-url`` takes for the openai provider."""
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        """What ``--base-url`` takes for the anthropic provider."""
        return self.url

    # ------------------------------------------------------------------ scripting
    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._replies.clear()
            self.requests.clear()

    def _take(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._replies:
                return self._replies.pop(0)
        return self.default_reply(request)

    def default_reply(self, request: Recorded) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        if request.path.endswith("/chat/completions"):
            return self.openai_text(f"fake reply to: {_last_user_text_openai(body)}")
        if request.path.endswith("/v1/messages"):
            return self.anthropic_text(f"fake reply to: {_last_user_text_anthropic(body)}")
        return Reply({"error": {"message": f"no such endpoint {request.path}", "type": "not_found"}}, status=404)

    # ------------------------------------------------------------------ reply shapes
    @staticmethod
    def openai_text(text: str, model: str = "fake-gpt", finish: str = "stop") -> Reply:
        return Reply(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    @staticmethod
    def openai_tool_call(
        name: str, arguments: dict[str, Any], call_id: str = "call_1", model: str = "fake-gpt"
    ) -> Reply:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
            ],
        }
        return Reply(
            {
                "id": "chatcmpl-2",
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            }
        )

    @staticmethod
    def openai_error(status: int, message: str, kind: str = "server_error") -> Reply:
        return Reply({"error": {"message": message, "type": kind, "code": None}}, status=status)

    @staticmethod
    def anthropic_text(text: str, model: str = "fake-claude", stop: str = "end_turn") -> Reply:
        return Reply(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        )

    @staticmethod
    def anthropic_tool_use(
        name: str,
        tool_input: dict[str, Any],
        tool_id: str = "toolu_1",
        text: str | None = None,
        model: str = "fake-claude",
    ) -> Reply:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        return Reply(
            {
                "id": "msg_2",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": "tool_use",
            }
        )

    @staticmethod
    def anthropic_error(status: int, message: str, kind: str = "api_error") -> Reply:
        return Reply({"type": "error", "error": {"type": kind, "message": message}}, status=status)


def _last_user_text_openai(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return " ".join(p.get("text", "") for p in content or [] if p.get("type") == "text")
    return ""


def _last_user_text_anthropic(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return " ".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")
    return ""
