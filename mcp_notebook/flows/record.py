"""Saved flow records: what a waiting flow needs to continue after the notebook is reopened.

A record (DESIGN.md, "Saved flows") holds the questions of the waiting round and the opaque
``request_state``, never answers, API keys, header values or tokens::

    {"v": 1, "id": "…", "cell_id": "…", "server": {"name": "prov", "target": "http://127.0.0.1:8000/mcp"},
     "method": "tools/call", "name": "provision", "arguments": {"name": "orders"},
     "round": 2, "request_state": "<opaque>", "pending": {"region": {...}}, "updated": "…Z"}

Two fields were added by the second wave, both optional for readers: ``sig`` (the record's
signature, see ``trust.py``: it tells records this user wrote from records of a received
notebook) and ``withheld`` (names of secret arguments left out, see ``core/redact.py``).
``SavedFlow`` is the one schema, and what everything past the store reads.

The notebook keeps them under the metadata key ``mcp_notebook`` -> ``flows`` -> id where the
labextension runs. Elsewhere (VS Code, Colab, papermill, JupyterLab without the extension) a record
travels in the output of the cell that started its flow: a display whose data holds the record under
``OUTPUT_MIME`` next to a ``text/plain`` line (``notebook/output_records.py``). A flow that ended away
from the output holding its record leaves a *void* there, ``{"v": 1, "ended": ID, "at": "…Z"}`` under
the same MIME type: it voids every record of that id written at or before ``at``.
``read_notebook`` reads both places; for one id the newest ``updated`` wins (metadata on a tie), and
the others with different content are handed over too (``others``): the store decides whether two
records claiming one id are the user's own versions or a conflict to show (``store.Store.merge``).

Reading is forgiving on purpose: a corrupt block or record never stops a notebook from opening. It is
skipped, and a warning says in plain words what was ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..wire.task_handles import TaskRef
from .trust import canonical, record_label

if TYPE_CHECKING:
    from .flow import Flow

__all__ = [
    "DEFAULT_MAX_RECORD_BYTES",
    "MAX_OUTPUT_RECORDS",
    "METADATA_KEY",
    "METHODS",
    "OUTPUT_MIME",
    "RECORD_VERSION",
    "SavedFlow",
    "age",
    "check_record",
    "check_task_ref",
    "parse_block",
    "merge_sources",
    "parse_flows",
    "parse_outputs",
    "questions",
    "read_notebook",
    "record_size",
]

METADATA_KEY = "mcp_notebook"

OUTPUT_MIME = "application/vnd.mcp-notebook.flow+json"
"""The MIME type of a record (or a void) kept in a cell's output, where no extension writes metadata."""

MAX_OUTPUT_RECORDS = 10_000
"""Record outputs read from one notebook at most (a received notebook cannot make the kernel hold more)."""


RECORD_VERSION = 1


METHODS = ("tools/call", "prompts/get", "resources/read")


DEFAULT_MAX_RECORD_BYTES = 1_000_000


