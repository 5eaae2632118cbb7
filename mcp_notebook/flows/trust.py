"""Which saved flows this user wrote, and what resuming one would do.

A notebook can come from anyone, and its ``mcp_notebook`` metadata says which command to run,
which URL to reach with which token, and which tool to call with which arguments. None of that
may happen just because a file was opened. Jupyter's answer for outputs is the signed notebook:
``nbformat.sign.NotebookNotary`` keeps a secret in the user's Jupyter data folder (mode 0600) and
the server signs what the user saves. We use the same secret, but sign each *record* rather than
the notebook, for two reasons checked against jupyter_server's ``check_and_sign``:

* a notebook without rich outputs counts as trusted when it is saved, so JupyterLab's autosave
  signs a received notebook about two minutes after it is opened, records and all;
* records travel through the JupyterLab extension and back, so only the record's own bytes can
  prove where it came from.

A record written by mcp-notebook for this user carries ``sig``: an HMAC-SHA256, keyed with the
notary's secret, of the record's canonical JSON. A received notebook's records do not verify
(another user's secret, or none), so they are listed whole and resumed only with consent.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
from collections.abc import Mapping
from typing import Any

from ..core.urls import consent_url

__all__ = [
    "DIGEST_SHOWN",
    "RecordSigner",
    "canonical",
    "content_digest",
    "describe_record",
    "digest_matches",
    "is_digest",
    "record_label",
    "record_text",
    "shown_digest",
    "target_of",
]

SIG_KEY = "sig"
SIG_PREFIX = "hmac-sha256:"
DIGEST_PREFIX = "sha256:"
DIGEST_SHOWN = 32
"""Hex digits of a record's content digest shown to the person (128 bits: no two records share them)."""
DIGEST_TYPED = 16
"""Fewest hex digits ``%mcp resume ID --trust DIGEST`` takes (a prefix must match exactly one record)."""


def canonical(record: Mapping[str, Any]) -> bytes:
    """The bytes a signature covers: the record without ``sig``, as sorted, compact JSON.

    Whole floats are written as integers because a record that went through the browser comes back
    with ``1.0`` read as ``1`` (JavaScript has one number type).
    """
    body = {k: v for k, v in record.items() if k != SIG_KEY}
    return json.dumps(
        _whole_floats(body), sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str
    ).encode()


def content_digest(record: Mapping[str, Any]) -> str:
    """What consent is bound to: ``sha256:`` and the SHA-256 of the record's canonical JSON (``sig`` left out).

    A person consents to the record they were shown, not to its flow id: every consent (Resume,
    Continue, ``--trust``) acts only while the store holds a record with this same digest, so a
    record swapped in under the same id (a received notebook's metadata restored after its cell
    output was shown) is asked about again.
    """
    return DIGEST_PREFIX + hashlib.sha256(canonical(record)).hexdigest()


def shown_digest(digest: str) -> str:
    """The digest as the review shows it (``sha256:`` and its first ``DIGEST_SHOWN`` hex digits)."""
    return digest[: len(DIGEST_PREFIX) + DIGEST_SHOWN]


def is_digest(typed: str) -> bool:
    """Whether ``typed`` can name a content digest: ``sha256:`` (optional) and ``DIGEST_TYPED`` to 64 hex digits."""
    hexes = typed.strip().lower().removeprefix(DIGEST_PREFIX)
    return DIGEST_TYPED <= len(hexes) <= 64 and all(c in "0123456789abcdef" for c in hexes)


def digest_matches(digest: str, typed: str) -> bool:
    """Whether ``typed`` (a shown digest, with or without ``sha256:``, at least ``DIGEST_TYPED`` hex digits) names ``digest``."""
    if not is_digest(typed):
        return False
    return digest.removeprefix(DIGEST_PREFIX).startswith(typed.strip().lower().removeprefix(DIGEST_PREFIX))


def _whole_floats(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_floats(v) for v in value]
    return value


