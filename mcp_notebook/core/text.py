"""Plain text for the page: escaping, one-line cuts, and content blocks read as text.

Every server string that reaches HTML goes through ``esc``; ``one_line`` and ``clip`` bound a
string for a line of a table or a header; ``content_text`` reads a content block (or a list of
them) as one plain line, for a model's prompt or a caller that escapes it. ``mcp_line`` is the
same care for the ``%mcp`` line: every line (or part of one) we suggest is built by it, each word
encoded for the line's grammar by ``line_word`` (tests/security/test_suggested_lines.py fails on
any ``%mcp`` line put together another way). ``spell_out`` writes control, format (bidi,
zero-width) and separator characters as ``\\uXXXX``; ``plain_text`` is what every ``text/plain``
output goes through (newlines and tabs kept), so a server's escape sequences never reach a terminal.
"""

from __future__ import annotations

import html
import json
import shlex
import unicodedata
from typing import Any

__all__ = ["Flag", "clip", "content_text", "esc", "line_word", "mcp_line", "one_line", "plain_text", "spell_out"]

# control (C0, DEL, C1), format (bidi overrides, zero-width), lone surrogates, line and paragraph separators
_SPELLED = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))

_QUOTE_IF = set(
    "'\"\\#{}?"
)  # a word with these (or a space) is quoted: the split, comment stripping or expansion would read it, and
# IPython reads a line ending in ? as a help request (%mcp resume x? shows help on x)
UNWRITABLE = "…"
"""What ``mcp_line`` writes for a word no line can hold (a line break, a control or bidi character): the
person fills it in, as with a secret left out."""


def esc(value: Any) -> str:
    """``value`` as text that HTML shows as it is (quotes escaped too, so it is safe in attributes)."""
    return html.escape(str(value), quote=True)


def spell_out(text: str, keep: str = "") -> str:
    """``text`` with every control, format, surrogate and line/paragraph separator character but those
    in ``keep`` written as ``\\uXXXX``: nothing in it moves the cursor, clears a screen, writes a
    clipboard (OSC 52) or turns text around (bidi overrides), and nothing hides.
    """
    probe = text
    for char in keep:
        probe = probe.replace(char, "")
    if probe.isprintable():  # the common case, at C speed (a space is printable; other spaces go the long way)
        return text
    return "".join(f"\\u{ord(c):04x}" if c not in keep and unicodedata.category(c) in _SPELLED else c for c in text)


def plain_text(text: str) -> str:
    """``text`` for a ``text/plain`` output or a printed line: ``spell_out`` keeping newlines and tabs.

    Plain text reaches terminals (``jupyter console``, ``nbconvert --to script`` piped to a shell, a
    CI log, VS Code's text renderer), which obey escape sequences a server put in its text: every
    ``text/plain`` twin of an output and every printed note goes through this, as HTML goes through ``esc``.
    """
    return spell_out(text, "\n\t")


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one an ellipsis when something was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def one_line(text: str | None, width: int) -> str:
    """``text`` on one line (runs of whitespace as one space), cut to ``width`` characters with "…"."""
    return clip(" ".join((text or "").split()), width)


def content_text(content: Any) -> str:
    """A content block, or a list of them, as one line of plain text: text as it is, other kinds
    as short bracketed summaries (blocks joined by spaces).

    Neither escaped nor bounded: for a model's prompt, or for a caller that escapes it (``esc``).
    A result shown in a cell goes through ``render_content``, which bounds and escapes it.
    """
    blocks = content if isinstance(content, list) else [content]
    return " ".join(part for part in map(_block_text, blocks) if part)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, about {len(block.data or '') * 3 // 4} bytes]"
    if kind == "tool_use":
        return f"[tool call {block.name} (id {block.id})] {json.dumps(block.input, ensure_ascii=False, sort_keys=True)}"
    if kind == "tool_result":
        return (
            f"[tool result for {block.tool_use_id}{' (error)' if block.is_error else ''}] {content_text(block.content)}"
        )
    if kind == "resource":
        return getattr(block.resource, "text", None) or f"[resource {block.resource.uri}]"
    return f"[{kind}]" if kind is not None else ""


def line_word(text: str) -> str:
    """``text`` as one word of a ``%mcp`` line that reads back as exactly ``text``, whatever it holds.

    For any printable ``text``: ``shlex.split(expand_braces(strip_comment(line_word(text)), ns)) == [text]``.
    A word the magic's split, comment stripping, ``{expr}`` expansion or IPython's trailing ``?`` would
    change is put in single quotes (a ``'`` in it written ``'"'"'``, as a shell reads it): inside
    ``'...'`` the line expands nothing, so a brace is data and ``{"name":"n0"}`` reads as a person
    writes it. ``eu-west-1`` stays as it is. Text that is not printable has no such word (``mcp_line``
    writes ``UNWRITABLE`` for it; Tab leaves it out). Server and saved-record text goes through this
    (``mcp_line`` for a line or part of one), never into a line as is.
    """
    if text and not any(c.isspace() or c in _QUOTE_IF for c in text):
        return text
    return shlex.quote(text)


class Flag(str):
    """One of our own words of a ``%mcp`` line that starts with ``-`` (``--trust``, ``-o``, the ``--`` before a
    stdio command): ``mcp_line`` writes it as a flag. Only code names a flag; text never becomes one."""

    __slots__ = ()


def mcp_line(*words: str) -> str:
    """The words as a ``%mcp`` line (or part of one) that the magic reads back as exactly these words.

    The one builder of every line we suggest (``mcp_line("%mcp", "resume", flow_id, Flag("--trust"))``,
    ``mcp_line(Flag("--answer"), f"{field}=VALUE")``): each word goes through ``line_word``, so a server's
    or a received record's text is data in the line, never ``{expr}`` to evaluate, a quote that
    ends the word, a ``#`` comment or a line break that starts Python. Our own words (``%mcp``,
    flags, ``NAME=VALUE`` placeholders) come out as written.

    A word that is not printable cannot be written at all: IPython splits a cell at U+2028,
    ``\\x0c``, ``\\x85`` and other line separators even inside quotes, so the rest of the line would
    run as Python, and a bidi control reorders what the person reads. It is written as
    ``UNWRITABLE`` (``…``), a word the person must replace. So is a word starting with ``-`` that is
    not a ``Flag``: the subcommand's parser reads it as a flag whatever its quotes (a received flow id
    ``--trust=sha256:…`` made ``%mcp resume ID`` consent to another record). After our ``Flag("--")``
    the words are a stdio command's own, its flags included, and are written as they are.
    """
    out: list[str] = []
    command = False  # past our `--`: the command's words, which the magic never parses as its flags
    for word in words:
        if isinstance(word, Flag):
            out.append(str(word))
            command = command or word == "--"
        elif not word.isprintable() or (word.startswith("-") and not command):
            out.append(UNWRITABLE)
        else:
            out.append(line_word(word))
    return " ".join(out)
