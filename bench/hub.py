"""A classroom on JupyterHub: thirty students' first calls against one student's alone (issue 40, item 3).

H1  the whole class: every student's tutorial 02 form flow (connect, ``%mcp call demo.ask_everything`` with
    preset answers, headless) started at once, one single-user server and kernel each, one shared demo
    server with two uvicorn workers and a shared ``RequestStateSecurity`` key; wall time from the first
    cell to the last flow's end.
H2  each student's call (the ``%mcp call`` cell, as the hub's proxy carries it: request to idle) in the
    class against the same call by one student alone on the same hub (the ratio of the median, and the
    slowest), so what sharing costs each student is read off directly.
H3  memory per user kernel (its peak RSS after the lesson, ``ru_maxrss``): what a hub must provision.

The hub is tests/hub/classroom.py's (``make hub-deps`` installs JupyterHub and configurable-http-proxy into
.peers/), on 127.0.0.1, with the administrator's policy in force; everything it starts is stopped at the end.
The machine's cores are shared by all the kernels: read H2 against the number of cores.

Usage: python bench/hub.py [--users 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.hub.classroom import installed, run_classroom  # noqa: E402 - after sys.path holds the repository root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    missing = installed()
    if missing:
        print(f"bench/hub.py: {missing}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="mcpnb-hub-") as folder:
        solo, lessons, wall, _room = run_classroom(Path(folder), args.users)
    failed = [f"{x.user}: {x.error}" for x in [solo, *lessons] if x.error]
    calls = sorted(x.seconds for x in lessons if not x.error)
    rss = [x.rss_mb for x in lessons if not x.error]
    figures = {
        "users": args.users,
        "failed": failed,
        "class_wall_s": round(wall, 2),
        "solo_call_s": round(solo.seconds, 3),
        "class_call_median_s": round(statistics.median(calls), 3) if calls else None,
        "class_call_max_s": round(calls[-1], 3) if calls else None,
        "ratio_median": round(statistics.median(calls) / solo.seconds, 1) if calls and solo.seconds else None,
        "ratio_max": round(calls[-1] / solo.seconds, 1) if calls and solo.seconds else None,
        "kernel_rss_mb_mean": round(statistics.mean(rss), 1) if rss else None,
        "kernel_rss_mb_max": round(max(rss), 1) if rss else None,
        "channels_reopened": sum(x.reconnects for x in [solo, *lessons]),
    }
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        print(f"H1  {args.users} students, tutorial 02's form flow at once: {figures['class_wall_s']} s for the class")
        print(
            f"H2  a student's call: {figures['class_call_median_s']} s median, {figures['class_call_max_s']} s slowest; "
            f"alone: {figures['solo_call_s']} s (ratio {figures['ratio_median']} median, {figures['ratio_max']} slowest)"
        )
        print(
            f"H3  memory per user kernel: {figures['kernel_rss_mb_mean']} MB mean, {figures['kernel_rss_mb_max']} MB max"
        )
        if figures["channels_reopened"]:
            print(f"    kernel channels the server closed early and opened again: {figures['channels_reopened']}")
        for line in failed:
            print(f"    FAILED {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
