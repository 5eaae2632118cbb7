"""Hearing the page while a cell runs: the comm routing hook, the ``where`` probes, the page's checked base URL.

The page's first ``restore`` is asked for before a sign-in picks its redirect URI
(``wait_for_page``): in the cell that runs ``%load_ext`` that reply would reach the kernel only
after the cell (ipykernel 7.4 routes it to the main shell, busy with the cell), so a
``%mcp connect`` in the same cell would fall back to the kernel's loopback address, which a
remote kernel or JupyterHub user's browser cannot reach. ipykernel's shell-channel thread reads
every comm message's data to route it (``BaseComm._reply_subshell_for``); the hook installed here
notes there, on that thread and at once, that the page answered and its ``page_url``. The full
restore is still handled on the main shell after the cell, as before.

A reloaded page finds the kernel's comm with ``comm_info_request``, which ipykernel 7.4 answers
only after the running cell, and a call's cell runs until its flow ends: the page would get the
comm (and so the live area) only after the form it needs was answered. A ``comm_open`` is handled
while a cell awaits, so the kernel also takes comms the page opens to target ``mcp_notebook``: to
``{"op": "where"}`` it answers ``{"op": "here", "comm_id": ...}`` (this comm) and closes that one;
the page then adopts this comm as after a ``comm_info_request``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["WhereProbes", "answers_where_sent", "checked_page_url"]

COMM_TARGET = "mcp_notebook"
PROTOCOL_VERSION = 1


class WhereProbes:
    """Answers ``where`` on the comms a page opens to target ``mcp_notebook`` with the id of ``primary()``."""

    def __init__(self, primary: Callable[[], Any]) -> None:
        self._primary = primary  # the kernel's comm of the moment (``None`` once closed)
        self._probes: Any = None  # the comm manager our ``where`` target is registered with

    def register(self) -> None:
        """Take the comms a page opens to ask where ours is (a reloaded page, while a cell runs)."""
        try:
            from comm import get_comm_manager

            manager = get_comm_manager()
            manager.register_target(COMM_TARGET, self._on_probe)
        except Exception:  # noqa: BLE001 - without it a reloaded page finds the comm once the cell ends
            return
        self._probes = manager

    def _on_probe(self, comm: Any, open_msg: dict[str, Any]) -> None:
        """A page asks ``where``: tell it this comm's id and close the asking comm (any thread)."""
        data = open_msg.get("content", {}).get("data")
        primary = self._primary()
        try:
            if isinstance(data, dict) and data.get("op") == "where" and primary is not None:
                comm.send({"op": "here", "v": PROTOCOL_VERSION, "comm_id": primary.comm_id})
            comm.close()
        except Exception as exc:  # noqa: BLE001 - the comm handler must survive
            print(f"mcp-notebook: could not answer a page: {type(exc).__name__}", file=sys.__stderr__)

    def unregister(self) -> None:
        """Stop answering (``%unload_ext``)."""
        probes, self._probes = self._probes, None
        if probes is not None:
            try:
                if probes.targets.get(COMM_TARGET) == self._on_probe:
                    probes.unregister_target(COMM_TARGET, self._on_probe)
            except Exception:  # noqa: BLE001 - closing must not fail
                pass


def answers_where_sent(comm: Any, heard: Callable[[Any], None] | None = None) -> bool:
    """Have ipykernel 7 handle ``oauth`` messages on the subshell the front end sent them on.

    ipykernel 7 routes a front end's comm message to the subshell this comm last sent from
    (``BaseComm._reply_subshell_for``): after a ``hello`` or a save sent from a cell, that is the
    main shell, where nothing is handled while a cell blocks (a ``%mcp`` line waiting for the
    sign-in). JupyterLab and Notebook 7 send comm messages on a subshell of their own, so an
    OAuth answer routed there is handled on that subshell's thread at once. Other messages keep
    ipykernel's routing; a comm without the hook (another kernel library) is left as it is.

    ``heard(data)`` is told of every message (and close) as it is routed, on the shell-channel
    thread: the only place a kernel whose main shell is busy with a cell sees the page's answer.
    Returns whether the hook is in place.
    """
    route = getattr(comm, "_reply_subshell_for", None)
    if not callable(route):
        return False

    def reply_subshell(data: Any, default: Any) -> Any:
        if heard is not None:
            try:
                heard(data)
            except Exception:  # noqa: BLE001 - routing must go on whatever the note did
                pass
        if isinstance(data, dict) and data.get("op") == "oauth":
            return default  # the subshell named in the message's own header
        return route(data, default)

    comm._reply_subshell_for = reply_subshell
    return True


def checked_page_url(value: Any) -> str | None:
    """The base URL the front end reported, if it is a plain http(s) URL ending in ``/``; else ``None``."""
    if not isinstance(value, str) or not value.endswith("/") or len(value) > 2048:
        return None
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value):
        return None
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return None
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.query
        or parts.fragment
        or "?" in value
        or "#" in value
    ):
        return None
    return value
