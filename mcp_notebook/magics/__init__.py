"""The ``%mcp`` face: parse what the user typed, call the Session, display what comes back.

``magics`` (``MCPMagics``, the router), ``commands`` (one module per subcommand, its parser and its
handler, and ``COMMANDS``, the registry), ``command`` (what a subcommand is, and the ``Magic`` its
handler sees), ``parser`` (the argparse dialect and the flags several share), ``grammar`` (every
parser gathered, the summary, ``%mcp?``), ``hints``
(the ``%mcp`` words of the engine's errors), ``line_expand`` (a ``%mcp`` line as typed: comments,
``{expr}``), ``args`` (tool arguments from ``key=value``, ``--json`` or a cell body), ``listings``
(the rows of ``%mcp tools`` / ``prompts`` / ``resources``), ``completion`` (Tab) and ``cell_await``
(a call ends its cell). The top floor: it may import everything, and nothing imports it but the
package's ``load_ipython_extension``.
"""
