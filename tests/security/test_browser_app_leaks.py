"""Hostile Apps and planted App outputs in a real JupyterLab (Debian's Chromium): what leaves the App's frame.

An App that declares no domains gets a CSP of ``default-src 'none'`` and friends, but CSP does not
govern a frame navigating itself, and Chromium ignores CSP's ``webrtc`` directive. The leak App
(``tests/support/app_servers.py``) tries, one attempt per App, every way out named in ``LEAK_ATTEMPTS``
towards a loopback listener of this test (HTTP on TCP, and a UDP socket standing for a STUN server).
Nothing may reach it; an App that navigates anyway, or hides a nested frame, is removed and the cell
says so. A worker the App starts from a ``blob:`` URL (allowed, for PDF.js) inherits the App's CSP:
its fetch, ``importScripts`` and WebSocket towards the listener are refused.

A received notebook's App output is planted data: unsigned, or signed with another user's key, its
``tool_input`` and ``tool_result`` must not reach the user's real App (the counter App shows what it
got); an output signed with this user's key (the kernel's notary secret, in a temp
``JUPYTER_DATA_DIR``) still activates with its data.
"""

from __future__ import annotations

import http.server
import json
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from ..support.browser import LAB_ONLY, Front, load_extension, notebook, put_notebook, wait_for
from ..support.lab_fixtures import SharedLab

pytestmark = [pytest.mark.timeout(420), LAB_ONLY]  # the App host is the same in Notebook 7

FRAME = "iframe.mcp-notebook-app-frame"  # the guard's frame; the App's own frame is the iframe inside it
UNSIGNED_NOTE = "the output was not signed by you"


