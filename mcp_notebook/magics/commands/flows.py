"""``%mcp flows [--from PATH]``: flows waiting for input and running tasks; a record you did not save is shown whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parser import Parser

if TYPE_CHECKING:
    from ..command import Magic

__all__ = ["parser", "run"]


def parser() -> Parser:
    p = Parser("flows", "List flows waiting for input and tasks still running (saved in this notebook).")
    p.add_argument(
        "--from", dest="from_path", metavar="PATH", help="also read the flows saved in the notebook file PATH"
    )
    return p


def run(magic: Magic, words: list[str], cell: str | None) -> Any:
    from ...core.policy import current_policy
    from ...core.text import one_line
    from ...core.urls import visible
    from ...flows.record import SavedFlow, age, questions
    from ...notebook.display import Table

    ns, _ = magic.parsers["flows"].parse(words)
    records = magic.session.saved.waiting(ns.from_path, interactive=magic.is_interactive())
    kinds = {"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}
    store = magic.session.store

    def waits_for(record: Any) -> str:  # the server's words: one line, control characters spelled out, cut
        asked = questions({"pending": record.pending})
        if not asked:
            return "its task's result" if isinstance(record.task, dict) else ""
        more = f" (+{len(asked) - 1} more)" if len(asked) > 1 else ""
        return visible(one_line(asked[0], 60)) + more

    policy = current_policy()
    forbidden = {
        r.id: why for r in records if store.is_trusted(r.id) and (why := policy.saved_server_refusal(r.server))
    }
    rows = [
        [r.id, magic.cells.name(r.cell_id), r.server_name, f"{kinds[r.method]} {r.name}", waits_for(r),
         f"task {r.task.get('status')}" if isinstance(r.task, dict) else r.round, age(r.updated),
         ("yes, but FORBIDDEN by the policy: below" if r.id in forbidden else "yes") if store.is_trusted(r.id)
         else "NO: review below" if not store.claimants(r.id)
         else f"NO: {len(store.claimants(r.id))} different records claim this id, below"]
        for r in records
    ]  # fmt: skip
    table = Table(
        ["id", "cell", "server", "call", "waits for", "round / task", "age", "saved by you"],
        rows,
        title=f"flows waiting for input and running tasks ({magic.session.frontend.describe()}); continue one with %mcp resume ID",
        empty="No flows are waiting for input.",
    )
    foreign = [r for r in records if not store.is_trusted(r.id)]  # an id in conflict among them
    if not foreign and not forbidden:
        return table
    table.show()  # before the reviews; returned below as every listing is (x = %mcp flows binds it), shown once
    for flow_id, why in forbidden.items():  # this notebook's own records too: resume refuses them
        print(f"Flow {flow_id} cannot be resumed here: {why}.")
    if not foreign:
        return table
    from IPython.display import display

    from ...notebook.consent import RecordReview

    print(
        f"{len(foreign)} saved flow{'s' if len(foreign) > 1 else ''} did not come from you (this notebook was saved by someone else, "
        "or changed outside mcp-notebook). Resuming one asks first; here is all each would do:"
    )
    for record in foreign:
        claimants = [SavedFlow.from_dict(c) for c in store.claimants(record.id)]
        for one in claimants or [record]:  # several records claiming one id: each shown, none alone
            display(RecordReview(one, magic.session.saved.concerns(one)))
        store.shown(record.id, None if claimants else store.digest(record.id))
    return table
