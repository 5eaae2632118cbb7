"""A trace file written with its recording, and a recording called again (``Session.save_trace`` / ``Session.replay``).

The recording and its comparison are ``flows/replay.py``; this module is the session's part: the
file (read bounded, every field checked before use), the connection it names (or the one given),
the withheld secret arguments filled from the given answers, and one headless flow run to its end.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
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
SHOWN_LIMIT = 4_000  # characters of what an unsigned recording would send, shown before asking


def save_trace(flow: Flow, path: str, keep_answers: bool, signer: RecordSigner) -> dict[str, Any]:
    """Write the trace and its recording, signed as saved records are (a replay of a file you did not write asks first)."""
    rec = signer.sign(recording(flow, keep_answers))
    trace = {"flow": flow.label, "protocol": flow.conn.protocol_version, "events": flow.trace(), "replay": rec}
    earlier = flow.rounds.marker("rounds")  # a long flow's trace keeps its newest rounds (flows.flow.ROUNDS_KEPT)
    if earlier:
        trace["dropped"] = earlier
    text = json.dumps(trace, indent=2, default=str)  # ASCII: a lone surrogate from a server cannot break the write
    folder = os.path.dirname(os.path.abspath(path))
    try:  # written whole or not at all: a failure leaves the previous file as it was
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, prefix=".trace-", delete=False) as fh:
            fh.write(text)
        os.replace(fh.name, path)
    except OSError as exc:
        with contextlib.suppress(OSError, NameError):
            os.unlink(fh.name)
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
    except (ValueError, RecursionError) as exc:
        raise SessionError(f"{path} is not a JSON trace file ({type(exc).__name__})", kind="unreadable_file") from None
    signed = isinstance(data, dict) and isinstance(data.get("replay"), dict) and signer.verify(data["replay"])
    try:
        return read_recording(data), signed
    except ValueError as exc:
        raise SessionError(f"{path}: {exc}", kind="bad_input") from None


def _received(path: str, rec: dict[str, Any], reaches: str = "") -> SessionError:
    """A recording this user did not write: everything replaying it would send, shown whole, and nothing sent.

    Every string of the file is JSON with ASCII escapes, so no control, bidi or look-alike character
    hides a part of it; what is too long to show whole is refused without being shown in part.
    ``reaches`` says where the connection it would use sends it (``_reaches``).
    """

    def shown(value: Any) -> str:
        return json.dumps(value, ensure_ascii=True, sort_keys=True, default=str)

    what = {"tools/call": "calls tool", "prompts/get": "gets prompt", "resources/read": "reads"}[rec["method"]]
    answers = [
        f"round {a.round} {shown(a.key) if a.key is not None else '(2025 question)'}: {shown(a.answer)}"
        for a in rec["asked"]
    ]
    told = (
        f"Replayed, it {what} {shown(rec['name'])} on connection {shown(rec['server'])}{reaches} with arguments "
        f"{shown(rec['arguments'])}" + (f" (and asks you for {shown(rec['withheld'])})" if rec["withheld"] else "")
        + (f", and answers as recorded: {'; '.join(answers)}" if answers else ", and answers no question")
    )  # fmt: skip
    head = f"{shown(path)} was not written by you: its recording is not signed with your Jupyter notary secret (a file you received, or one edited since)."  # fmt: skip
    if len(told) > SHOWN_LIMIT:
        told = f"What it would send is {len(told):,} characters long, too long to show here whole: read the file first"
    return SessionError(f"{head} {told}. Nothing was sent.", kind="replay_untrusted", server=rec["server"], details={"path": path})  # fmt: skip


def _reaches(session: Session, name: str) -> str:
    """Where connection ``name`` sends what a replay sends, as a consent shows it ("" when it is not known here, or in-process)."""
    from ..core.urls import consent_url

    if name not in session.registry:
        return ""
    target = session.registry.get(name).target
    if target.kind == "http":
        return f" (which reaches {consent_url(target.url)})"
    if target.kind == "stdio":
        return f" (which runs {target.describe()})"
    return ""  # a server of this kernel: its name says it


def replay(
    session: Session, path: str, server: str | None, answers: Answers, timeout: float | None, trust: bool = False
) -> Replay:
    """Run the recording of ``path`` against ``server`` (else the one it names) headless, to its end.

    A recording this user did not write (its signature does not verify) is refused, shown whole,
    unless ``trust``: it chooses the tool, the arguments and the answers sent to a connected server.
    """
    before, signed = _read(path, session.store.signer)
    if not signed and not trust:
        raise _received(path, before, _reaches(session, server or before["server"]))
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
