"""``SignIns``: how a session's connections sign in (OAuth), and where a person is asked to.

A connection whose server answers 401 signs in through the SDK's OAuth provider (``auth.sdk_provider``).
What the session decides: the redirect URI (the Jupyter server's callback when the page reported its
base URL, else the kernel's loopback catcher), where the sign-in is shown (the cell of an interactive
call or connect; a script's browser; nowhere in a headless kernel run, which says to sign in once
interactively), and which waiting sign-in a pasted-back address completes. The panel itself is the
flow's view (``notebook.sign_in_view`` through ``LiveView.show_sign_in``): nothing here draws.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..auth.sdk_provider import OAuthOptions, build_provider
from ..auth.sign_in import CALLBACK_PATH, LoopbackCatcher, SignIn, SignInRequest, SignInUnavailable
from ..errors import SessionError
from ..flows.ui import ShowsSignIn

if TYPE_CHECKING:
    from ..flows.flow import Flow
    from ..wire.connection import Connection
    from .session import Session

__all__ = ["SignIns"]


class SignIns:
    """The sign-ins of one session's connections (``session.sign_ins``)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._catcher: LoopbackCatcher | None = None  # the loopback way back from a sign-in, started on first need
        self._sign_ins: weakref.WeakSet[SignIn] = weakref.WeakSet()  # of open connections, for complete
        self.open_browser: Callable[[str], object] | None = (
            None  # without a kernel: how a sign-in page opens (webbrowser.open)
        )

    def close(self) -> None:
        """Stop the loopback catcher, if one was started."""
        if self._catcher is not None:
            self._catcher.close()
            self._catcher = None

    def page_first(self, interactive: bool) -> None:
        """Before a connection that may sign in opens: let the page answer the hello first (bounded).

        The redirect URI is chosen when the connection opens (``setup``): the Jupyter
        server's callback when the page reported its base URL, else the kernel's loopback address,
        which a remote kernel's or JupyterHub user's browser cannot reach. In the cell that loaded
        the extension the page has not answered yet; its answer is seen while this (main) thread
        waits (``Frontend.wait_for_page``). Only where a page can answer: an interactive cell whose
        hello is still unanswered; a headless run or a page that answered never waits.
        """
        if interactive:
            self.session.frontend.wait_for_page()

    def setup(self, conn: Connection) -> tuple[SignIn, Any]:
        """The SDK's OAuth provider for ``conn`` and the ``SignIn`` it asks through (loop thread, at open)."""
        page = self.session.frontend.page_url
        redirect = f"{page}{CALLBACK_PATH}" if page else self._loopback().redirect_uri
        sign_in = SignIn(
            conn.name,
            conn.target.url,
            redirect,
            lambda request, deliver: self._present(conn, request, deliver),
            float(self.session.settings.sign_in_timeout),
            device=str(self.session.settings.device_sign_in),
            relayed=bool(page),
        )
        sign_in.after_success = lambda: setattr(conn.target, "signed_in", True)  # saved records say it needs sign-in
        self._sign_ins.add(sign_in)
        options = conn.target.oauth or OAuthOptions()
        provider = build_provider(
            conn.target.url, options, self.session.vault, sign_in, client_name=self.session.settings.oauth_client_name,
            client_metadata_url=self.session.settings.oauth_client_metadata_url, on_failure=conn.note_auth_failure,
        )  # fmt: skip
        return sign_in, provider

    def complete(self, address: str) -> str:
        """Finish a waiting sign-in with the address the browser was sent back to (paste-back without a panel).

        Returns the connection's name. The answer goes to the sign-in whose state it carries, or to the
        only one waiting (whose check then refuses a foreign state, saying so).
        """
        from ..auth.sign_in import parse_redirect

        answer = parse_redirect(address)
        waiting = [s for s in self._sign_ins if s.pending is not None]
        target = next((s for s in waiting if s.pending is not None and s.pending.state == answer["state"]), None)
        if target is None and len(waiting) == 1:
            target = waiting[0]
        if target is None:
            raise SessionError(
                "no sign-in is waiting for that address"
                if not waiting
                else "several sign-ins are waiting and that address belongs to none of them",
                kind="bad_input",
            )
        target.deliver(answer)
        return target.server

    def _loopback(self) -> LoopbackCatcher:
        if self._catcher is None:
            self._catcher = LoopbackCatcher()
        return self._catcher

    def _present(self, conn: Connection, request: SignInRequest, deliver: Callable[[dict[str, Any]], None]) -> None:
        """Show a sign-in where a person can act on it, and open every way back (loop thread).

        Where: the cell of an interactive call on that connection; the cell of an interactive
        connect (which returns, showing it); a terminal or script without a kernel (the browser is
        opened and the loopback catcher listens); nowhere in a headless kernel run (an error that
        says to sign in once interactively).
        """
        if conn.state == "connecting" and conn.auth_failure is not None:
            raise conn.auth_failure  # this open's sign-in already failed: the handshake's retry must not ask again, unseen
        shown_in = next(  # the live area of a flow waiting for it
            (
                f.view
                for f in cast("list[Flow]", conn.flows)
                if not f.finished and f.view.interactive and isinstance(f.view, ShowsSignIn)
            ),
            None,
        )
        # IPython's shell has a ``kernel`` only under ipykernel (not in a terminal or a script)
        kernel = self.session.shell is not None and getattr(self.session.shell, "kernel", None) is not None
        connecting_here = conn.return_on_sign_in and conn.state == "connecting"  # the connect cell shows it
        if shown_in is None and not connecting_here and kernel:
            raise SignInUnavailable(
                "Sign in once from an interactive notebook (JupyterLab or Notebook 7): the token is kept for you, and headless runs reuse it."
            )
        if self._catcher is not None and request.redirect_uri == self._catcher.redirect_uri:
            self._catcher.await_state(request.state, deliver)
        frontend = self.session.frontend
        catcher = self._catcher
        relayed = request.redirect_uri and (
            catcher is None or request.redirect_uri != catcher.redirect_uri
        )  # the page's callback
        if relayed and frontend.await_oauth(request.state, deliver):
            if conn.sign_in is not None:  # answered, timed out or cancelled: the page stops waiting for it

                def stop_waiting(_error: str | None, state: str = request.state) -> None:
                    frontend.cancel_oauth(state)

                conn.sign_in.on_settled.append(stop_waiting)
        if shown_in is not None:
            shown_in.show_sign_in(request, conn.sign_in)
        elif not kernel and not connecting_here:
            import webbrowser

            at = f" at {request.issuer}" if request.issuer else ""
            code = f" and enter the code {request.device.user_code}" if request.device else ""
            from ..core.urls import visible

            if request.notice:
                self.session.tell(request.notice)
            self.session.tell(f"Sign in to {conn.name}{at}: open {visible(request.url)}{code}")
            (self.open_browser or webbrowser.open)(request.url)
        conn.sign_in_shown()
