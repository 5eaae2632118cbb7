"""An awaiting cell wraps the kernel's comm handlers only on the main shell, not in a subshell (issue 38 review).

ipykernel 7.4 runs a subshell's cells in a thread of its own, and the comm handlers are the kernel's,
shared by every shell: a subshell's awaiting cell that wrapped them would put its busy/idle replies
on the main shell's comm messages, under its own request.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..support.kernel_harness import Kernel

PROBE = """
import threading
from mcp_notebook.magics.cell_await import _COMM_TYPES, _comm_status_replies
_k = get_ipython().kernel
_k._main_asyncio_lock  # the lock the wrappers check: present on this ipykernel
_before = {kind: _k.shell_handlers[kind] for kind in _COMM_TYPES}
with _comm_status_replies(get_ipython()):
    _inside = sorted(kind for kind in _COMM_TYPES if _k.shell_handlers[kind] is not _before[kind])
_after = sorted(kind for kind in _COMM_TYPES if _k.shell_handlers[kind] is not _before[kind])
print(repr((threading.current_thread() is threading.main_thread(), _inside, _after)))
"""


def _subshell(k: Kernel) -> str:
    request = k.kc.session.msg("create_subshell_request", {})
    k.kc.control_channel.send(request)
    while True:
        reply = k.kc.get_control_msg(timeout=10)
        if reply["parent_header"].get("msg_id") == request["header"]["msg_id"]:
            return str(reply["content"]["subshell_id"])


def _run_on(k: Kernel, subshell: str | None) -> tuple[bool, list[str], list[str]]:
    msg = k.kc.session.msg("execute_request", {"code": PROBE, "silent": False, "store_history": False})
    if subshell is not None:
        msg["header"]["subshell_id"] = subshell
    k.kc.shell_channel.send(msg)
    msg_id = msg["header"]["msg_id"]
    k.wait_idle(msg_id)
    text = k.text_of_cell(msg_id)
    assert "Error" not in text, text
    main, inside, after = ast.literal_eval(text.strip())
    return main, inside, after


def test_only_a_main_shell_cell_wraps_the_comm_handlers(tmp_path: Path) -> None:
    k = Kernel(cwd=str(tmp_path))
    try:
        comm_types = sorted(
            ast.literal_eval(
                k.text_of_cell(
                    k.execute(
                        "from mcp_notebook.magics.cell_await import _COMM_TYPES\nprint(repr(sorted(_COMM_TYPES)))"
                    )
                ).strip()
            )
        )
        assert comm_types  # comm_open, comm_msg, comm_close
        assert _run_on(k, None) == (True, comm_types, [])  # the main shell: wrapped while it awaits, restored after
        assert _run_on(k, _subshell(k)) == (False, [], [])  # a subshell: the kernel's handlers left alone
    finally:
        k.close()
