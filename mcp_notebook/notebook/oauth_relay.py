"""OAuth sign-in through the page: the sign-ins waiting for the callback the extension relays (``OAuthRelay``).

OAuth sign-in uses the same comm: every ``restore`` carries ``page_url``, the Jupyter server's
base URL as the browser sees it (the redirect URI is ``page_url + "mcp-notebook/oauth/callback"``).
``await_oauth(state, deliver)`` sends ``oauth_wait``; the extension relays what the callback
page got for that state as ``{"op": "oauth", ...}`` and ``deliver`` gets it, once. These
messages go out at once from any thread (a cell may be blocked waiting for the sign-in), and the
answer arrives on whatever thread the kernel handles the comm on.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["OAUTH_FIELDS", "OAUTH_STATE", "OAuthRelay"]

OAUTH_STATE = re.compile(r"^[A-Za-z0-9_-]{8,256}$")
"""What the extension and the server extension accept as an OAuth ``state``."""
OAUTH_FIELDS = ("code", "iss", "error", "error_description")


class OAuthRelay:
    """The sign-ins waiting for their callback: state -> deliver, until the answer comes (any thread)."""

    def __init__(self, send_now: Callable[[dict[str, Any]], None]) -> None:
        self._send_now = send_now  # at once from this thread: a cell may be blocked waiting for the sign-in
        self._oauth: dict[str, Callable[[dict[str, Any]], None]] = {}  # state -> deliver, until the answer comes
        self._oauth_lock = threading.Lock()

    def wait(self, state: str, deliver: Callable[[dict[str, Any]], None]) -> None:
        """Ask the page to relay what the OAuth callback gets for ``state`` (``Frontend.await_oauth`` checked both)."""
        with self._oauth_lock:
            self._oauth[state] = deliver
        self._send_now({"op": "oauth_wait", "state": state})

    def waiting(self) -> list[str]:
        """The states still waiting (a reloaded page does not know them yet)."""
        with self._oauth_lock:
            return list(self._oauth)

    def clear(self) -> None:
        """Forget every waiting sign-in (the comm closes): none is delivered."""
        with self._oauth_lock:
            self._oauth.clear()

    def cancel(self, state: str) -> None:
        """Stop waiting for ``state`` (timed out, cancelled): ``deliver`` will not be called."""
        with self._oauth_lock:
            known = self._oauth.pop(state, None) is not None
        if known:
            self._send_now({"op": "oauth_cancel", "state": state})

    def deliver(self, data: dict[str, Any]) -> None:
        """The page relayed a callback (``{"op": "oauth", ...}``): handed to its ``deliver``, once."""
        state = data.get("state")
        if not isinstance(state, str):
            return
        with self._oauth_lock:
            deliver = self._oauth.pop(state, None)  # once: every connected page may relay it
        if deliver is None:
            return
        answer = {
            "state": state,
            **{name: data[name] if isinstance(data.get(name), str) else None for name in OAUTH_FIELDS},
        }
        try:
            deliver(answer)
        except Exception as exc:  # noqa: BLE001 - the comm handler must survive the caller's bug
            print(
                f"mcp-notebook: the OAuth callback could not be handed over: {type(exc).__name__}", file=sys.__stderr__
            )
