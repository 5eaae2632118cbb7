"""Print the slowest tests of one or more pytest JUnit XML reports: ``python scripts/slowest.py N FILE...``.

``make test`` runs the suite in two pytest runs (the browser tier on its own workers), so each run's
``--durations`` would list only its own; this lists the slowest of all of them at the end. A test's time
is what pytest records in the report: its setup, call and teardown together.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET


def slowest(count: int, paths: list[str]) -> list[tuple[float, str]]:
    times: list[tuple[float, str]] = []
    for path in paths:
        for case in ET.parse(path).iter("testcase"):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            times.append((float(case.get("time") or 0.0), name))
    return sorted(times, reverse=True)[:count]


def main(argv: list[str]) -> int:
    count, paths = int(argv[0]), argv[1:]
    rows = slowest(count, paths)
    print(
        f"\nthe {len(rows)} slowest tests of {len(paths)} run{'s' if len(paths) != 1 else ''} (setup, call and teardown):"
    )
    for seconds, name in rows:
        print(f"{seconds:8.2f}s  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
