"""``Store``: the kernel's thread-safe table of saved records, and where each came from.

The ``Store`` is fed from three places: flows of this kernel (``save``/``delete``, from the
runtime loop thread), the JupyterLab extension's ``restore`` reply (``merge``, on the kernel's main
thread or a subshell thread), and a saved ``.ipynb`` read from disk (``record.read_notebook``). A
``backend`` (the session's ``Page``: the comm client in ``notebook/frontend.py``) mirrors every save
and delete into the notebook; without one the records live in memory. Every record this kernel
saves is signed; a taken one is trusted only once its signature verifies or the user consented.
Consent is bound to the record's content (``trust.content_digest``), never to its flow id: a
record taken later under the same id is not covered by it. Two different records claiming one id
(a received notebook's cell output and its metadata) are a *conflict*: both are kept, neither is
trusted, and nothing resumes that id until the person chooses one (``choose``) or forgets it.
What a record holds, and how it is checked and read, is ``record.py``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, Protocol

from .record import DEFAULT_MAX_RECORD_BYTES, SavedFlow, record_size
from .trust import RecordSigner, content_digest, digest_matches

__all__ = ["CLAIMANTS_KEPT", "GONE_KEPT", "Origin", "Store", "StoreBackend"]

CLAIMANTS_KEPT = 16
"""Different records kept for one id in conflict (a received notebook may repeat an id in every output)."""

SHOWN_KEPT = 1_000
"""Flow ids whose last shown content is remembered (for a bare ``--trust``)."""

GONE_KEPT = 1_000
"""Deleted ids a ``Store`` remembers (the newest), so that a restore cannot bring their records back.

Only ids whose record the store held are remembered: a call that never waited has no record any
page or file could hold, so the ten thousand calls of a long session add none. A restore that was
computed before a delete arrives within seconds, and a page that reloads after missing deletes
holds at most the records of its notebook: the last thousand deletes cover both. A record deleted
longer ago that a page still offers is taken back as waiting: it is the user's own signed record,
so ``%mcp resume`` (or Continue) sends its state again, and the server answers as it does for any
old state (one that expired: refused, which the notebook explains, ``state_refused``).
"""


Origin = Literal["kernel", "notebook", "file"]
"""Where a record came from: a flow of this kernel, the extension's restore, or a file read."""


class StoreBackend(Protocol):
    """Mirrors records into the notebook (fire and forget: never waits for an answer)."""

    def save(self, record: dict[str, Any]) -> None: ...
    def delete(self, flow_id: str) -> None: ...


