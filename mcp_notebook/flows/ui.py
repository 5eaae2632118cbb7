"""``FlowUI``: everything a flow asks of its view, and ``HeadlessUI``, the view of a run nobody watches.

A flow (``Flow.view``) and its answerer (``Answerer.ui``) talk to one of these and never probe
for what it can do:

* state: ``changed``, ``progress``, ``log`` (called on the runtime loop thread; must not block);
* forms: ``ask`` (every elicitation of a round in one panel; returns ``ElicitResult`` per key);
* sampling: ``review_request`` and ``review_reply`` (the two checkpoints of the ``ask`` policy,
  each a ``sampling.Reviewed``), ``show_sampling`` (the ``always`` policy, no waiting),
  ``human_reply`` (the ``human`` provider: the text the person typed, ``None`` when declined);
* ``interactive``: a person is there, so the review policy applies and the human provider can ask;
* ``needs_main_thread``: the UI is served by the kernel's loop, so ``flow.result()`` must not block
  that thread while the flow waits for it.

``live_view.LiveView`` is the interactive implementation. ``HeadlessUI`` answers forms from the
preset answers (``--answer``, ``--answers``, ``--accept-defaults``; ``--decline``/``--cancel`` refuse)
through the same ``FormModel`` as the widgets, reports nothing, never reviews sampling and has nobody to type a reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import FlowError
from ..forms.model import Answers, MissingAnswer

if TYPE_CHECKING:
    from ..auth.sign_in import SignIn, SignInRequest
    from ..forms.model import Question
    from ..sampling.router import Choice, ModelConfig, Reviewed
    from .flow import Flow

__all__ = ["FlowUI", "HeadlessUI", "ShowsSignIn"]


@runtime_checkable
class FlowUI(Protocol):
    """What a flow asks of its view (see the module docstring)."""

    @property
    def interactive(self) -> bool: ...

    @property
    def needs_main_thread(self) -> bool: ...

    def changed(self, flow: Flow) -> None: ...

    def progress(self, flow: Flow) -> None: ...

    def log(self, flow: Flow, entry: dict[str, Any]) -> None: ...

    async def ask(self, flow: Flow, questions: list[Question], answers: Answers) -> dict[str, Any]: ...

    async def review_request(
        self, flow: Flow, key: str, params: Any, choice: Choice, models: list[str]
    ) -> Reviewed: ...

    async def review_reply(self, flow: Flow, key: str, params: Any, result: Any, choice: Choice) -> Reviewed: ...

    async def human_reply(self, flow: Flow, key: str, params: Any, config: ModelConfig) -> str | None: ...

    def show_sampling(self, flow: Flow, key: str, params: Any, choice: Choice, result: Any | None) -> None: ...


@runtime_checkable
class ShowsSignIn(Protocol):
    """A view that shows, in its cell, the sign-in its flow waits for (``notebook.live_view.LiveView``).

    Not every ``FlowUI`` can: a headless run has nobody to show a link to, so its flow just waits.
    """

    def show_sign_in(self, request: SignInRequest, sign_in: SignIn | None) -> None: ...


class HeadlessUI:
    """The ``FlowUI`` of a headless run: preset answers, no output, no review, nobody to type a reply."""

    interactive = False
    needs_main_thread = False

    def changed(self, flow: Flow) -> None:
        pass

    def progress(self, flow: Flow) -> None:
        pass

    def log(self, flow: Flow, entry: dict[str, Any]) -> None:
        pass

    async def ask(self, flow: Flow, questions: list[Question], answers: Answers) -> dict[str, Any]:
        """Answer every question from ``answers``; a missing or unfitting answer is a ``FlowError``."""
        return {q.key: self.answer(flow, q, answers) for q in questions}

    @staticmethod
    def answer(flow: Flow, question: Question, answers: Answers) -> Any:
        from mcp.types import ElicitResult

        server = flow.conn.name
        refusal = answers.refusal(
            question.key, [f.name for f in question.form.fields] if question.form is not None else []
        )
        if refusal is not None:  # --cancel, or --decline naming this question
            return ElicitResult(action=refusal)
        if question.is_url:
            raise FlowError(
                f"{server} asks you to open {question.params.url} ({question.params.message}); "
                "a headless run cannot open links. Run the cell in JupyterLab to continue."
            )
        form = question.form
        assert form is not None
        if not form.checkable:
            raise FlowError(
                f"{server} asks: {form.message!r}, but {form.reason}. Nothing was sent; raise the limit to answer it."
            )
        if not form.supported:
            content = dict(form.initial(answers))
        else:
            try:
                content = form.headless_content(answers, server)
            except MissingAnswer as exc:
                text = f"{server} asks: {form.message!r}. {question.context}" if question.context else str(exc)
                raise FlowError(text, kind="unanswered", server=server, missing_field=exc.field.name) from None
        errors = form.validate(content)
        if errors:
            listed = "; ".join(f"{name or 'form'}: {why}" for name, why in errors.items())
            raise FlowError(f"{server} asks: {form.message!r}. The preset answers do not fit the form ({listed}).")
        return ElicitResult(action="accept", content=content)

    async def review_request(self, flow: Flow, key: str, params: Any, choice: Choice, models: list[str]) -> Reviewed:
        """Not reviewed: the request goes as the server sent it."""
        from ..sampling.router import Reviewed

        return Reviewed(True, params)

    async def review_reply(self, flow: Flow, key: str, params: Any, result: Any, choice: Choice) -> Reviewed:
        """Not reviewed: the reply goes back as the model gave it."""
        from ..sampling.router import Reviewed

        return Reviewed(True, result)

    async def human_reply(self, flow: Flow, key: str, params: Any, config: ModelConfig) -> str | None:
        """Nobody is there to type it."""
        from ..sampling.providers.local import nobody_to_reply

        raise nobody_to_reply(config)

    def show_sampling(self, flow: Flow, key: str, params: Any, choice: Choice, result: Any | None) -> None:
        pass