class RecordSigner:
    """Signs records this kernel writes and recognises them later, in any kernel of the same user.

    The key is the Jupyter notary's secret, read (or created, 0600) on first use, so a notebook
    opened on another machine or by another user has records that do not verify. ``secret`` may be
    given directly (tests, or a deployment that keeps the secret elsewhere).
    """

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        """Whether the secret is loaded (the first read is a file, or nbformat's import to make one: not on the loop)."""
        return self._secret is not None

    @property
    def secret(self) -> bytes:
        with self._lock:
            if self._secret is None:
                self._secret = _notary_secret()
            return self._secret

    def signature(self, record: Mapping[str, Any]) -> str:
        return SIG_PREFIX + hmac.new(self.secret, canonical(record), hashlib.sha256).hexdigest()

    def sign(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` with its ``sig`` (a new dict; the argument is not changed)."""
        return {**{k: v for k, v in record.items() if k != SIG_KEY}, SIG_KEY: self.signature(record)}

    def verify(self, record: Mapping[str, Any]) -> bool:
        sig = record.get(SIG_KEY)
        if not isinstance(sig, str) or not sig.startswith(SIG_PREFIX) or not sig.isascii():
            return False  # compare_digest raises on non-ASCII text: a hostile record must not
        try:
            expected = self.signature(record)
        except RecursionError:  # nested past what check_record lets in: not ours
            return False
        return hmac.compare_digest(sig, expected)


def _notary_secret() -> bytes:
    """The secret Jupyter signs notebooks with (created with mode 0600 when there is none yet).

    An existing secret is read from its file as ``NotebookNotary`` reads it (``notebook_secret`` in
    the Jupyter data folder, its bytes as they are): importing ``nbformat.sign`` imports ``nbformat``
    and ``jsonschema``, most of a first ``%mcp flows`` in a fresh kernel. The notary itself makes a
    missing one, so the file is written as Jupyter writes it.
    """
    from jupyter_core.paths import jupyter_data_dir

    data_dir = jupyter_data_dir()
    try:
        with open(os.path.join(data_dir, "notebook_secret"), "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        pass
    from jupyter_core.utils import ensure_dir_exists
    from nbformat.sign import MemorySignatureStore, NotebookNotary

    ensure_dir_exists(data_dir, mode=0o700)  # the notary writes its secret file but not the folder
    # An in-memory signature store: only the secret is wanted, not the notary's SQLite database.
    notary = NotebookNotary(data_dir=data_dir, store_factory=MemorySignatureStore)
    return bytes(notary.secret)


# ---------------------------------------------------------------------- what a resume would do
def target_of(server: Mapping[str, Any]) -> tuple[str, str | None]:
    """A saved ``server`` entry's target and cwd, as compared with an open connection's."""
    target = server.get("target")
    cwd = server.get("cwd")
    return (target if isinstance(target, str) else "", cwd if isinstance(cwd, str) else None)


def _names(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


# the sign-in options that are addresses (auth.sdk_provider.OAuthOptions), and how a review names them
_URL_OPTIONS = {
    "issuer": "with the authorization server",
    "idp_token_endpoint": "with the identity provider's token endpoint",
}


def describe_record(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Everything resuming ``record`` would do, as (what, value) lines, in full (never clipped).

    The values are the record's own text: callers escape them for HTML. A URL it connects to is a
    ``core.urls.ShownURL`` (a ``str`` in text; its ``html`` is what a consent screen's HTML shows).
    """
    server = record.get("server") if isinstance(record.get("server"), dict) else {}
    assert isinstance(server, dict)
    target, cwd = target_of(server)
    lines: list[tuple[str, str]] = [("server name", str(server.get("name", "")))]
    if server.get("in_process"):
        lines.append(("server", f"an object of the notebook's kernel: {target}"))
    elif target.startswith("--"):
        lines.append(("runs the command", target[2:].strip()))
        lines.append(("in folder", cwd or "(the kernel's working folder)"))
        if server.get("env"):
            lines.append(("with environment variables", _names(server["env"])))
    else:
        lines.append(("connects to", consent_url(target)))  # the host reached, look-alikes marked (core.urls)
        if server.get("bearer_env"):
            lines.append(("sends as bearer token", f"the value of ${server['bearer_env']}"))
        if server.get("headers"):
            lines.append(("with headers", _names(server["headers"])))
        oauth = server.get("oauth")
        if isinstance(oauth, dict):
            said = ", ".join(
                f"{k} {v}"
                for k, v in sorted(oauth.items())
                if k not in ("sign_in", *_URL_OPTIONS) and isinstance(v, str)
            )
            lines.append(
                (
                    "signs in with OAuth",
                    f"{oauth.get('sign_in', 'oauth')}{f' ({said})' if said else ''}; secrets named by variable are read from this kernel",
                )
            )
            for option, what in _URL_OPTIONS.items():  # addresses get lines of their own, shown as reached
                if isinstance(oauth.get(option), str):
                    lines.append((what, consent_url(oauth[option])))
    kind = {"tools/call": "calls tool", "prompts/get": "gets prompt", "resources/read": "reads resource"}.get(
        str(record.get("method")), "calls"
    )
    lines.append((kind, str(record.get("name", ""))))
    if record.get("method") != "resources/read":
        lines.append(("with arguments", json.dumps(record.get("arguments") or {}, ensure_ascii=False, sort_keys=True)))
    if record.get("withheld"):
        lines.append(("asks you again for", _names(record["withheld"])))
    lines.append(("content digest", shown_digest(content_digest(record))))  # what a consent is bound to
    return lines


def record_label(record: Mapping[str, Any]) -> str:
    """How a saved flow is named to the user: ``SERVER.NAME``, or ``SERVER URI`` for a resource read (built here only)."""
    server = record["server"]["name"]
    return f"{server}.{record['name']}" if record.get("method") != "resources/read" else f"{server} {record['name']}"


def record_text(record: Mapping[str, Any], concerns: list[str] | None = None) -> str:
    """A saved record whole, as plain text: what resuming it would run, reach, send and call (and why it needs consent)."""
    head = f"flow {record['id']} ({record_label(record)}):"
    why = [f"  ! {c}" for c in concerns or []]
    body = [f"  {what}: {value}" for what, value in describe_record(record)]
    return "\n".join([head, *why, *body])
