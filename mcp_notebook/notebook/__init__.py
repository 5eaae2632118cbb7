"""The notebook side: everything that draws in a cell or talks to the page, plugged into a Session.

``views`` (``NotebookViews``, the ``session.views.Views`` the magics hand their session; ``attach_page``),
``display`` (what a cell shows as its value; the escaped rich rendering is in ``style``, ``text_budget``,
``structured_view``, ``media``, ``repeats``, ``result_view``, ``flow_report`` and ``table``), ``live_view`` (a flow's live
area and the one-click panels), ``review`` (sampling review), ``consent`` (a record or a project
server shown whole before it runs), ``sign_in_view``, ``task_board``, ``frontend`` (the labextension's
comm: a ``session.page.Page`` that writes records into the notebook; with ``report_queue``,
``oauth_relay`` and ``page_probes``), ``apps`` (the MCP Apps host),
``watching`` (``%mcp watch``), ``listing`` and ``safe_markdown``. It may import every floor below.
"""
