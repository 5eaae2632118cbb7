"""A trace file written with its recording, and a recording called again (``Session.save_trace`` / ``Session.replay``).

The recording and its comparison are ``flows/replay.py``; this module is the session's part: the
file (read bounded, every field checked before use), the connection it names (or the one given),
the withheld secret arguments filled from the given answers, and one headless flow run to its end.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from ..errors import FlowError, SessionError
from ..flows.replay import Replay, ReplayAnswerer, differences, read_recording, recording

if TYPE_CHECKING:
    from ..flows.flow import Flow
    from ..flows.trust import RecordSigner
    from ..forms.model import Answers
    from .session import Session

__all__ = ["MAX_FILE_BYTES", "replay", "save_trace"]

MAX_FILE_BYTES = 20_000_000  # a trace file larger than this is refused unread


def save_trace(flow: Flow, path: str, keep_answers: bool, signer: RecordSigner) -> dict[str, Any]:
    """Write the trace and its recording, signed as saved records are (a replay of a file you did not write asks first)."""
    rec = signer.sign(recording(flow, keep_answers))
    trace = {"flow": flow.label, "protocol": flow.conn.protocol_version, "events": flow.trace(), "replay": rec}
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(trace, fh, indent=2, default=str, ensure_ascii=False)
    except OSError as exc:
        raise SessionError(f"could not write {path}: {exc.strerror or exc}", kind="unreadable_file") from None
    return rec


def _read(path: str, signer: RecordSigner) -> tuple[dict[str, Any], bool]:
    """The recording of ``path`` and whether this user wrote it (its signature verifies)."""
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise SessionError(f"{path} is {size:,} bytes; a trace file is read up to {MAX_FILE_BYTES:,}", kind="unreadable_file")  # fmt: skip
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise SessionError(f"could not read {path}: {exc.strerror or exc}", kind="unreadable_file") from None
    except ValueError as exc:
        raise SessionError(f"{path} is not a JSON trace file ({exc})", kind="unreadable_file") from None
    signed = isinstance(data, dict) and isinstance(data.get("replay"), dict) and signer.verify(data["replay"])
    try:
        return read_recording(data), signed
    except ValueError as exc:
        raise SessionError(f"{path}: {exc}", kind="bad_input") from None


def _received(path: str, rec: dict[str, Any]) -> SessionError:
    """A recording this user did not write: what replaying it would send, shown whole, and nothing sent."""
    from ..core.text import one_line
    from ..core.urls import visible

    arguments = one_line(json.dumps(rec["arguments"], ensure_ascii=False, sort_keys=True), 300)
    what = {"tools/call": "calls tool", "prompts/get": "gets prompt", "resources/read": "reads"}[rec["method"]]
    asked = len(rec["asked"])
    return SessionError(
        f"{path} was not written by you: its recording is not signed with your Jupyter notary secret (a file you received, "
        f"or one edited since). Replayed, it {what} {visible(rec['name'])!r} on connection {visible(rec['server'])!r} with "
        f"arguments {visible(arguments)}, and answers {asked} question{'s' if asked != 1 else ''} as recorded. Nothing was sent.",
        kind="replay_untrusted", server=rec["server"], details={"path": path},
    )  # fmt: skip


def replay(
    session: Session, path: str, server: str | None, answers: Answers, timeout: float | None, trust: bool = False
) -> Replay:
    """Run the recording of ``path`` against ``server`` (else the one it names) headless, to its end.

    A recording this user did not write (its signature does not verify) is refused, shown whole,
    unless ``trust``: it chooses the tool, the arguments and the answers sent to a connected server.
    """
    before, signed = _read(path, session.store.signer)
    if not signed and not trust:
        raise _received(path, before)
    conn = session.registry.get(server or before["server"])  # FlowError "unknown_connection" names the connected ones
    arguments = dict(before["arguments"])
    for name in before["withheld"]:
        if name not in answers.fields:
            raise SessionError(
                f"the recording withheld the secret argument {name!r} (it is never written to a file); give its value",
                kind="replay_changed", missing_field=name, details={"path": path},
            )  # fmt: skip
        arguments[name] = answers.fields[name]
    answerer = ReplayAnswerer(before["asked"], answers, router=session.router, root_list=session.roots)
    flow = session.make_flow(
        before["method"], conn, before["name"], arguments, answerer=answerer, save=False, timeout=timeout
    ).start()
    try:
        flow.result()
    except FlowError:
        pass  # a failure is part of the outcome, compared with the recording's
    after = recording(flow, keep_answers=False)
    if flow.error is not None and flow.error.reason == "withheld":  # not the server's change: a value to give
        return Replay(path, before, after, flow, [str(flow.error)])
    return Replay(path, before, after, flow, differences(before, after))
