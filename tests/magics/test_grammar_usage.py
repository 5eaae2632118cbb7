"""``%mcp call --help``'s usage line shows what follows the tool: ``key=value ...`` (issue 37, item 6)."""

from __future__ import annotations

import pytest

from mcp_notebook.magics.grammar import build_parsers

from ..conftest import get_shell


def test_call_help_shows_the_tool_and_its_key_value_words(capsys: pytest.CaptureFixture[str]) -> None:
    get_shell().run_line_magic("mcp", "call --help")
    usage = capsys.readouterr().out.split("\n\n")[0]
    assert usage.startswith("usage: %mcp call [-h] [--json JSON]")
    assert usage.endswith("\n                 [SERVER.]TOOL [key=value ...]")
    assert "[--frame]" in usage and "%%" not in usage


@pytest.mark.parametrize(
    ("command", "ends"), [("call", "[SERVER.]TOOL [key=value ...]"), ("prompt", "[SERVER.]NAME [key=value ...]")]
)
def test_the_usage_stays_after_a_slow_parse_and_in_errors(command: str, ends: str) -> None:
    parser = build_parsers()[command]
    before = parser.format_usage()
    assert before.rstrip().endswith(ends)
    parser.parse(["t", "--wait", "a=1"], intermixed_pairs=True)  # the slow path, which caches the usage
    assert parser.format_usage() == before
    with pytest.raises(Exception, match=r"unrecognized option --bogus\nusage: %mcp") as refused:
        parser.parse(["t", "--bogus"], intermixed_pairs=True)
    assert str(refused.value).endswith(ends)
