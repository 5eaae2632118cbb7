"""``mapping.map``: a tool over 1,000 rows (stdio, HTTP, in-process, Dask workers), in order, with retries,
the failure table, ``on_error`` both ways and preset answers for every row's questions."""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from mcp_notebook.core.redact import MASK
from mcp_notebook.errors import FlowError
from mcp_notebook.mapping import map as mapping
from mcp_notebook.mapping.dask import Remote
from mcp_notebook.mapping.rows import CallSpec, MapStop, run_rows
from mcp_notebook.notebook.map_progress import MapProgress
from mcp_notebook.session.session import Session

from ..conftest import REPO_ROOT, StartHttpServer, get_shell
from ..support.kernel_harness import running_kernel
from ..support.waiting import wait_until

DEMO_STDIO = [sys.executable, "-m", "mcp_notebook.demo", "demo"]
ROWS = 1000


def texts(n: int = ROWS) -> pd.DataFrame:
    return pd.DataFrame(
        {"text": [f"row {i}: {'x' * (i % 7)}" for i in range(n)], "n": range(n)}, index=pd.RangeIndex(100, 100 + n)
    )


def check_echoed(out: pd.DataFrame, frame: pd.DataFrame, check_dtype: bool = True) -> None:
    """The input untouched, in its order and index, plus each row's own echo (Dask stores strings its own way: dtype not checked)."""
    assert list(out.columns) == [*frame.columns, "result"]
    assert out.index.equals(frame.index)
    pd.testing.assert_frame_equal(out[list(frame.columns)], frame, check_dtype=check_dtype)
    assert out["result"].tolist() == frame["text"].tolist()


# ---------------------------------------------------------------------- real transports, 1,000 rows
def test_dataframe_over_stdio(session: Session) -> None:
    session.connect("demo", DEMO_STDIO, cwd=str(REPO_ROOT))
    frame = texts()
    out = mapping.map("demo.echo", frame[["text"]], concurrency=16, session=session)
    check_echoed(out, frame[["text"]])


def test_dataframe_over_http_with_renamed_columns(session: Session, http_demo_server: str) -> None:
    session.connect("web", http_demo_server)
    frame = texts().rename(columns={"text": "message"})[["message"]]
    out = mapping.map("web.echo", frame, concurrency=16, columns={"message": "text"}, session=session)
    assert out["result"].tolist() == frame["message"].tolist()
    assert out.index.equals(frame.index) and list(out.columns) == ["message", "result"]


def test_list_of_dicts_gives_results_in_order_and_single_argument_values(session: Session) -> None:
    from mcp_notebook.demo import make_demo

    session.connect("demo", make_demo())
    values = [f"v{i}" for i in range(200)]
    results = mapping.map(
        "demo.echo", ({"text": v} for v in values), concurrency=7, session=session
    )  # any iterable of dicts
    assert [r.content[0].text for r in results] == values
    assert [
        r.content[0].text for r in mapping.map("demo.echo", values, session=session)
    ] == values  # a one-argument tool: plain values
    frame = pd.DataFrame({"word": values, "other": 1})
    assert mapping.map("demo.echo", frame, column="word", session=session)["result"].tolist() == values
    added = mapping.map("demo.add", pd.DataFrame({"a": [1, 2, 3], "b": [10, 20, 30]}), expand=True, session=session)
    assert added["result"].tolist() == [11, 22, 33]  # the structured content {"result": ...} as a column


# ---------------------------------------------------------------------- failures, retries, on_error
class Flaky:
    """An in-process server whose ``lookup`` fails for good on rows 3, 13, 23, ... and once on rows 7, 17, 27, ..."""

    def __init__(self) -> None:
        self.calls: dict[int, int] = {}
        self.server: MCPServer[Any] = MCPServer("flaky")

        async def lookup(n: int, api_key: str) -> str:
            self.calls[n] = self.calls.get(n, 0) + 1
            if n % 10 == 3:
                raise ToolError(f"no record {n}")
            if n % 10 == 7 and self.calls[n] == 1:
                raise ToolError(f"busy, try again ({n})")
            return f"record {n}"

        self.server.tool(name="lookup", structured_output=False)(lookup)


def rows(n: int = ROWS) -> list[dict[str, Any]]:
    return [{"n": i, "api_key": f"sk-secret-{i}"} for i in range(n)]


