"""100 concurrent tasks to completion through mcp_notebook / the same through the raw SDK session, and the polling load.

For each tasks generation (2025-11-25: tasks in core; 2026-07-28: the ``io.modelcontextprotocol/tasks``
extension) one task server of ``tests/support/task_servers.py`` runs over streamable HTTP in a subprocess,
suggesting a ``pollInterval`` of 100 ms. Every task is a ``slow_job`` of its own duration (0.401 s to
0.5 s), so a result delivered to the wrong call, or lost, shows in its text ("Done after 0.437s").

Wall time: our side starts 100 flows from the caller's thread (``Session.start`` with
``TaskOptions(requested=True)``, unsaved, as ``mcp_notebook.call(..., task=True)``) and waits for all;
the raw side ``asyncio.gather``s 100 loops on one ``mcp.Client``: create, ``tasks/get`` every
``pollInterval`` until the task ends, then the result (2025: ``tasks/result``; 2026: inlined).
On 2025 our side also takes a ``notifications/tasks/status`` as the next status (no poll); the raw
loops only poll.
Blocks alternate (which side goes first, too) and the best block of each side is kept. Target:
ratio <= 1.2. The server, on the same machine, is most of the time: 100 tasks at once keep it busy.

Polling load: the server's count of ``tasks/get`` per task, over the time the client followed the
task (from the create's reply to the end), as requests per task per minute against the
60000 / pollInterval a client may make. The 100 tasks keep the server busy, so each poll waits on
it; a light block (10 tasks of ~3 s, one a side) shows the rate with quick answers. Target: on our
side no task polled more than lifetime / pollInterval + 1 times (the final poll); the raw loops are
shown for comparison. Every figure is printed; the exit status is 1 when a target is missed.

Usage: python bench/tasks.py [--tasks 100] [--blocks 7] [--poll-ms 100] [--light 10] [--light-s 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support.task_servers, from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead import RawClient  # noqa: E402 - after sys.path holds bench/ and the repository root

from tests.support.task_servers import GENERATIONS, TASKS_EXTENSION, Generation, running_task_server, stats_url  # noqa: E402 - after sys.path holds bench/ and the repository root

TARGET_RATIO = 1.2
TOOL = "slow_job"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
TTL_MS = 10_000  # the server's default ttl: it scans its whole store on every request, so old blocks' tasks go


def durations(n: int) -> list[float]:
    """A distinct duration per task, all within one half-second step of the job (one status change)."""
    return [round(0.5 - (i % 100) * 0.001 - (i // 100) * 0.0001, 4) for i in range(n)]


def expected(duration: float) -> str:
    return f"Done after {duration:g}s"


@dataclass
class Block:
    """One side's run of all tasks: wall time, and per task id its polls and followed lifetime (s)."""

    wall: float
    lifetimes: dict[str, float] = field(default_factory=dict)
    polls: dict[str, int] = field(default_factory=dict)


def server_stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(stats_url(url), timeout=10) as response:
        data: dict[str, Any] = json.load(response)
    return data


def reset_stats(url: str) -> None:
    request = urllib.request.Request(stats_url(url).rsplit("/stats", 1)[0] + "/reset", data=b"", method="POST")
    with urllib.request.urlopen(request, timeout=10):
        pass


def count_polls(url: str, block: Block, n: int, side: str) -> Block:
    """Fill ``block.polls`` from the server's counters (reset before the block)."""
    seen = server_stats(url)
    assert seen["tasks_created"] == n, f"{side}: the server created {seen['tasks_created']} tasks, not {n}"
    requests = seen["task_requests"]
    assert set(block.lifetimes) == set(requests), (
        f"{side}: the server saw task requests for other tasks than the {n} followed"
    )
    block.polls = {task_id: requests[task_id].get("tasks/get", 0) for task_id in block.lifetimes}
    return block


