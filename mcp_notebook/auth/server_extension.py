"""The Jupyter Server half of OAuth sign-in: where the authorization server sends the browser back.

An MCP server that wants OAuth makes the kernel send the user to its authorization server, which
redirects the browser to ``{base_url}mcp-notebook/oauth/callback?code=...&state=...``. That URL
lives on the Jupyter server, under its base URL (so it works behind JupyterHub too), and is reached
with the user's Jupyter cookie. The kernel may run elsewhere and knows neither the server's URL
nor its token, so the code travels back through the browser:

* the callback page posts ``{state, code, iss, error, error_description}`` on the
  ``BroadcastChannel("mcp-notebook-oauth")``; the labextension hears it (same origin) and relays
  it to the kernel that waits for that ``state``, over the notebook's comm;
* the handler also keeps the entry in memory (at most ``MAX_ENTRIES``, each for ``TTL`` seconds),
  and the labextension polls ``{base_url}mcp-notebook/oauth/result?state=...`` while a kernel
  waits, in case the broadcast was lost (the callback opened in another browser window, a
  reloaded page). The entry is handed out once.

Both handlers require Jupyter's own authentication. Enabled by
``jupyter-config/jupyter_server_config.d/mcp_notebook.json`` (installed into
``etc/jupyter/jupyter_server_config.d/``). The code is never logged; Jupyter's request log
already hides ``code`` and ``state`` query values, and this module asks for that explicitly.
"""

from __future__ import annotations

import html
import json
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web

__all__ = ["CALLBACK_PATH", "CHANNEL", "RESULT_PATH", "CallbackResults", "callback_page"]

CALLBACK_PATH = "mcp-notebook/oauth/callback"
RESULT_PATH = "mcp-notebook/oauth/result"
CHANNEL = "mcp-notebook-oauth"
"""The ``BroadcastChannel`` the callback page posts on; the labextension listens there."""
STATE_RE = re.compile(r"^[A-Za-z0-9_-]{8,256}$")
FIELDS = ("code", "iss", "error", "error_description")
MAX_ENTRIES = 200
TTL = 15 * 60.0
TITLE = "mcp-notebook sign-in"


