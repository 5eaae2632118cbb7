"""A comm message handled beside an awaiting cell never hands a finished request's parent to the next one.

ipykernel 7.4 handles a comm message that arrives while a cell awaits at once, beside the cell
(``Kernel.shell_main``): it reads the shell's parent (the awaiting cell's ``execute_request``),
dispatches the comm in a task, and when that task is done sets the parent it read back again. All
main-shell messages share one ``contextvars.Context``, so when the awaiting cell ended and the next
queued cell started while the comm's task ran (Run All of ``%mcp`` cells whose forms and views send
comm messages), that late restore made the *finished* cell the parent again. The next cell's later
outputs then went to the cell before, and its closing ``idle`` status carried the wrong parent: the
page never saw that cell end (JupyterLab and Notebook 7 left its prompt ``[*]`` or empty and the
toolbar's execution indicator busy for good).

``keep_request_parents`` wraps the kernel's ``set_parent`` (on the instance, for as long as the
extension is loaded): a message is made the parent by ``dispatch_shell`` once, when it is handled;
setting a message that was the parent before again from ipykernel's ``shell_main`` is its late restore,
and that restore keeps the parent the calling context holds now (any other caller, such as a library
that handles queued messages inside a cell and sets the cell's request back, is obeyed as it is). Where nothing ran in between, that is the same message (ipykernel's own
restore, unchanged); where the next request started meanwhile, it stays that request's.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Any

__all__ = ["forget_request_parents", "keep_request_parents"]

_REMEMBERED = 4096  # message ids kept to tell a restore from a new message (restores follow within moments)


class _KeepParent:
    """The kernel's ``set_parent``, except that re-setting an earlier message keeps the current parent."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.original = type(kernel).set_parent.__get__(kernel)
        self.seen: OrderedDict[str, None] = OrderedDict()
        self.lock = threading.Lock()  # set_parent runs on the main, subshell and control threads
        self.shell_mains = {  # the code of ipykernel's ``shell_main`` (and any subclass's own)
            code for cls in type(kernel).__mro__ if (code := getattr(cls.__dict__.get("shell_main"), "__code__", None))
        }

    def __call__(self, ident: Any, parent: Any, channel: str = "shell") -> None:
        msg_id = (parent or {}).get("header", {}).get("msg_id") if isinstance(parent, dict) else None
        if channel == "control" or not msg_id:
            self.original(ident, parent, channel)
            return
        with self.lock:
            again = msg_id in self.seen
            self.seen[msg_id] = None
            self.seen.move_to_end(msg_id)
            while len(self.seen) > _REMEMBERED:
                self.seen.popitem(last=False)
        if again and self._late_restore():
            try:  # the parent this context holds now: the request that is running here
                parent = self.kernel._shell_parent.get()
                ident = self.kernel._shell_parent_ident.get()
            except LookupError:
                pass  # nothing set in this context yet: nothing newer to keep
        self.original(ident, parent, channel)

    def _late_restore(self) -> bool:
        """Whether the caller is the kernel's own ``shell_main``, the one restore that may come too late.

        Code in a cell may set its own request back after handling queued messages itself (jupyter-ui-poll's
        ``ui_events`` does): that restore must win, or the cell's later output and its closing ``idle``
        go out under the message handled last, and the page never sees the cell end.
        """
        caller = sys._getframe(2)  # 0: here, 1: __call__, 2: whoever set the parent
        return caller.f_code in self.shell_mains


def keep_request_parents(shell: Any) -> None:
    """Install ``_KeepParent`` on ``shell``'s ipykernel kernel (once); nothing elsewhere.

    Only a kernel that handles comms beside an awaiting cell (ipykernel 7.4's ``_main_asyncio_lock``)
    and keeps its parent in context variables (``_shell_parent``) has the late restore to undo.
    """
    kernel = getattr(shell, "kernel", None)
    needed = ("_main_asyncio_lock", "_shell_parent", "_shell_parent_ident", "set_parent")
    if kernel is None or not all(hasattr(kernel, name) for name in needed):
        return
    if isinstance(kernel.__dict__.get("set_parent"), _KeepParent):
        return
    kernel.set_parent = _KeepParent(kernel)


def forget_request_parents(shell: Any) -> None:
    """Take ``_KeepParent`` off ``shell``'s kernel again (``%unload_ext``): its own ``set_parent`` comes back."""
    kernel = getattr(shell, "kernel", None)
    if kernel is not None and isinstance(getattr(kernel, "__dict__", {}).get("set_parent"), _KeepParent):
        del kernel.set_parent
