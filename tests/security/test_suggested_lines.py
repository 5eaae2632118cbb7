"""Every ``%mcp`` line we suggest is built by ``core.text.mcp_line``, which encodes each word for the line's grammar.

A hint printed in an error, a note or a panel is copied into a cell and run. Its words often come
from a server or a received notebook (a field name, a server name, a flow id, a path), and the
``%mcp`` line expands ``{expr}`` even inside quotes: a field name carrying ``{[__import__(...)]and""}``
ran Python when the hint was followed (issue 34, finding 3). Two halves:

* the guard, over the package's source: no f-string, ``+``, ``%``, ``.format`` or list puts a value
  into a ``%mcp`` line (or a flag of one, ``--answer NAME=VALUE``) unless that value is a call of
  ``mcp_line``; text next to a line but outside it (``{path} is not a root (see %mcp roots list)``)
  is fine;
* the outcome, in a real IPython shell: following the hints with a hostile field name runs nothing,
  and the line, run as printed, sends the field name as it is.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.core.inputtransformer2 import TransformerManager
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from pydantic import BaseModel, Field

from mcp_notebook.core.text import UNWRITABLE, Flag, mcp_line
from mcp_notebook.magics.line_expand import expand_braces, strip_comment

from ..conftest import REPO_ROOT
from ..support.waiting import wait_until

PACKAGE = REPO_ROOT / "mcp_notebook"

# Where a suggested line starts (`%mcp`, `%%mcp`), and where it has ended: a line break, a clause's
# punctuation, a bracket or a backquote.
_STARTS = re.compile(r"%%?mcp\b")
_ENDS = re.compile(r"\n|;|, |: |(?<!\.)\.(?!\.)(?:\s|$)|[()\[\]`]")
# A flag of a line, right before or after a value (`--answer {field}=VALUE`, `{resume} --trust`): that
# value is a word of a line too, whatever text stands around the flag.
_FLAG_BEFORE = re.compile(r"(?<![\w-])--[a-z][\w-]*[ =]?$")
_FLAG_AFTER = re.compile(r"\s?(?:--[a-z]|%%?mcp\b)")
_ENCODER = "mcp_line"


def _encoded(node: ast.expr) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (
        isinstance(func, ast.Name | ast.Attribute)
        and (getattr(func, "id", None) or getattr(func, "attr", None)) == _ENCODER
    )


def _pieces(node: ast.expr) -> list[str | ast.expr] | None:
    """The text and values ``node`` joins into one string, in order (``None``: it joins nothing)."""
    if isinstance(node, ast.JoinedStr):
        return [v.value if isinstance(v, ast.Constant) else v.value for v in node.values]  # type: ignore[attr-defined]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pieces(node.left), _pieces(node.right)
        if left is None and right is None:
            return None
        return (left or [node.left]) + (right or [node.right])
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
        if not isinstance(node.left.value, str):
            return None
        args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        texts = re.split(r"%[-#0 +]*\d*(?:\.\d+)?[sdrif]", node.left.value)
        return _interleave(texts, args)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        texts = [text for text, *_ in string.Formatter().parse(node.func.value.value)]
        return _interleave(texts, [*node.args, *(k.value for k in node.keywords)])
    if (  # words of a line joined: " ".join(["%mcp", "connect", name]) (a list handed to mcp_line is fine)
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and node.args
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        return [p for e in node.args[0].elts for p in ([e.value, " "] if isinstance(e, ast.Constant) else [e, " "])]
    return None


def _interleave(texts: list[str], values: list[ast.expr]) -> list[str | ast.expr]:
    out: list[str | ast.expr] = []
    for i, text in enumerate(texts):
        out.append(text)
        if i < len(values):
            out.append(values[i])
    out.extend(values[len(texts) :])
    return out


def _raw_in_a_line(pieces: list[str | ast.expr]) -> Iterator[ast.expr]:
    """The values of ``pieces`` that sit inside a ``%mcp`` line, or next to one of its flags, unencoded.

    A value is in a line when text before it starts one (``%mcp``) and nothing between ends it, or
    when a flag stands right before it (``--answer {field}``) or right after it (``{resume} --trust``).
    """
    opened = False
    before = ""
    for i, piece in enumerate(pieces):
        if isinstance(piece, str):
            starts = [m.end() for m in _STARTS.finditer(piece)]
            if starts and not _ENDS.search(piece, starts[-1]):
                opened = True
            elif _ENDS.search(piece):
                opened = False
            before = piece
            continue
        if _encoded(piece) or isinstance(piece, ast.Constant):
            before = ""
            continue
        after = next((p for p in pieces[i + 1 :] if isinstance(p, str)), "")
        if opened or _FLAG_BEFORE.search(before) or _FLAG_AFTER.match(after):
            yield piece
        before = ""


def _offences(source: str) -> Iterator[tuple[int, str]]:
    tree = ast.parse(source)
    inner: set[int] = set()  # a part of a `+` chain is looked at with its chain, not again alone
    for node in ast.walk(tree):
        if id(node) in inner:
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            stack: list[ast.expr] = [node.left, node.right]
            while stack:
                part = stack.pop()
                inner.add(id(part))
                if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Add):
                    stack += [part.left, part.right]
        pieces = _pieces(node) if isinstance(node, ast.expr) else None
        if pieces is None or not any(isinstance(p, str) and (_STARTS.search(p) or "--" in p) for p in pieces):
            continue
        for value in _raw_in_a_line(pieces):
            yield node.lineno, ast.unparse(value)


def test_no_suggested_line_is_put_together_without_the_encoder() -> None:
    found = [
        f"{path.relative_to(REPO_ROOT)}:{line}: {value}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "core" / "text.py"  # where mcp_line itself joins the encoded words
        for line, value in _offences(path.read_text())
    ]
    assert not found, "a value goes into a %mcp line without mcp_line:\n" + "\n".join(found)


@pytest.mark.parametrize(("source", "caught"), [
    ('f"Continue it with %mcp resume {flow_id} --answer {field}=VALUE."', ["flow_id", "field"]),
    ('f"add --answer {spec.name}=VALUE"', ["spec.name"]),
    ('"%mcp connect --from-config " + path + " " + name', ["path", "name"]),
    ('" ".join(["%mcp", "connect", conn.name])', ["conn.name"]),
    ('"%mcp resume {}".format(fid)', ["fid"]),
    ('"run: %s --trust" % resume', ["resume"]),
    ('f"If you trust it, run: {resume} --trust"', ["resume"]),
    ('f"(%mcp connect {server} ...) and click again"', ["server"]),
    # what the guard lets through: the encoder, constants, and text beside a line but not in it
    ('f"Continue it with {mcp_line(\'%mcp\', \'resume\', fid)}."', []),
    ('f"{path} is not a root (see %mcp roots list)"', []),
    ('f"--into wants a Python variable name, got {into!r}"', []),
    ('f"Run %mcp flows; {count} are waiting"', []),
    ('"Use %mcp connect NAME TARGET first."', []),
])  # fmt: skip
def test_the_guard_catches_each_way_of_building_a_line(source: str, caught: list[str]) -> None:
    assert [value for _, value in _offences(source)] == caught


# ------------------------------------------------------------------- the encoder: any text, one word, read back
def _magic_reads(line: str, ns: dict[str, Any]) -> list[str]:
    """What the magic receives and splits when a cell holding ``line`` runs (IPython's transform included)."""
    from mcp_notebook.magics.magics import MCPMagics

    code = TransformerManager().transform_cell(line)
    calls = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call)]
    assert len(code.strip().splitlines()) == 1 and len(calls) == 2, code  # get_ipython().run_line_magic(...), alone
    magic, rest = (ast.literal_eval(a) for a in calls[0].args)
    assert magic == "mcp"
    return MCPMagics._split(expand_braces(strip_comment(rest), ns))


