"""A real ipykernel driven through jupyter_client, playing the front end's part.

Widget interaction is simulated with the exact comm messages a browser sends (see
shared/reference/kernel.md, section 2): ``update`` for typing, ``custom``/``click`` for buttons.
Every iopub message is kept with its parent id, so tests can check *which cell* got an output.
"""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from jupyter_client.manager import KernelManager


class Kernel:
    def __init__(self, cwd: str, env: dict[str, str] | None = None) -> None:
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=cwd, env={**os.environ, **(env or {})})
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=180)  # generous: thirty classroom kernels may be starting beside it
        self.messages: list[dict[str, Any]] = []
        self.comms: dict[str, dict[str, Any]] = {}  # comm_id -> latest known state

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    # ------------------------------------------------------------------ iopub
    def pump(self, timeout: float = 0.1) -> None:
        """Collect every iopub message available within ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                msg = self.kc.get_iopub_msg(timeout=max(remaining, 0.01))
            except queue.Empty:
                return
            self._keep(msg)
            if remaining <= 0:
                return

    def _keep(self, msg: dict[str, Any]) -> None:
        self.messages.append(msg)
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open":
            self.comms[content["comm_id"]] = dict(content.get("data", {}).get("state", {}))
        elif kind == "comm_msg" and content["data"].get("method") in ("update", "echo_update"):
            self.comms.setdefault(content["comm_id"], {}).update(content["data"].get("state", {}))

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 30, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            self.pump(0.1)
        raise AssertionError(
            f"timed out waiting for {what}; last messages: {[m['msg_type'] for m in self.messages[-15:]]}"
        )

    # ------------------------------------------------------------------ execution
    def execute(self, code: str, allow_stdin: bool = False, wait: bool = True, timeout: float = 60) -> str:
        """Run a cell; with ``wait`` block until it is idle and raise on error."""
        msg_id = self.kc.execute(code, allow_stdin=allow_stdin, stop_on_error=False)
        if wait:
            self.wait_idle(msg_id, timeout)
            errors = [m for m in self.for_cell(msg_id) if m["msg_type"] == "error"]
            if errors:
                raise AssertionError(
                    f"cell failed: {errors[0]['content']['ename']}: {errors[0]['content']['evalue']}\n{code}"
                )
        return msg_id

    def wait_idle(self, msg_id: str, timeout: float = 60) -> None:
        self.wait_for(
            lambda: any(
                m["msg_type"] == "status"
                and m["content"]["execution_state"] == "idle"
                and m["parent_header"].get("msg_id") == msg_id
                for m in self.messages
            ),
            timeout,
            f"cell {msg_id} to finish",
        )

    def for_cell(self, msg_id: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["parent_header"].get("msg_id") == msg_id]

    def text_of_cell(self, msg_id: str) -> str:
        """All text the cell showed: streams, display data, updates, results, errors."""
        parts = []
        for m in self.for_cell(msg_id):
            c = m["content"]
            if m["msg_type"] == "stream":
                parts.append(c["text"])
            elif m["msg_type"] in ("display_data", "update_display_data", "execute_result"):
                parts.append(c["data"].get("text/plain", ""))
            elif m["msg_type"] == "error":
                parts.append(f"{c['ename']}: {c['evalue']}")
        return "\n".join(parts)

    # ------------------------------------------------------------------ widgets
    def find_widgets(self, model: str, **state: Any) -> list[str]:
        return [
            cid
            for cid, s in self.comms.items()
            if s.get("_model_name") == model and all(s.get(k) == v for k, v in state.items())
        ]

    def set_value(self, comm_id: str, value: Any) -> None:
        self._comm_msg(comm_id, {"method": "update", "state": {"value": value}, "buffer_paths": []})

    def click(self, comm_id: str) -> None:
        self._comm_msg(comm_id, {"method": "custom", "content": {"event": "click"}})

    def _comm_msg(self, comm_id: str, data: dict[str, Any]) -> None:
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.kc.shell_channel.send(msg)


@contextmanager
def running_kernel(cwd: str, setup: str, env: dict[str, str] | None = None) -> Iterator[Kernel]:
    """A kernel that has run ``setup`` (raising if it failed), shut down afterwards."""
    kernel = Kernel(cwd=cwd, env=env)
    try:
        kernel.execute(setup)
        yield kernel
    finally:
        kernel.close()
