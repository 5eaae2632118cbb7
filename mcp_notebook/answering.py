"""Who answers a server's questions: the form (or presets), the model router, the roots.

A flow hands each input request here whatever the server's generation. Interactive runs put
elicitations in front of the user through a ``FormUI`` (the widget view); headless runs answer
from ``--answer``/``--answers``/``--accept-defaults`` through the same ``FormModel``, so both send
identical content for identical values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .errors import FlowError
from .form_model import Answers, FormModel, MissingAnswer
from .roots import Roots
from .sampling import ModelRouter

if TYPE_CHECKING:
    from .flows import Flow

__all__ = ["Answerer", "FormUI", "Question"]


@dataclass
class Question:
    """One elicitation of a round, with its form model (``None`` for URL mode)."""

    key: str
    params: Any
    form: FormModel | None

    @property
    def is_url(self) -> bool:
        return getattr(self.params, "mode", "form") == "url"


class FormUI(Protocol):
    """The interactive side: shows every question of a round in one panel, returns the results."""

    async def ask(self, flow: Flow, questions: list[Question], answers: Answers) -> dict[str, Any]: ...


@dataclass
class Answerer:
    answers: Answers = field(default_factory=Answers)
    router: ModelRouter = field(default_factory=ModelRouter)
    root_list: Roots = field(default_factory=Roots)
    ui: FormUI | None = None  # None: headless

    async def elicit(self, flow: Flow, requests: dict[str, Any]) -> dict[str, Any]:
        limits = getattr(flow, "limits", None)  # the flow's size bounds: too deep or too wide a form gets no widgets
        questions = [
            Question(key, params, None if getattr(params, "mode", "form") == "url" else FormModel.from_schema(params.requested_schema, params.message, limits))
            for key, params in requests.items()
        ]
        if self.ui is not None:
            return await self.ui.ask(flow, questions, self.answers)
        return {q.key: self._headless(flow, q) for q in questions}

    def _headless(self, flow: Flow, question: Question) -> Any:
        from mcp.types import ElicitResult

        server = flow.conn.name
        if question.is_url:
            raise FlowError(
                f"{server} asks you to open {question.params.url} ({question.params.message}); "
                "a headless run cannot open links. Run the cell in JupyterLab to continue."
            )
        form = question.form
        assert form is not None
        if not form.checkable:
            raise FlowError(f"{server} asks: {form.message!r}, but {form.reason}. Nothing was sent; raise the limit to answer it.")
        if not form.supported:
            content = dict(form.initial(self.answers))
        else:
            try:
                content = form.headless_content(self.answers, server)
            except MissingAnswer as exc:
                raise FlowError(str(exc)) from None
        errors = form.validate(content)
        if errors:
            listed = "; ".join(f"{name or 'form'}: {why}" for name, why in errors.items())
            raise FlowError(f"{server} asks: {form.message!r}. The preset answers do not fit the form ({listed}).")
        return ElicitResult(action="accept", content=content)

    async def sample(self, flow: Flow, key: str, params: Any) -> Any:
        """Route, review (interactive) and answer; a failure or a denial is ``ErrorData`` (see sampling.py)."""
        from .sampling import answer_sampling

        return await answer_sampling(self.router, self.ui, flow, key, params)

    async def roots(self, flow: Flow) -> Any:
        result = self.root_list.result()
        names = ", ".join(r.name or r.uri.path.rstrip("/").rsplit("/", 1)[-1] for r in result.roots) or "none"
        flow.notes.append(f"roots: answered with {len(result.roots)} root{'s' if len(result.roots) != 1 else ''} ({names})")
        return result
