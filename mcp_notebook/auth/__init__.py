"""OAuth sign-in, the second floor: what a connection needs to sign in, and nothing of how it is shown.

``vault`` (per-resource tokens and registrations, 0600 in the user's Jupyter data folder, never the
notebook), ``sign_in`` (``SignIn``: the redirect and callback handling, timeout, answers from any
thread; the loopback catcher), ``sdk_provider`` (``OAuthOptions``, the SDK's OAuth providers,
subclassed only where they must be, and ``explain``).
``server_extension``: the Jupyter Server extension's callback page (``{base_url}mcp-notebook/oauth/...``).
It imports only ``core`` and ``errors``; the sign-in panel a person sees is ``notebook.sign_in_view``.
"""
