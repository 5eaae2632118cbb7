"""`mcp_notebook.core.lazy_imports`: jsonschema imports fast, and its format checks answer as before (fresh processes)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CHECKS = """
import json, sys, time
{first}
t = time.perf_counter()
import jsonschema
took = time.perf_counter() - t
loaded = {{name: name in sys.modules and "loaded on first use" not in (sys.modules[name].__doc__ or "")
          for name in ("rfc3987_syntax.syntax_helpers", "rfc3986_validator", "rfc3339_validator")}}
version = sys.modules["rfc3339_validator"].__version__  # read from the stand-in, before any use
fc = jsonschema.FormatChecker()
values = ["http://example.com/ä", "not an iri", "//host/path?q", "http://[::1", "urn:isbn:0451450523",
          "2026-12-03T15:00:00Z", "2026-13-03T15:00:00Z", "2026-12-03 15:00"]
answers = [[fc.conforms(v, f) for f in ("iri", "iri-reference", "uri", "uri-reference", "date-time")] for v in values]
import rfc3987_syntax, rfc3986_validator, rfc3339_validator
print(json.dumps({{"took": took, "loaded_at_import": loaded, "answers": answers, "version": version,
                  "helper": rfc3987_syntax.is_valid_syntax_iri("http://a/b"),
                  "uri_rule": bool(rfc3986_validator.validate_rfc3986("http://a/b", rule="URI")),
                  "stand_in_after_use": "loaded on first use" in (sys.modules["rfc3986_validator"].__doc__ or ""),
                  "email": __import__("rfc3339_validator").__email__,
                  "stand_in": "loaded on first use" in (rfc3987_syntax.__doc__ or "")}}))
"""


def run(first: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHECKS.format(first=first)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_jsonschema_imports_without_building_the_format_grammars_and_checks_as_before() -> None:
    for name in ("rfc3987_syntax", "rfc3986_validator", "rfc3339_validator"):
        pytest.importorskip(name)  # installed with Jupyter (jsonschema[format-nongpl]) and in make test's venv
    plain = run("")
    deferred = run("from mcp_notebook.session.session import Session\nSession()")
    assert all(plain["loaded_at_import"].values())
    assert not any(deferred["loaded_at_import"].values())
    assert deferred["answers"] == plain["answers"]  # the same checkers, the same answers
    assert deferred["answers"][0] == [True, True, False, False, False]  # an IRI is not a URI (non-ASCII)
    assert deferred["answers"][1] == [False] * 5  # a space: not even a reference
    assert deferred["answers"][2] == [False, True, False, True, False]  # a network-path reference
    assert deferred["answers"][4] == [True, True, True, True, False]
    assert [a[4] for a in deferred["answers"][5:]] == [True, False, False]  # date-time: month 13, no "T"
    assert deferred["helper"] is True and deferred["uri_rule"] is True and deferred["stand_in"] is True
    assert deferred["stand_in_after_use"] is True  # it stays: the user's imports see one module (see below)
    assert (deferred["version"], deferred["email"]) == (plain["version"], plain["email"])
    assert deferred["took"] < plain["took"] / 3  # about 0.1 s instead of about 2 s here


def test_an_earlier_import_of_the_user_is_left_alone() -> None:
    pytest.importorskip("rfc3987_syntax")
    first = run("import jsonschema\nfrom mcp_notebook.session.session import Session\nSession()")
    assert first["stand_in"] is False and all(first["loaded_at_import"].values())


LIBRARIES = {
    "rfc3987_syntax": "is_valid_syntax('iri', 'http://a/b')",
    "rfc3986_validator": "validate_rfc3986('http://a/b')",
    "rfc3339_validator": "validate_rfc3339('2026-12-03T15:00:00Z')",
}

OWN_IMPORTS = """
import json, pickle, sys
{first}
spaces = {{}}
for name, use in {uses!r}.items():  # a function imported after %load_ext, before any use
    spaces[name] = {{}}
    exec(f"from {{name}} import {{use.split('(')[0]}}", spaces[name])
star = {{}}
for name in {names!r}:  # the user's own star imports
    ns = {{}}
    exec(f"from {{name}} import *", ns)
    star[name] = sorted(k for k in ns if k != "__builtins__")
pickled = {{}}
for name, use in {uses!r}.items():  # those functions used, then pickled
    function, ns = use.split("(")[0], spaces[name]
    answer = eval(use, ns)
    try:
        data = pickle.dumps(ns[function])
    except pickle.PicklingError as exc:
        pickled[name] = [bool(answer), str(exc), ""]
    else:
        pickled[name] = [bool(answer), pickle.loads(data) is ns[function], data.hex()]
print(json.dumps({{"star": star, "pickled": pickled}}))
"""

UNPICKLE = """
import json, pickle, sys
uses = {uses!r}
out = {{}}
for name, (answer, same, data) in json.loads(sys.stdin.read()).items():
    function = pickle.loads(bytes.fromhex(data))
    out[name] = [function.__module__.split(".")[0], bool(eval(uses[name], {{uses[name].split("(")[0]: function}}))]
print(json.dumps(out))
"""


def own_imports(first: str) -> dict:
    code = OWN_IMPORTS.format(first=first, names=list(LIBRARIES), uses=LIBRARIES)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_users_own_imports_bind_and_pickle_as_without_the_stand_ins() -> None:
    """``from LIBRARY import *`` binds every name the library exports, and its function pickles after first use.

    Seen before: ``from rfc3987_syntax import *`` bound only ``is_valid_syntax``, and a function
    imported after ``%load_ext`` stopped pickling once used (the real module had taken the stand-in's
    place in ``sys.modules``, so pickle found another object under the function's name).
    """
    for name in LIBRARIES:
        pytest.importorskip(name)
    plain = own_imports("")
    deferred = own_imports("from mcp_notebook.session.session import Session\nSession()")
    assert len(plain["star"]["rfc3987_syntax"]) > 20 and "is_valid_syntax_iri" in plain["star"]["rfc3987_syntax"]
    assert deferred["star"] == plain["star"]
    for name, (answer, same, _) in deferred["pickled"].items():
        assert (answer, same) == (True, True), name
    # pickled where the stand-ins stood, unpickled in a process without them: the library's own function
    out = subprocess.run(
        [sys.executable, "-c", UNPICKLE.format(uses=LIBRARIES)],
        input=json.dumps(deferred["pickled"]),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == {name: [name, True] for name in LIBRARIES}


def test_load_ext_puts_them_in_place_through_its_session_before_anything_imports_jsonschema() -> None:
    """``%load_ext`` calls nothing of this module itself: the ``Session`` its magics make does, and it comes first."""
    pytest.importorskip("rfc3987_syntax")
    script = (
        "import json, sys\n"
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython()\n"
        "ip.run_line_magic('load_ext', 'mcp_notebook')\n"
        "print(json.dumps(['jsonschema' in sys.modules,"
        " 'loaded on first use' in (getattr(sys.modules.get('rfc3987_syntax'), '__doc__', None) or '')]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, True]