HOSTILE = 'x{[__import__("os").system("touch PWNED")]and""}'


@settings(max_examples=400, deadline=None)
@given(st.text(st.characters(codec="utf-8")) | st.sampled_from([HOSTILE, "x\u2028y", "a?", "$HOME", "x\ny", "'\"\\#"]))
def test_mcp_line_reads_back_as_its_words_or_asks_for_the_word(text: str) -> None:
    ns: dict[str, Any] = {"__builtins__": {}}  # an expansion that tried to run anything would fail and stay as typed
    words = _magic_reads(mcp_line("%mcp", "resume", text, Flag("--answer"), f"{text}=VALUE"), ns)
    if text.isprintable() and text.startswith("-"):  # the parser would read it as a flag (test_line_flags.py)
        assert words == ["resume", UNWRITABLE, "--answer", UNWRITABLE]
    elif text.isprintable():
        assert words == ["resume", text, "--answer", f"{text}=VALUE"]
    else:  # a line break or control character: no line can hold it, the person fills the word in
        assert words == ["resume", UNWRITABLE, "--answer", UNWRITABLE]
    assert mcp_line("%mcp", "connect", "demo", Flag("--"), "NAME=VALUE", "...") == "%mcp connect demo -- NAME=VALUE ..."
    assert mcp_line("%mcp", "resume", text).isprintable()


