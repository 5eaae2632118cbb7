"""Saved flow records: what a waiting flow needs to continue after the notebook is reopened.

Records follow DESIGN.md ("Saved flows"): questions and the opaque ``request_state``, never
answers, keys, headers or tokens. This store keeps them in memory; a front-end backend (the
JupyterLab extension's comm) can be attached to mirror every save and delete into the notebook's
metadata.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

__all__ = ["Store", "StoreBackend"]


class StoreBackend(Protocol):
    def save(self, record: dict[str, Any]) -> None: ...
    def delete(self, flow_id: str) -> None: ...


class Store:
    """Thread-safe record table (flows save from the loop thread, magics read from the main one)."""

    def __init__(self) -> None:
        self._records: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self.backend: StoreBackend | None = None

    def save(self, record: dict[str, Any]) -> None:
        with self._lock:
            self._records[record["id"]] = record
        if self.backend is not None:
            self.backend.save(record)

    def delete(self, flow_id: str) -> None:
        with self._lock:
            existed = self._records.pop(flow_id, None) is not None
        if existed and self.backend is not None:
            self.backend.delete(flow_id)

    def get(self, flow_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._records.get(flow_id)

    def all(self) -> list[dict[str, Any]]:
        with self._lock:
            return sorted(self._records.values(), key=lambda r: r.get("updated", ""))

    def load(self, records: dict[str, dict[str, Any]]) -> None:
        """Take records restored from a notebook (without echoing them back as saves)."""
        with self._lock:
            self._records.update(records)
