"""A hostile server's questions in a map's form (``map_async``'s ``MapQuestions``), through real calls.

The hostile server (``hostile.py``) puts script in every string of its elicitation: the form in the
map's cell shows them as text. Its URL-mode question (a look-alike link and a ``javascript:`` URL)
is shown (a map with a person there can open it) but never answered "for every remaining row":
each row's link is its own, so the checkbox is off and says why. (A row's own arguments, markup
from the user's data, read as text above the form: ``tests/mapping/test_questions.py``.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ipywidgets as w
import pytest

from mcp_notebook.mapping.questions import MapQuestions
from mcp_notebook.mapping.rows import CallSpec, run_rows
from mcp_notebook.session.session import Session

from ..support.waiting import wait_until
from .hostile import HOSTILE, make_server
from .test_hostile import widget_leaks, widget_text

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def session_servers() -> dict[str, Any]:
    return {"h": make_server()}


def shown(questions: MapQuestions) -> w.Widget:
    wait_until(lambda: questions.area.children, "a question shown", timeout=20)
    return questions.area.children[0]


def press(box: w.Widget, description: str) -> None:
    buttons = [b for b in _walk(box) if isinstance(b, w.Button) and b.description == description and not b.disabled]
    assert buttons, f"no {description} button"
    buttons[0].click()


def _walk(widget: w.Widget) -> Iterator[w.Widget]:
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from _walk(child)


def run(session: Session, tool: str, rows: list[dict[str, Any]]) -> tuple[MapQuestions, Any]:
    conn = session.registry.get("h")
    schema = session.tool_schema_sync(conn, tool)
    questions = MapQuestions(
        schema, f"h.{tool} {HOSTILE}", stop=lambda: None
    )  # a label with markup; no kernel loop here: drawing runs at once
    spec = CallSpec(tool=tool, concurrency=1, retries=0)
    return questions, session.runtime.submit(run_rows(session, conn, spec, rows, ui=questions))


def test_the_form_shows_the_servers_script_and_the_rows_markup_as_text(session: Session) -> None:
    questions, future = run(session, "hostile_form", [{}, {}])
    box = shown(questions)
    assert widget_leaks(box) == []
    text = widget_text(box)
    assert "[elicit-message] <script>window.__pwned=1</script>" in text  # shown, as text
    assert f"h.hostile_form {HOSTILE} asks, for the row with no arguments" in text  # the label too
    press(box, "Decline")  # no "for all": the second row is asked on its own
    box = shown(questions)
    assert widget_leaks(box) == []
    press(box, "Decline")
    outcomes = future.result(timeout=20)
    assert len(outcomes) == 2 and questions.asked == 2


def test_a_url_question_is_never_answered_for_the_other_rows(session: Session) -> None:
    questions, future = run(session, "hostile_url", [{"which": "evil"}, {"which": "evil"}])
    box = shown(questions)
    assert widget_leaks(box) == []
    check = next(c for c in _walk(box) if isinstance(c, w.Checkbox))
    assert check.disabled and check.description == "Each row is asked this on its own (a link to open)"
    assert not any(isinstance(c, w.HTML) and 'href="javascript:' in c.value for c in _walk(box))
    press(box, "Cancel")
    box = shown(questions)  # the second row asks again: its link is its own
    press(box, "Cancel")
    future.result(timeout=20)
    assert questions.asked == 2 and questions.for_all == {}


def test_the_answered_for_all_note_shows_the_servers_field_names_as_text() -> None:
    from mcp.types import ElicitResult

    questions = MapQuestions({}, "h.tool", stop=lambda: None)
    questions._note_for_all([ElicitResult(action="accept", content={HOSTILE: "a value typed by the user"})])
    assert widget_leaks(questions.widget) == []
    text = widget_text(questions.widget)
    assert (
        "<script>window.__pwned=1</script>" in text and "a value typed by the user" not in text
    )  # the name as text, never the value