@settings(max_examples=300, deadline=None)
@given(
    st.text(st.characters(codec="utf-8"), min_size=1).filter(str.isprintable)
    | st.sampled_from([HOSTILE, "a=b", "-x", "--answer", "-1", "x=" + HOSTILE, '{"a": 1}'])
)
def test_the_suggested_answer_answers_exactly_that_field(field: str) -> None:
    """``add --answer NAME=VALUE`` as suggested, read by the call's own parser: the one field, named as the server wrote it."""
    from mcp_notebook.forms.model import answer_words
    from mcp_notebook.magics.grammar import answer_fields, build_parsers

    words = _magic_reads(mcp_line("%mcp", "call", "evil.pick", *answer_words(field)), {"__builtins__": {}})
    ns, _ = build_parsers()["call"].parse(words[1:], intermixed_pairs=True)
    assert answer_fields(ns)[0] == {field: "VALUE"}


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet="{}'\"\\#$ x=-")
    | st.text(st.characters(codec="utf-8")).filter(str.isprintable)
    | st.builds(lambda a, b: a + "{x}" + b, st.text(max_size=6), st.text(max_size=6)).filter(str.isprintable)
)
def test_server_braces_sit_in_single_quotes_where_nothing_expands(text: str) -> None:
    """Issue 36 item 5: the line grammar expands ``{expr}`` in bare words and ``"..."`` but nothing in ``'...'``.

    So the encoder writes a word holding a brace in single quotes, braces as they are (no ``{{``), and
    even where every ``{x}`` would evaluate (``x`` is defined, builtins are there) the line reads back
    exactly the server's text.
    """
    ns: dict[str, Any] = {"__builtins__": __builtins__, "x": "EXPANDED"}
    line = mcp_line("%mcp", "call", "a.b", f"key={text}", f"x{text}")
    assert _magic_reads(line, ns) == ["call", "a.b", f"key={text}", f"x{text}"]
    assert line.count("{") == 2 * text.count("{") and line.count("}") == 2 * text.count("}")  # as a person writes
    outside: list[str] = []  # the characters outside '...': never a brace
    quote = None
    for c in line:
        if c == "'" and quote != '"' or c == '"' and quote != "'":
            quote = None if quote == c else c
        elif quote != "'":
            outside.append(c)
    assert "{" not in outside and "}" not in outside


def test_a_suggested_json_answer_reads_as_a_person_writes_it() -> None:
    """``--answers`` for a field named ``a=b``: plain JSON in single quotes (it printed ``'{{"a=b": "VALUE"}}'``)."""
    from mcp_notebook.forms.model import answer_words

    assert mcp_line(*answer_words("a=b")) == """--answers '{"a=b": "VALUE"}'"""
    assert mcp_line(*answer_words("it's")) == "--answer 'it'\"'\"'s=VALUE'"


