"""Elicitation forms: a server's requested schema as fields (``model``) and as ipywidgets (``widgets``).

``model`` is the whole of what a form means without widgets (fields, presets, typing, ``jsonschema``
checks; ``Question``, one elicitation of a round): headless runs answer through it, so both send
identical content for identical values. ``widgets`` draws it (and URL mode) for a person. It may
import ``core`` and ``errors``; only the notebook side and the App host's forms use ``widgets``
(``import-linter`` keeps the engine off it).
"""
