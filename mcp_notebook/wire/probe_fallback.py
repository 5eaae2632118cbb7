"""Servers on older SDKs that exit on the ``server/discover`` probe: when a second, 2025 start may connect them.

A stdio server on an older SDK (1.6 and the like) exits on a request it does not know, and the
automatic handshake's ``server/discover`` probe is one: the SDK's own fallback to ``initialize``
then finds the pipe closed. ``Connection.open`` starts such a server once more with the 2025
handshake, as ``--protocol legacy`` would, but only when it may have stopped on the probe: a
command that crashes at start (its stderr says why) is not run twice. What the error says when
neither start answered, or when the second start was not tried, is here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .connection import Connection

__all__ = ["CONNECTION_CLOSED", "PROBE", "closed_on_probe", "exited_unheard", "unanswered"]

CONNECTION_CLOSED = -32000  # the SDK's code for a transport that ended under a request
PROBE = "server/discover"  # the request an automatic handshake opens with (2026-07-28)


def exited_unheard(conn: Connection, code: int | None, kind: str | None) -> bool:
    """Whether a stdio server went away during an automatic handshake without a single message of MCP."""
    return (
        conn.protocol == "auto"
        and not conn.fell_back
        and conn.target.kind == "stdio"
        and code == CONNECTION_CLOSED
        and kind is None
        and conn.heard == 0
    )


def closed_on_probe(conn: Connection, code: int | None, kind: str | None, since: int) -> bool:
    """Whether such a server may have stopped on the ``server/discover`` probe, so that a 2025 start may connect it.

    It did when what it wrote on stderr since ``since`` names the probe (an older SDK's traceback
    quotes the method it refused), and may have when it wrote nothing. Anything else there (a
    traceback at start, "no API key") is a crash of its own: starting it again would run it twice.
    """
    if not exited_unheard(conn, code, kind):
        return False
    said = conn.stderr_since(since)
    return not said or any(PROBE in line for line in said)


def unanswered(conn: Connection, code: int | None, kind: str | None, since: int) -> str | None:
    """What a failed start that heard nothing says of the probe (``None``: nothing, the error's own text stands)."""
    if conn.fell_back and code == CONNECTION_CLOSED:
        return (
            "the server exited without answering, both on the 2026-07-28 probe (server/discover) and on the "
            "2025 handshake (initialize, as with --protocol legacy)"
        )
    if exited_unheard(conn, code, kind) and not closed_on_probe(conn, code, kind, since):
        return (
            "the server exited without answering; it was not started again, as what it wrote on stderr (below) "
            "does not name the 2026-07-28 probe (server/discover). A server on an older SDK that stops on that "
            "probe connects with --protocol legacy."
        )
    return None
