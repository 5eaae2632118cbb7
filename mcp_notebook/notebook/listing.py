"""A listing (``%mcp servers``, ``tools``, ``flows``, ``trace`` ...) shows where its line runs.

IPython shows a line magic's return value only when the line is the cell's last, so
``%mcp servers`` followed by ``%mcp tools prov`` used to show only the tools. Every listing a cell
asks for is shown, in order: the magic displays it at once (``ShownOnce.show``) and still returns
it, so ``x = %mcp tools`` binds the table (``x.rows``, ``x.columns``) as data.

Returning it would show it a second time when the line is the cell's last: the displayhook calls
``_ipython_display_``, which shows nothing for a listing already shown during the same execution
(same ``execution_count``). Displaying the bound value again in a later cell (``x``) shows it, as
any value would. Returning ``None`` instead would have cost ``x = %mcp tools`` its value, and
returning a value without displaying it would keep listings in the middle of a cell invisible.

Under a display id (``display(obj, display_id=True)``, ``handle.update(obj)``) such an object would
show itself without the id, as ``_ipython_display_`` must: a live table (``TaskBoard``) displays and
updates its ``_repr_mimebundle_()`` raw instead.

A table that only confirms a change (``%mcp model add``, ``%mcp roots add``: ``asked = False``) is
not a listing the cell asked for; it shows as the cell's last line, as any value does, so a cell
that adds three models shows one table, not three.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ShownOnce"]


def _execution_count() -> int | None:
    from IPython import get_ipython

    shell = get_ipython()
    return shell.execution_count if shell is not None else None


class ShownOnce:
    """Mixin for an object with ``_repr_mimebundle_``: shown by ``show()``, not shown again in the same cell."""

    _shown_in: int | None = None
    asked = True  # a listing the line asked for (shown where it runs); False: a change's confirmation

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        raise NotImplementedError

    def show(self) -> None:
        """Display now (a ``display_data`` output), once per cell; the same cell's displayhook then skips it.

        A listing that shows itself before what follows it (``%mcp flows``: the table, then the
        records to review) is returned as well; the magic's ``show()`` then shows nothing more.
        """
        from IPython.display import publish_display_data

        if self._shown_in is not None and self._shown_in == _execution_count():
            return
        publish_display_data(self._repr_mimebundle_())
        self._shown_in = _execution_count()

    def _ipython_display_(self) -> None:
        count = self._shown_in
        self._shown_in = None  # skipped at most once: a later display of the same object shows it
        if count is not None and count == _execution_count():
            return  # the cell's last line returned a listing its magic already showed
        from IPython.display import publish_display_data

        publish_display_data(self._repr_mimebundle_())
