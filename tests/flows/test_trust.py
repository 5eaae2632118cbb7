"""The record signer's key: Jupyter's notary secret, read without importing nbformat."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from nbformat.sign import MemorySignatureStore, NotebookNotary

from mcp_notebook.flows.trust import RecordSigner


def test_the_secret_is_the_notarys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read from the file when there is one, made by the notary (0600) when there is none: the same bytes either way."""
    data = tmp_path / "data"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data))
    made = RecordSigner().secret  # no folder, no file yet: the notary writes it
    path = data / "notebook_secret"
    assert path.read_bytes() == made and len(made) > 1000
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(data.stat().st_mode) == 0o700
    assert RecordSigner().secret == made  # read back from the file
    notary = NotebookNotary(data_dir=str(data), store_factory=MemorySignatureStore)
    assert bytes(notary.secret) == made
    path.write_bytes(b"a secret Jupyter wrote earlier\n")
    signer = RecordSigner()
    assert signer.secret == b"a secret Jupyter wrote earlier\n"
    record = {"v": 1, "id": "f1"}
    assert RecordSigner(b"a secret Jupyter wrote earlier\n").verify(signer.sign(record))


def test_signing_imports_no_nbformat(tmp_path: Path) -> None:
    """A kernel that only lists saved flows never imports nbformat (nor jsonschema through it)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "notebook_secret").write_bytes(b"k" * 64)
    code = (
        "import sys; from mcp_notebook.flows.trust import RecordSigner; s = RecordSigner(); "
        "print(s.verify(s.sign({'v': 1})), 'nbformat' in sys.modules, 'jsonschema' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "JUPYTER_DATA_DIR": str(data)}, capture_output=True, text=True, check=True
    )  # fmt: skip
    assert out.stdout.split() == ["True", "False", "False"]
