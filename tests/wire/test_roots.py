"""Roots: none by default (no capability declared), edited with ``%mcp roots``, answered in both generations.

2026-07-28 servers ask inside each request's ``input_requests``; 2025 servers ask over the
back-channel and may cache the answer, so they are sent ``notifications/roots/list_changed`` when
the list changes. A low-level server here caches its roots until told, which is what makes the
notification matter.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    InputRequiredResult,
    ListRootsRequest,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from mcp_notebook.wire.roots import Roots

from ..conftest import REPO_ROOT
from ..support.waiting import wait_until


# ---------------------------------------------------------------------- the Roots model
def test_default_offers_nothing_and_add_is_relative_to_the_notebook_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert Roots().result().roots == [] and not Roots().offered
    assert Roots().notebook_folder().path == tmp_path.resolve()
    notebook = tmp_path / "work" / "analysis.ipynb"
    notebook.parent.mkdir()
    roots = Roots(session_path=str(notebook))
    roots.add(".", "notebook folder")  # `.` is the notebook's folder, from __session__
    [root] = roots.result().roots
    assert (str(root.uri), root.name) == (notebook.parent.resolve().as_uri(), "notebook folder") and roots.offered
    # a relative __session__ is relative to the Jupyter server's root; the kernel already runs in the notebook's folder
    assert Roots(session_path="sub/analysis.ipynb").notebook_folder().path == tmp_path.resolve()


def test_add_remove_and_reset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    roots = Roots()
    roots.add(".", "notebook folder")
    roots.add("data", "data")
    assert [(r.name, str(r.uri)) for r in roots.result().roots] == [
        ("notebook folder", tmp_path.resolve().as_uri()),
        ("data", (tmp_path / "data").resolve().as_uri()),
    ]
    roots.add("data", "renamed")  # the same path again renames, never duplicates
    assert [r.name for r in roots.result().roots] == ["notebook folder", "renamed"]
    roots.remove(str(tmp_path))
    assert [r.name for r in roots.result().roots] == ["renamed"]
    roots.remove("data")
    assert roots.result().roots == []  # an empty list is a real answer: no folders
    roots.add("data")
    roots.reset()
    assert roots.result().roots == [] and not roots.offered
    with pytest.raises(FileNotFoundError) as missing:
        roots.add("nowhere")
    assert (
        str(missing.value)
        == f"no such folder or file: nowhere (looked for {tmp_path.resolve() / 'nowhere'}); create it first, or give a folder that exists"
    )
    with pytest.raises(KeyError, match="not a root"):
        roots.remove("data")


# ---------------------------------------------------------------------- a server that caches its roots (2025 style)
class CachingServer:
    """Low-level server with one tool, ``where``, that names its roots.

    2025 sessions: asks ``roots/list`` once and keeps the answer until
    ``notifications/roots/list_changed`` arrives. 2026-07-28: asks in every request.
    """

    def __init__(self) -> None:
        self.cached: list[Any] | None = None
        self.asked = 0
        self.notified = 0

    def build(self) -> Server[Any]:
        async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
            return ListToolsResult(tools=[Tool(name="where", input_schema={"type": "object", "properties": {}})])

        async def call_tool(
            ctx: ServerRequestContext[Any], params: CallToolRequestParams
        ) -> CallToolResult | InputRequiredResult:
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                answer = (params.input_responses or {}).get("roots")
                if answer is None:
                    return InputRequiredResult(input_requests={"roots": ListRootsRequest()})
                roots = answer.roots
            else:
                if self.cached is None:
                    self.cached = (await ctx.session.list_roots()).roots
                    self.asked += 1
                roots = self.cached
            return CallToolResult(content=[TextContent(type="text", text=", ".join(r.name or "?" for r in roots))])

        async def roots_changed(ctx: ServerRequestContext[Any], params: Any) -> None:
            self.cached = None
            self.notified += 1

        return Server("caching", on_list_tools=list_tools, on_call_tool=call_tool, on_roots_list_changed=roots_changed)


# ---------------------------------------------------------------------- through the magics
@pytest.fixture(scope="module", autouse=True)
def connected(ip: InteractiveShell) -> Iterator[None]:
    """The demo and the caching server in both generations, connected after a root is added (so they declare roots)."""
    caching = CachingServer()
    ip.user_ns["caching_server"] = caching.build()
    ip.user_ns["caching_state"] = caching
    # before connecting: these connections declare roots
    ip.run_line_magic("mcp", "roots add . --name 'notebook folder'")
    for line in (
        "connect r26 mcp_notebook.demo:demo",
        "connect r25 mcp_notebook.demo:demo --protocol legacy",
        "connect cache25 caching_server --protocol legacy",
        "connect cache26 caching_server",
    ):
        ip.run_line_magic("mcp", line)
    yield
    from ..conftest import session_of

    session_of(ip).roots.reset()  # type: ignore[attr-defined]  # (``ip`` disconnects the servers)


@pytest.fixture(autouse=True)
def default_roots(ip: InteractiveShell) -> Iterator[None]:
    from ..conftest import session_of

    roots = session_of(ip).roots  # type: ignore[attr-defined]
    roots.reset()
    roots.add(".", "notebook folder")
    yield
    roots.reset()
    roots.add(".", "notebook folder")


def mcp(ip: InteractiveShell, line: str) -> Any:
    return ip.run_line_magic("mcp", line)


def here() -> str:
    """What the notebook folder is in this process (no ``__session__``: the working directory)."""
    return Path(os.getcwd()).resolve().as_uri()


@pytest.mark.parametrize("conn", ["r26", "r25"])
def test_servers_of_both_generations_get_the_roots(ip: InteractiveShell, tmp_path: Path, conn: str) -> None:
    flow = mcp(ip, f"call {conn}.list_my_roots")
    assert flow.result().content[0].text == f"notebook folder: {here()}"
    assert "roots: answered with 1 root (notebook folder)" in flow.notes
    mcp(ip, f"roots add {tmp_path} --name scratch")
    text = mcp(ip, f"call {conn}.list_my_roots").result().content[0].text
    assert text == f"notebook folder: {here()}\nscratch: {tmp_path.resolve().as_uri()}"
    mcp(ip, f"roots remove {os.getcwd()}")
    assert mcp(ip, f"call {conn}.list_my_roots").result().content[0].text == f"scratch: {tmp_path.resolve().as_uri()}"
    mcp(ip, f"roots remove {tmp_path}")
    assert mcp(ip, f"call {conn}.list_my_roots").result().content[0].text == "The client offers no roots."


def test_roots_command(ip: InteractiveShell, request: pytest.FixtureRequest) -> None:
    # a short folder: a listing cuts a long cell, and pytest's folder under an xdist worker (popen-gwN) is long
    tmp_path = Path(tempfile.mkdtemp(prefix="r"))
    request.addfinalizer(lambda: tmp_path.rmdir())
    table = mcp(ip, "roots")._repr_mimebundle_()["text/plain"]
    assert table.splitlines() == ["roots offered to servers", "name             uri", f"notebook folder  {here()}"]
    listed = mcp(ip, f"roots add {tmp_path} --name scratch")._repr_mimebundle_()["text/plain"]
    assert f"scratch          {tmp_path.resolve().as_uri()}" in listed.splitlines()
    assert "scratch" in mcp(ip, "roots list")._repr_mimebundle_()["text/plain"]
    assert mcp(ip, "roots reset")._repr_mimebundle_()["text/plain"] == (
        "No roots are offered (the default): servers keep the folders they were started with. %mcp roots add PATH "
        "offers a folder (add . for the notebook's folder) to servers connected after it."
    )
    for line, message in [
        ("roots add", "needs a PATH"),
        (
            "roots add /no/such/folder/anywhere",
            "no such folder or file: /no/such/folder/anywhere .looked for /no/such/folder/anywhere.; create it first",
        ),
        (f"roots remove {tmp_path}", "is not a root"),
        ("roots rename x", "'rename' is not one of list, add, remove, reset"),
    ]:
        with pytest.raises(UsageError, match=message):
            mcp(ip, line)


def test_a_2025_server_that_cached_roots_is_told_they_changed(
    ip: InteractiveShell, tmp_path: Path, capsys: Any
) -> None:
    state = ip.user_ns["caching_state"]
    assert mcp(ip, "call cache25.where").result().content[0].text == "notebook folder"
    assert mcp(ip, "call cache25.where").result().content[0].text == "notebook folder"
    assert state.asked == 1  # cached: asked once
    notified = state.notified
    capsys.readouterr()
    mcp(ip, f"roots add {tmp_path} --name scratch")
    out = capsys.readouterr().out
    assert "Told " in out and "cache25" in out and "r25" in out
    assert "cache26" not in out and "r26" not in out  # 2026-07-28 has no such notification (it asks every time)
    wait_until(lambda: state.notified != notified, "the roots/list_changed notification", timeout=10)
    assert state.notified == notified + 1
    assert mcp(ip, "call cache25.where").result().content[0].text == "notebook folder, scratch"  # asked again
    assert state.asked == 2
    # the 2026-07-28 connection asks in each request, so it is right without being told
    assert mcp(ip, "call cache26.where").result().content[0].text == "notebook folder, scratch"
    mcp(ip, "roots reset")
    wait_until(lambda: state.notified != notified + 1, "the second roots/list_changed notification", timeout=10)
    assert (
        mcp(ip, "call cache25.where").result().content[0].text == ""
    )  # none offered now; still declared on this connection


def test_nothing_is_offered_by_default_and_connections_opened_before_a_root_are_named(
    ip: InteractiveShell, tmp_path: Path, capsys: Any
) -> None:
    """Default: no roots capability, so a server keeps its own folders; a root added later reaches new connections only."""
    from mcp_notebook.errors import FlowError

    from ..conftest import session_of

    session: Any = session_of(ip)
    mcp(ip, "roots reset")
    mcp(ip, "connect bare26 mcp_notebook.demo:demo")
    mcp(ip, "connect bare25 mcp_notebook.demo:demo --protocol legacy")
    try:
        assert not session.registry.get("bare26").offers_roots and not session.registry.get("bare25").offers_roots
        assert session.registry.get("r26").offers_roots  # opened after the fixture added a root
        with pytest.raises(FlowError) as refused:
            mcp(ip, "call bare26.list_my_roots").result()
        assert refused.value.code == -32021
        assert (
            "this client declares roots only on connections opened after a root was added: add one, then connect again"
            in str(refused.value)
        )
        capsys.readouterr()
        shown = mcp(ip, f"roots add {tmp_path} --name scratch")._repr_mimebundle_()["text/plain"]
        [told] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Told ")]
        assert (
            told == "Told r25, cache25 that the roots changed (2025-generation servers cache them)."
        )  # never bare25: it was not offered roots
        assert shown.splitlines()[-1] == (
            "Not offered to bare26, bare25: connected before any root was added (a connection declares roots when it opens); connect again to offer them."
        )
        mcp(ip, "connect bare26 mcp_notebook.demo:demo")  # connecting again declares them
        assert (
            mcp(ip, "call bare26.list_my_roots").result().content[0].text == f"scratch: {tmp_path.resolve().as_uri()}"
        )
    finally:
        for name in ("bare26", "bare25"):
            if name in session.registry:
                session.registry.disconnect(name)


# ---------------------------------------------------------------------- a real kernel that knows its notebook
def test_kernel_dot_is_the_notebook_folder_from_session(tmp_path: Path) -> None:
    from ..support.kernel_harness import Kernel

    notebook = tmp_path / "project" / "analysis.ipynb"
    notebook.parent.mkdir()
    kernel = Kernel(cwd=str(REPO_ROOT), env={"JPY_SESSION_NAME": str(notebook)})
    try:
        cell = kernel.execute(
            "%load_ext mcp_notebook\n"
            "%mcp roots add . --name 'notebook folder'\n"
            "%mcp connect demo mcp_notebook.demo:demo\n"
            "%mcp connect old mcp_notebook.demo:demo --protocol legacy\n"
            "%mcp call demo.list_my_roots\n"
            "%mcp call old.list_my_roots"
        )
        expected = f"notebook folder: {notebook.parent.resolve().as_uri()}"
        assert kernel.text_of_cell(cell).count(expected) == 2
        assert REPO_ROOT.as_uri() + "\n" not in kernel.text_of_cell(cell)
    finally:
        kernel.close()


# ---------------------------------------------------------------------- roots asked outside any flow
def test_a_2025_server_asking_after_list_changed_gets_the_session_roots(ip: InteractiveShell, tmp_path: Path) -> None:
    """Roots belong to the session: a server that asks on ``roots/list_changed`` (no call running) is answered."""
    from ..conftest import session_of

    seen: list[list[str]] = []

    async def roots_changed(ctx: ServerRequestContext[Any], params: Any) -> None:
        seen.append([str(r.uri) for r in (await ctx.session.list_roots()).roots])

    ip.user_ns["asking_server"] = Server("asking", on_roots_list_changed=roots_changed)
    mcp(ip, "connect ask25 asking_server --protocol legacy")
    session: Any = session_of(ip)
    try:
        assert not any(conn.flows for conn in session.registry)  # no flow is running
        mcp(ip, f"roots add {tmp_path} --name scratch")  # sends roots/list_changed; the server asks back
        wait_until(lambda: seen, "the server to ask for the roots", timeout=10)
        assert seen == [[here(), tmp_path.resolve().as_uri()]]
        mcp(ip, "roots reset")
        assert "ask25" in session.registry.roots_changed()
        wait_until(lambda: len(seen) >= 3, "the server to ask twice more", timeout=10)
        assert seen[1:] == [[], []]  # reset: no roots, told to a server that was offered some
    finally:
        session.registry.disconnect("ask25")
