"""Flows: one request driven round by round, and the records that let a reopened notebook continue it.

``flow`` (``Flow``: tools/call, prompts/get or resources/read over both protocol generations; the
state machine), ``kinds`` (``Method``, ``FlowState``, ``Round``, ``Progress``), ``task_follow`` (the
part of a flow that follows a task), ``trace`` (what a trace and a record say of each message),
``answering`` (``Answerer``: each question to the form or presets, the model router or the roots),
``ui`` (``FlowUI``, the one protocol a flow's view implements, and ``HeadlessUI``), ``record``
(``SavedFlow``, the record's one schema; checks; ``.ipynb`` reading), ``store`` (``Store``), ``trust``
(records signed with the user's Jupyter notary secret; a record named and shown whole). It may
import ``core``, ``auth``, ``wire``, ``sampling``, ``forms`` (the model, not the widgets) and ``errors``.
"""
