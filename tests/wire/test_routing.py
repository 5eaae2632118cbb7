"""Issue 11 item 2: a 2025 back-channel question reaches the call that asked, never another's presets.

Two calls of one tool run at once on one connection; the server holds both until both are in
flight, then each asks the same question. Over streamable HTTP each question comes on its own
call's stream, so each is answered with that call's presets. Over stdio and in-process nothing
tells them apart: no call's presets are used, and the error (headless) or the form names both
calls.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcp_notebook
from mcp_notebook.errors import FlowError
from mcp_notebook.session.api import default_session

from ..conftest import free_port

SERVER = '''
import asyncio, sys
from pydantic import BaseModel
from mcp.server.mcpserver import Context, MCPServer

srv = MCPServer("twins")
arrived = 0
both = asyncio.Event()

class Colour(BaseModel):
    colour: str

@srv.tool()
async def pick(label: str, ctx: Context) -> str:
    """Waits until two calls are in flight, then asks which colour."""
    global arrived
    arrived += 1
    if arrived % 2 == 0:
        both.set()
    await asyncio.wait_for(both.wait(), 20)
    answer = await ctx.elicit(f"Which colour for {label}?", Colour)
    if answer.action != "accept":
        return f"{label}:{answer.action}"
    return f"{label}:{answer.data.colour}"

if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        import uvicorn
        uvicorn.run(srv.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        srv.run()
'''


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("twins") / "twins.py"
    path.write_text(SERVER)
    return path


@pytest.fixture(scope="module")
def http_url(script: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(script), "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    import socket

    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "server exited"
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)


def both(server: str) -> tuple[Any, Any]:
    red = mcp_notebook.call(f"{server}.pick", {"label": "a"}, answers={"colour": "red"}, timeout=30)
    blue = mcp_notebook.call(f"{server}.pick", {"label": "b"}, answers={"colour": "blue"}, timeout=30)
    return red, blue


def test_http_routes_each_question_to_its_own_call(http_url: str) -> None:
    conn = mcp_notebook.connect("twins_http", http_url, protocol="legacy")
    try:
        assert conn.protocol_version == "2025-11-25" and conn.tags_calls
        for _ in range(3):  # routing must hold every time, whichever question comes first
            red, blue = both("twins_http")
            assert red.result(timeout=30).content[0].text == "a:red"
            assert blue.result(timeout=30).content[0].text == "b:blue"
            assert red.answer_summary == ["“Which colour for a?”: accept (colour)"]
            assert blue.answer_summary == ["“Which colour for b?”: accept (colour)"]
        assert conn.routes is not None and not conn.routes._routes  # every noted route was used
    finally:
        default_session().registry.disconnect("twins_http")


@pytest.mark.parametrize("kind", ["stdio", "inproc"])
def test_untellable_questions_use_no_call_presets(script: Path, kind: str) -> None:
    target: Any = [sys.executable, str(script)] if kind == "stdio" else _inproc(script)
    name = f"twins_{kind}"
    conn = mcp_notebook.connect(name, target, protocol="legacy")
    try:
        assert not conn.tags_calls
        red, blue = both(name)
        # the server was told "cancel" (a plain elicitation result), and each call's report says why
        assert (
            red.result(timeout=30).content[0].text == "a:cancel"
            and blue.result(timeout=30).content[0].text == "b:cancel"
        )
        for flow in (red, blue):
            notes = [n for n in flow.notes if "went unanswered" in n]
            assert len(notes) == 2  # two questions, each of which may have been this call's
            for note in notes:
                assert note.startswith(
                    "a question that may have been this call's went unanswered and the server was told 'cancel': "
                )
                assert (
                    "2 calls are running" in note
                    and f"{name}.pick ({red.id})" in note
                    and f"{name}.pick ({blue.id})" in note
                )
                assert "no call's preset answers are used" in note
    finally:
        default_session().registry.disconnect(name)


RECORDER = '''
import json
from pydantic import BaseModel
from mcp.server.mcpserver import Context, MCPServer

srv = MCPServer("recorder")
seen = []

class Region(BaseModel):
    region: str

@srv.tool()
async def ask(ctx: Context) -> str:
    """Asks for a region over the back-channel and keeps what the client answered."""
    try:
        answer = await ctx.elicit("Which region?", Region)
    except Exception as exc:
        seen.append({"error": type(exc).__name__, "code": getattr(exc, "code", None), "message": str(exc)})
        raise
    seen.append({"action": answer.action, "content": answer.data.model_dump() if answer.action == "accept" else None})
    return answer.action

@srv.tool()
async def heard() -> str:
    """What the client answered, in order."""
    return json.dumps(seen)

if __name__ == "__main__":
    srv.run()
'''


def test_an_unanswered_question_is_cancelled_for_the_server_and_explained_here(tmp_path: Path) -> None:
    """Headless, no preset: the 2025 server gets the elicitation result ``cancel`` (not an error with code 0 carrying
    our hint); the call fails here with the hint naming the field; a preset still answers as before."""
    import json

    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    conn = mcp_notebook.connect("recorder", [sys.executable, str(script)], protocol="legacy")
    try:
        assert conn.protocol_version == "2025-11-25"
        with pytest.raises(FlowError) as info:
            mcp_notebook.call("recorder.ask", {}, timeout=30).result(timeout=30)
        assert (info.value.kind, info.value.missing_field) == ("unanswered", "region")
        assert "region" in str(info.value)
        answered = mcp_notebook.call("recorder.ask", {}, answers={"region": "eu-west"}, timeout=30).result(timeout=30)
        assert answered.content[0].text == "accept"
        heard = mcp_notebook.call("recorder.heard", {}, timeout=30).result(timeout=30)
        assert json.loads(heard.content[0].text) == [
            {"action": "cancel", "content": None},
            {"action": "accept", "content": {"region": "eu-west"}},
        ]
    finally:
        default_session().registry.disconnect("recorder")


def test_in_a_kernel_cell_the_error_names_the_field_and_the_server_saw_cancel(tmp_path: Path) -> None:
    """The same through ``%mcp`` in a real kernel run headless (as nbclient runs it): the cell fails naming the field."""
    import json

    from ..support.kernel_harness import Kernel

    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    k = Kernel(cwd=str(tmp_path), env={"JUPYTER_DATA_DIR": str(tmp_path / "jd")})
    try:
        k.execute(f"%load_ext mcp_notebook\n%mcp connect rec --protocol legacy -- {sys.executable} {script}")
        cell = k.execute("%mcp call rec.ask", wait=False)
        k.wait_idle(cell)
        [error] = [m["content"] for m in k.for_cell(cell) if m["msg_type"] == "error"]
        assert (
            error["ename"] == "FlowError" and "region" in error["evalue"] and "--answer region=VALUE" in error["evalue"]
        )
        heard = k.execute("r = %mcp call rec.heard\nprint('HEARD', r.content[0].text)")
        assert json.loads(k.text_of_cell(heard).split("HEARD ", 1)[1].splitlines()[0]) == [
            {"action": "cancel", "content": None}
        ]
    finally:
        k.close()


def _inproc(script: Path) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("twins_server", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.srv
