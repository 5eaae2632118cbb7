"""Tool arguments that are secrets: never saved in a notebook, never shown in a trace.

A saved record and a trace are written into the notebook, which gets shared and committed. An
argument is a secret when the tool's input schema says so (``format: password``, ``writeOnly``)
or when its name looks like one (password, token, secret, api_key, ...). Such arguments are left
out of the record (which names them under ``withheld`` so a resume can ask for them again) and
masked in the trace; the call itself sends them as given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

__all__ = ["MASK", "is_secret_name", "masked", "secret_arguments"]

MASK = "•••"

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SECRET_WORDS = frozenset(
    {"password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "credential", "credentials",
     "auth", "authorization", "bearer", "cookie", "pin", "otp", "ssn", "privatekey"}
)  # fmt: skip
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"), ("session", "id")})


def is_secret_name(name: str) -> bool:
    """Whether an argument's name looks like it holds a secret.

    The name is split into words (``apiKey``, ``API_KEY``, ``api-key`` all give api, key) so that
    ``max_tokens``, ``tokenizer`` or ``shipping`` are not taken for secrets.
    """
    words = [w.lower() for w in _WORD.findall(name)]
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in pairwise(words))


def secret_arguments(arguments: Mapping[str, Any], schema: Mapping[str, Any] | None = None) -> frozenset[str]:
    """The names among ``arguments`` (and the schema's properties) that are secrets."""
    names = {n for n in arguments if is_secret_name(n)}
    properties = (schema or {}).get("properties")
    if isinstance(properties, Mapping):
        for name, prop in properties.items():
            if not isinstance(prop, Mapping):
                continue
            if prop.get("format") == "password" or prop.get("writeOnly") is True or is_secret_name(str(name)):
                names.add(str(name))
    return frozenset(names)


def masked(arguments: Mapping[str, Any], secrets: frozenset[str]) -> dict[str, Any]:
    """``arguments`` with the value of every secret replaced by ``MASK``."""
    return {k: (MASK if k in secrets else v) for k, v in arguments.items()}
