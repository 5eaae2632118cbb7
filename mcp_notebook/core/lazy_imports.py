"""``jsonschema`` imported in milliseconds: its optional format checkers' libraries load when first used.

``jsonschema`` (which validates a form's answers and a call's arguments) registers its format
checkers at import time with ``from LIBRARY import FUNCTION`` for each optional library that is
installed (Jupyter installs them: ``jsonschema[format-nongpl]``). Three of them build their
grammar when imported, in every kernel, although a call's arguments rarely have a ``format``:

* ``rfc3987_syntax`` (``iri``, ``iri-reference``) builds 39 Lark parsers of the RFC 3987 grammar,
  about 1.8 s on this machine: it was most of the first call's wait in a fresh kernel
  (bench/first_call.py P10) and of the first ``%mcp flows`` (bench/store.py S3);
* ``rfc3986_validator`` (``uri``, ``uri-reference``) compiles one very large regular expression,
  15 ms alone and about 0.1 s in a kernel that has imported the rest of a first call (the compile
  makes garbage collections walk a heap that is large by then);
* ``rfc3339_validator`` (``date-time``) a smaller one, with ``six``.

``defer_format_libraries()`` (called by every ``Session``, so by ``%load_ext``, whose magics make
one before anything imports ``jsonschema``) puts a stand-in for each in ``sys.modules`` before
``jsonschema`` is imported. A stand-in's function (the one name ``jsonschema`` imports) and every
other name load the real module on first use and answer exactly as it does; ``jsonschema`` registers the same checkers and they give the same answers, later.

The stand-in stays in ``sys.modules`` for good, so the user's own imports after ``%load_ext`` see
one consistent module: its function is the same object before and after first use (pickle, which
looks a function up by module and name, finds that very object; a real module put in its place
once made such a function unpicklable), every other name is the real module's, and
``from LIBRARY import *`` binds what the real module exports (its ``__all__``, or else its public
names, as Python's own rule for ``import *`` reads them). ``__version__``, ``__author__`` and
``__email__`` are forwarded too. Nothing is done when ``jsonschema`` or the library is already imported (the user's own
import came first) or the library is not installed, or cannot import (``rfc3987_syntax`` without
``lark``: then ``jsonschema`` registers no IRI checker, and neither do we).

Why not leave it to the warm-up (``magics/warm.py``), which imports ``jsonschema`` while the kernel
is idle after ``%load_ext``: measured without the stand-ins (bench/first_call.py, five fresh kernels
a side), the first call typed 3 s after ``%load_ext`` took 0.61 s instead of 0.10 s (target 0.3 s:
the warm-up's ``jsonschema`` import was still running when it came), and the first call in
``%load_ext``'s own cell 2.4 s instead of 0.9 s. docs/architecture.md, "Start-up", says which of the
three means (imports on first use, the warm-up, these stand-ins) holds which figure.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFERRED", "defer_format_libraries"]


@dataclass(frozen=True)
class Deferred:
    """A library ``jsonschema`` imports ``function`` from; ``real`` is the module that defines it."""

    package: str
    function: str
    real: str | None = None  # a submodule the package re-exports (None: the module itself)
    needs: tuple[str, ...] = ()  # without these the real import fails: no stand-in then


DEFERRED: tuple[Deferred, ...] = (
    Deferred("rfc3987_syntax", "is_valid_syntax", real="rfc3987_syntax.syntax_helpers", needs=("lark",)),
    Deferred("rfc3986_validator", "validate_rfc3986"),
    Deferred("rfc3339_validator", "validate_rfc3339", needs=("six",)),
)

_LOCK = threading.Lock()  # two Sessions made at once put one stand-in in place
FORWARDED_DUNDERS = frozenset({"__version__", "__author__", "__email__"})  # the module's own, read as data


def _found(name: str) -> importlib.machinery.ModuleSpec | None:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


class _StandIn:
    """What a stand-in module forwards to: the real module, loaded on first use."""

    def __init__(self, deferred: Deferred, spec: importlib.machinery.ModuleSpec, module: types.ModuleType) -> None:
        self.deferred, self.spec, self.module = deferred, spec, module
        self._real: types.ModuleType | None = None
        self._lock = threading.RLock()  # a first use from the loop thread and the kernel's at once load it once

    def real(self) -> types.ModuleType:
        with self._lock:  # one per library: a date-time check does not wait for the IRI parsers
            if self._real is None:
                if self.deferred.real is not None:  # a package: its submodules import under the stand-in
                    self._real = importlib.import_module(self.deferred.real)
                else:  # one file: run it into a module of its own, reached through the stand-in
                    real = importlib.util.module_from_spec(self.spec)
                    assert self.spec.loader is not None
                    self.spec.loader.exec_module(real)
                    self._real = real
            return self._real

    def function(self) -> Callable[..., Any]:
        def forward(*args: Any, **kwargs: Any) -> Any:
            return getattr(self.real(), self.deferred.function)(*args, **kwargs)

        forward.__name__ = forward.__qualname__ = self.deferred.function
        forward.__module__ = self.deferred.package
        forward.__doc__ = f"``{self.deferred.package}.{self.deferred.function}``, loaded on this first use."
        return forward

    def getattr(self, name: str) -> Any:
        if name == "__all__":  # what ``import *`` reads first
            return self.exports()
        if name.startswith("__") and name not in FORWARDED_DUNDERS:
            raise AttributeError(name)  # the import system's and tools' probes do not load it
        return getattr(self.real(), name)

    def exports(self) -> list[str]:
        """The names ``from LIBRARY import *`` binds from the real module: its ``__all__``, or its public names.

        Without this, ``import *`` would fall back to the stand-in's own few names. For a package
        the public names include its submodules, which the import system sets on the stand-in.
        """
        real = self.real()
        declared = getattr(real, "__all__", None)
        if declared is not None:
            return list(declared)
        return sorted(n for n in {*vars(real), *vars(self.module)} if not n.startswith("_"))

    def dir(self) -> list[str]:
        extra = ["__path__", "__spec__"] if self.deferred.real is not None else ["__spec__"]
        return sorted({*dir(self.real()), *extra})


def _defer(deferred: Deferred) -> bool:
    if deferred.package in sys.modules:
        return False
    spec = _found(deferred.package)
    if spec is None or spec.loader is None or any(_found(n) is None for n in deferred.needs):
        return False
    if (deferred.real is not None) != (spec.submodule_search_locations is not None):
        return False  # not laid out as this version was: leave it to its own import
    module = types.ModuleType(
        deferred.package, f"{deferred.package}, loaded on first use (mcp_notebook.core.lazy_imports)"
    )
    module.__spec__ = spec
    module.__file__ = spec.origin
    if spec.submodule_search_locations is not None:
        module.__path__ = list(spec.submodule_search_locations)
    stand_in = _StandIn(deferred, spec, module)
    setattr(module, deferred.function, stand_in.function())
    module.__getattr__ = stand_in.getattr  # type: ignore[method-assign]
    module.__dir__ = stand_in.dir  # type: ignore[method-assign]
    sys.modules[deferred.package] = module
    return True


def defer_format_libraries() -> list[str]:
    """Stand in for the libraries of ``DEFERRED`` until used (see the module docstring); the ones it did."""
    with _LOCK:
        if "jsonschema" in sys.modules:
            return []
        return [d.package for d in DEFERRED if _defer(d)]
