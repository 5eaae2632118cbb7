"""A real JupyterHub classroom on 127.0.0.1, for tests/hub/test_classroom.py and bench/hub.py (issue 40, item 3).

``Classroom`` starts, each in its own process session so that stopping it stops its children too:

* one demo MCP server over streamable HTTP with two uvicorn workers and one shared
  ``RequestStateSecurity`` key (``--keys-env``), as a course would run it;
* JupyterHub (``.peers/venv-hub``, pinned in tests/hub/requirements.txt) with configurable-http-proxy
  (``.peers/hub-npm``, pinned by tests/hub/package-lock.json), the dummy authenticator and the simple
  local spawner (every user's single-user server is a process of this user, home under the test's
  folder), a service token with the scopes a teacher's script needs, and the administrator's policy:
  ``mcp_notebook_policy.json`` in a folder the spawner names in ``JUPYTER_CONFIG_PATH``.

The single-user servers run JupyterLab (pinned with the hub) and have what installing the package puts in
an environment: the server extension enabled in that config folder (the OAuth callback under ``/user/NAME/``),
and the labextension (the built ``mcp_notebook/labextension``) in the classroom's share folder, beside the
widget manager of ``jupyterlab_widgets``; so a student can also open ``/user/NAME/lab`` in a browser.

Each user's kernel is the project's own venv (a kernelspec of the classroom points there), driven
over the hub's proxy at ``/user/NAME/api/kernels`` and its websocket channels, as a page would. A
student's lesson is tutorial 02's form flow: connect, then ``%mcp call demo.ask_everything`` with
the answers preset (headless: the cell waits for the flow and ends with it).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
PEERS = REPO_ROOT / ".peers"
HUB_VENV = PEERS / "venv-hub"
CHP = PEERS / "hub-npm" / "node_modules" / ".bin" / "configurable-http-proxy"
KERNEL_PYTHON = Path(sys.executable)  # the project's venv: mcp_notebook as developed
KEYS_ENV = "MCPNB_CLASSROOM_STATE_KEY"
ANSWERS = {"age": 37, "toppings": ["ham", "olives"], "size": "Large"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def installed() -> str | None:
    """Why the classroom cannot run here (``make hub-deps`` installs what it needs), or ``None``."""
    if not (HUB_VENV / "bin" / "jupyterhub").exists():
        return f"JupyterHub is not installed in {HUB_VENV} (make hub-deps)"
    if not CHP.exists():
        return f"configurable-http-proxy is not installed in {CHP.parent.parent} (make hub-deps)"
    return None


def _wait_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(
        f"{what} not listening on {port} after {timeout:g} s:\n{log.read_text(errors='replace')[-3000:]}"
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process's session (its children: uvicorn workers, the proxy, spawned servers), then SIGKILL."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)


HUB_CONFIG = """\
c = get_config()  # noqa: F821 - JupyterHub's config loader defines it
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = "sqlite:///{folder}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/cookie_secret"
c.JupyterHub.pid_file = "{folder}/hub.pid"
c.ConfigurableHTTPProxy.command = ["{chp}"]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.pid_file = "{folder}/proxy.pid"
c.ConfigurableHTTPProxy.debug = False
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{folder}/home/{{username}}"
c.Spawner.cmd = ["{singleuser}"]
c.Spawner.args = [
    "--ServerApp.kernel_spec_manager_class=jupyter_client.kernelspec.KernelSpecManager", "--allow-root",
    "--MappingKernelManager.kernel_info_timeout=600",  # a loaded machine starts thirty kernels slowly
    # kernels talk over unix sockets: with TCP, thirty kernels starting at once in thirty servers picked the same free
    # port now and then (jupyter_client frees a port before the kernel binds it), and one died 'Address already in use'
    "--KernelManager.transport=ipc",
    "--LabApp.expose_app_in_browser=True",  # the page tests ask window.jupyterapp whether a kernel is idle
]
c.Spawner.default_url = "/api"
c.Spawner.start_timeout = 600
c.Spawner.http_timeout = 600
c.Spawner.environment = {{
    "JUPYTER_CONFIG_PATH": "{policy_dir}",
    "JUPYTER_PATH": "{share}",
    "PYTHONPATH": "{repo}",
    # short, so that a kernel's unix socket paths stay within the 107 characters a socket path may have
    "JUPYTER_RUNTIME_DIR": lambda spawner: "{runtime}/" + spawner.user.name,
}}
c.JupyterHub.concurrent_spawn_limit = 0
c.JupyterHub.services = [{{"name": "teacher", "api_token": "{token}"}}]
c.JupyterHub.load_roles = [
    {{"name": "teacher", "services": ["teacher"],
      "scopes": ["admin:users", "admin:servers", "access:servers", "list:users", "read:users"]}},
]
"""


@dataclass
class Lesson:
    """What one user's kernel did: the call's wall time as the teacher saw it, its result, its kernel's memory."""

    user: str
    seconds: float = 0.0
    answers: dict[str, Any] = field(default_factory=dict)
    waiting: int = -1  # flows waiting for input in this kernel afterwards
    records: list[str] = field(default_factory=list)  # saved flow ids this kernel sees
    rss_mb: float = 0.0
    refused: str = ""  # what the policy said to a forbidden connect
    reconnects: int = 0  # kernel channels opened again (see Kernel.run)
    error: str = ""


