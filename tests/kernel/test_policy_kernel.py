"""The administrator's policy in a real kernel: nothing a notebook holds or runs lifts it (issue 40, item 2).

The kernel starts as a hub's spawner starts one: ``JUPYTER_CONFIG_PATH`` names a folder holding
``mcp_notebook_policy.json``. In it a ``%mcp connect`` of a forbidden command, the Python API, a
received notebook's record, ``%mcp serve``, a project's ``.mcp.json``, and ``%config`` (the review
setting, the variable itself unset by a cell) are each refused with the file named, and nothing the
policy forbids ran: the ``touch`` that would have left a file left none.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from ..conftest import REPO_ROOT
from ..support.kernel_harness import Kernel, running_kernel

POLICY = {
    "allowed_stdio_commands": [os.path.dirname(os.path.realpath(sys.executable)) + "/*"],
    "allowed_urls": ["http://127.0.0.1:*/mcp"],
    "denied_env": ["HUB_*"],
    "least_review": "ask",
    "project_configs": False,
    "serve": False,
}


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("policy-kernel")
    hub, work = root / "hub-etc", root / "work"
    hub.mkdir()
    (work / ".git").mkdir(parents=True)
    (hub / "mcp_notebook_policy.json").write_text(json.dumps(POLICY))
    return {"policy": hub / "mcp_notebook_policy.json", "hub": hub, "work": work}


@pytest.fixture(scope="module")
def k(where: dict[str, Path]) -> Iterator[Kernel]:
    env = {
        "PYTHONPATH": str(REPO_ROOT),
        "JUPYTER_CONFIG_PATH": str(where["hub"]),
        "JUPYTER_DATA_DIR": str(where["work"].parent / "data"),
    }
    with running_kernel(str(where["work"]), "%load_ext mcp_notebook", env=env) as kernel:
        yield kernel


def failed(k: Kernel, code: str) -> str:
    """Run a cell that must fail; its error text."""
    msg_id = k.execute(code, wait=False)
    k.wait_idle(msg_id)
    errors = [m["content"] for m in k.for_cell(msg_id) if m["msg_type"] == "error"]
    assert errors, f"the cell did not fail:\n{code}\n{k.text_of_cell(msg_id)}"
    return f"{errors[0]['ename']}: {errors[0]['evalue']}"


def test_connect_and_the_python_api(k: Kernel, where: dict[str, Path]) -> None:
    pwned = where["work"] / "pwned-connect"
    text = failed(k, f"%mcp connect bad -- touch {pwned}")
    assert f"the administrator's policy ({where['policy']}) allows only these stdio commands" in text
    assert "'touch' is not one of them" in text
    text = failed(k, f"import mcp_notebook\nmcp_notebook.connect('api', ['touch', {str(pwned)!r}])")
    assert text.startswith("ConnectionFailed: Not connecting 'api': the administrator's policy")
    text = failed(k, "%mcp connect far http://127.0.0.1:9/elsewhere")
    assert "allows only these URLs: http://127.0.0.1:*/mcp" in text
    assert not pwned.exists()


def test_a_received_notebooks_record_is_listed_as_forbidden_and_never_started(
    k: Kernel, where: dict[str, Path]
) -> None:
    pwned = where["work"] / "pwned-record"
    question = {"method": "elicitation/create", "params": {"message": "Go on?", "requestedSchema": {"type": "object"}}}
    record = {
        "v": 1, "id": "rec00001", "cell_id": None, "server": {"name": "sec", "target": f"-- touch {pwned}"},
        "method": "tools/call", "name": "wipe", "arguments": {}, "round": 1, "request_state": None,
        "pending": {"go": question}, "updated": "2026-11-30T10:00:00Z",
    }  # fmt: skip
    nb = nbformat.v4.new_notebook()
    nb.metadata["mcp_notebook"] = {"flows": {"rec00001": record}}
    nbformat.write(nb, str(where["work"] / "received.ipynb"))
    listing = k.text_of_cell(k.execute("%mcp flows --from received.ipynb"))
    assert "rec00001" in listing
    msg_id = k.execute("%mcp flows", wait=True)
    html = "".join(
        str(m["content"].get("data", {}).get("text/html", "")) for m in k.for_cell(msg_id) if "data" in m["content"]
    )
    assert "allows only these stdio commands" in html and "so it cannot be resumed here" in html  # listed as forbidden
    text = failed(k, "%mcp resume rec00001 --trust --accept-defaults")
    assert "Flow rec00001 was not resumed: the administrator's policy" in text and str(where["policy"]) in text
    assert "It stays saved." in text
    assert not pwned.exists()


def test_this_notebooks_own_record_is_listed_as_forbidden(k: Kernel, where: dict[str, Path]) -> None:
    """A record this kernel saved (signed: "saved by you") whose server the policy forbids is listed as such."""
    pwned = where["work"] / "pwned-own"
    question = {"method": "elicitation/create", "params": {"message": "Go on?", "requestedSchema": {"type": "object"}}}
    record = {
        "v": 1, "id": "own00001", "cell_id": None, "server": {"name": "own", "target": f"-- touch {pwned}"},
        "method": "tools/call", "name": "wipe", "arguments": {}, "round": 1, "request_state": None,
        "pending": {"go": question}, "updated": "2026-11-30T10:00:00Z",
    }  # fmt: skip
    k.execute(f"get_ipython().magics_manager.registry['MCPMagics'].session.store.save({record!r})", wait=True)
    listing = k.text_of_cell(k.execute("%mcp flows", wait=True))
    assert "own00001" in listing and "yes, but FORBIDDEN by the policy: below" in listing, listing
    assert (
        f"Flow own00001 cannot be resumed here: the administrator's policy ({where['policy']}) allows only these "
        "stdio commands" in listing
    ), listing
    text = failed(k, "%mcp resume own00001 --accept-defaults")
    assert "Flow own00001 was not resumed: the administrator's policy" in text
    assert not pwned.exists()


def test_serve(k: Kernel, where: dict[str, Path]) -> None:
    k.execute("%%mcp server proto\nfrom mcp.server.mcpserver import MCPServer\nproto = MCPServer('proto')")
    text = failed(k, "%mcp serve proto")
    assert f"Not serving 'proto': the administrator's policy ({where['policy']}) forbids %mcp serve" in text


def test_project_configs(k: Kernel, where: dict[str, Path]) -> None:
    pwned = where["work"] / "pwned-config"
    (where["work"] / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"local": {"command": "touch", "args": [str(pwned)]}}})
    )
    listing = k.text_of_cell(k.execute("%mcp connect --from-config"))
    assert "cannot connect: the administrator's policy" in listing  # listed as forbidden (the row is cut to fit)
    said = k.text_of_cell(k.execute("%mcp connect --from-config local --trust-project"))  # reported, not raised
    assert (
        f"local failed: {where['work'] / '.mcp.json'}, server 'local': the administrator's policy ({where['policy']}) forbids servers from project config files"
        in said
    )
    assert not pwned.exists()


def test_config_and_the_environment_cannot_lift_it(k: Kernel, where: dict[str, Path]) -> None:
    k.execute("%mcp connect d mcp_notebook.demo:demo")
    k.execute("%config MCPMagics.review = 'never'\nimport os\nos.environ.pop('JUPYTER_CONFIG_PATH', None)")
    text = failed(k, "%mcp call d.summarize text='the cat'")
    assert f"the administrator's policy ({where['policy']}) wants a person to review every sampling request" in text
    assert "nothing was sent to the model" in text
    text = failed(k, f"%mcp connect bad -- touch {where['work'] / 'pwned-late'}")
    assert "allows only these stdio commands" in text  # the path the kernel started with still counts


def test_mcp_policy_shows_what_is_in_force_and_where_from(k: Kernel, where: dict[str, Path]) -> None:
    shown = k.text_of_cell(k.execute("%mcp policy"))
    assert str(where["policy"]) in shown
    for rule, said in [
        ("stdio commands allowed", POLICY["allowed_stdio_commands"][0]),
        ("URLs allowed", "http://127.0.0.1:*/mcp"),
        ("environment variables denied", "HUB_*"),
        ("least review", "ask"),
        ("project configs", "forbidden"),
        ("%mcp serve", "forbidden"),
    ]:
        assert any(rule in line and said in line for line in shown.splitlines()), (rule, shown)
    hinted = failed(k, "%mcp connect bad -- touch nothing")
    assert "%mcp policy shows the administrator's policy in force" in hinted
