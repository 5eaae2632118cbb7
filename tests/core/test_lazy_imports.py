"""`mcp_notebook.core.lazy_imports`: jsonschema imports fast, and its IRI checks answer as before (fresh processes)."""

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
built = "rfc3987_syntax.syntax_helpers" in sys.modules
fc = jsonschema.FormatChecker()
values = ["http://example.com/ä", "not an iri", "//host/path?q", "http://[::1", "urn:isbn:0451450523"]
answers = [[fc.conforms(v, "iri"), fc.conforms(v, "iri-reference")] for v in values]
import rfc3987_syntax
print(json.dumps({{"took": took, "built_at_import": built, "answers": answers,
                  "helper": rfc3987_syntax.is_valid_syntax_iri("http://a/b"),
                  "stand_in": "loaded on first use" in (rfc3987_syntax.__doc__ or "")}}))
"""


def run(first: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHECKS.format(first=first)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_jsonschema_imports_without_building_the_iri_parsers_and_checks_iris_as_before() -> None:
    pytest.importorskip("rfc3987_syntax")  # installed with Jupyter (jsonschema[format-nongpl]) and in make test's venv
    plain = run("")
    deferred = run("from mcp_notebook.session.session import Session\nSession()")
    assert plain["built_at_import"] is True and deferred["built_at_import"] is False
    assert deferred["answers"] == plain["answers"]  # the same checkers, the same answers
    assert deferred["answers"][0] == [True, True] and deferred["answers"][1] == [False, False]
    assert deferred["helper"] is True and deferred["stand_in"] is True
    assert deferred["took"] < plain["took"] / 3  # about 0.1 s instead of about 2 s here


def test_an_earlier_import_of_the_user_is_left_alone() -> None:
    pytest.importorskip("rfc3987_syntax")
    first = run("import jsonschema\nfrom mcp_notebook.session.session import Session\nSession()")
    assert first["stand_in"] is False and first["built_at_import"] is True
