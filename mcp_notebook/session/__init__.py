"""The Session: everything one MCP client knows and the whole life of its flows, headless.

``session`` (``Session``, ``SessionSettings``, ``CallOptions``: connections, saved flows, models,
roots, notebook servers; start, offer, resume, consent, forget), ``views`` (the protocols the
notebook side implements, and ``NoViews`` for plain Python and Dask workers), ``page`` (``Page``:
where saved records go and the ``.ipynb`` a page-less session reads them from), ``from_config``
(``%mcp connect --from-config``'s session half) and ``api`` (the plain Python API). It imports no
ipywidgets and no IPython display (``import-linter`` and ``tests/test_layers.py``); the floors below
it, and ``prototype`` and ``errors``, are what it may use.
"""