def test_retries_and_keep(session: Session) -> None:
    flaky = Flaky()
    session.connect("flaky", flaky.server)
    out = mapping.map("flaky.lookup", rows(), concurrency=16, retries=2, on_error="keep", session=session)
    assert len(out) == ROWS
    for i, outcome in enumerate(out):
        if i % 10 == 3:
            assert isinstance(outcome, FlowError) and outcome.kind == "tool_error" and f"no record {i}" in str(outcome)
            assert flaky.calls[i] == 3  # the first call and two retries
        else:
            assert not isinstance(outcome, FlowError) and outcome.content[0].text == f"record {i}"
            assert flaky.calls[i] == (2 if i % 10 == 7 else 1)  # failed once, then the retry succeeded


def test_raise_names_the_failures_in_one_table_with_secrets_masked(session: Session) -> None:
    flaky = Flaky()
    session.connect("flaky", flaky.server)
    with pytest.raises(mapping.MapError) as caught:
        mapping.map("flaky.lookup", rows(), concurrency=16, session=session)  # retries=0: rows 7, 17, ... fail too
    error = caught.value
    failed = [i for i in range(ROWS) if i % 10 in (3, 7)]
    assert str(error).startswith(f"{len(failed)} of {ROWS} calls of flaky.lookup failed\n")
    assert [row for row, _, _ in error.failures] == failed
    assert all(args["api_key"] == MASK for _, args, _ in error.failures)
    assert "sk-secret" not in str(error) and "sk-secret" not in repr(error.table._repr_mimebundle_())
    table = error.table  # compact: the first 20 failed rows, the rest counted
    assert table.title == f"200 of {ROWS} calls of flaky.lookup failed"
    assert table.columns == ["row", "arguments", "error"] and [r[0] for r in table.rows] == failed[:20]
    assert table.rows[0][1:] == [f"n=3, api_key='{MASK}'", "Error executing tool lookup: no record 3"]
    assert table.rows[1][2] == "Error executing tool lookup: busy, try again (7)"
    assert table.notes == ["... and 180 more failed rows"]
    text = str(error)
    line = next(t for t in text.splitlines() if t.startswith("3 "))
    assert line.split() == [
        "3",
        "n=3,",
        f"api_key='{MASK}'",
        "Error",
        "executing",
        "tool",
        "lookup:",
        "no",
        "record",
        "3",
    ]
    assert "... and 180 more failed rows" in text
    assert [isinstance(o, FlowError) for o in error.results] == [
        i % 10 in (3, 7) for i in range(ROWS)
    ]  # the work done is kept


def test_keep_shows_the_table_in_ipython(session: Session, capsys: pytest.CaptureFixture[str]) -> None:
    get_shell()  # an IPython shell is running: the table is displayed (its text form here)
    flaky = Flaky()
    session.connect("flaky", flaky.server)
    out = mapping.map("flaky.lookup", rows(30), on_error="keep", session=session)
    shown = capsys.readouterr().out
    assert "6 of 30 calls of flaky.lookup failed" in shown and "row  arguments" in shown
    assert "no record 23" in shown and "busy, try again (27)" in shown and "sk-secret" not in shown
    assert sum(isinstance(o, FlowError) for o in out) == 6


def test_dataframe_keep_holds_the_error_in_its_row(session: Session) -> None:
    flaky = Flaky()
    session.connect("flaky", flaky.server)
    frame = pd.DataFrame({"n": range(20), "key": [f"k{i}" for i in range(20)]})
    out = mapping.map("flaky.lookup", frame, columns={"key": "api_key"}, retries=1, on_error="keep", session=session)
    assert list(out.columns) == ["n", "key", "result"]
    for i, value in enumerate(out["result"]):
        assert (isinstance(value, FlowError) and "no record" in str(value)) if i % 10 == 3 else value == f"record {i}"


# ---------------------------------------------------------------------- questions: presets for every row
def test_presets_answer_every_rows_questions(session: Session) -> None:
    session.connect("demo", DEMO_STDIO, cwd=str(REPO_ROOT))
    frame = pd.DataFrame({"name": [f"db{i}" for i in range(300)], "size": ["small", "large", "medium"] * 100})
    out = mapping.map(
        "demo.provision_db",
        frame,
        concurrency=16,
        answers={"region": "us-east-1"},
        accept_defaults=True,
        session=session,
    )
    assert out["result"].tolist() == [
        f"Provisioned 'db{i}' in us-east-1 (size {s})." for i, s in enumerate(frame["size"])
    ]


