"""The first tutorial runs top to bottom under nbclient (headless: preset answers, no front end)."""

from __future__ import annotations

import os
from pathlib import Path

import nbclient
import nbformat

from ..conftest import REPO_ROOT


def _texts(cell: nbformat.NotebookNode) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", "") or out.get("data", {}).get("text/plain", "") or out.get("evalue", ""))
    return "\n".join(parts)


def test_first_call_notebook_runs_headless(tmp_path: Path) -> None:
    nb = nbformat.read(REPO_ROOT / "notebooks" / "01-first-call.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    # nbclient sends allow_stdin: false, which is what makes the magics headless
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute(env={**os.environ})
    texts = {c.source.splitlines()[-1]: _texts(c) for c in nb.cells if c.cell_type == "code"}
    assert (
        texts["%mcp call prov.provision name=orders --answer region=eu-west-1"] == "Provisioned 'orders' in eu-west-1."
    )
    trace = next(v for k, v in texts.items() if "--trace" in k)
    assert "Provisioned 'orders' in us-east-1 (size medium)." in trace
    assert trace.count("client → server") == 3 and trace.count("server → client") == 3
    assert texts["%mcp read demo notes://ada/latest --accept-defaults"] == "note for ada"
    assert "UsageError: argument a='one': expected integer" in texts["%mcp call demo.add a=one b=2"]
    # nothing secret or machine-specific leaks into the saved outputs
    saved = nbformat.writes(nb)
    assert "Traceback" not in saved
