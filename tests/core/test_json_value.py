"""``core.json_value``: JSON a person typed is read as JSON is written, without NaN or Infinity (issue 36, item 6)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from mcp_notebook.core.json_value import NotFinite, check_finite, read_json


@pytest.mark.parametrize(("text", "value"), [
    ('{"a": {"b": [1, 2.5, -0.0, 1e308, null]}}', {"a": {"b": [1, 2.5, -0.0, 1e308, None]}}),
    ('"NaN"', "NaN"),  # the text NaN, in JSON quotes
    ("12", 12),
])  # fmt: skip
def test_finite_json_reads_as_json(text: str, value: Any) -> None:
    assert read_json(text) == value


@pytest.mark.parametrize(("text", "word"), [
    ("NaN", "NaN"),
    ("Infinity", "Infinity"),
    ("-Infinity", "-Infinity"),
    ("1e999", "1e999"),  # Python reads it as inf
    ('{"values": {"id": [1, NaN]}}', "NaN"),
])  # fmt: skip
def test_non_finite_numbers_are_refused_saying_what_to_write(text: str, word: str) -> None:
    with pytest.raises(NotFinite) as refused:
        read_json(text)
    assert refused.value.word == word
    assert str(refused.value) == (
        f"{word} is not a finite number, and JSON carries only finite ones (the server would get null): "
        f'write a finite number, or null, or "{word}" in double quotes for the text'
    )
    assert isinstance(refused.value, ValueError)  # callers that read "not JSON" as text still see an error


def test_other_bad_json_is_a_plain_value_error() -> None:
    with pytest.raises(ValueError) as bad:
        read_json("{not json")
    assert not isinstance(bad.value, NotFinite)


def test_check_finite_walks_any_depth_without_recursion() -> None:
    deep: Any = [math.nan]
    for _ in range(100_000):
        deep = {"k": [deep]}
    with pytest.raises(NotFinite):
        check_finite(deep)
    assert check_finite({"a": [1.5, "x", None, (2,)]}) == {"a": [1.5, "x", None, (2,)]}
    with pytest.raises(NotFinite):
        check_finite({"a": (math.inf,)})
