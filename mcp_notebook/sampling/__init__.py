"""Sampling: which configured model answers a server's ``sampling/createMessage``, and how.

``router`` (``ModelConfig``, ``ModelRouter``: hints, priorities, the default; ``answer_sampling``:
route, review, answer, one request end to end), ``providers`` (openai, anthropic, callable, human,
echo) and ``reviewer`` (the protocols naming what answering needs of the asking flow and of the
person who reviews, so this floor imports no flow). It may import ``core`` and ``errors``; a
sibling of ``forms``, which it does not use.
"""
