"""A tool over data: ``mcp_notebook.map`` / ``%mcp map`` runs one call per row of a list, a DataFrame or Dask partitions.

``map`` (the row engine on the session's loop, retries, the progress and failure table, results as
values), ``questions`` (``MapQuestions``: one ``FlowUI`` for every row's questions, an answer "for
every remaining row") and ``dask`` (the worker plugin each Dask worker keeps its sessions on). It
may import the floors below, the notebook side included (its progress is a widget).
"""
