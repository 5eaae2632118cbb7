"""The wire: connections to MCP servers and what travels on them, with no flow, form or page in sight.

``connection`` (``Target``, ``Connection``: an owner task holding ``mcp.Client`` open; ``Registry``),
``routing`` (which call's POST stream carried a 2025 back-channel question), ``roots``, ``tasks`` and
``task_handles`` (calls as tasks, both generations; the task ids kept in the user's 0600 table),
``apps_ext`` (the MCP Apps advertisement, a tool's App, the CSP checks), ``configs`` and
``config_trust`` (reading the MCP config files users have, and which of them may be read). It may
import ``core``, ``auth`` and ``errors``; everything above talks to servers through it.
"""