# ---------------------------------------------------------------------- the raw SDK side
def raw_models() -> dict[str, Any]:
    """The wire models the raw loops need (built lazily: importing ``mcp`` is part of no measurement)."""
    import mcp_types as types
    from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
    from pydantic import ConfigDict

    class Handle(types.Result):
        """SEP-2663's flat ``CreateTaskResult`` (``resultType: "task"``)."""

        model_config = ConfigDict(extra="allow")
        result_type: Literal["task"] = "task"
        task_id: str
        status: str
        poll_interval_ms: int | None = None

    class Detailed(types.Result):
        """SEP-2663's ``tasks/get``: the task, the result inlined once completed."""

        model_config = ConfigDict(extra="allow")
        task_id: str
        status: str
        poll_interval_ms: int | None = None
        result: dict[str, Any] | None = None

    class TaskIdParams(types.RequestParams):
        task_id: str

    class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
        method: Literal["tasks/get"] = "tasks/get"
        params: TaskIdParams
        name_param: ClassVar[str | None] = "taskId"

    async def unresolved(created: Handle, ctx: ClaimContext) -> types.CallToolResult:
        raise AssertionError("the raw loops take the handle (allow_claimed=True) and poll it themselves")

    class Extension(ClientExtension):
        identifier = TASKS_EXTENSION

        def claims(self) -> list[ResultClaim[Any]]:
            return [ResultClaim(result_type="task", model=Handle, resolve=unresolved)]

    return {
        "types": types,
        "Handle": Handle,
        "Detailed": Detailed,
        "TaskIdParams": TaskIdParams,
        "GetTask": GetTask,
        "Extension": Extension,
    }


async def raw_2025(client: Any, models: dict[str, Any], duration: float, poll_ms: int) -> tuple[str, float]:
    """Create (``params.task``, through the dispatcher), ``tasks/get`` every pollInterval, ``tasks/result``."""
    types = models["types"]
    session = client.session
    created = await session._dispatcher.send_raw_request(
        "tools/call", {"name": TOOL, "arguments": {"duration": duration}, "task": {}}, None
    )
    started = time.perf_counter()
    task_id, status, interval = (
        created["task"]["taskId"],
        created["task"]["status"],
        created["task"].get("pollInterval") or poll_ms,
    )
    while status not in TERMINAL:
        await asyncio.sleep(interval / 1000)
        task = await session.send_request(
            types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)), types.GetTaskResult
        )
        status, interval = task.status, task.poll_interval or poll_ms
    result = await session.send_request(
        types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)), types.CallToolResult
    )
    lifetime = time.perf_counter() - started
    assert status == "completed" and result.content[0].text == expected(duration), (status, result)
    return task_id, lifetime


async def raw_2026(client: Any, models: dict[str, Any], duration: float, poll_ms: int) -> tuple[str, float]:
    """``tools/call`` that the server makes a task (claimed handle), ``tasks/get`` every pollIntervalMs to the end."""
    session = client.session
    handle = await session.call_tool(TOOL, {"duration": duration}, allow_claimed=True)
    started = time.perf_counter()
    assert isinstance(handle, models["Handle"]), handle
    task: Any = handle
    while task.status not in TERMINAL:
        await asyncio.sleep((task.poll_interval_ms or poll_ms) / 1000)
        task = await session.send_request(
            models["GetTask"](params=models["TaskIdParams"](task_id=handle.task_id)), models["Detailed"]
        )
    lifetime = time.perf_counter() - started
    assert (
        task.status == "completed"
        and task.result is not None
        and task.result["content"][0]["text"] == expected(duration)
    ), task
    return handle.task_id, lifetime