class CallbackResults:
    """``state -> {code, iss, error, error_description}``, bounded in number and age; each taken once."""

    def __init__(
        self, max_entries: int = MAX_ENTRIES, ttl: float = TTL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_entries, self.ttl, self.clock = max_entries, ttl, clock
        self._entries: OrderedDict[str, tuple[float, dict[str, str | None]]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._entries)

    def put(self, state: str, entry: dict[str, str | None]) -> None:
        """Keep ``entry`` for ``state`` (a later callback for the same state replaces it); the oldest go first."""
        with self._lock:
            self._expire()
            self._entries.pop(state, None)
            self._entries[state] = (self.clock() + self.ttl, dict(entry))
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def take(self, state: str) -> dict[str, str | None] | None:
        """The entry for ``state``, removed; ``None`` when unknown or expired."""
        with self._lock:
            self._expire()
            kept = self._entries.pop(state, None)
        return None if kept is None else kept[1]

    def _expire(self) -> None:
        now = self.clock()
        while self._entries:
            _state, (deadline, _entry) = next(iter(self._entries.items()))
            if deadline > now:
                break
            self._entries.popitem(last=False)


def _script_json(value: Any) -> str:
    """JSON that can sit inside an inline ``<script>``: no ``</script>``, no HTML, no line separators."""
    text = json.dumps(value)  # ensure_ascii: every non-ASCII character is already a \\u escape
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def _outcome(entry: dict[str, str | None]) -> str:
    error, description = entry.get("error"), entry.get("error_description")
    if error:
        return (
            f"Sign-in did not complete: {error} ({description})"
            if description
            else f"Sign-in did not complete: {error}"
        )
    if not entry.get("code"):
        return "Sign-in did not complete: the authorization server sent neither a code nor an error."
    return "Signed in. You can close this tab and go back to the notebook."


def callback_page(state: str, entry: dict[str, str | None], nonce: str) -> str:
    """The page the browser lands on: what happened, in words, and the relay to the notebook.

    Every value from the authorization server reaches the page escaped: as text through
    ``html.escape``, inside the script as JSON with ``<``, ``>``, ``&`` and U+2028/2029 escaped.
    """
    message = {"state": state, **{name: entry.get(name) for name in FIELDS}}
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{TITLE}</title>
<style nonce="{nonce}">body {{ font-family: system-ui, sans-serif; margin: 3em auto; max-width: 40em; padding: 0 1em; }}</style>
</head>
<body>
<h1>{TITLE}</h1>
<p id="outcome">{html.escape(_outcome(entry))}</p>
<script nonce="{nonce}">
(function () {{
  var message = {_script_json(message)};
  try {{
    var channel = new BroadcastChannel({_script_json(CHANNEL)});
    channel.postMessage(message);
    channel.close();
  }} catch (e) {{}}
  setTimeout(function () {{ try {{ window.close(); }} catch (e) {{}} }}, 300);
}})();
</script>
</body>
</html>
"""


def _plain(handler: web.RequestHandler, status: int, text: str) -> None:
    handler.set_status(status)
    handler.set_header("Content-Type", "text/plain; charset=utf-8")
    handler.finish(text + "\n")


class _SignInAnswers(JupyterHandler):
    """What both routes share: the results table, and answers that no cache or referrer keeps."""

    results: CallbackResults

    def initialize(self, results: CallbackResults) -> None:
        self.results = results

    def set_default_headers(self) -> None:
        super().set_default_headers()
        self.set_header("Cache-Control", "no-store")
        self.set_header("Referrer-Policy", "no-referrer")

    def compute_etag(self) -> None:
        return None  # never revalidated: nothing here is for a cache


class CallbackHandler(_SignInAnswers):
    """``GET {base_url}mcp-notebook/oauth/callback``: where the authorization server sends the browser back."""

    @web.authenticated
    def get(self) -> None:
        state = self.get_query_argument("state", None, strip=False)
        if state is None or not STATE_RE.match(state):
            _plain(
                self,
                400,
                "mcp-notebook sign-in: this callback carries no valid state (8 to 256 letters, digits, '-' or '_').",
            )
            return
        entry = {name: self.get_query_argument(name, None, strip=False) for name in FIELDS}
        self.results.put(state, entry)
        nonce = secrets.token_urlsafe(16)
        # a second policy, enforced together with Jupyter's: this page runs its one script, loads nothing
        self.add_header(
            "Content-Security-Policy",
            f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        )
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(callback_page(state, entry, nonce))


class ResultHandler(_SignInAnswers, APIHandler):
    """``GET {base_url}mcp-notebook/oauth/result?state=S``: the callback's entry for S, once (the relay's fallback)."""

    _track_activity = False  # the front end polls this while a kernel waits; that is not the user's activity

    @web.authenticated
    def get(self) -> None:
        state = self.get_query_argument("state", None, strip=False)
        self.set_header("Content-Type", "application/json")
        entry = self.results.take(state) if state is not None and STATE_RE.match(state) else None
        if state is None or entry is None:
            self.set_status(404)
            self.finish(json.dumps({"error": "unknown state"}))
            return
        self.finish(json.dumps({"state": state, **entry}))


def _quiet_polls(log_function: Callable[[Any], None]) -> Callable[[Any], None]:
    """Jupyter's request log, with the relay's "not yet" polls (404 every 2 s while a kernel waits) at debug level."""

    def log_request(handler: Any) -> None:
        if isinstance(handler, ResultHandler) and handler.get_status() == 404:
            handler.log.debug("404 GET %s: no sign-in result for that state yet", handler.request.path)
            return
        log_function(handler)

    return log_request


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Add the callback and result handlers under the server's base URL."""
    web_app = serverapp.web_app
    settings = web_app.settings
    base_url = settings["base_url"]
    results = CallbackResults()
    settings["mcp_notebook_oauth_results"] = results
    # the request log hides these query values (the default list has them today; say so anyway)
    settings["extra_log_scrub_param_keys"] = [*settings.get("extra_log_scrub_param_keys", []), "code", "state"]
    if callable(settings.get("log_function")):
        settings["log_function"] = _quiet_polls(settings["log_function"])
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base_url, CALLBACK_PATH), CallbackHandler, {"results": results}),
            (url_path_join(base_url, RESULT_PATH), ResultHandler, {"results": results}),
        ],
    )
    serverapp.log.info("mcp-notebook: OAuth sign-in callback at %s", url_path_join(base_url, CALLBACK_PATH))
