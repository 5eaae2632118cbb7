"""`%mcp trace --save` and `%mcp replay` (``session/replay.py``): a server author's regression test.

A shop server made the way the SDK's page makes one (``Resolve`` dependencies asking with
``Elicit``), connected in-process, changed between the recording and the replay the way an author
edits a ``%%mcp server`` cell: same behaviour, a new question, a changed result, a secret withheld;
both protocol generations; a model's reply kept in the recording; hostile files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from pydantic import BaseModel, Field

from mcp_notebook.errors import FlowError, SessionError

from ..conftest import session_of

SECRET_KEY = "sk-live-4d3c2b1a"  # an API key given as an argument: never written to the file
SECRET_OTP = "918273"  # a one-time code typed into a form field named otp: never written either


class Size(BaseModel):
    size: str = Field(description="S, M or L")


class Wrap(BaseModel):
    wrap: bool = Field(False, description="Gift-wrap it?")


class Approve(BaseModel):
    approve: bool = Field(description="Go ahead?")
    otp: str = Field(description="The one-time code from your phone")


async def ask_size(item: str) -> Elicit[Size]:
    return Elicit(f"Which size of {item}?", Size)


async def ask_wrap(item: str) -> Elicit[Wrap]:
    return Elicit(f"Gift-wrap the {item}?", Wrap)


async def ask_approve(app: str) -> Elicit[Approve]:
    return Elicit(f"Deploy {app}?", Approve)


def make_shop(price: int = 10, asks_wrap: bool = False) -> MCPServer[Any]:
    """Version 1 of the shop (``price``), or an edited one: another price, or a new question (``asks_wrap``)."""
    srv: MCPServer[Any] = MCPServer("shop")
    if asks_wrap:

        async def order(item: str, size: Annotated[Size, Resolve(ask_size)], wrap: Annotated[Wrap, Resolve(ask_wrap)]) -> str:  # fmt: skip
            return f"{item} ({size.size}{', wrapped' if wrap.wrap else ''}) costs {price}"
    else:

        async def order(item: str, size: Annotated[Size, Resolve(ask_size)]) -> str:  # type: ignore[misc]
            return f"{item} ({size.size}) costs {price}"

    async def deploy(app: str, api_key: str, ok: Annotated[Approve, Resolve(ask_approve)]) -> str:
        assert api_key == SECRET_KEY and ok.otp == SECRET_OTP, "the secrets reached the server as given"
        return f"deployed {app}" if ok.approve else f"kept {app}"

    srv.tool(name="order")(order)
    srv.tool(name="deploy")(deploy)
    return srv


def mcp(ip: InteractiveShell, line: str) -> Any:
    return ip.run_line_magic("mcp", line)


def connect(ip: InteractiveShell, server: MCPServer[Any], name: str = "shop", protocol: str = "auto") -> None:
    session_of(ip).connect(name, server, protocol=protocol)


def record(ip: InteractiveShell, tmp_path: Path, line: str, keep: bool = True, name: str = "orders.json") -> Path:
    path = tmp_path / name
    mcp(ip, line)
    mcp(ip, f"trace --save {path}{' --keep-answers' if keep else ''}")
    return path


def test_the_same_server_replays_the_same(
    ip: InteractiveShell, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    connect(ip, make_shop())
    path = record(ip, tmp_path, "call shop.order item=shirt --answer size=M")
    saved = json.loads(path.read_text())
    rec = saved["replay"]
    assert rec["requests"] == 2 and rec["arguments"] == {"item": "shirt"}
    assert [(a["round"], a["key"], a["message"], a["fields"]) for a in rec["asked"]] == [
        (1, "tests.session.test_replay:ask_size", "Which size of shirt?", ["size"])
    ]
    assert rec["asked"][0]["answer"] == {
        "action": "accept",
        "fields": ["size"],
        "content": {"size": "M"},
        "withheld": [],
    }
    assert rec["outcome"]["result"]["content"][0]["text"] == "shirt (M) costs 10"
    assert saved["events"][0]["kind"] == "request"  # the trace is still there, beside the recording
    capsys.readouterr()
    assert mcp(ip, f"replay {path} -o again") is None
    out = capsys.readouterr().out
    assert out.strip() == f"Replayed shop.order from {path}: the same (2 requests, 1 question, the same result)."
    again = ip.user_ns["again"]
    assert again.same and again.differences == [] and again.flow.value.content[0].text == "shirt (M) costs 10"


def test_a_changed_result_fails_the_replay_with_a_diff(ip: InteractiveShell, tmp_path: Path) -> None:
    connect(ip, make_shop(price=10))
    path = record(ip, tmp_path, "call shop.order item=shirt --answer size=M")
    connect(ip, make_shop(price=12))  # the author edits the server
    with pytest.raises(FlowError) as raised:
        mcp(ip, f"replay {path}")
    assert raised.value.kind == "replay_changed"
    text = str(raised.value)
    assert text.startswith(f"Replayed shop.order from {path}: 1 difference\n  - the result changed:")
    assert '-   "text": "shirt (M) costs 10",' in text and '+   "text": "shirt (M) costs 12",' in text
    assert f"%mcp trace --save {path} --keep-answers" in text  # the hint: record again if that was meant
    replayed = session_of(ip).replay(str(path))
    assert not replayed.same and len(replayed.differences) == 1


def test_a_new_question_is_a_difference_and_presets_can_answer_it(ip: InteractiveShell, tmp_path: Path) -> None:
    connect(ip, make_shop())
    path = record(ip, tmp_path, "call shop.order item=mug --answer size=S")
    connect(ip, make_shop(asks_wrap=True))
    with pytest.raises(FlowError) as raised:
        mcp(ip, f"replay {path}")
    lines = str(raised.value).splitlines()
    assert lines[0] == f"Replayed shop.order from {path}: 3 differences"
    assert lines[1] == "  - requests sent: 2 before, 1 now"
    assert lines[2] == "  - round 1: a new question, 'tests.session.test_replay:ask_wrap' (“Gift-wrap the mug?”)"
    assert lines[3].startswith(
        """  - the flow ended failed (before: done): shop asks: "Gift-wrap the mug?" and field 'wrap'"""
    )
    # answered by a preset, the new question is still a difference, and the result is compared
    replayed = session_of(ip).replay(str(path), answers=_answers(wrap=True))
    assert replayed.flow.value.content[0].text == "mug (S, wrapped) costs 10"
    assert [d.splitlines()[0] for d in replayed.differences] == [
        "round 1: a new question, 'tests.session.test_replay:ask_wrap' (“Gift-wrap the mug?”)",
        "the result changed:",
    ]  # the same number of requests: both questions came in round 1


def test_a_withheld_secret_is_never_written_and_is_asked_for(ip: InteractiveShell, tmp_path: Path) -> None:
    connect(ip, make_shop())
    path = record(ip, tmp_path, f"call shop.deploy app=web api_key={SECRET_KEY} --answer approve=true --answer otp={SECRET_OTP}")  # fmt: skip
    text = path.read_text()
    assert SECRET_KEY not in text and SECRET_OTP not in text
    rec = json.loads(text)["replay"]
    assert rec["withheld"] == ["api_key"] and rec["arguments"] == {"app": "web"}
    assert rec["asked"][0]["answer"] == {"action": "accept", "fields": ["approve", "otp"], "content": {"approve": True}, "withheld": ["otp"]}  # fmt: skip
    with pytest.raises(UsageError) as raised:  # the argument first: nothing is sent without it
        mcp(ip, f"replay {path}")
    assert str(raised.value) == (
        "the recording withheld the secret argument 'api_key' (it is never written to a file); give its value "
        f"Give what the recording withheld: %mcp replay {path} --answer api_key=VALUE"
    )
    with pytest.raises(FlowError) as raised:  # then the form's secret field
        mcp(ip, f"replay {path} --answer api_key={SECRET_KEY}")
    assert raised.value.kind == "replay_changed" and raised.value.missing_field == "otp"
    assert "the recording answered field 'otp', withheld as a secret; give its value" in str(raised.value)
    assert str(raised.value).endswith(f"Give what the recording withheld: %mcp replay {path} --answer otp=VALUE")
    assert "requests sent" not in str(raised.value)  # not reported as the server's change
    same = session_of(ip).replay(str(path), answers=_answers(api_key=SECRET_KEY, otp=SECRET_OTP))
    assert same.same, same.differences
    assert same.flow.value.content[0].text == "deployed web"


def test_saved_without_answers_a_replay_needs_them_given(ip: InteractiveShell, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    connect(ip, make_shop())
    capsys.readouterr()
    path = record(ip, tmp_path, "call shop.order item=hat --answer size=L", keep=False)
    told = capsys.readouterr().out
    assert (
        f"%mcp replay {path} calls it again. A replay needs --answer size=VALUE (or save with --keep-answers)." in told
    )
    rec = json.loads(path.read_text())["replay"]
    assert rec["answers_kept"] is False and rec["asked"][0]["answer"] == {"action": "accept", "fields": ["size"]}
    with pytest.raises(FlowError) as raised:
        mcp(ip, f"replay {path}")
    assert raised.value.missing_field == "size" and "not kept in the file" in str(raised.value)
    mcp(ip, f"replay {path} --answer size=L")  # the same: no error


def test_a_2025_back_channel_flow_replays_too(ip: InteractiveShell, tmp_path: Path) -> None:
    connect(ip, make_shop(), name="shop25", protocol="legacy")
    path = record(ip, tmp_path, "call shop25.order item=cap --answer size=S")
    rec = json.loads(path.read_text())["replay"]
    assert rec["asked"] == [{"round": 1, "key": None, "method": "elicitation/create", "message": "Which size of cap?", "fields": ["size"],  # fmt: skip
                             "answer": {"action": "accept", "fields": ["size"], "content": {"size": "S"}, "withheld": []}}]  # fmt: skip
    assert session_of(ip).replay(str(path)).same
    connect(ip, make_shop(price=9), name="shop25", protocol="legacy")
    assert [d.split(":")[0] for d in session_of(ip).replay(str(path)).differences] == ["the result changed"]


def test_a_recorded_model_reply_answers_the_replayed_sampling(ip: InteractiveShell, tmp_path: Path) -> None:
    mcp(ip, "connect demo_replay mcp_notebook.demo:demo")
    try:
        path = record(ip, tmp_path, "call demo_replay.summarize text='the cat sat' max_tokens=20")
        saved = json.loads(path.read_text())
        [asked] = saved["replay"]["asked"]
        assert asked["method"] == "sampling/createMessage" and asked["answer"]["sampled"]["role"] == "assistant"
        assert session_of(ip).replay(str(path)).same
        asked["answer"]["sampled"]["content"]["text"] = "A recorded reply."  # the reply replayed is the file's
        path.write_text(json.dumps(saved))
        replayed = session_of(ip).replay(str(path), trust=True)  # edited: no longer signed
        assert "A recorded reply." in replayed.flow.value.content[0].text
    finally:
        session_of(ip).registry.disconnect("demo_replay")


def _hostile(**changes: Any) -> str:
    """A recording of the right shape with ``changes`` (``None`` drops a key), as a hostile file would hold it."""
    rec: dict[str, Any] = {"version": 1, "purpose": "mcp-notebook replay", "method": "tools/call", "server": "shop",
                           "name": "order", "arguments": {"item": "shirt"}, "withheld": [], "requests": 2,
                           "asked": [{"round": 1, "key": "k", "method": "elicitation/create", "message": "Size?", "fields": ["size"],
                                      "answer": {"action": "accept", "fields": ["size"], "content": {"size": "M"}}}],
                           "outcome": {"state": "done", "sha256": "x"}}  # fmt: skip
    for key, value in changes.items():
        if value is None:
            rec.pop(key, None)
        else:
            rec[key] = value
    return json.dumps({"replay": rec})


def _answer(**answer: Any) -> list[dict[str, Any]]:
    return [
        {
            "round": 1,
            "key": "k",
            "method": "elicitation/create",
            "message": "Size?",
            "fields": ["size"],
            "answer": answer,
        }
    ]


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("not json", "is not a JSON trace file"),
        ("[" * 100_000 + "]" * 100_000, "is not a JSON trace file (RecursionError)"),
        ("[]", "the file is not a JSON object"),
        ('{"events": []}', "the file holds no recording"),
        ('{"replay": {"version": 2}}', "the recording is version 2; this client reads version 1"),
        (_hostile(arguments=[]), "the recording's 'arguments' is missing or not a dict"),
        (_hostile(purpose=None), "the file's recording is not a replay recording"),
        (_hostile(method="sampling/createMessage"), "is not one this client replays"),
        (_hostile(asked=[{"round": "1"}]), "has no round or method"),
        (_hostile(withheld=[[1]]), "withheld names or argument names are not text"),
        (_hostile(requests="2"), "'requests' is missing or not a number"),
        (_hostile(outcome={"state": "failed", "error": "boom"}), "an error that is not an object"),
        (_hostile(asked=_answer(action="accept", content=["M"])), "content is not an object"),
        (_hostile(asked=_answer(action="accept", fields=5)), "fields is not a list of names"),
        (_hostile(asked=_answer(action="delete")), "action is 'delete', not accept, decline or cancel"),
        (_hostile(asked=_answer(sampled="hi")), "a recorded model reply is not an object"),
        (
            json.dumps({"replay": {**json.loads(_hostile())["replay"], "sig": "hmac-sha256:\u00e9"}}),
            "was not written by you",
        ),
    ],
)
def test_a_hostile_or_broken_file_is_refused_with_what_is_wrong(ip: InteractiveShell, tmp_path: Path, content: str, error: str) -> None:  # fmt: skip
    connect(ip, make_shop())
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(UsageError) as raised:
        mcp(ip, f"replay {path}")
    assert error in str(raised.value)
    with pytest.raises(UsageError, match="could not read"):
        mcp(ip, f"replay {tmp_path / 'missing.json'}")


def test_a_trusted_file_s_text_reaches_the_cell_spelled_out(ip: InteractiveShell, tmp_path: Path) -> None:
    """A file's and a server's text in the differences: terminal escapes and bidi characters spelled out."""
    connect(ip, make_shop())
    path = tmp_path / "escapes.json"
    asked = [
        {
            "round": 1,
            "key": "k\u202e",
            "method": "elicitation/create",
            "message": "\x1b[2JSize?",
            "fields": [],
            "answer": {},
        }
    ]
    path.write_text(_hostile(asked=asked, outcome={"state": "done\x1b[31m", "sha256": "x"}))
    with pytest.raises(FlowError) as raised:
        mcp(ip, f"replay {path} --trust --answer size=M")
    text = str(raised.value)
    assert "\x1b" not in text and "\u202e" not in text
    assert "'k\\u202e' (“\\u001b[2JSize?”) is no longer asked" in text, text
    assert "(before: done\\u001b[31m)" in text


def test_a_trace_is_written_whole_or_not_at_all(ip: InteractiveShell, tmp_path: Path) -> None:
    """A lone surrogate (a file name from os.listdir) in the arguments: written as JSON escapes, and it replays."""
    connect(ip, make_shop())
    path = tmp_path / "surrogate.json"
    with pytest.raises(FlowError, match="surrogates not allowed"):  # it cannot even be sent
        mcp(ip, 'call shop.order --json \'{"item": "caf\\udcff"}\' --answer size=M')
    mcp(ip, f"trace --save {path}")  # but the trace of that failure is written, as JSON escapes
    text = path.read_text()
    assert text.isascii() and "caf\\udcff" in text
    assert json.loads(text)["replay"]["arguments"] == {"item": "caf\udcff"}  # a whole recording, read back
    blocked = tmp_path / "no-such-folder" / "t.json"
    with pytest.raises(UsageError, match="could not write"):
        mcp(ip, f"trace --save {blocked}")
    assert not blocked.parent.exists()


def test_a_file_you_did_not_write_is_shown_whole_and_nothing_is_sent(ip: InteractiveShell, tmp_path: Path) -> None:
    """A received (or edited) recording chooses the tool, arguments and answers: refused unless --trust, as a received notebook's records are."""
    calls: list[str] = []
    shop = make_shop()

    @shop.tool(name="drop_table")
    async def drop_table(table: str) -> str:
        calls.append(table)
        return f"dropped {table}"

    connect(ip, shop)
    path = record(ip, tmp_path, "call shop.drop_table table=scratch")
    assert calls == ["scratch"]
    saved = json.loads(path.read_text())
    saved["replay"]["arguments"] = {"table": "customers\u202e"}  # someone edits the file (a bidi character too)
    path.write_text(json.dumps(saved))
    with pytest.raises(UsageError) as raised:
        mcp(ip, f"replay {path}")
    assert str(raised.value) == (
        f"{json.dumps(str(path))} was not written by you: its recording is not signed with your Jupyter notary secret "
        '(a file you received, or one edited since). Replayed, it calls tool "drop_table" on connection "shop" with '
        'arguments {"table": "customers\\u202e"}, and answers no question. Nothing was sent.'
        f" If you trust it as shown, run: %mcp replay {path} --trust"
    )
    assert calls == ["scratch"]  # nothing reached the server
    with pytest.raises(SessionError, match="was not written by you") as direct:
        session_of(ip).replay(str(path))
    assert direct.value.kind == "replay_untrusted"
    with pytest.raises(FlowError, match="the result changed"):  # trusted: it runs, and its result differs
        mcp(ip, f"replay {path} --trust")
    assert calls == ["scratch", "customers\u202e"]