@dataclass
class SavedFlow:
    """One saved record, typed: the questions of a waiting round and its opaque state.

    The schema lives here and only here. ``to_dict`` gives the exact dict form the notebook
    keeps and ``trust.RecordSigner`` signs (``sig`` covers every other key), so
    ``SavedFlow.from_dict(d).to_dict() == d`` for every record ``check_record`` accepts: optional
    keys stay absent when they were absent, and keys this version does not know ride along in
    ``extra`` (a newer writer's additions would otherwise break the signature).
    """

    id: str
    server: dict[str, Any]  # {"name": ..., **Target.saved()}
    method: str
    name: str
    round: int
    pending: dict[str, Any]  # question key -> the request as JSON
    request_state: str | None = None
    cell_id: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)  # without secret ones
    updated: str | None = None
    withheld: list[str] | None = None  # secret arguments left out (asked again on resume)
    task: dict[str, Any] | None = None  # a call running as a task: ``TaskRef.to_dict()`` (never the task id)
    sig: str | None = None  # trust.RecordSigner's signature of the other keys
    v: int = RECORD_VERSION
    extra: dict[str, Any] = field(default_factory=dict)
    _absent: frozenset[str] = field(default=frozenset(), repr=False, compare=False)  # optional keys the dict lacked

    _KEYS = (
        "v",
        "id",
        "cell_id",
        "server",
        "method",
        "name",
        "arguments",
        "round",
        "request_state",
        "pending",
        "updated",
        "withheld",
        "task",
        "sig",
    )
    _OPTIONAL = ("cell_id", "arguments", "request_state", "updated", "withheld", "task", "sig")

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> SavedFlow:
        """The typed form of a record that ``check_record`` accepted."""
        known = {k: record[k] for k in cls._KEYS if k in record}
        absent = frozenset(k for k in cls._OPTIONAL if k not in record)
        extra = {k: v for k, v in record.items() if k not in cls._KEYS}
        if "task" in known and known["task"] is None:  # kept as written, so ``to_dict`` gives back the same dict
            absent |= {"task"}
            known.pop("task")
            extra["task"] = None
        if "arguments" in known and known["arguments"] is None:
            absent |= {"arguments"}
            known.pop("arguments")
            extra["arguments"] = None
        return cls(**known, extra=extra, _absent=absent)

    @classmethod
    def of(cls, flow: Flow, request_state: str | None) -> SavedFlow:
        """The saved record of ``flow`` (DESIGN.md "Saved flows"): questions and state, never answers or secret arguments."""
        from .trace import dump

        secrets = flow.secret_arguments
        withheld = sorted(secrets & (flow.arguments.keys() | flow._withheld))
        return cls(
            id=flow.id,
            cell_id=flow.options.cell_id,
            server={"name": flow.conn.name, **flow.conn.target.saved()},
            method=flow.method,
            name=flow.name,
            arguments={k: v for k, v in flow.arguments.items() if k not in secrets},
            round=flow.round,
            request_state=request_state,
            pending={key: dump(req) for key, req in flow.pending.items()},
            updated=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            withheld=withheld or None,
            task=flow.following.task_ref.to_dict() if flow.following.task_ref is not None else None,
        )

    @property
    def server_name(self) -> str:
        """The connection name the flow was saved against."""
        return str(self.server["name"])

    @property
    def task_ref(self) -> TaskRef | None:
        """The ``task`` entry, typed (``TaskRef.from_dict`` drops odd optional values of a received notebook)."""
        return TaskRef.from_dict(self.task) if isinstance(self.task, dict) else None

    @property
    def label(self) -> str:
        """How the flow is named to the user (``trust.record_label``, the one place it is built)."""
        return record_label(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """The record as the notebook keeps it (and as it is signed)."""
        out: dict[str, Any] = {}
        for key in self._KEYS:
            value = getattr(self, key)
            if key in self._absent or (key in ("withheld", "task", "sig") and value is None):
                continue
            out[key] = value
        out.update(self.extra)
        return out


def check_task_ref(value: Any) -> str | None:
    """Why a record's ``task`` entry is unusable, or ``None`` when it is fine."""
    if not isinstance(value, dict):
        return f"its task entry is {_kind(value)}, not an object"
    ref = value.get("ref")
    if not isinstance(ref, str) or not 8 <= len(ref) <= 64 or not ref.replace("-", "").replace("_", "").isalnum():
        return "its task entry has no valid ref"
    if value.get("generation") not in ("2025", "2026"):
        return "its task entry names no task generation (2025 or 2026)"
    if not isinstance(value.get("answered", []), list):
        return "its task entry's answered keys are not a list"
    return None


# ---------------------------------------------------------------------- reading records
def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return {str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


MAX_DEPTH = 64
"""Objects and lists a record may nest (a server's questions and state take a few levels): a deeper
one, which only a hostile file or page writes, would make signing and showing it recurse too far."""


def _depth_over(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests objects and lists deeper than ``limit`` (without recursing itself)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


def check_record(key: str, record: Any) -> str | None:
    """Why ``record`` (saved under ``key``) cannot be resumed, or ``None`` when it can."""
    if not isinstance(record, dict):
        return f"saved flow {key!r} is {_kind(record)}, not an object"
    if _depth_over(record):
        return f"saved flow {key!r} nests objects or lists more than {MAX_DEPTH} deep"
    version = record.get("v")
    if version != RECORD_VERSION:
        if isinstance(version, int) and version > RECORD_VERSION:
            return f"saved flow {key!r} was written by a newer mcp-notebook (record version {version})"
        return f"saved flow {key!r} has no record version this mcp-notebook reads (v={version!r})"
    if record.get("id") != key:
        return f"saved flow {key!r} carries another id ({record.get('id')!r})"
    server = record.get("server")
    if not isinstance(server, dict) or not isinstance(server.get("name"), str) or not server.get("name"):
        return f"saved flow {key!r} does not say which server it talks to"
    if record.get("method") not in METHODS:
        return f"saved flow {key!r} has an unknown method {record.get('method')!r}"
    if not isinstance(record.get("name"), str) or not record["name"]:
        return f"saved flow {key!r} has no tool, prompt or resource name"
    if not isinstance(record.get("arguments", {}), dict):
        return f"saved flow {key!r} has arguments that are {_kind(record.get('arguments'))}, not an object"
    task = record.get("task")
    if task is not None:
        problem = check_task_ref(task)
        if problem is not None:
            return f"saved flow {key!r}: {problem}"
        if record.get("method") != "tools/call":
            return f"saved flow {key!r} is a task but not a tool call"
    round_no = record.get("round")
    if not isinstance(round_no, int) or isinstance(round_no, bool) or round_no < (0 if task is not None else 1):
        return f"saved flow {key!r} has no valid round number"
    state = record.get("request_state")
    if state is not None and not isinstance(state, str):
        return f"saved flow {key!r} has a request state that is {_kind(state)}, not a string"
    pending = record.get("pending")
    if (
        not isinstance(pending, dict)
        or not (pending or task is not None)
        or not all(isinstance(q, dict) for q in pending.values())
    ):
        return f"saved flow {key!r} has no questions to ask"
    withheld = record.get("withheld", [])
    if not isinstance(withheld, list) or not all(isinstance(n, str) for n in withheld):
        return f"saved flow {key!r} has a list of withheld arguments that is not a list of names"
    if not isinstance(record.get("sig", ""), str):
        return f"saved flow {key!r} has a signature that is {_kind(record.get('sig'))}, not a string"
    return None


def record_size(record: Mapping[str, Any]) -> int:
    """Bytes the record takes in the notebook's JSON."""
    return len(json.dumps(record, ensure_ascii=False, default=str).encode())


def parse_flows(
    flows: Any, where: str = f'"{METADATA_KEY}.flows"', max_bytes: int | None = DEFAULT_MAX_RECORD_BYTES
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The resumable records of a ``flows`` mapping, and a warning for each one ignored.

    A record larger than ``max_bytes`` is ignored too: a received notebook must not make the kernel
    hold (and the page show) arbitrarily large values.
    """
    if flows is None:
        return {}, []
    if not isinstance(flows, dict):
        return {}, [f"notebook metadata {where} is {_kind(flows)}, not an object; ignored"]
    records: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    for key, record in flows.items():
        problem = check_record(key, record)
        try:
            size = record_size(record) if problem is None and max_bytes is not None else 0
        except UnicodeEncodeError:  # a "\udc80" escape: no record of ours holds one (saving it fails)
            problem, size = f"saved flow {key!r} holds text that is not Unicode (a lone surrogate)", 0
        if problem is None and max_bytes is not None and size > max_bytes:
            problem = f"saved flow {key!r} takes {size:,} bytes, more than the limit of {max_bytes:,} (%config MCPMagics.max_record_bytes)"
        if problem is None:
            records[key] = record
        else:
            warnings.append(problem + "; ignored")
    return records, warnings


def parse_block(
    block: Any, max_bytes: int | None = DEFAULT_MAX_RECORD_BYTES
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Records from the notebook metadata block ``mcp_notebook`` (``None`` when absent)."""
    if block is None:
        return {}, []
    if not isinstance(block, dict):
        return {}, [f'notebook metadata "{METADATA_KEY}" is {_kind(block)}, not an object; ignored']
    return parse_flows(block.get("flows"), max_bytes=max_bytes)


def read_notebook(
    path: str,
    max_bytes: int | None = DEFAULT_MAX_RECORD_BYTES,
    *,
    metadata: bool = True,
    others: dict[str, list[dict[str, Any]]] | None = None,
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Records saved in the ``.ipynb`` at ``path``: its metadata and its cells' outputs.

    ``metadata=False`` reads the outputs only (the labextension already restored the metadata).
    ``others`` (when given) receives, per id, the records that lost to the newest but differ from it.
    Raises ``OSError`` when the file cannot be opened; a file that is not a notebook gives a
    warning and no records.

    The file is read as JSON, not with ``nbformat``: only two keys are wanted, every value is
    checked by ``check_record`` anyway, and importing ``nbformat`` (which imports ``jsonschema``
    and its format checkers) and making its ``NotebookNode`` tree cost more than the rest of a first
    ``%mcp flows`` on a notebook of 1,000 records (bench/store.py S3). Records exist only in
    nbformat 4 files; like Jupyter, only UTF-8 text is read.
    """
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        # strict UTF-8 first, as Jupyter reads a notebook: json.loads of bytes would also take UTF-16,
        # UTF-32, a byte-order mark and lone surrogates, files JupyterLab itself does not open
        nb = json.loads(data.decode("utf-8"))
        if not isinstance(nb, dict):
            raise ValueError("not a JSON object")
        if nb.get("nbformat") != 4:
            raise ValueError("not an nbformat 4 notebook")
        meta = nb.get("metadata", {})
    except (ValueError, RecursionError, MemoryError) as exc:  # not JSON, not UTF-8, not v4; too deep, too big
        return {}, [f"{path} is not a readable notebook ({_why_unreadable(exc)}); no saved flows read from it"]
    if not isinstance(meta, dict):
        return {}, [f"{path} has no notebook metadata; no saved flows read from it"]
    records, warnings = parse_block(meta.get(METADATA_KEY), max_bytes=max_bytes) if metadata else ({}, [])
    found, voids, output_warnings = parse_outputs(nb.get("cells"), max_bytes=max_bytes, others=others)
    return merge_sources(records, found, voids, others=others), warnings + output_warnings


def _why_unreadable(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg} at line {exc.lineno}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, RecursionError):
        return "nested too deep"
    if isinstance(exc, MemoryError):
        return "too large to read"
    return str(exc)


def parse_outputs(
    cells: Any,
    max_bytes: int | None = DEFAULT_MAX_RECORD_BYTES,
    others: dict[str, list[dict[str, Any]]] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, str], list[str]]:
    """The records and voids kept in cell outputs (``OUTPUT_MIME``): ``(records, voids, warnings)``.

    A copied cell carries the same record twice: the newest ``updated`` is kept (a different record
    under the same id goes to ``others``, when given). ``voids`` maps an id to the time its flow
    ended away from its record.
    """
    records: dict[str, dict[str, Any]] = {}
    voids: dict[str, str] = {}
    warnings: list[str] = []
    seen = 0
    for cell in cells if isinstance(cells, list) else []:
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        for output in outputs if isinstance(outputs, list) else []:
            data = output.get("data") if isinstance(output, dict) else None
            value = data.get(OUTPUT_MIME) if isinstance(data, dict) else None
            if value is None:
                continue
            seen += 1
            if seen > MAX_OUTPUT_RECORDS:
                warnings.append(f"more than {MAX_OUTPUT_RECORDS:,} saved flow outputs; the rest were ignored")
                return records, voids, warnings
            if isinstance(value, dict) and "ended" in value and "id" not in value:
                ended, at = value.get("ended"), value.get("at")
                if isinstance(ended, str) and isinstance(at, str) and len(ended) <= 64 and len(at) <= 40:
                    voids[ended] = max(at, voids.get(ended, ""))
                continue
            key = value.get("id") if isinstance(value, dict) and isinstance(value.get("id"), str) else "?"
            found, problems = parse_flows({key: value}, where="a cell output", max_bytes=max_bytes)
            warnings.extend(w.replace("saved flow", "saved flow (in a cell output)", 1) for w in problems)
            for flow_id, record in found.items():
                kept = records.get(flow_id)
                if kept is None or str(record.get("updated", "")) > str(kept.get("updated", "")):
                    records[flow_id] = record
                    if kept is not None:
                        _lost(others, flow_id, kept)
                else:
                    _lost(others, flow_id, record)
    return records, voids, warnings


def _lost(others: dict[str, list[dict[str, Any]]] | None, flow_id: str, record: dict[str, Any]) -> None:
    if others is not None:
        others.setdefault(flow_id, []).append(record)


def merge_sources(
    metadata: dict[str, dict[str, Any]],
    outputs: dict[str, dict[str, Any]],
    voids: Mapping[str, str],
    others: dict[str, list[dict[str, Any]]] | None = None,
) -> dict[str, dict[str, Any]]:
    """One record per id from the metadata and the outputs: the newest ``updated`` (metadata on a tie), unless voided.

    ``others`` (when given) gets the records that lost with content different from the one kept
    (and not voided); it may hold outputs' losers already.
    """
    merged = dict(metadata)
    for flow_id, record in outputs.items():
        kept = merged.get(flow_id)
        if kept is None or str(record.get("updated", "")) > str(kept.get("updated", "")):
            merged[flow_id] = record
            if kept is not None:
                _lost(others, flow_id, kept)
        else:
            _lost(others, flow_id, record)

    def counts(flow_id: str, record: Mapping[str, Any]) -> bool:
        return flow_id not in voids or str(record.get("updated", "")) > voids[flow_id]

    kept_records = {flow_id: record for flow_id, record in merged.items() if counts(flow_id, record)}
    if others is not None:
        for flow_id in list(others):
            kept = kept_records.get(flow_id)
            same = canonical(kept) if kept is not None else None
            losers = [r for r in others[flow_id] if counts(flow_id, r) and kept is not None and canonical(r) != same]
            if losers:
                others[flow_id] = losers
            else:
                del others[flow_id]
    return kept_records


def questions(record: Mapping[str, Any]) -> list[str]:
    """The saved questions of a record, one line each (what the server asked, never answers)."""
    lines: list[str] = []
    for key, request in (record.get("pending") or {}).items():
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params") if isinstance(request, dict) else None
        params = params if isinstance(params, dict) else {}
        if method == "elicitation/create":
            lines.append(str(params.get("message") or key))
        elif method == "sampling/createMessage":
            lines.append(f"{key}: a model reply (sampling)")
        elif method == "roots/list":
            lines.append(f"{key}: the notebook's roots")
        else:
            lines.append(f"{key}: {method}")
    return lines


def age(updated: Any, now: datetime | None = None) -> str:
    """How long ago a record was written, in a few characters (``"?"`` when unknown)."""
    if not isinstance(updated, str):
        return "?"
    try:
        when = datetime.fromisoformat(updated.replace("Z", "+00:00"))
    except ValueError:
        return "?"
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = max(0, int(((now or datetime.now(UTC)) - when).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"
