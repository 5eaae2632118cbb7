"""The sign-in panel in a cell: "Sign in to SERVER at ISSUER", the authorization URL, a way back.

The user's click on the link opens the authorization server's page (the kernel never opens
it). The answer comes back by itself through the Jupyter Server extension's callback page (the
labextension relays it to the kernel); where that cannot happen (a front end without the
extension, a remote kernel's loopback address) the user pastes the address the browser was sent
to. Everything shown from the server (issuer, URL) is escaped; the URL's host is highlighted as
in URL-mode forms. The code never appears in the panel or the notebook.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as w
from traitlets import Unicode

from ..auth.sign_in import SignIn, SignInRequest, parse_redirect
from ..forms.widgets import in_send_order, url_html

__all__ = ["SignInPanel"]


class _AddressField(w.Text):
    """A text field whose typed value the kernel does not echo back (ipywidgets 8 echoes by default):
    the pasted address holds the authorization code, which must not travel further than the kernel."""

    value = Unicode("", help="the pasted address").tag(sync=True, echo_update=False)


class SignInPanel:
    """Widgets for one sign-in; ``settled(error)`` replaces them with the outcome (any thread via ``call``)."""

    def __init__(self, request: SignInRequest, sign_in: SignIn, call: Callable[..., Any] | None = None) -> None:
        self.request, self.sign_in = request, sign_in
        self._call = call or (lambda fn, *a: fn(*a))
        at = f" at <b>{html.escape(request.issuer)}</b>" if request.issuer else ""
        self.header = w.HTML(
            f'<div class="mcp-sign-in-title"><b>Sign in to {html.escape(request.server)}</b>{at}</div>'
        )
        cancel = w.Button(description="Cancel", icon="times")
        cancel.add_class("mcp-cancel")
        cancel.on_click(lambda _b: sign_in.cancel())
        self.error = w.HTML("")
        if request.notice:  # why this sign-in and not the one tried first (a device grant on another host)
            self.header.value += f'<div class="mcp-sign-in-notice" style="color:color-mix(in srgb, var(--jp-warn-color0, #e65100) 70%, var(--jp-ui-font-color0, #000))">⚠ {html.escape(request.notice)}</div>'
        sign_in.on_settled.append(lambda error: self._call(self.settled, error))
        if request.device is not None:  # the device grant: a code typed at the server's page, nothing to paste back
            in_send_order(cancel)
            self.widget = self._device_panel(request, cancel)
            return
        self.link = w.HTML(
            url_html(request.url, note="(opens the sign-in page; you come back here by yourself)", label="Sign in ↗")
        )
        self.paste = _AddressField(
            placeholder="http://…/mcp-notebook/oauth/callback?code=…&state=…",
            description="Address",
            layout=w.Layout(width="380px"),
            continuous_update=False,  # one update when the field is left: see forms/widgets.py, _make_input
        )
        self.paste.add_class("mcp-sign-in-paste")
        use = w.Button(description="Use address", icon="check", layout=w.Layout(width="auto", min_width="130px"))
        self.note = w.HTML(
            "<small>If the page you are sent back to does not return here by itself (another browser, a remote kernel), "
            "paste its whole address:</small>"
        )
        use.on_click(lambda _b: self._use())
        self.widget = w.VBox([self.header, self.link, self.note, w.HBox([self.paste, use, cancel]), self.error])
        self.widget.add_class("mcp-sign-in")
        self.widget.add_class("mcp-notebook-form")  # the labextension marks it stale when its kernel restarts
        in_send_order(self.paste, use, cancel)  # the pasted address, then its button: handled in that order

    def _device_panel(self, request: SignInRequest, cancel: w.Button) -> w.VBox:
        """The code to type and where (the address the server named, read as the browser will open it)."""
        assert request.device is not None
        minutes = max(1, round(request.device.expires_in / 60))
        self.code = w.HTML(
            f'<div class="mcp-device-code">Enter this code there: <b style="font-family:var(--jp-code-font-family,monospace);'
            f'font-size:1.3em;letter-spacing:0.1em">{html.escape(request.device.user_code)}</b> '
            f"<small>(within {minutes} min; this cell continues by itself once you have approved)</small></div>"
        )
        self.link = w.HTML(
            url_html(request.url, note="(the authorization server's page; nothing comes back to the notebook but the sign-in)", label="Open sign-in page ↗")
        )  # fmt: skip
        box = w.VBox([self.header, self.link, self.code, w.HBox([cancel]), self.error])
        box.add_class("mcp-sign-in")
        box.add_class("mcp-sign-in-device")
        box.add_class("mcp-notebook-form")
        return box

    def _use(self) -> None:
        try:
            answer = parse_redirect(self.paste.value)
        except ValueError as exc:
            self.error.value = f'<span class="mcp-error">⚠ {html.escape(str(exc))}</span>'
            return
        self.paste.value = ""  # the code does not stay in the widget's state
        self.error.value = ""
        self.sign_in.deliver(answer)

    def settled(self, error: str | None) -> None:
        """Replace the panel with the outcome (the code and URL go away with it)."""
        server = html.escape(self.request.server)
        text = (
            f"✔ Signed in to <b>{server}</b>"
            if error is None
            else f"Sign-in to <b>{server}</b> did not complete ({html.escape(error)})"
        )
        self.widget.children = [w.HTML(f'<div class="mcp-sign-in-done">{text}</div>')]
