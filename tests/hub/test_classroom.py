"""Thirty students on one JupyterHub, one shared MCP server, the administrator's policy in force (issue 40, item 3).

A real hub on 127.0.0.1 (tests/hub/classroom.py): the dummy authenticator, the simple local spawner,
configurable-http-proxy, one single-user server and one kernel per student, reached through the
proxy. One demo server runs with two uvicorn workers sharing a ``RequestStateSecurity`` key, so a
round answered on one worker is continued on the other. Each student runs tutorial 02's form flow
(``%mcp call demo.ask_everything`` with preset answers, headless), at the same time.

What must hold: every flow ends with its result, and each student's result carries that student's
own answers (a round's state never crossed to another student); no kernel sees a flow waiting or a
record it did not make; the policy, set by the spawner's ``JUPYTER_CONFIG_PATH``, refuses a URL it
does not list, naming its file, in every kernel. Bounded: the whole class has 15 minutes, and the
hub, its servers, the kernels and the demo server are stopped after it (one process session each).
Slow tier (tests/conftest.py), so `make check` does not run it; `make test` installs it (make hub-deps).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .classroom import ANSWERS, installed, run_classroom

STUDENTS = 30


@pytest.mark.timeout(1200)
def test_thirty_students_run_the_form_flow_at_once(tmp_path: Path) -> None:
    missing = installed()
    assert missing is None, missing
    solo, lessons, wall, room = run_classroom(tmp_path / "classroom", STUDENTS, bounded=900)
    assert room.procs == []  # everything it started is stopped
    assert [f"{x.user}: {x.error}" for x in [solo, *lessons] if x.error] == []
    for lesson in [solo, *lessons]:
        assert {k: lesson.answers.get(k) for k in ANSWERS} == {**ANSWERS, "size": "l"}, lesson.answers  # Large's value
        assert lesson.answers["name"] == lesson.user  # its own answers, never another student's
        assert lesson.waiting == 0 and lesson.records == []  # nothing left waiting, nothing of anyone else's
        assert lesson.refused.startswith("ConnectionFailed: Not connecting 'elsewhere': the administrator's policy")
        assert str(room.policy_file) in lesson.refused
    assert len(lessons) == STUDENTS and wall < 900
