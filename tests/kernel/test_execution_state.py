"""Every cell of a run ends under its own request while comm messages arrive beside awaiting cells (issue 36, item 1).

A page knows a cell has ended when the kernel's ``idle`` status for that cell's ``execute_request``
arrives (JupyterLab's future for the cell, and the toolbar's execution indicator, wait for it). In
ipykernel 7.4 a comm message handled beside an awaiting cell sets back, when done, the parent it
read when it came; if the awaiting cell ended and the next one started meanwhile, the next cell's
later outputs and its closing ``idle`` went out under the cell before (``magics.kernel_parent``):
the page left that cell ``[*]`` and the kernel busy. Here a second client sends comm messages
without pause, as a page's widgets do during Run All, while thirty async cells run one after the
other; every cell must get its reply, its own output and, as its last status, its own ``idle``,
and no status may name a request after that request's ``idle``.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

from jupyter_client.blocking import BlockingKernelClient

from ..support.kernel_harness import Kernel

CELLS = 30
SETUP = """\
%load_ext mcp_notebook
get_ipython().kernel.comm_manager.register_target("execution-state-probe", lambda comm, msg: None)
"""
CELL = "import asyncio\nfor _ in range(3):\n    await asyncio.sleep(0.003)\nprint('cell {i}')\n"


def _run_with_comms_beside(tmp_path: Any) -> tuple[list[str], list[dict[str, Any]], set[str]]:
    """Run ``CELLS`` async cells while another client floods comm messages; (request ids, iopub messages, replied ids)."""
    kernel = Kernel(cwd=str(tmp_path))
    kc = kernel.kc
    other = BlockingKernelClient(connection_file=kernel.km.connection_file)  # a page of its own: its own session
    other.load_connection_file()
    other.start_channels()
    stop = threading.Event()
    try:
        reply = kc.execute_interactive(SETUP, timeout=60, output_hook=lambda msg: None)
        assert reply["content"]["status"] == "ok", reply["content"]
        comm_id = "e36" + "0" * 29
        other.shell_channel.send(
            other.session.msg("comm_open", {"comm_id": comm_id, "target_name": "execution-state-probe", "data": {}})
        )

        def flood() -> None:
            while not stop.is_set():
                other.shell_channel.send(other.session.msg("comm_msg", {"comm_id": comm_id, "data": {}}))
                time.sleep(0.002)

        sender = threading.Thread(target=flood, daemon=True)
        sender.start()
        ids = [kc.execute(CELL.format(i=i), stop_on_error=False) for i in range(CELLS)]
        messages: list[dict[str, Any]] = []
        replied: set[str] = set()
        idle: set[str] = set()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (replied >= set(ids) and idle >= set(ids)):
            try:
                while True:
                    replied.add(kc.get_shell_msg(timeout=0)["parent_header"]["msg_id"])
            except queue.Empty:
                pass
            try:
                msg = kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            messages.append(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                idle.add(msg["parent_header"].get("msg_id", ""))
        stop.set()
        sender.join(timeout=5)
        end = time.monotonic() + 1  # what comes after the last idle, if anything
        while time.monotonic() < end:
            try:
                messages.append(kc.get_iopub_msg(timeout=0.1))
            except queue.Empty:
                pass
        return ids, messages, replied
    finally:
        stop.set()
        other.stop_channels()
        kernel.close()


def test_every_cell_ends_under_its_own_request_while_comms_arrive(tmp_path: Any) -> None:
    ids, messages, replied = _run_with_comms_beside(tmp_path)
    assert [i for i, m in enumerate(ids) if m not in replied] == [], "cells without an execute_reply"

    ended: set[str] = set()
    problems: list[str] = []
    last_status: dict[str, str] = {}
    shown: dict[int, str] = {}
    for msg in messages:
        parent = msg["parent_header"].get("msg_id", "")
        if parent not in ids:
            continue
        cell = ids.index(parent)
        if parent in ended:
            problems.append(f"{msg['msg_type']} {msg['content']} under cell {cell} after its idle")
        if msg["msg_type"] == "status":
            last_status[parent] = msg["content"]["execution_state"]
            if msg["content"]["execution_state"] == "idle":
                ended.add(parent)
        if msg["msg_type"] == "stream":
            shown[cell] = shown.get(cell, "") + msg["content"]["text"]
    assert shown == {i: f"cell {i}\n" for i in range(CELLS)}, "a cell's output went to another cell"
    assert {ids.index(p): s for p, s in last_status.items() if s != "idle"} == {}
    assert [i for i, m in enumerate(ids) if m not in ended] == [], "cells whose idle never came"
    assert problems == []


# A library that handles queued messages inside a running cell (jupyter-ui-poll's ``ui_events``:
# it dispatches them, each made the parent in turn, then sets the cell's own request back) must get
# the cell back as its parent: the cell's later output is the cell's. Only ipykernel's own late
# restore (``Kernel.shell_main``) may keep a newer parent.
RESTORE_CELL = """\
kernel = get_ipython().kernel
ident, mine = kernel._shell_parent_ident.get(), kernel.get_parent("shell")
handled = {**mine, "header": {**mine["header"], "msg_id": "handled-in-between", "msg_type": "comm_msg"}}
kernel.set_parent(ident, handled)  # a queued message handled inside the cell, as its dispatch sets it
kernel.set_parent(ident, mine)  # the library sets the cell's request back
print("after the handled message")
"""


def test_a_cell_that_sets_its_own_request_back_keeps_its_output(tmp_path: Any) -> None:
    kernel = Kernel(cwd=str(tmp_path))
    try:
        kernel.execute("%load_ext mcp_notebook")
        cell = kernel.execute(RESTORE_CELL)
        assert kernel.text_of_cell(cell) == "after the handled message\n"
        assert [m["content"]["text"] for m in kernel.messages if m["parent_header"].get("msg_id") == "handled-in-between"] == []  # fmt: skip
    finally:
        kernel.close()