# ---------------------------------------------------------------------- the table
class Store:
    """Thread-safe record table.

    Flows save and delete from the runtime loop thread; the magics read on the main thread;
    the front end's replies may arrive on a subshell thread. Ids deleted in this kernel are
    remembered, so a restore that was computed before the delete cannot bring them back.

    Every record this kernel saves is signed (``trust.RecordSigner``); a record taken from a
    notebook or a file is *trusted* only when its signature verifies, or once the user consented
    to resume it (``trust``). Untrusted records are resumed only after the user says so.
    """

    def __init__(
        self,
        signer: RecordSigner | None = None,
        max_record_bytes: int | None | Callable[[], int | None] = DEFAULT_MAX_RECORD_BYTES,
    ) -> None:
        self._records: dict[str, dict[str, Any]] = {}
        self._origin: dict[str, Origin] = {}
        self._trusted: dict[str, str] = {}  # id -> content digest written by this kernel, or consented to
        self._digests: dict[str, str] = {}  # id -> content digest of the record held (made when first asked)
        self._verified: dict[str, bool] = {}  # signature checks of taken records, made when first asked
        self._claims: dict[
            str, dict[str, dict[str, Any]]
        ] = {}  # id in conflict -> digest -> another record claiming it
        self._shown: OrderedDict[str, str] = OrderedDict()  # id -> digest of the content last shown to the person
        self._gone: dict[str, None] = {}  # deleted here, newest last, at most GONE_KEPT
        self._lock = threading.Lock()
        self.signer = signer or RecordSigner()
        # a number, or a function reading it where the setting lives (a session's traitlets)
        self._max_record_bytes = max_record_bytes
        self.backend: StoreBackend | None = None

    @property
    def max_record_bytes(self) -> int | None:
        """Largest record kept, in bytes (``None``: no limit)."""
        limit = self._max_record_bytes
        return limit() if callable(limit) else limit

    # -------------------------------------------------------------- flows of this kernel
    def save(self, record: dict[str, Any]) -> int | None:
        """Sign and keep ``record``; ``None`` when saved, else its size when it is over the limit.

        An oversized record is not kept (and an older one of the same flow is dropped, since it no
        longer matches the flow's state); the flow goes on, it just cannot be resumed later.
        """
        signed = self.signer.sign(record)
        limit = self.max_record_bytes
        size = record_size(signed) if limit is not None else 0
        if limit is not None and size > limit:
            self.delete(record["id"])
            return size
        digest = content_digest(signed)
        with self._lock:
            self._records[record["id"]] = signed
            self._origin[record["id"]] = "kernel"
            self._trusted[record["id"]] = digest
            self._digests[record["id"]] = digest
            self._verified.pop(record["id"], None)
            self._claims.pop(record["id"], None)  # a flow of this kernel: its record is the one that counts
            self._gone.pop(record["id"], None)
        backend = self.backend
        if backend is not None:
            backend.save(signed)
        return None

    def delete(self, flow_id: str) -> None:
        """Drop the record of ``flow_id`` (nothing when there is none), remembering that it is gone."""
        with self._lock:
            existed = self._records.pop(flow_id, None) is not None
            if not existed:
                return  # never held here, so in no page or file this kernel wrote: nothing to remember
            self._origin.pop(flow_id, None)
            self._forget_trust(flow_id)
            self._remember_gone([flow_id])
        backend = self.backend
        if existed and backend is not None:
            backend.delete(flow_id)

    # -------------------------------------------------------------- reading
    def get(self, flow_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._records.get(flow_id)

    def saved(self, flow_id: str) -> SavedFlow | None:
        """The record ``flow_id``, typed: what everything past the store reads (``get`` is the signed dict itself)."""
        record = self.get(flow_id)
        return SavedFlow.from_dict(record) if record is not None else None

    def saved_all(self) -> list[SavedFlow]:
        """Every record, typed, oldest first."""
        return [SavedFlow.from_dict(r) for r in self.all()]

    def saved_for_cell(self, cell_id: str) -> list[SavedFlow]:
        """The records started in the cell ``cell_id``, typed, newest first."""
        return [SavedFlow.from_dict(r) for r in self.for_cell(cell_id)]

    def origin(self, flow_id: str) -> Origin | None:
        with self._lock:
            return self._origin.get(flow_id)

    def is_trusted(self, flow_id: str) -> bool:
        """Whether this user wrote the record held for ``flow_id`` (it verified, or this kernel wrote it) or consented to it.

        The consent must be to this very content (its digest); an id in conflict is never trusted.
        The signature of a record taken from a notebook is checked here, on first asking, not when it
        is taken: a notebook's restore stays as cheap as parsing it, and most records are never listed.
        """
        with self._lock:
            if flow_id in self._claims or flow_id not in self._records:
                return False
            return self._vouched(flow_id)

    def vouches(self, record: Mapping[str, Any]) -> bool:
        """Whether ``record`` itself (held or one of a conflict's claimants) is this user's or was consented to."""
        flow_id = record.get("id")
        digest = content_digest(record)
        with self._lock:
            if isinstance(flow_id, str) and self._trusted.get(flow_id) == digest:
                return True
            held = self._records.get(flow_id) if isinstance(flow_id, str) else None
            # the record held (or a copy of it as it is now): what is known of it counts, as is_trusted says;
            # a record this kernel wrote and code in this kernel then edited in place stays the user's
            if held is not None and (held is record or content_digest(held) == digest):
                return self._vouched(str(flow_id))
        return self.signer.verify(record)

    def _vouched(self, flow_id: str) -> bool:
        """``is_trusted`` of the record held, conflict aside (under the lock)."""
        if self._trusted.get(flow_id) == self._digest(flow_id):
            return True
        verified = self._verified.get(flow_id)
        if verified is None:
            verified = self._verified[flow_id] = self.signer.verify(self._records[flow_id])
        return verified

    def _digest(self, flow_id: str) -> str:
        """The content digest of the record held for ``flow_id`` (under the lock; the id is held)."""
        digest = self._digests.get(flow_id)
        if digest is None:
            digest = self._digests[flow_id] = content_digest(self._records[flow_id])
        return digest

    def digest(self, flow_id: str) -> str | None:
        """The content digest of the record held for ``flow_id`` (``None``: none held)."""
        with self._lock:  # as it is now: code in this kernel may have edited the record in place
            return content_digest(self._records[flow_id]) if flow_id in self._records else None

    def trust(self, flow_id: str, digest: str) -> bool:
        """The user reviewed the record with content ``digest`` and consented to resume it (for this kernel's life).

        Returns whether the consent took: only when the store holds exactly that content for
        ``flow_id`` and no other record claims the id. Otherwise the person must be asked again.
        """
        with self._lock:
            if flow_id in self._claims or flow_id not in self._records or self._digest(flow_id) != digest:
                return False
            self._trusted[flow_id] = digest
            return True

    # -------------------------------------------------------------- what the person was shown, and conflicts
    def shown(self, flow_id: str, digest: str | None) -> None:
        """The person was just shown the record of ``flow_id`` with content ``digest`` (``None``: several, none alone)."""
        with self._lock:
            self._shown.pop(flow_id, None)
            if digest is not None:
                self._shown[flow_id] = digest
                while len(self._shown) > SHOWN_KEPT:
                    self._shown.popitem(last=False)

    def last_shown(self, flow_id: str) -> str | None:
        """The content digest of the record of ``flow_id`` last shown to the person, if any."""
        with self._lock:
            return self._shown.get(flow_id)

    def claimants(self, flow_id: str) -> list[dict[str, Any]]:
        """Every different record claiming ``flow_id`` when it is in conflict, the one held first; else ``[]``."""
        with self._lock:
            others = self._claims.get(flow_id)
            if not others:
                return []
            return [self._records[flow_id], *others.values()]

    def conflicts(self) -> list[str]:
        """Ids that several different records claim."""
        with self._lock:
            return list(self._claims)

    def choose(self, flow_id: str, typed: str) -> dict[str, Any] | None:
        """The person chose, of the records claiming ``flow_id``, the one whose digest ``typed`` names: it is held and consented to.

        ``None`` (and nothing changes) unless ``typed`` names exactly one of them (``trust.digest_matches``).
        """
        with self._lock:
            if flow_id not in self._records:
                return None
            held = {self._digest(flow_id): self._records[flow_id], **self._claims.get(flow_id, {})}
            named = [d for d in held if digest_matches(d, typed)]
            if len(named) != 1:
                return None
            (digest,) = named
            if held[digest] is not self._records[flow_id]:
                self._records[flow_id] = held[digest]
                self._digests[flow_id] = digest
                self._verified.pop(flow_id, None)
            self._claims.pop(flow_id, None)
            self._trusted[flow_id] = digest
            return held[digest]

    def all(self) -> list[dict[str, Any]]:
        """Every record, oldest first."""
        with self._lock:
            return sorted(self._records.values(), key=lambda r: str(r.get("updated", "")))

    def for_cell(self, cell_id: str) -> list[dict[str, Any]]:
        """Records started in the cell ``cell_id``, newest first."""
        with self._lock:
            found = [r for r in self._records.values() if r.get("cell_id") == cell_id]
        return sorted(found, key=lambda r: str(r.get("updated", "")), reverse=True)

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    # -------------------------------------------------------------- restoring
    def merge(self, records: Mapping[str, dict[str, Any]], origin: Origin) -> tuple[list[str], list[str]]:
        """Take checked records from the notebook or a file, without echoing them as saves.

        A record this kernel wrote is kept (it is at least as new). Another record for an id
        already held from a notebook or a file is never taken silently in its place:

        * the same content: kept once (the notebook's copy replaces a file's);
        * both verify as this user's own: the notebook's replaces a file's, else the one held stays;
        * otherwise the id is in *conflict*: both are kept (``claimants``), neither is trusted, and
          nothing resumes it until the person chooses one (``choose``) or forgets it.

        Returns ``(added, stale)``: the ids taken, and the ids skipped because this kernel deleted
        them (a flow finished or was forgotten).
        """
        added: list[str] = []
        stale: list[str] = []
        with self._lock:
            for flow_id, record in records.items():
                if flow_id in self._gone:
                    stale.append(flow_id)
                    continue
                current = self._origin.get(flow_id)
                if current is None:
                    self._take(flow_id, record, origin)
                    added.append(flow_id)
                    continue
                if current == "kernel":
                    continue
                replaces = current == "file" and origin == "notebook"
                digest = content_digest(record)
                if digest == self._digest(flow_id):
                    if replaces:
                        self._take(flow_id, record, origin, keep_trust=True)
                    continue
                claims = self._claims.get(flow_id)
                if claims is None and self._vouched(flow_id) and self.signer.verify(record):
                    if replaces:  # both this user's own: the notebook's is the newer
                        self._take(flow_id, record, origin)
                    continue
                claims = self._claims.setdefault(flow_id, {})
                if digest not in claims and len(claims) < CLAIMANTS_KEPT - 1:
                    claims[digest] = record
        return added, stale

    def _take(self, flow_id: str, record: dict[str, Any], origin: Origin, *, keep_trust: bool = False) -> None:
        """Hold ``record`` for ``flow_id`` (under the lock): consent to other content does not carry over."""
        self._records[flow_id] = record
        self._origin[flow_id] = origin
        self._digests.pop(flow_id, None)
        self._verified.pop(flow_id, None)
        if not keep_trust:
            self._trusted.pop(flow_id, None)

    def _forget_trust(self, flow_id: str) -> None:
        """Drop what the store knew of ``flow_id``'s content and consent (under the lock)."""
        self._trusted.pop(flow_id, None)
        self._digests.pop(flow_id, None)
        self._verified.pop(flow_id, None)
        self._claims.pop(flow_id, None)
        self._shown.pop(flow_id, None)

    def forget_all(self) -> list[str]:
        """Drop every record; returns their ids (the caller tells the notebook)."""
        with self._lock:
            ids = list(self._records)
            self._records.clear()
            self._origin.clear()
            self._trusted.clear()
            self._digests.clear()
            self._verified.clear()
            self._claims.clear()
            self._shown.clear()
            self._remember_gone(ids)
        return ids

    def _remember_gone(self, ids: Iterable[str]) -> None:
        """Note ``ids`` as deleted (under the lock), forgetting the oldest past ``GONE_KEPT``."""
        gone = self._gone
        for flow_id in ids:
            gone.pop(flow_id, None)
            gone[flow_id] = None  # newest last
        while len(gone) > GONE_KEPT:
            del gone[next(iter(gone))]

    def kernel_records(self, exclude: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Records written by flows of this kernel, except ``exclude`` (for a page that reconnects)."""
        skip = set(exclude)
        with self._lock:
            return [r for i, r in self._records.items() if self._origin.get(i) == "kernel" and i not in skip]
