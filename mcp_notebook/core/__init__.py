"""The ground floor: what every other part of mcp-notebook may use, and which uses none of them.

The one door between the kernel's thread and a session's loop (``threads``: ``Runtime``,
``to_loop``, ``KernelLoop``, ``Reply``), plain text for the page (``text``: escaping, one-line
cuts, content blocks as text), the size bounds of one flow (``limits``), secret-looking arguments
(``redact``), URLs as browsers read them (``urls``), JSON a person typed read without ``NaN`` or
``Infinity`` (``json_value``) and 0600 tables in the user's Jupyter data folder (``private_table``).
It imports only the standard library and third-party packages, never
another part of ``mcp_notebook`` (checked by ``import-linter`` in ``make test``). ``text`` also
holds ``mcp_line``, the one builder of every ``%mcp`` line we suggest, each word encoded for the
line's grammar (``line_word``).
"""
