"""``%mcp resume [ID] [--trust [DIGEST]]``: continue a saved flow in this cell, consent given to its content."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..parser import Parser, call_options, flow_args

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser(
        "resume",
        "Continue a saved flow: show its questions in this cell and go on with its saved state. Takes the answer flags of %mcp call.",
    )
    p.add_argument("id", nargs="?", help="the flow's id (see %%mcp flows); optional when only one is waiting")
    p.add_argument(
        "--from", dest="from_path", metavar="PATH", help="read the flows saved in the notebook file PATH first"
    )
    p.add_argument(
        "--trust", nargs="?", const=True, default=False, metavar="DIGEST",
        help="resume even a flow you did not save (a received notebook) or whose connection now points elsewhere, "
        "exactly as it was last shown to you (read it first: %%mcp flows shows it whole); with DIGEST (after the flow's ID), the record with "
        "that content digest (as shown): also chooses between different records that claim one id",
    )  # fmt: skip
    flow_args(p)
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from dataclasses import replace

    from ...flows.trust import is_digest

    ns, _ = magic.parsers["resume"].parse(words)
    typed = ns.trust if isinstance(ns.trust, str) else None
    if typed is not None and ns.id is None:
        # `resume --trust ID`: the word is the flow's id, even one that looks like a digest (a received id
        # spelled as another record's digest would otherwise consent to that record); a digest follows an id
        ns.id, typed = typed, None
    elif typed is not None and not is_digest(typed):
        raise UsageError(
            f"--trust takes a record's content digest (sha256:..., as the flows listing shows it), not {typed!r}"
        )
    magic.session.saved.load(ns.from_path)
    record = magic.session.saved.pick(ns.id, magic.cell_id())
    interactive = magic.is_interactive()
    # consent is to content: the digest typed, else the record as it was last shown here (a bare --trust,
    # which never chooses between records claiming one id: they are shown, and one is named by its digest),
    # else, for the user's own record (signed by this user, or written by this kernel; never one in conflict),
    # the content held now: nobody else can make a record that verifies, so there is nothing to swap in
    store = magic.session.store
    consented = (
        typed
        or (store.last_shown(record.id) if not store.claimants(record.id) else None)
        or (store.digest(record.id) if store.is_trusted(record.id) else None)
        or ""
    )
    options = replace(call_options(ns), trust=ns.trust is not False, consented=consented)
    flow = magic.session.saved.resume(record, options, interactive=interactive, cell_id=magic.cell_id(), wait=ns.wait)
    return magic.hand_back(flow, ns, interactive and not ns.wait)