@pytest.mark.filterwarnings("ignore:`make_tokens_by_line`:UserWarning")
def test_a_line_separator_in_server_text_does_not_start_python() -> None:
    """IPython splits a cell at U+2028 even inside quotes: quoting alone would leave the rest to run as Python."""
    text = 'x\u2028__import__("os").system("touch PWNED")#'
    code = TransformerManager().transform_cell(f"%mcp resume {shlex.quote(text)}")  # quoting alone, as before
    assert code.splitlines()[1] == '__import__("os").system("touch PWNED")#\''  # a line of Python of its own
    assert mcp_line("%mcp", "resume", text) == f"%mcp resume {UNWRITABLE}"
    assert mcp_line("%mcp", "resume", "abc?") == "%mcp resume 'abc?'"  # not IPython's help on abc


# ------------------------------------------------------------------- following the hints in a real shell
class HostileForm(BaseModel):
    """A form whose one field is named with the payload (an alias: the name the schema and the answer use)."""

    answer: str = Field(alias=HOSTILE)


async def ask_hostile_form() -> Elicit[HostileForm]:
    return Elicit("Which one?", HostileForm)


def form_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("evilform")

    @server.tool()
    async def pick(answers: Annotated[HostileForm, Resolve(ask_hostile_form)]) -> str:
        return json.dumps(answers.model_dump(by_alias=True))

    return server


@pytest.fixture
def evilform(undo_each_test: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hostile form server, connected for the test alone (it and the test's saved records are gone after it),
    in a folder of its own: the payload would create ``PWNED`` there."""
    ip = undo_each_test
    monkeypatch.chdir(tmp_path)
    ip.user_ns["evilform_server"] = form_server()
    ip.run_line_magic("mcp", "connect evilform evilform_server")


def cell_error(ip: InteractiveShell, cell: str) -> str:
    """The message of the error ``cell`` fails with, as the person reads it."""
    ran = ip.run_cell(cell)
    assert ran.error_in_exec is not None, f"{cell!r} did not fail"
    return str(ran.error_in_exec)


@pytest.mark.usefixtures("evilform")
def test_following_the_missing_field_hint_runs_nothing_and_answers_the_field(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    """Issue 34, finding 3: ``add --answer NAME=VALUE`` with the server's field name, copied and run."""
    message = cell_error(ip, "%mcp call evilform.pick")
    assert f"field {HOSTILE!r}" in message  # the prose names it (repr), the line below encodes it
    suggested = re.search(r"Headless runs answer from presets: add (.*?)\.(?:\s|$)", message)
    assert suggested is not None, message
    ran = ip.run_cell(f"_answered = %mcp call evilform.pick {suggested[1]}")
    assert not (tmp_path / "PWNED").exists(), "the field name's {expr} ran in the kernel"
    assert suggested[1] == mcp_line(Flag("--answer"), f"{HOSTILE}=VALUE")
    assert ran.error_in_exec is None, ran.error_in_exec
    assert json.loads(ip.user_ns["_answered"].content[0].text) == {HOSTILE: "VALUE"}  # the name, as the server wrote it


@pytest.mark.usefixtures("evilform")
def test_activate_apps_connect_line_runs_nothing_and_names_the_server(ip: InteractiveShell, tmp_path: Path) -> None:
    """A received notebook's App output names a server that is not connected: the line to connect it, run as
    printed (its ``...`` replaced by a target), connects under exactly that name and evaluates nothing."""
    from ..conftest import session_of

    session = session_of(ip)
    replies: list[dict[str, Any]] = []
    planted = {"op": "app_activate", "req": 1, "app": "0123456789abcdef", "server": HOSTILE, "tool": "t", "uri": "ui://t/app.html"}  # fmt: skip
    session.apps.handle(planted, replies.append)
    wait_until(lambda: replies, "a reply")
    (reply,) = replies
    assert reply["op"] == "app_error"
    suggested = re.search(r"connect it \((%mcp connect .*) \.\.\.\) and click again", reply["message"])
    assert suggested is not None, reply["message"]
    ran = ip.run_cell(f"{suggested[1]} evilform_server")
    try:
        assert not (tmp_path / "PWNED").exists(), "the server name's {expr} ran in the kernel"
        assert suggested[1] == mcp_line("%mcp", "connect", HOSTILE)
        assert ran.error_in_exec is None, ran.error_in_exec
        assert HOSTILE in session.registry
    finally:
        if HOSTILE in session.registry:
            ip.run_line_magic("mcp", f"disconnect {mcp_line(HOSTILE)}")