@dataclass
class Listener:
    """A loopback "attacker": every HTTP request (method, path, body) and every UDP datagram it got."""

    http_port: int
    udp_port: int
    requests: list[str] = field(default_factory=list)
    datagrams: list[bytes] = field(default_factory=list)

    def got(self) -> list[str]:
        return self.requests + [f"UDP datagram of {len(d)} bytes" for d in self.datagrams]

    def clear(self) -> None:
        self.requests.clear()
        self.datagrams.clear()


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    got: Listener | None = None

    class Handler(http.server.BaseHTTPRequestHandler):
        def _record(self) -> None:
            assert got is not None
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode(errors="replace") if length else ""
            got.requests.append(f"{self.command} {self.path} {body}".strip())
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<p>the listener's page</p>")

        do_GET = do_POST = _record

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.2)
    got = Listener(server.server_address[1], udp.getsockname()[1])
    stop = threading.Event()

    def receive() -> None:
        while not stop.is_set():
            try:
                data, _ = udp.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            assert got is not None
            got.datagrams.append(data)

    threads = [
        threading.Thread(target=server.serve_forever, daemon=True),
        threading.Thread(target=receive, daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        yield got
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        udp.close()


@pytest.fixture(scope="module", autouse=True)
def _view_bundle() -> None:
    from tests.support.app_servers import view_bundle

    view_bundle()  # raises PeersMissing (run `make peers-deps`) before any browser starts


def server_cell(listener: Listener) -> str:
    return f"%%mcp server apps\nfrom tests.support.app_servers import make_server\napps_server = make_server(leak_target='http://127.0.0.1:{listener.http_port}', leak_stun='stun:127.0.0.1:{listener.udp_port}')"


def test_an_app_without_domains_sends_nothing_out(front: Front, listener: Listener) -> None:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect

    from tests.support.app_servers import LEAK_ATTEMPTS

    calls = [f"%mcp call apps.leak attempt={attempt}" for attempt in LEAK_ATTEMPTS]
    name = front.path("leaks.ipynb")
    put_notebook(front.url, name, notebook([""] * (2 + len(calls))))
    panel = front.open(name)
    load_extension(front, 0)
    front.run_in_cell(1, server_cell(listener))
    listener.clear()
    seen: dict[str, str] = {}

    def attempt_in_cell(i: int, attempt: str) -> None:
        front.run_in_cell(2 + i, calls[i])
        output = panel.locator(".jp-Cell").nth(2 + i).locator(".mcp-notebook-app")
        expect(output).to_have_attribute("data-app-id", re.compile(r"^[0-9a-f]{16}$"))
        view = output.frame_locator(FRAME).frame_locator("iframe")

        def settled() -> str | None:
            removed = output.get_attribute("data-app-removed")
            if removed:
                return f"removed ({removed})"
            try:  # short timeouts: a frame that navigates away between two looks would hold a look for 30 s
                body = view.locator("body")
                if body.count() and body.get_attribute("data-state", timeout=1_000) == "attempted":
                    return f"attempted: {body.get_attribute('data-outcome', timeout=1_000)}"
            except PlaywrightError:  # the App's frame went away while asked (a timeout is one too): look again
                pass
            return None

        seen[attempt] = wait_for(settled, f"the {attempt} attempt")

    for i, attempt in enumerate(LEAK_ATTEMPTS):
        attempt_in_cell(i, attempt)
    time.sleep(3)  # a STUN request, a late navigation or a retry would have landed by now
    for i, attempt in enumerate(LEAK_ATTEMPTS):  # a frame removed after its attempt: the cell says so
        output = panel.locator(".jp-Cell").nth(2 + i).locator(".mcp-notebook-app")
        removed = output.get_attribute("data-app-removed")
        if removed:
            seen[attempt] = f"removed ({removed})"
            expect(output.locator(".mcp-notebook-app-fallback-note")).to_contain_text("The App was removed")
            expect(output.locator(FRAME)).to_have_count(0)
    assert listener.got() == [], f"the listener got {listener.got()} (outcomes: {seen})"
    # what Chromium does with each attempt, as the README says
    assert seen["webrtc"] == "attempted: threw: ReferenceError", seen  # no RTCPeerConnection in the App's window
    assert seen["open_blank"] == "attempted: threw: Error", seen  # window.open returned null: no allow-popups
    assert seen["a_top"] == "attempted: done", seen  # no allow-top-navigation: the click does nothing
    for attempt in ("href", "assign", "open_self", "a_self", "form", "meta_refresh"):
        assert seen[attempt] == "removed (navigated)", seen  # blocked by the guard's frame-src, then the frame removed
    for attempt in ("iframe_src", "srcdoc_webrtc", "srcdoc_navigate"):
        assert seen[attempt] == "attempted: done", seen  # the nested frame was taken out before it loaded
    # a worker from a blob: URL may start (worker-src blob:, for PDF.js and the like) but runs under the App's CSP:
    # its fetch, importScripts and WebSocket to the listener are refused; a data: worker is not allowed at all
    assert seen["worker_blob"] == "attempted: worker: importScripts NetworkError, fetch TypeError, websocket error", (
        seen
    )
    assert seen["worker_data"] == "attempted: worker error", seen


def planted_output(app: str, signed_by: bytes | None) -> dict[str, Any]:
    """A saved counter App output carrying forged data (``signed_by``: the key that signed it, if any)."""
    from mcp_notebook.flows.trust import RecordSigner
    from mcp_notebook.notebook.apps import OUTPUT_MIME

    body = {
        "v": 1, "app": app, "server": "apps", "tool": "counter", "uri": "ui://counter/app.html",
        "tool_input": {"amount": 9999, "iban": "DE00ATTACKER"},
        "tool_result": {"content": [{"type": "text", "text": "count is 9999"}], "structuredContent": {"count": 9999}},
    }  # fmt: skip
    data = RecordSigner(signed_by).sign(body) if signed_by else body
    return {"output_type": "display_data", "data": {OUTPUT_MIME: data, "text/plain": "count is 9999"}, "metadata": {}}


@pytest.mark.parametrize("signer", ["unsigned", "another user", "this user"])
def test_a_planted_app_output_does_not_feed_its_data_to_the_app(
    front: Front, shared_labs: Callable[[str], SharedLab], signer: str
) -> None:
    from nbformat.sign import MemorySignatureStore, NotebookNotary
    from playwright.sync_api import expect

    data_dir = shared_labs(
        "lab"
    ).data_dir  # the kernels' JUPYTER_DATA_DIR: the notary secret that signs this user's outputs
    own = bytes(NotebookNotary(data_dir=str(data_dir), store_factory=MemorySignatureStore).secret)
    key = {"unsigned": None, "another user": secrets.token_bytes(64), "this user": own}[signer]
    nb = notebook(["", "", "print('the App output below came with the notebook')"])
    nb["cells"][2]["outputs"] = [planted_output(secrets.token_hex(8), key)]
    name = front.path(f"planted-{signer.replace(' ', '-')}.ipynb")
    put_notebook(front.url, name, nb)
    panel = front.open(name)
    app = panel.locator(".mcp-notebook-app").first
    front.run_in_cell(0, "%load_ext mcp_notebook")
    expect(app.locator(".mcp-notebook-app-fallback-note")).to_have_text("The App is not live in this kernel.")
    front.run_in_cell(
        1, "%%mcp server apps\nfrom tests.support.app_servers import make_server\napps_server = make_server()"
    )
    app.locator("button.mcp-notebook-app-activate").click()
    expect(app).to_have_attribute("data-app-state", "live")
    view = app.frame_locator(FRAME).frame_locator("iframe")
    expect(view.locator("body")).to_have_attribute("data-state", "connected")
    note = app.locator(".mcp-notebook-app-note")
    if signer == "this user":
        expect(view.locator("#count")).to_have_text("9999")  # the saved result, as the user's own kernel wrote it
        expect(view.locator("#input")).to_have_text(
            json.dumps({"amount": 9999, "iban": "DE00ATTACKER"}, separators=(",", ":"))
        )
        expect(note).not_to_contain_text(UNSIGNED_NOTE)
        assert app.get_attribute("data-saved-data") is None
        return
    expect(view.locator("#input")).to_have_text("{}")  # the host sent the App an empty input, not the planted one
    expect(note).to_contain_text(UNSIGNED_NOTE)
    expect(note).to_contain_text("were not given to the App")
    expect(app).to_have_attribute("data-saved-data", "unsigned")
    time.sleep(1)  # a tool result would have arrived with the input
    expect(view.locator("#count")).to_have_text("?")  # no tool result reached the App
    view.locator("#inc").click()  # the App still works: it asks its server itself
    expect(view.locator("#count")).to_have_text("1")