@dataclass
class Classroom:
    folder: Path
    policy: dict[str, Any] | None = None
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    url: str = ""  # the hub's public URL (the proxy)
    demo_url: str = ""
    token: str = field(default_factory=lambda: secrets.token_hex(32))
    policy_file: Path | None = None
    also_allowed: list[str] = field(default_factory=list)  # more allowed_urls for the default policy
    runtime: Path | None = None  # the single-user servers' runtime folders (kernels' sockets), short, removed at stop

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Classroom:
        if shutil.which("node") is None:
            raise RuntimeError("configurable-http-proxy needs node on PATH")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.runtime = Path(tempfile.mkdtemp(prefix="mcpnb-hub-"))
        self._start_demo()
        self._start_hub()
        return self

    def stop(self) -> None:
        for proc in reversed(self.procs):
            _stop(proc)
        self.procs.clear()
        if self.runtime is not None:
            shutil.rmtree(self.runtime, ignore_errors=True)

    def __enter__(self) -> Classroom:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def _spawn(
        self, args: list[str], name: str, env: dict[str, str] | None = None
    ) -> tuple[subprocess.Popen[bytes], Path]:
        log = self.folder / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                args, cwd=self.folder, env={**os.environ, **(env or {})}, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        self.procs.append(proc)
        return proc, log

    def _start_demo(self) -> None:
        port = free_port()
        args = [str(KERNEL_PYTHON), "-m", "mcp_notebook.demo", "demo", "--transport", "http", "--port", str(port)]
        args += ["--workers", "2", "--keys-env", KEYS_ENV]
        env = {KEYS_ENV: secrets.token_hex(32), "PYTHONPATH": str(REPO_ROOT)}
        proc, log = self._spawn(args, "demo", env)
        _wait_port(port, proc, log, 60, "the demo server")
        self.demo_url = f"http://127.0.0.1:{port}/mcp"

    def _start_hub(self) -> None:
        policy_dir = self.folder / "etc-jupyter"
        policy_dir.mkdir(exist_ok=True)
        policy = self.policy if self.policy is not None else {
            "allowed_stdio_commands": [],
            "allowed_urls": [self.demo_url, *self.also_allowed],
            "denied_env": [KEYS_ENV, "JUPYTERHUB_*"],
            "project_configs": False,
            "serve": False,
        }  # fmt: skip
        self.policy_file = policy_dir / "mcp_notebook_policy.json"
        self.policy_file.write_text(json.dumps(policy))
        server_config = policy_dir / "jupyter_server_config.d"  # as the package's install enables it
        server_config.mkdir(exist_ok=True)
        (server_config / "mcp_notebook.json").write_text(
            json.dumps({"ServerApp": {"jpserver_extensions": {"mcp_notebook": True}}})
        )
        share = self.folder / "share"
        (share / "labextensions").mkdir(parents=True, exist_ok=True)
        labextension = share / "labextensions" / "mcp-notebook"
        if not labextension.exists():
            labextension.symlink_to(REPO_ROOT / "mcp_notebook" / "labextension", target_is_directory=True)
        spec = share / "kernels" / "python3"
        spec.mkdir(parents=True, exist_ok=True)
        (spec / "kernel.json").write_text(
            json.dumps({
                "argv": [str(KERNEL_PYTHON), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (mcp-notebook)", "language": "python",
            })
        )  # fmt: skip
        port, hub_port, proxy_api_port = free_port(), free_port(), free_port()
        config = self.folder / "jupyterhub_config.py"
        config.write_text(
            HUB_CONFIG.format(
                port=port, hub_port=hub_port, proxy_api_port=proxy_api_port, folder=self.folder, chp=CHP,
                singleuser=HUB_VENV / "bin" / "jupyterhub-singleuser", policy_dir=policy_dir, share=share,
                repo=REPO_ROOT, token=self.token, runtime=self.runtime,
            )
        )  # fmt: skip
        proc, log = self._spawn([str(HUB_VENV / "bin" / "jupyterhub"), "-f", str(config)], "hub")
        _wait_port(hub_port, proc, log, 120, "JupyterHub")
        _wait_port(port, proc, log, 60, "the hub's proxy")
        self.url = f"http://127.0.0.1:{port}"

    # ------------------------------------------------------------------ the hub's REST API
    async def api(self, method: str, path: str, body: Any = None) -> Any:
        from tornado.httpclient import AsyncHTTPClient, HTTPRequest

        AsyncHTTPClient.configure(None, max_clients=200)  # thirty students at once: tornado queues past 10
        request = HTTPRequest(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"},
            body=None if body is None and method in ("GET", "DELETE") else json.dumps(body if body is not None else {}),
            request_timeout=600, connect_timeout=600,
        )  # fmt: skip
        response = await AsyncHTTPClient().fetch(request, raise_error=True)
        return json.loads(response.body) if response.body else None

    async def enroll(self, users: list[str]) -> None:
        """Create ``users`` at the hub (no server yet)."""
        await self.api("POST", "/hub/api/users", {"usernames": users})

    async def spawn(self, users: list[str], timeout: float = 600, enroll: bool = True) -> None:
        """Create ``users`` (unless ``enroll`` is false: they exist) and start each one's single-user server;
        wait until all are ready."""
        if enroll:
            await self.enroll(users)
        await asyncio.gather(*(self.api("POST", f"/hub/api/users/{u}/server") for u in users))
        deadline = time.monotonic() + timeout
        pending = set(users)
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"servers not ready after {timeout:g} s: {sorted(pending)}")
            for user in list(pending):
                servers = (await self.api("GET", f"/hub/api/users/{user}")).get("servers") or {}
                if "" not in servers:  # the spawn failed: the hub forgot the server
                    log = (self.folder / "hub.log").read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"{user}'s server did not start:\n{log}")
                if servers[""].get("ready"):
                    pending.discard(user)
            await asyncio.sleep(0.5)
        await self._reachable(users, deadline)

    async def _reachable(self, users: list[str], deadline: float) -> None:
        """Wait until each user's server answers through the proxy, as a page reaches it: the hub calls a server
        ready a moment before the proxy routes to it (a fresh clone's run met a 404 for the thirtieth student)."""
        from tornado.httpclient import HTTPClientError

        pending = set(users)
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"servers not reachable through the proxy in time: {sorted(pending)}")
            for user in list(pending):
                try:
                    await self.api("GET", f"/user/{user}/api/status")
                except HTTPClientError as exc:
                    if exc.code not in (404, 424, 503):
                        raise
                else:
                    pending.discard(user)
            await asyncio.sleep(0.5)

    # ------------------------------------------------------------------ one user's kernel
    async def lesson(self, user: str) -> Lesson:
        """Tutorial 02's form flow in a fresh kernel of ``user``'s server, and what that kernel sees after."""
        done = Lesson(user)
        kernel = await Kernel.start(self, user)
        try:
            await kernel.run(f"%load_ext mcp_notebook\n%mcp connect demo {self.demo_url}")
            answers = json.dumps(ANSWERS)
            started = time.perf_counter()
            await kernel.run(
                f"%mcp call demo.ask_everything --answer name={user} --answers '{answers}' --accept-defaults"
            )
            done.seconds = time.perf_counter() - started
            out = await kernel.run(
                "import json, resource\n"
                "from mcp_notebook.session.api import default_session\n"
                "_s = default_session()\n"
                "_f = _s.last_flow\n"
                "print('LESSON', json.dumps({'answers': json.loads(_f.result(timeout=5).content[0].text),"
                " 'waiting': len(_s.saved.waiting(None, interactive=False)),"
                " 'records': [r.id for r in _s.store.saved_all()],"
                " 'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))"
            )
            said = json.loads(out.split("LESSON ", 1)[1].splitlines()[0])
            done.answers, done.waiting, done.records, done.rss_mb = (
                said["answers"], said["waiting"], said["records"], said["rss_mb"],
            )  # fmt: skip
            done.refused = await kernel.run("%mcp connect elsewhere http://127.0.0.1:9/mcp", expect_error=True)
        except Exception as exc:  # noqa: BLE001 - one student's failure is reported with the others'
            done.error = f"{type(exc).__name__}: {exc}"
        finally:
            done.reconnects = kernel.reconnects
            await kernel.close()
        return done


