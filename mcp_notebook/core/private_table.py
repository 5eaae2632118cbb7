"""``PrivateTable``: a small JSON table of this user's, in a 0600 file of the Jupyter data folder.

Things that must outlive a kernel but never travel with a notebook live here: OAuth tokens
(``auth.TokenVault``, ``oauth.json``) and task handles (``tasks.TaskHandles``, ``tasks.json``).
Like Jupyter's own notary secret they sit in ``jupyter_data_dir()/mcp_notebook/``, readable by
this user only; a notebook holds at most a non-secret reference to an entry.

Writes go to a temp file that replaces the table, so a kernel killed mid-write leaves the old
table; a damaged or unreadable file reads as empty (the next write replaces it). One lock per
instance keeps threads of one kernel apart; two kernels writing at the same moment may lose one
write (last one wins), which costs at most that entry.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["PrivateTable", "data_file"]


def data_file(name: str) -> Path:
    """``name`` in this user's ``jupyter_data_dir()/mcp_notebook/`` (``JUPYTER_DATA_DIR`` moves it)."""
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "mcp_notebook" / name


class PrivateTable:
    """Entries (JSON objects) by key in one 0600 JSON file; thread-safe within a process."""

    def __init__(self, path: Path | Callable[[], Path]) -> None:
        """``path``, or what finds it on first use (``partial(data_file, NAME)``).

        A ``Session`` makes its tables at ``%load_ext``, where finding the Jupyter data folder
        (importing ``jupyter_core.paths``) cost about 3 ms of its budget (bench/overhead.py P3); a
        kernel's ``JUPYTER_DATA_DIR`` is the same then as at the first read or write.
        """
        self._path = path
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        if not isinstance(self._path, Path):
            self._path = self._path()
        return self._path

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # unreadable or damaged: treated as empty; the next write replaces it
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}")
        fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(data, out)
        os.replace(tmp, self.path)

    def get(self, key: str) -> dict[str, Any]:
        """The entry under ``key`` (a copy; empty when there is none)."""
        with self._lock:
            entry = self._read().get(key)
        return dict(entry) if isinstance(entry, dict) else {}

    def update(self, key: str, **fields: Any) -> None:
        """Set (or, with ``None``, remove) fields of one entry; stamps ``updated``."""
        with self._lock:
            data = self._read()
            entry = dict(data.get(key) or {})
            for name, value in fields.items():
                if value is None:
                    entry.pop(name, None)
                else:
                    entry[name] = value
            entry["updated"] = time.time()
            data[key] = entry
            self._write(data)

    def remove(self, key: str) -> bool:
        with self._lock:
            data = self._read()
            found = data.pop(key, None) is not None
            if found:
                self._write(data)
        return found

    def clear(self) -> int:
        with self._lock:
            data = self._read()
            if data:
                self._write({})
        return len(data)

    def items(self) -> list[tuple[str, dict[str, Any]]]:
        """Every entry that is an object, by key."""
        with self._lock:
            data = self._read()
        return sorted((key, dict(entry)) for key, entry in data.items() if isinstance(entry, dict))
