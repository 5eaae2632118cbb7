"""``make lab``: the tour's demo HTTP server and JupyterLab on the tutorials, stopped together and cleanly.

The tour (docs/guide/calling-tools.md) and some tutorials connect to ``http://127.0.0.1:8000/mcp``, so the
demo server starts first and JupyterLab opens once it listens. Real-time collaboration is off unless asked
(``--collab``; jupyter-collaboration is installed then if missing): with it on, pages on one notebook
share one document, which is not what a first look expects. Both run in sessions of their own, so Ctrl-C
reaches this script alone, which stops JupyterLab with SIGTERM (its clean shutdown: kernels stopped,
no traceback) and then the demo server.
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def _stop(proc: subprocess.Popen[bytes], name: str, timeout: float = 20) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"make lab: {name} did not stop in {timeout:.0f} s; killing it", flush=True)
        proc.kill()
        proc.wait()


def _relay_without_rtc_stop_traceback(stream: IO[bytes]) -> None:
    """Copy JupyterLab's log to ours, less jupyter-collaboration's traceback at a stop with no page open.

    Its ``JupyterWebsocketServer.clean()`` stops a websocket server that only starts once a page connects, so
    every stop before that logs "Task exception was never retrieved ... RuntimeError: WebsocketServer not
    running": upstream's, harmless, and alarming. That block alone is dropped (at most 40 lines are held).
    """
    held: list[bytes] = []
    for line in iter(stream.readline, b""):
        if line.startswith(b"Task exception was never retrieved") or held:
            held.append(line)
            if line.startswith(b"RuntimeError: WebsocketServer not running"):
                held.clear()
            elif len(held) >= 40:
                sys.stderr.buffer.write(b"".join(held))
                held.clear()
            continue
        sys.stderr.buffer.write(line)
        sys.stderr.buffer.flush()
    sys.stderr.buffer.write(b"".join(held))
    sys.stderr.buffer.flush()


def main() -> int:
    parser = argparse.ArgumentParser(prog="make lab", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8888, help="JupyterLab's port")
    parser.add_argument("--demo-port", type=int, default=8000, help="the demo MCP server's port (the tour's)")
    parser.add_argument("--collab", action="store_true", help="real-time collaboration on")
    ns = parser.parse_args()

    for port, what, knob in ((ns.port, "JupyterLab", "PORT"), (ns.demo_port, "the demo server", "DEMO_PORT")):
        if _listening(port):
            print(f"make lab: port {port} for {what} is in use; stop what runs there or `make lab {knob}=...`")
            return 1
    if ns.collab and importlib.util.find_spec("jupyter_collaboration") is None:
        print("make lab: COLLAB=1: installing jupyter-collaboration", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "jupyter-collaboration==5.0.4"], check=True)

    print(f"make lab: the demo MCP server on http://127.0.0.1:{ns.demo_port}/mcp (the tour's HTTP line)", flush=True)
    demo = subprocess.Popen(
        [sys.executable, "-m", "mcp_notebook.demo", "demo", "--transport", "http", "--port", str(ns.demo_port)],
        cwd=ROOT / "notebooks",
        start_new_session=True,
    )
    lab: subprocess.Popen[bytes] | None = None
    try:
        deadline = time.monotonic() + 30
        while not _listening(ns.demo_port):
            if demo.poll() is not None or time.monotonic() > deadline:
                print("make lab: the demo server did not start (its output is above)")
                return 1
            time.sleep(0.1)
        collab = "on (COLLAB=1)" if ns.collab else "off (make lab COLLAB=1 turns it on)"
        print(f"make lab: JupyterLab on port {ns.port}, collaboration {collab}; Ctrl-C stops both", flush=True)
        lab = subprocess.Popen(
            [
                sys.executable, "-m", "jupyterlab", "--ip", "127.0.0.1", "--port", str(ns.port), "--no-browser",
                "--allow-root", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={ROOT / 'notebooks'}",
                *([] if ns.collab else ["--YDocExtension.disable_rtc=True"]),
                "01-first-call.ipynb",
            ],
            cwd=ROOT / "notebooks",
            start_new_session=True,
            stderr=subprocess.PIPE if ns.collab else None,
        )  # fmt: skip
        if lab.stderr is not None:
            relay = threading.Thread(target=_relay_without_rtc_stop_traceback, args=(lab.stderr,), daemon=True)
            relay.start()
        while lab.poll() is None and demo.poll() is None:
            time.sleep(0.2)
        return 0 if lab.returncode in (None, 0) else lab.returncode
    except KeyboardInterrupt:
        print("\nmake lab: stopping JupyterLab and the demo server", flush=True)
        return 0
    finally:
        if lab is not None:
            _stop(lab, "JupyterLab")
            if lab.stderr is not None:
                relay.join(timeout=5)
        _stop(demo, "the demo server")


if __name__ == "__main__":
    sys.exit(main())
