"""``forms.widgets.in_send_order``: a form's edits and clicks are handled where the page sent them, in order.

The hook it replaces is ipykernel's private ``BaseComm._reply_subshell_for``; the first test fails when an
ipykernel upgrade renames it or changes how the shell channel calls it, instead of forms silently racing
again (or every form message being dropped as "Invalid message"). The busy-kernel test in
``tests/browser/test_forms.py`` shows the race itself in JupyterLab and Notebook 7.
"""

from __future__ import annotations

import inspect
import warnings

import ipywidgets as w
from ipykernel.comm.comm import BaseComm
from ipykernel.kernelbase import Kernel

from mcp_notebook.forms.widgets import in_send_order


def test_the_hook_is_the_one_ipykernel_calls() -> None:
    assert list(inspect.signature(BaseComm._reply_subshell_for).parameters) == ["self", "data", "default"]
    source = inspect.getsource(Kernel.shell_channel_thread_main)
    assert 'getattr(comm, "_reply_subshell_for", None)' in source
    assert 'subshell_id = route(content.get("data"), subshell_id)' in source


def _on_a_kernel_comm(widget: w.Widget, last_published_from: str | None) -> None:
    """Give ``widget`` an ipykernel comm that last published from ``last_published_from`` (as after an echo)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # ipykernel.comm.Comm: the class ipykernel routes by
        from ipykernel.comm import Comm

        comm = Comm(primary=False, comm_id=widget.comm.comm_id, target_name="jupyter.widget")
    comm._reply_subshell_id = last_published_from
    widget.comm = comm


def test_every_widget_of_the_tree_is_routed_as_its_message_says() -> None:
    field, accept, tick = w.Text(), w.Button(description="Accept"), w.Checkbox()
    tree = w.VBox([field, w.HBox([accept, tick])])
    _on_a_kernel_comm(field, "widget-subshell")  # the field echoed an edit: ipykernel would send its next one there
    _on_a_kernel_comm(accept, None)  # the button never published: ipykernel would keep its click on the main shell
    _on_a_kernel_comm(tick, None)
    assert field.comm._reply_subshell_for({"method": "update"}, "page-subshell") == "widget-subshell"
    assert accept.comm._reply_subshell_for({"method": "custom"}, "page-subshell") is None

    closed = w.Text()
    closed.close()  # its comm is gone: nothing to route, nothing raised
    in_send_order(tree, closed)

    for widget in (field, accept, tick):
        assert widget.comm._reply_subshell_for({"method": "update"}, "page-subshell") == "page-subshell"
        assert widget.comm._reply_subshell_for({"method": "update"}, None) is None  # no subshells: the main shell


def test_a_comm_without_the_hook_is_left_as_it_is() -> None:
    field = w.Text()  # outside a kernel: comm's DummyComm, as on a kernel library without the hook
    before = dict(vars(field.comm))
    in_send_order(field)
    assert dict(vars(field.comm)) == before
