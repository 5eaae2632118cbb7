"""Flows: one request driven round by round, and the records that let a reopened notebook continue it.

``flow`` (``Flow``: tools/call, prompts/get or resources/read over both protocol generations, its
trace and its record), ``answering`` (``Answerer``: each question to the form or presets, the model
router or the roots), ``ui`` (``FlowUI``, the one protocol a flow's view implements, and
``HeadlessUI``), ``store`` (``SavedFlow``, the record's one schema, and ``Store``), ``trust`` (records
signed with the user's Jupyter notary secret; a record shown whole). It may import ``core``,
``auth``, ``wire``, ``sampling``, ``forms`` (the model, not the widgets) and ``errors``.
"""