def test_without_presets_every_row_fails_unanswered_and_is_not_retried(session: Session) -> None:
    from mcp_notebook.demo import make_demo

    session.connect("demo", make_demo())
    out = mapping.map(
        "demo.provision_db", [{"name": f"db{i}"} for i in range(5)], retries=3, on_error="keep", session=session
    )
    assert all(isinstance(o, FlowError) and o.kind == "unanswered" and o.missing_field == "region" for o in out)


def test_bad_input_is_refused_before_any_call(session: Session) -> None:
    from mcp_notebook.demo import make_demo

    session.connect("demo", make_demo())
    with pytest.raises(FlowError, match="one argument"):
        mapping.map("demo.add", [1, 2], session=session)
    with pytest.raises(FlowError, match="on_error"):
        mapping.map("demo.echo", [], on_error="ignore", session=session)  # type: ignore[arg-type]
    assert mapping.map("demo.echo", [], session=session) == []


def test_map_magic_reads_the_notebook_variable(session: Session) -> None:
    from mcp_notebook.demo import make_demo
    from mcp_notebook.forms.model import Answers

    session.connect("demo", make_demo())
    namespace = {"names": pd.DataFrame({"name": ["a", "b"], "x": [1, 2]})}
    out = mapping.map_magic(
        session,
        namespace,
        "demo.provision_db",
        "names",
        "name",
        4,
        0,
        False,
        False,
        Answers(fields={"region": "us-west-2"}, accept_defaults=True),
    )
    assert out["result"].tolist() == [
        "Provisioned 'a' in us-west-2 (size small).",
        "Provisioned 'b' in us-west-2 (size small).",
    ]
    kept = mapping.map_magic(session, {"words": ["x", "y"]}, "demo.fail", "words", None, 2, 0, True, False, None)
    assert [str(e) for e in kept] == [
        "demo.fail returned an error: Error executing tool fail: x",
        "demo.fail returned an error: Error executing tool fail: y",
    ]
    with pytest.raises(FlowError, match="no variable 'nope'"):
        mapping.map_magic(session, namespace, "demo.echo", "nope", None, 4, 0, False, False, None)


values_server = MCPServer("values")


@values_server.tool()
def priced(fruit: str) -> dict[str, float]:
    """Structured content, with its JSON as text."""
    return {"price": {"pear": 0.75, "plum": 0.3}[fruit]}


@values_server.tool()
def weight(fruit: str) -> float:
    """A plain value: the SDK sends the text "2.0" and {"result": 2.0}."""
    return {"pear": 2.0, "plum": 0.5}[fruit]


@values_server.tool()
def dumped(fruit: str) -> str:
    """A tool that returns JSON as a string (wrapped as {"result": "<json>"})."""
    return f'{{"fruit": "{fruit}", "tags": ["ripe"]}}'


@values_server.tool()
def code(fruit: str) -> str:
    """A text that reads as a number stays text."""
    return "0042"


def test_map_magic_result_column_holds_values_not_json_strings() -> None:
    """Issue 21 item 4: ``%mcp map -o`` puts values in its result column (tutorial 09 printed '{\\n  "price": 0.5\\n}')."""
    ip: InteractiveShell = get_shell()
    ip.user_ns.update(values_server=values_server, fruit_rows=pd.DataFrame({"fruit": ["pear", "plum"]}))
    ip.run_line_magic("mcp", "connect values values_server")
    try:
        for tool, want in [
            ("priced", [{"price": 0.75}, {"price": 0.3}]),
            ("weight", [2.0, 0.5]),
            ("dumped", [{"fruit": "pear", "tags": ["ripe"]}, {"fruit": "plum", "tags": ["ripe"]}]),
            ("code", ["0042", "0042"]),
        ]:
            assert ip.run_line_magic("mcp", f"map values.{tool} --over fruit_rows -o mapped") is None
            assert ip.user_ns["mapped"]["result"].tolist() == want, tool
            assert [type(v) for v in ip.user_ns["mapped"]["result"]] == [type(v) for v in want], tool
    finally:
        ip.run_line_magic("mcp", "disconnect values")


def test_no_progress_bar_outside_a_kernel() -> None:
    assert MapProgress.in_kernel(10, "x") is None


