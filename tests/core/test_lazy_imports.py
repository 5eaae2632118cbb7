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
                  "real_after_use": "loaded on first use" not in (sys.modules["rfc3986_validator"].__doc__ or ""),
                  "later_import_real": "loaded on first use" not in (__import__("rfc3339_validator").__doc__ or ""),
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
    assert deferred["real_after_use"] is True and deferred["later_import_real"] is True  # the real one took its place
    assert deferred["version"] == plain["version"]
    assert deferred["took"] < plain["took"] / 3  # about 0.1 s instead of about 2 s here


def test_an_earlier_import_of_the_user_is_left_alone() -> None:
    pytest.importorskip("rfc3987_syntax")
    first = run("import jsonschema\nfrom mcp_notebook.session.session import Session\nSession()")
    assert first["stand_in"] is False and all(first["loaded_at_import"].values())
