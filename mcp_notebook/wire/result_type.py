"""A result without ``resultType`` is a complete result (SEP-2322), as the 2026-07-28 spec says.

The spec: "the client MUST assume ``resultType: "complete"`` when it is not specified". The SDK
(2.3) checks a 2026-07-28 result against a schema that requires the field, so a server that leaves
it out (the conformance suite's ``test_mrtr_no_result_type`` does, on purpose) fails the call with a
validation error, in the SDK's own ``Client`` as in ours. Rather than fork the SDK, each session's
dispatcher is wrapped (``complete_by_default``): the raw result of a request that can answer
``input_required`` gets ``"resultType": "complete"`` when it names none, before the SDK validates
it. Nothing else is touched: a result that names its type keeps it, other methods pass as they are.
The dispatcher is the session's one private attribute this package already relies on
(``tasks.TaskClient.create`` sends through it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

__all__ = ["MULTI_ROUND_METHODS", "complete_by_default"]

MULTI_ROUND_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
"""The requests whose result may be ``input_required`` (2026-07-28): the ones a missing type is filled in for."""


class _CompleteByDefault:
    """A dispatcher that fills a missing ``resultType`` of a multi-round result; everything else is the wrapped one's."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def send_raw_request(self, method: str, params: Any, opts: Any = None) -> Any:
        raw = await self._inner.send_raw_request(method, params, opts)
        if method in MULTI_ROUND_METHODS and isinstance(raw, dict) and "resultType" not in raw:
            raw = {**raw, "resultType": "complete"}
        return raw


def complete_by_default(session: ClientSession) -> None:
    """Wrap ``session``'s dispatcher once (an open session; later wraps of the same session do nothing)."""
    inner = getattr(session, "_dispatcher", None)  # the SDK's private attribute: absent in another SDK version
    if inner is None or isinstance(inner, _CompleteByDefault):
        return
    session._dispatcher = _CompleteByDefault(inner)
