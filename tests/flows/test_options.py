"""``FlowOptions``: all a flow is told, once, as ``Session.make_flow`` builds it; nothing is set on a flow afterwards.

The session used to set ``flow.notebook``, ``flow.app_host`` and ``flow.app_main`` on a flow it had made, a map
set ``flow.wants_progress``, an interactive call passed its live view twice (``ui=`` and ``view=``), and the task
following was a base class of ``Flow``. Now the options are one frozen object, a view given once is also where the
flow asks, and the task following is a part the flow holds.
"""

from __future__ import annotations

import dataclasses

import pytest

from mcp_notebook.core.limits import Limits
from mcp_notebook.demo import make_demo
from mcp_notebook.flows.answering import Answerer
from mcp_notebook.flows.flow import Flow
from mcp_notebook.flows.options import FlowOptions
from mcp_notebook.flows.task_follow import TaskFollowing
from mcp_notebook.flows.ui import HeadlessUI
from mcp_notebook.session.session import Session


def test_options_are_frozen_and_default_to_a_headless_flow() -> None:
    options = FlowOptions(answerer=Answerer())
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_rounds = 3  # type: ignore[misc]
    assert isinstance(options.view, HeadlessUI) and options.limits == Limits()
    assert (options.max_rounds, options.save, options.progress, options.apps) == (10, True, True, None)


def test_make_flow_hands_the_flow_everything_at_construction_and_a_later_setting_does_not_reach_it(
    session: Session,
) -> None:
    conn = session.connect("demo", make_demo())
    session.settings.max_rounds = 4
    flow = session.make_flow("tools/call", conn, "echo", {"text": "hi"}, cell_id="c1", save=False, progress=False)
    session.settings.max_rounds = 7  # a %config while it runs changes the next flow, never this one
    o = flow.options
    assert (o.max_rounds, o.cell_id, o.save, o.progress, o.notebook) == (4, "c1", False, False, session.frontend.path)
    assert o.store is session.store and o.task_handles is session.task_handles and o.limits == session.settings.limits
    assert (o.apps, o.app_main) == (None, None)  # not in a kernel's cell: no App is shown
    assert flow.start().result(timeout=30).content[0].text == "hi"
    assert session.make_flow("tools/call", conn, "echo", {"text": "again"}).options.max_rounds == 7


def test_a_view_given_once_shows_the_flow_and_asks_its_questions(session: Session) -> None:
    conn = session.connect("demo", make_demo())
    view = HeadlessUI()
    shown = session.make_flow("tools/call", conn, "echo", {"text": "hi"}, view=view)
    assert shown.view is view and shown.answerer.ui is view
    ui = HeadlessUI()  # a map's shared form: it asks, the rows show nothing of their own
    asked = session.make_flow("tools/call", conn, "echo", {"text": "hi"}, ui=ui)
    assert asked.answerer.ui is ui and asked.view is not ui


def test_task_following_is_a_part_the_flow_holds_with_no_reference_back(session: Session) -> None:
    conn = session.connect("demo", make_demo())
    flow = session.make_flow("tools/call", conn, "echo", {"text": "hi"})
    assert TaskFollowing not in Flow.__mro__ and isinstance(flow.following, TaskFollowing)
    assert flow.following.task_handles is session.task_handles
    assert all(value is not flow for value in vars(flow.following).values())  # a map's flows stay free of cycles
    assert (flow.task, flow.task_ref, flow.task_started) == (None, None, None)