# ---------------------------------------------------------------------- one generation
def measure(generation: Generation, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """The blocks of 100 tasks (wall time, load), then one light block a side (load only)."""
    from mcp_notebook.session.session import Session
    from mcp_notebook.wire.tasks import TaskHandles, TaskOptions

    poll_ms = args.poll_ms
    models = raw_models()
    with running_task_server(generation, poll_interval_ms=poll_ms, default_ttl_ms=TTL_MS) as url:
        session = Session()
        session.task_handles = TaskHandles(tmp / f"tasks-{generation}.json")  # never the user's Jupyter data folder
        conn = session.connect(f"tasks{generation}", url)
        raw = RawClient(
            url, **({"mode": "legacy"} if generation == "2025" else {"extensions": [models["Extension"]()]})
        )
        one = raw_2025 if generation == "2025" else raw_2026

        def ours(jobs: list[float]) -> Block:
            reset_stats(url)
            start = time.perf_counter()
            flows = [
                session.start("tools/call", conn, TOOL, {"duration": d}, task=TaskOptions(requested=True), save=False)
                for d in jobs
            ]
            for flow, d in zip(flows, jobs, strict=True):
                result = flow.result(timeout=120)
                assert result.content[0].text == expected(d), (
                    f"ours {generation}: {result.content[0].text!r} for a job of {d}s"
                )
            block = Block(time.perf_counter() - start)
            for flow in flows:
                assert flow.task is not None and flow.task.status == "completed", (
                    f"ours {generation}: the call did not run as a task ({flow.notes})"
                )
                ended = flow.rounds[
                    -1
                ].ended  # the task round's end: the last poll (2026) or tasks/result (2025) answered
                assert flow.task_started is not None and ended is not None
                block.lifetimes[flow.task.task_id] = ended - flow.task_started
            return count_polls(url, block, len(jobs), f"ours {generation}")

        async def gathered(jobs: list[float]) -> Block:
            start = time.perf_counter()
            done = await asyncio.gather(*(one(raw.client, models, d, poll_ms) for d in jobs))
            return Block(time.perf_counter() - start, dict(done))

        def theirs(jobs: list[float]) -> Block:
            reset_stats(url)
            return count_polls(url, raw.run(gathered(jobs)), len(jobs), f"raw {generation}")

        jobs = durations(args.tasks)
        o: list[Block] = []
        r: list[Block] = []
        try:
            ours(jobs)  # warm both sides (tool list cached, connections pooled)
            theirs(jobs)
            for i in range(args.blocks):  # the side that goes first alternates too
                if i % 2:
                    o.append(ours(jobs))
                    r.append(theirs(jobs))
                else:
                    r.append(theirs(jobs))
                    o.append(ours(jobs))
            light = [round(args.light_s - i * 0.001, 3) for i in range(args.light)]
            light_o, light_r = ours(light), theirs(light)
        finally:
            raw.close()
            session.close()
    best_o, best_r = min(b.wall for b in o), min(b.wall for b in r)
    return {
        "ours_s": best_o,
        "raw_s": best_r,
        "ratio": best_o / best_r,
        "pairs": statistics.median(a.wall / b.wall for a, b in zip(o, r, strict=True)),
        "load": {
            f"{args.tasks} x ~0.5s": (load(o, poll_ms), load(r, poll_ms)),
            f"{args.light} x ~{args.light_s:g}s": (load([light_o], poll_ms), load([light_r], poll_ms)),
        },
    }


def load(blocks: list[Block], poll_ms: int) -> dict[str, Any]:
    """Polls per task per minute over every task of ``blocks``; the tasks polled more than lifetime / pollInterval + 1 times."""
    polls = [b.polls[t] for b in blocks for t in b.lifetimes]
    lifetimes = [b.lifetimes[t] for b in blocks for t in b.lifetimes]
    return {
        "per_minute": sum(polls) / (sum(lifetimes) / 60),
        "polls": sum(polls) / len(polls),
        "lifetime": sum(lifetimes) / len(lifetimes),
        "worst": max(zip(polls, lifetimes, strict=True), key=lambda ps: ps[0] - ps[1] * 1000 / poll_ms),
        "over": sum(p > s * 1000 / poll_ms + 1 for p, s in zip(polls, lifetimes, strict=True)),
        "tasks": len(polls),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--blocks", type=int, default=7)
    parser.add_argument("--poll-ms", type=int, default=100)
    parser.add_argument(
        "--light", type=int, default=10, help="tasks of the light block (polling load without a busy server)"
    )
    parser.add_argument("--light-s", type=float, default=3.0, help="seconds each task of the light block runs")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = {generation: measure(generation, args, Path(tmp)) for generation in GENERATIONS}
    failed = False
    print(
        f"{args.tasks} concurrent tasks to completion, pollInterval {args.poll_ms} ms   {'ours':>8} {'raw SDK':>8} {'ratio':>7} {'pairs':>6}  target"
    )
    for generation, r in results.items():
        ok = r["ratio"] <= TARGET_RATIO
        failed |= not ok
        print(
            f"  {generation:46} {r['ours_s']:7.3f}s {r['raw_s']:7.3f}s {r['ratio']:7.3f} {r['pairs']:6.3f}  <= {TARGET_RATIO} {'ok' if ok else 'OVER'}"
        )
    print("  (best block of each side; pairs: the median ratio of back-to-back blocks, a view of the noise)")
    print(
        f"polling load: tasks/get per task per minute of its lifetime (allowed {60_000 / args.poll_ms:g}/min; a task may be polled lifetime/pollInterval + 1 times)"
    )
    print(
        f"  {'':5} {'tasks':14} {'side':5} {'per min':>8} {'polls/task':>10} {'lifetime':>9} {'worst task':>16} {'over':>9}"
    )
    for generation, r in results.items():
        for run, sides in r["load"].items():
            for side, figures in zip(("ours", "raw"), sides, strict=True):
                ok = figures["over"] == 0
                if side == "ours":
                    failed |= not ok
                verdict = ("ok" if ok else "OVER") if side == "ours" else "(reference)"
                polls, lifetime = figures["worst"]
                worst = f"{polls} in {lifetime:.3f}s"
                print(
                    f"  {generation:5} {run:14} {side:5} {figures['per_minute']:8.1f} {figures['polls']:10.2f} {figures['lifetime']:8.3f}s {worst:>16} {figures['over']:>4}/{figures['tasks']:<4} {verdict}"
                )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