def test_what_an_unsigned_file_would_send_is_shown_whole_or_not_at_all(ip: InteractiveShell, tmp_path: Path) -> None:
    """Every argument and every recorded answer is shown; what is too long to show whole is not shown in part."""
    connect(ip, make_shop())
    path = tmp_path / "long.json"
    path.write_text(_hostile(arguments={"a_note": "harmless " * 35, "sql": "DROP TABLE users"}))
    with pytest.raises(UsageError) as raised:
        mcp(ip, f"replay {path}")
    text = str(raised.value)
    assert '"sql": "DROP TABLE users"' in text and 'answers as recorded: round 1 "k": {"action": "accept"' in text
    assert '"content": {"size": "M"}' in text
    path.write_text(_hostile(arguments={"a_note": "harmless " * 600, "sql": "DROP TABLE users"}))
    with pytest.raises(UsageError) as raised:
        mcp(ip, f"replay {path}")
    assert "too long to show here whole: read the file first. Nothing was sent." in str(raised.value)
    assert "harmless" not in str(raised.value)


def test_a_recording_names_a_connection_that_is_not_there(ip: InteractiveShell, tmp_path: Path) -> None:
    connect(ip, make_shop())
    path = record(ip, tmp_path, "call shop.order item=shirt --answer size=M")
    with pytest.raises(FlowError) as raised:
        mcp(ip, f"replay {path} --server nowhere")
    assert raised.value.kind == "unknown_connection" and "No connection named 'nowhere'" in str(raised.value)


def _answers(**fields: Any) -> Any:
    from mcp_notebook.forms.model import Answers

    return Answers(fields=fields)