class _KernelGone(Exception):
    """The server no longer has the kernel: it died while starting, before any cell ran."""


class _ClosedEarly(Exception):
    """The channel closed before the kernel said anything about the request."""


@dataclass
class Kernel:
    """A kernel of one user's single-user server, reached through the hub's proxy like a page reaches it."""

    room: Classroom
    user: str
    kernel_id: str
    ws: Any
    session: str = field(default_factory=lambda: uuid.uuid4().hex)

    reconnects: int = 0  # channels the server closed before a request reached the kernel (a page reconnects too)

    @staticmethod
    async def start(room: Classroom, user: str) -> Kernel:
        from tornado.httpclient import HTTPClientError

        deadline = time.monotonic() + 180  # the route was seen (Classroom._reachable); a proxy under load may still lag
        for attempt in range(3):
            while True:
                try:
                    model = await room.api("POST", f"/user/{user}/api/kernels", {"name": "python3"})
                    break
                except HTTPClientError as exc:
                    if exc.code not in (404, 424, 503) or time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(1)
            kernel = Kernel(room, user, model["id"], None)
            try:
                await kernel._connect()
                return kernel
            except _KernelGone:
                # a kernel that died while starting, before any cell ran (a fresh clone's run: thirty kernels
                # starting on two cores, one "died, removing from map"): a new one, as a person restarts it
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _connect(self) -> None:
        """Open the kernel's channels, trying again while the route lags (404, 424, 503) or an attempt times out.

        The server answers a channels request once the kernel has answered its ``kernel_info``. Thirty kernels
        picking ports at once, one may die binding a port another took ("Address already in use"); its server
        restarts it on other ports, but a request that was waiting stays waiting on the dead kernel's (two runs
        saw a lesson hang there for its whole timeout). An attempt ends after 90 s and a new one asks again.
        """
        from tornado.httpclient import HTTPClientError, HTTPRequest
        from tornado.websocket import websocket_connect

        url = self.room.url.replace("http://", "ws://") + f"/user/{self.user}/api/kernels/{self.kernel_id}/channels"
        request = HTTPRequest(url, headers={"Authorization": f"token {self.room.token}"}, request_timeout=90)
        deadline = time.monotonic() + 300  # as the kernels' POST in start(): a route that lags the server's readiness
        while True:
            try:
                self.ws = await websocket_connect(request, max_message_size=64 * 1024 * 1024)
                return
            except HTTPClientError as exc:
                if exc.code == 404 and not await self._exists():
                    raise _KernelGone(self.kernel_id) from exc
                if exc.code not in (404, 424, 503, 599) or time.monotonic() > deadline:  # 599: the attempt timed out
                    raise
                if exc.code == 599:
                    self.reconnects += 1
                await asyncio.sleep(1)

    async def _exists(self) -> bool:
        """Whether the server still has this kernel (a 404 of the channels may be the route, or the kernel gone)."""
        from tornado.httpclient import HTTPClientError

        try:
            await self.room.api("GET", f"/user/{self.user}/api/kernels/{self.kernel_id}")
        except HTTPClientError as exc:
            if exc.code == 404:
                return False
            raise
        return True

    async def run(self, code: str, expect_error: bool = False, timeout: float = 600) -> str:
        """Execute ``code`` (headless: no stdin, as nbclient runs a notebook); its text, or its error's.

        A channel closed before the kernel said anything about the request is opened again and the
        request sent again, as JupyterLab does (twice at most); one closed later fails: the cell ran.
        """
        from tornado.websocket import WebSocketClosedError

        for attempt in range(3):
            try:
                return await self._run_once(code, expect_error, timeout)
            except (WebSocketClosedError, _ClosedEarly):
                if attempt == 2:
                    raise
                self.reconnects += 1
                await asyncio.sleep(1)
                await self._connect()
        raise AssertionError("unreachable")

    async def _run_once(self, code: str, expect_error: bool, timeout: float) -> str:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id, "msg_type": "execute_request", "username": self.user, "session": self.session,
            "version": "5.3", "date": "",
        }  # fmt: skip
        content = {"code": code, "silent": False, "store_history": True, "allow_stdin": False, "stop_on_error": True}
        await self.ws.write_message(
            json.dumps({"header": header, "parent_header": {}, "metadata": {}, "content": content, "channel": "shell"})
        )
        texts: list[str] = []
        error = ""
        heard = False
        deadline = time.monotonic() + timeout
        while True:
            raw = await asyncio.wait_for(self.ws.read_message(), timeout=max(1.0, deadline - time.monotonic()))
            if raw is None:
                if not heard:
                    raise _ClosedEarly
                raise ConnectionError(f"{self.user}'s kernel channel closed while a cell ran")
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            heard = True
            kind, body = msg["msg_type"], msg["content"]
            if kind == "stream":
                texts.append(body["text"])
            elif kind in ("execute_result", "display_data"):
                texts.append(body["data"].get("text/plain", ""))
            elif kind == "error":
                error = f"{body['ename']}: {body['evalue']}"
            elif kind == "status" and body["execution_state"] == "idle" and msg["channel"] == "iopub":
                break
        if expect_error:
            if not error:
                raise AssertionError(f"{self.user}: the cell did not fail:\n{code}\n{''.join(texts)}")
            return error
        if error:
            raise RuntimeError(f"{self.user}: {error}\n{code}")
        return "".join(texts)

    async def close(self) -> None:
        self.ws.close()
        try:
            await self.room.api("DELETE", f"/user/{self.user}/api/kernels/{self.kernel_id}")
        except Exception:  # noqa: BLE001 - the server may be stopping with the classroom
            pass


def run_classroom(folder: Path, users: int, bounded: float = 900) -> tuple[Lesson, list[Lesson], float, Classroom]:
    """One user's lesson alone, then ``users`` at once; (the solo lesson, the class's, the class's wall time, room)."""
    room = Classroom(folder)
    with room:
        solo, lessons, wall = teach(room, users, bounded)
    return solo, lessons, wall, room


def teach(room: Classroom, users: int, bounded: float = 900) -> tuple[Lesson, list[Lesson], float]:
    """In a started ``room``: one user's lesson alone, then ``users`` at once (the solo lesson, the class's, wall time)."""

    async def main() -> tuple[Lesson, list[Lesson], float]:
        await room.spawn(["solo"])
        solo = await room.lesson("solo")
        names = [f"student{i:02d}" for i in range(1, users + 1)]
        await room.spawn(names)
        started = time.perf_counter()
        lessons = await asyncio.gather(*(room.lesson(n) for n in names))
        return solo, list(lessons), time.perf_counter() - started

    return asyncio.run(asyncio.wait_for(main(), timeout=bounded))
