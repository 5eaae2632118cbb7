"""A stdio server's stderr, kept line by line: what it wrote since a mark is what an error quotes.

A server's last words (a traceback, "no API key") say why it failed, so a failed open or call
quotes the lines written since that request began (a mark), not the server's whole history.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from typing import Any

__all__ = ["StderrTail"]


class StderrTail:
    """The last ``limit`` stderr lines of a connection's server, and how many it wrote in all (marks count those)."""

    def __init__(self, limit: int) -> None:
        self.lines: deque[str] = deque(maxlen=limit)
        self.count = 0  # stderr lines read in all (marks count from here)
        self._file: Any = None
        self._pump: threading.Thread | None = None

    def pipe(self, name: str) -> Any:
        """A real pipe for the child's stderr: a kernel's ``sys.stderr`` has no file descriptor."""
        read_fd, write_fd = os.pipe()
        reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
        self._file = os.fdopen(write_fd, "w")

        def pump() -> None:
            with reader:
                for line in reader:
                    self.lines.append(line.rstrip("\n"))
                    self.count += 1

        self._pump = threading.Thread(target=pump, name=f"mcp-stderr-{name}", daemon=True)
        self._pump.start()
        return self._file

    def close_pipe(self) -> None:
        """Close our end of the pipe (the pump ends once the child's end is closed too)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def since(self, mark: int, gone: bool) -> list[str]:
        """The lines written since ``mark`` (those still kept); ``gone``: the server is gone, wait for its last words."""
        pump = self._pump
        if pump is not None and pump.is_alive() and gone:
            pump.join(0.5)  # the server is gone: let its last words (a traceback) arrive first
        fresh = min(self.count - mark, len(self.lines))
        return list(self.lines)[-fresh:] if fresh > 0 else []
