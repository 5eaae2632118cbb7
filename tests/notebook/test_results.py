"""A bound result reads well and stays the SDK's (issue 37, item 4)."""

from __future__ import annotations

import copy
import pickle

import mcp.types as sdk

from mcp_notebook.notebook.results import REPR_CHARS, readable


def test_a_bound_result_has_a_short_repr_and_the_sdks_attributes() -> None:
    raw = sdk.CallToolResult(content=[sdk.TextContent(type="text", text="5")], structured_content={"result": 5})
    r = readable(raw)
    assert (repr(r), str(r), repr([r])) == ("CallToolResult: 5", "CallToolResult: 5", "[CallToolResult: 5]")
    assert isinstance(r, sdk.CallToolResult) and type(r).__name__ == "CallToolResult"
    assert (r.structured_content, r.content[0].text, r.is_error) == ({"result": 5}, "5", False)
    assert r.model_dump(by_alias=True) == raw.model_dump(by_alias=True)
    assert r == raw and raw == r and r != readable(sdk.CallToolResult(content=[]))
    assert pickle.loads(pickle.dumps(r)) == raw and copy.deepcopy(r) == raw
    assert type(raw) is sdk.CallToolResult  # the flow keeps its own object


def test_long_text_errors_prompts_and_reads_are_one_short_line() -> None:
    long = readable(sdk.CallToolResult(content=[sdk.TextContent(type="text", text="x" * 10_000 + "\nmore")]))
    assert repr(long).startswith("CallToolResult: xxx") and len(repr(long)) <= len("CallToolResult: ") + REPR_CHARS
    failed = readable(sdk.CallToolResult(content=[sdk.TextContent(type="text", text="no such row")], is_error=True))
    assert repr(failed) == "CallToolResult: Tool error: no such row"
    prompt = readable(
        sdk.GetPromptResult(messages=[sdk.PromptMessage(role="user", content=sdk.TextContent(type="text", text="hi"))])
    )
    assert repr(prompt) == "GetPromptResult: user: hi"
    read = readable(sdk.ReadResourceResult(contents=[sdk.TextResourceContents(uri="demo://a", text="hello")]))
    assert repr(read) == "ReadResourceResult: hello"
    assert readable(None) is None and readable("text") == "text"
