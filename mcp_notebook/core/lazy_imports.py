"""``jsonschema`` imported in milliseconds: its optional IRI checker is loaded when an IRI is first checked.

``jsonschema`` (which validates a form's answers and a call's arguments, and which ``nbformat``
imports to read a notebook) registers its ``iri`` / ``iri-reference`` format checkers at import
time with ``from rfc3987_syntax import is_valid_syntax``, when that package is installed (Jupyter
installs it: ``jsonschema[format-nongpl]``). Importing ``rfc3987_syntax`` builds 39 Lark parsers
of the RFC 3987 grammar, about 1.8 s on this machine, in every kernel: it was most of the first
call's wait in a fresh kernel (bench/first_call.py P10) and of the first ``%mcp flows`` on a
notebook holding saved records (bench/store.py S3), although no IRI is checked there.

``defer_rfc3987_syntax()`` (called by ``%load_ext`` and by every ``Session``) puts a stand-in for the package in ``sys.modules`` before ``jsonschema``
is imported: its ``is_valid_syntax`` (the one name ``jsonschema`` imports) and every other name
load the real ``rfc3987_syntax.syntax_helpers`` on first use and answer exactly as it does, so
``jsonschema`` registers the same checkers and they give the same answers, later. Nothing is done
when ``jsonschema`` or ``rfc3987_syntax`` is already imported (the user's own import came first)
or the package is not installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

__all__ = ["defer_rfc3987_syntax"]

PACKAGE = "rfc3987_syntax"
REAL = "rfc3987_syntax.syntax_helpers"  # what the package's __init__ re-exports with ``import *``


def _real() -> types.ModuleType:
    return importlib.import_module(REAL)


def is_valid_syntax(term: str, value: str) -> bool:
    """``rfc3987_syntax.is_valid_syntax``, its parsers built on this first use."""
    result: bool = _real().is_valid_syntax(term, value)
    return result


def _dir() -> list[str]:
    return sorted({*dir(_real()), "__path__", "__spec__"})


def _getattr(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_real(), name)


def defer_rfc3987_syntax() -> bool:
    """Stand in for ``rfc3987_syntax`` until it is used (see the module docstring); ``True`` when it did."""
    if PACKAGE in sys.modules or "jsonschema" in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return False
    if spec is None or spec.submodule_search_locations is None:
        return False
    try:  # without its parser library the real import fails, and jsonschema registers no IRI checker: keep that
        if importlib.util.find_spec("lark") is None:
            return False
    except (ImportError, ValueError):
        return False
    stand_in = types.ModuleType(PACKAGE, "rfc3987_syntax, loaded on first use (mcp_notebook.core.lazy_imports)")
    stand_in.__spec__ = spec
    stand_in.__path__ = list(spec.submodule_search_locations)  # the real submodules import under it
    stand_in.__file__ = spec.origin
    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    stand_in.__getattr__ = _getattr  # type: ignore[method-assign]
    stand_in.__dir__ = _dir  # type: ignore[method-assign]
    sys.modules[PACKAGE] = stand_in
    return True