def test_progress_bar_and_failure_table_in_a_real_kernel(tmp_path: Any) -> None:
    setup = "import pandas as pd\nfrom mcp_notebook.mapping import map as mapping\nfrom mcp_notebook.session.session import Session\nfrom mcp_notebook.demo import make_demo\ns = Session()\ns.connect('demo', make_demo())"
    with running_kernel(str(REPO_ROOT), setup) as kernel:
        msg = kernel.execute(
            "out = mapping.map('demo.fail', [{'message': f'm{i}'} if i % 50 == 0 else {'message': 'x', 'bad': 1} for i in range(400)], concurrency=8, on_error='keep', session=s)"
        )
        kernel.pump(0.5)
        bars = kernel.find_widgets("IntProgressModel", value=400, max=400)
        assert len(bars) == 1 and kernel.comms[bars[0]]["bar_style"] == "danger"
        assert kernel.find_widgets("LabelModel") and any(
            str(kernel.comms[c].get("value", "")).startswith("demo.fail: 400 of 400, 400 failed")
            for c in kernel.find_widgets("LabelModel")
        )
        text = kernel.text_of_cell(msg)
        assert (
            "400 of 400 calls of demo.fail failed" in text
            and "0    message='m0'" in text
            and "... and 380 more failed rows" in text
        )
        # the bar moves while the cell runs: a map of about a second (rows of 20 ms, 8 at a time) sends several values before it ends
        slow = kernel.execute(
            "slow = mapping.map('demo.slow_count', [{'n': 1, 'delay': 0.02}] * 400, concurrency=8, session=s)"
        )
        kernel.pump(0.5)
        bar = kernel.find_widgets("IntProgressModel", value=400, max=400, bar_style="success")
        assert len(bar) == 1
        values = [
            m["content"]["data"]["state"]["value"]
            for m in kernel.for_cell(slow)
            if m["msg_type"] == "comm_msg"
            and "value" in m["content"]["data"].get("state", {})
            and m["content"]["comm_id"] == bar[0]
        ]
        assert len(values) >= 3 and values == sorted(values) and values[-1] == 400, values


# ---------------------------------------------------------------------- past one kernel: Dask workers
@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    from distributed import Client, LocalCluster

    env = {"MAP_WORKER_TOKEN": "worker-secret-token", "PYTHONPATH": str(REPO_ROOT)}
    with (
        LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None, env=env) as cluster,
        Client(cluster) as client,
    ):
        yield client


def test_dask_dataframe_on_two_workers_against_a_multi_worker_server(
    session: Session, start_http_server: StartHttpServer, dask_client: Any
) -> None:
    import dask.dataframe as dd

    url = start_http_server("demo", keys_env="MAP_TEST_STATE_KEY", workers=2)
    session.connect("web", url)
    frame = texts()[["text"]]
    out = mapping.map("web.echo", dd.from_pandas(frame, npartitions=8), concurrency=8, session=session)
    check_echoed(out, frame, check_dtype=False)
    # questions answered on the workers from the presets, over rounds that any server worker may take
    names = pd.DataFrame({"name": [f"db{i}" for i in range(120)]})
    provisioned = mapping.map(
        "web.provision_db",
        dd.from_pandas(names, npartitions=4),
        answers={"region": "ap-southeast-1"},
        accept_defaults=True,
        session=session,
    )
    assert provisioned["result"].tolist() == [
        f"Provisioned 'db{i}' in ap-southeast-1 (size small)." for i in range(120)
    ]
    pids = dask_client.run(os.getpid)
    assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()


def test_dask_bag_uses_the_workers_token_and_reports_failures(
    session: Session, start_http_server: StartHttpServer, dask_client: Any
) -> None:
    import dask.bag as db

    assert "MAP_WORKER_TOKEN" not in os.environ  # the token lives only in the workers' environment
    url = start_http_server("demo", keys_env="MAP_TEST_STATE_KEY", workers=2)
    session.connect("web", url)
    seen = mapping.map(
        "web.request_headers",
        db.from_sequence([{"names": ["authorization"]}] * 6, npartitions=3),
        bearer_env="MAP_WORKER_TOKEN",
        session=session,
    )
    assert [r.structured_content for r in seen] == [{"authorization": "Bearer worker-secret-token"}] * 6
    spec = Remote(
        name="web",
        url=url,
        bearer_env="MAP_WORKER_TOKEN",
        protocol="auto",
        spec=CallSpec(tool="echo", concurrency=1, retries=0),
    )
    assert b"worker-secret-token" not in pickle.dumps(spec)  # what a task carries: the variable's name only

    bag_rows = [{"text": f"r{i}"} if i % 100 != 42 else {"wrong": i} for i in range(500)]
    with pytest.raises(mapping.MapError) as caught:
        mapping.map("web.echo", db.from_sequence(bag_rows, npartitions=5), session=session)
    assert str(caught.value).startswith("5 of 500 calls of web.echo failed")
    assert [row for row, _, _ in caught.value.failures] == [
        42,
        142,
        242,
        342,
        442,
    ]  # global row numbers, across partitions
    assert caught.value.failures[1][1] == {"wrong": 142}
    kept = mapping.map("web.echo", db.from_sequence(bag_rows, npartitions=5), on_error="keep", session=session)
    assert [isinstance(o, FlowError) for o in kept] == [i % 100 == 42 for i in range(500)]
    assert [o.content[0].text for i, o in enumerate(kept) if i % 100 != 42] == [
        f"r{i}" for i in range(500) if i % 100 != 42
    ]


