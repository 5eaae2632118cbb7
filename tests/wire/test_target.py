"""What ``parse_target`` makes of what a person wrote: a mistyped URL is said to be one (issue 36, item 9).

``http//host/mcp`` used to be read as ``module:attr`` and failed with "No module named 'http//127'".
"""

from __future__ import annotations

import pytest

from mcp_notebook.errors import FlowError
from mcp_notebook.wire.target import parse_target

NOT_A_URL = "is not a URL: a URL starts with http:// or https://"


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("http//127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp"),
        ("https:/example.com/mcp", "https://example.com/mcp"),
        ("HTTP//example.com/mcp", "http://example.com/mcp"),
        ("http:127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp"),
        ("localhost:8000/mcp", "http://localhost:8000/mcp"),
        ("localhost:8000", "http://localhost:8000"),
        ("example.com/mcp", "http://example.com/mcp"),
    ],
)
def test_a_mistyped_url_names_the_url_meant(written: str, meant: str) -> None:
    with pytest.raises(FlowError) as info:
        parse_target(written)
    assert str(info.value) == f"{written!r} {NOT_A_URL}. Did you mean {meant}?"
    assert info.value.kind == "bad_input"


@pytest.mark.parametrize("written", ["htp://example.com/mcp", "./server.py"])
def test_an_address_of_no_known_form_says_what_a_target_is(written: str) -> None:
    with pytest.raises(FlowError) as info:
        parse_target(written)
    assert str(info.value) == f"{written!r} {NOT_A_URL}; a stdio server's command goes after -- (-- COMMAND ARGS)."


def test_a_missing_module_is_named_once() -> None:
    with pytest.raises(FlowError) as info:
        parse_target("no_such_module_here:server")
    assert (
        str(info.value)
        == "no module named 'no_such_module_here' (in 'no_such_module_here:server', read as module:attr)"
    )


def test_module_attr_and_urls_are_read_as_before() -> None:
    assert parse_target("mcp_notebook.demo:demo").kind == "inproc"
    assert parse_target("http://127.0.0.1:8000/mcp").url == "http://127.0.0.1:8000/mcp"
