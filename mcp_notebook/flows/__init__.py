"""Flows: one request driven round by round, and the records that let a reopened notebook continue it.

``flow`` (``Flow``: tools/call, prompts/get or resources/read over both protocol generations; the
state machine), ``options`` (``FlowOptions``, all a flow is told at construction, and the ``AppHost``
protocol), ``kinds`` (``Method``, ``FlowState``, ``Round``, ``Progress``), ``asking`` (a flow's
questions, both generations), ``failure`` (how a flow's failure is told; whether its record stays),
``task_follow`` (``TaskFollowing``, the part a flow holds to follow a task), ``trace`` (what a trace
and a record say of each message; a flow's trace as events),
``answering`` (``Answerer``: each question to the form or presets, the model router or the roots),
``ui`` (``FlowUI``, the one protocol a flow's view implements, and ``HeadlessUI``), ``record``
(``SavedFlow``, the record's one schema; checks; ``.ipynb`` reading), ``store`` (``Store``), ``trust``
(records signed with the user's Jupyter notary secret; a record named and shown whole). It may
import ``core``, ``auth``, ``wire``, ``sampling``, ``forms`` (the model, not the widgets) and ``errors``.
"""