def test_dask_refuses_a_server_the_workers_cannot_reach(session: Session, dask_client: Any) -> None:
    import dask.bag as db

    from mcp_notebook.demo import make_demo

    session.connect("demo", make_demo())
    with pytest.raises(FlowError, match="only an HTTP URL"):
        mapping.map("demo.echo", db.from_sequence([{"text": "a"}]), session=session)


def test_map_async_outside_a_kernel_answers_from_presets_and_refuses_to_ask(session: Session) -> None:
    import asyncio

    from mcp_notebook.demo import make_demo

    session.connect("demo", make_demo())
    rows = [{"name": f"db{i}"} for i in range(3)]
    out = asyncio.run(
        mapping.map_async(
            "demo.provision_db", rows, answers={"region": "us-west-2"}, accept_defaults=True, session=session
        )
    )
    assert [r.content[0].text for r in out] == [f"Provisioned 'db{i}' in us-west-2 (size small)." for i in range(3)]
    with pytest.raises(FlowError, match="ask=True needs a notebook kernel") as refused:
        asyncio.run(mapping.map_async("demo.provision_db", rows, ask=True, session=session))
    assert refused.value.kind == "bad_input"
    with pytest.raises(
        mapping.MapError
    ) as failed:  # nobody to ask: the rows fail unanswered, and the table says how to answer
        asyncio.run(mapping.map_async("demo.provision_db", rows[:1], session=session))
    assert [e.kind for _, _, e in failed.value.failures] == ["unanswered"]
    assert "answers={...}" in str(failed.value) and "map_async" in str(failed.value)


def test_a_row_cancelled_while_waiting_its_turn_leaves_the_shown_form_alone(session: Session) -> None:
    """Two rows ask at once: the first one's form shows; the second, still waiting its turn, is cancelled; the form stays and still answers."""

    from mcp_notebook.demo import make_demo
    from mcp_notebook.mapping.questions import MapQuestions

    conn = session.connect("demo", make_demo())
    questions = MapQuestions(
        session.tool_schema_sync(conn, "provision_db"), "demo.provision_db", stop=lambda: None
    )  # no kernel loop: drawn at once
    stop = MapStop()
    spec = CallSpec(tool="provision_db", concurrency=2, retries=0)
    future = session.runtime.submit(
        run_rows(session, conn, spec, [{"name": "a"}, {"name": "b"}], ui=questions, stop=stop)
    )
    wait_until(
        lambda: questions.area.children and sum(questions.waiting.values()) == 1,
        "the first form and a second row waiting",
        timeout=20,
    )
    box = questions.area.children[0]
    asking = "a" if "name=&#x27;a&#x27;" in box.children[0].value or "name='a'" in box.children[0].value else "b"
    waiting = next(f for f in list(stop.flows) if f.arguments["name"] != asking)
    waiting.cancel()
    wait_until(lambda: not any(f is waiting for f in list(stop.flows)), "the waiting row cancelled", timeout=20)
    assert questions.area.children == (box,)  # the shown form is still there
    for _ in range(2):  # the region (its default prefilled), then the confirmation: each a form of this row
        wait_until(lambda: questions.area.children, "the row's next form", timeout=20)
        next(b for b in _buttons(questions.area.children[0]) if b.description == "Accept" and not b.disabled).click()
    outcomes = future.result(timeout=20)
    by_name = {"a": outcomes[0], "b": outcomes[1]}
    assert isinstance(by_name[asking], FlowError) is False and by_name[asking].content[0].text.startswith(
        f"Provisioned '{asking}'"
    )
    assert (
        isinstance(by_name["b" if asking == "a" else "a"], FlowError)
        and by_name["b" if asking == "a" else "a"].kind == "cancelled"
    )


def _buttons(widget: Any) -> list[Any]:
    import ipywidgets as w

    found = [widget] if isinstance(widget, w.Button) else []
    for child in getattr(widget, "children", ()) or ():
        found.extend(_buttons(child))
    return found
