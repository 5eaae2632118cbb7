"""What answering a sampling request needs of the flow that asks and of the person who reviews it.

``sampling`` sits below ``flows``: it must not import the ``Flow`` or its ``FlowUI``. It names the
little it uses of them here, as protocols a ``flows.Flow`` and a ``flows.ui.FlowUI`` satisfy as they
are (mypy checks it where the flow hands itself over, ``Answerer.sample``):

* ``Asking``: the asker leaves notes in its cell, may end while a panel is open, and shows itself as
  waiting while a person reviews (``waiting_for``);
* ``Reviewer``: the two checkpoints of the ``ask`` policy (``review_request``, ``review_reply``, each a
  ``Reviewed``), ``show_sampling`` for ``always``, and ``human_reply`` for the ``human`` provider.
  ``None`` where nobody watches: no review, and the human provider has nobody to ask.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .router import Choice, ModelConfig, Reviewed

__all__ = ["Asking", "Reviewer"]


class Asking(Protocol):
    """The flow a sampling request belongs to (``flows.Flow``)."""

    @property
    def notes(self) -> list[str]:
        """Where the asker's notes go (``append``); a flow's keeps its newest (``core.kept.Kept``)."""
        ...

    @property
    def finished(self) -> bool: ...

    async def waiting_for(self, awaitable: Awaitable[Any]) -> Any:
        """Show the asker as waiting for a person while ``awaitable`` runs; give up if it ends meanwhile."""
        ...


class Reviewer(Protocol):
    """The person's side of sampling (``flows.ui.FlowUI``); ``interactive`` says whether one is there."""

    @property
    def interactive(self) -> bool: ...

    async def review_request(self, flow: Any, key: str, params: Any, choice: Choice, models: list[str]) -> Reviewed: ...

    async def review_reply(self, flow: Any, key: str, params: Any, result: Any, choice: Choice) -> Reviewed: ...

    async def human_reply(self, flow: Any, key: str, params: Any, config: ModelConfig) -> str | None: ...

    def show_sampling(self, flow: Any, key: str, params: Any, choice: Choice, result: Any | None) -> None: ...
