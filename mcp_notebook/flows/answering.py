"""Who answers a server's questions: the form (or presets), the model router, the roots.

A flow hands each input request here whatever the server's generation. Elicitations go to the
flow's ``flows.ui.FlowUI``: interactive runs put them in front of the user (the widget view); headless
runs (``ui.HeadlessUI``) answer from ``--answer``/``--answers``/``--accept-defaults`` through the
same ``FormModel``, so both send identical content for identical values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..forms.model import Answers, FormModel, Question
from ..sampling.router import ModelRouter
from ..wire.roots import Roots
from .ui import FlowUI, HeadlessUI

if TYPE_CHECKING:
    from .flow import Flow

__all__ = ["Answerer", "FlowUI", "HeadlessUI"]


@dataclass
class Answerer:
    answers: Answers = field(default_factory=Answers)
    router: ModelRouter = field(default_factory=ModelRouter)
    root_list: Roots = field(default_factory=Roots)
    ui: FlowUI = field(default_factory=HeadlessUI)  # None given: headless

    def __post_init__(self) -> None:
        if self.ui is None:
            self.ui = HeadlessUI()

    async def elicit(self, flow: Flow, requests: dict[str, Any], context: str = "") -> dict[str, Any]:
        """Ask ``requests``; with a ``context`` (the question may be another call's) no presets apply."""
        limits = flow.limits  # the flow's size bounds: too deep or too wide a form gets no widgets
        questions = [
            Question(
                key,
                params,
                None
                if getattr(params, "mode", "form") == "url"
                else FormModel.from_schema(params.requested_schema, params.message, limits),
                context,
            )
            for key, params in requests.items()
        ]
        return await self.ui.ask(flow, questions, Answers() if context else self.answers)

    async def sample(self, flow: Flow, key: str, params: Any) -> Any:
        """Route, review (interactive) and answer; a failure or a denial is ``ErrorData`` (see sampling.py)."""
        from ..sampling.router import answer_sampling

        return await answer_sampling(self.router, self.ui, flow, key, params)

    async def roots(self, flow: Flow) -> Any:
        return self.note_roots(flow, self.root_list.result())

    @staticmethod
    def note_roots(flow: Flow, result: Any) -> Any:
        """Note in the flow that roots were answered with ``result`` (the session's roots); returns it."""
        names = ", ".join(r.name or r.uri.path.rstrip("/").rsplit("/", 1)[-1] for r in result.roots) or "none"
        flow.notes.append(
            f"roots: answered with {len(result.roots)} root{'s' if len(result.roots) != 1 else ''} ({names})"
        )
        return result
