"""The record output's text line: hostile server and notebook text stays inert (unit, no kernel)."""

from __future__ import annotations

from mcp_notebook.flows.record import OUTPUT_MIME
from mcp_notebook.notebook.output_records import OutputRecords


def test_hostile_question_and_id_stay_inert_in_the_text_line() -> None:
    record = {
        "v": 1, "id": "a{get_ipython()} b", "server": {"name": "s"}, "method": "tools/call", "name": "t\x1b[31m",
        "round": 1, "pending": {"k": {"method": "elicitation/create", "params": {"message": "ok?\u202e\x1b[2J\nrm -rf"}}},
    }  # fmt: skip
    bundle = OutputRecords._record_bundle(record)
    line = bundle["text/plain"]
    assert "\x1b" not in line and "\u202e" not in line and "\\u001b" in line and "\\u202e" in line
    assert "%mcp resume 'a{get_ipython()} b'" in line  # single-quoted: inside '...' the line expands nothing
    assert bundle[OUTPUT_MIME] is record
