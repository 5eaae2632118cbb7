"""``{expr}`` in a ``%mcp`` line, expanded the way IPython expands ``!`` commands.

``%mcp connect demo -- {sys.executable} -m mcp_notebook.demo demo`` runs the kernel's own
Python, whatever PATH says. IPython's own expansion (``var_expand``) cannot be used as is: it
treats a whole line as one format string, so a JSON argument (``--answers '{"a":1}'``) is either
mangled (``{"a":1}`` formats ``"a"`` with spec ``1``) or stops every other expansion on the line.
The magic is ``@no_var_expand`` and the line is read here, by one rule:

* inside ``'...'`` nothing is expanded and ``{{`` stays ``{{``: the words are exactly as typed, as
  in a shell, so JSON (``--json '{"values": {"id": 2}}'``) arrives as typed, nested or not;
* in bare words and inside ``"..."`` each ``{...}`` is looked at alone: its text must be a Python
  expression that is not a dict or set display (``{a, b}`` stays as typed) and must evaluate in the
  caller's namespace (a function's locals first, then the notebook's variables, as IPython gives a
  magic ``needs_local_scope``); otherwise it stays as typed, as with ``!`` commands. There ``{{``
  and ``}}`` are literal braces. Outside quotes the value is shell-quoted (a path with spaces stays
  one word); inside ``"..."`` it goes in as is. ``$var`` is never expanded (``$`` is common in values).

Only the line is expanded: a ``%%mcp`` cell body (arguments, a server's code) never is.

``strip_comment`` drops a trailing ``# comment`` first, as a shell does: a ``#`` that starts a
word outside quotes (``color=#fff`` keeps its ``#``).

``line_word`` (in ``core.text``, since the engine encodes with it too) is the other direction, for
text the user did not write: a server's tool name or enum value offered by Tab, a saved record's id
in a printed ``%mcp resume ID``. Any such word holding a brace (or a quote, a space, ...) is put in
single quotes, where nothing is expanded: ``{__import__("os").system(...)}`` from a server is data,
never code, and reads as the server wrote it.
"""

from __future__ import annotations

import ast
import shlex
from collections.abc import Iterator, Mapping
from typing import Any

from ..core.text import line_word

__all__ = ["expand_braces", "line_word", "strip_comment", "typed_word", "unquoted"]


def expand_braces(line: str, global_ns: Mapping[str, Any] | None, local_ns: Mapping[str, Any] | None = None) -> str:
    """``line`` with every ``{expr}`` outside single quotes that evaluates replaced by its value (see the module docstring).

    ``local_ns`` is the caller's frame's locals (a function's, a comprehension's), read before
    ``global_ns``. With ``global_ns=None`` nothing is evaluated (Tab reads a line that way): only
    ``{{`` and ``}}`` outside single quotes become single braces.
    """
    if "{" not in line and "}}" not in line:
        return line  # the common case: nothing to look at
    out: list[str] = []
    quote: str | None = None
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote == "'":  # as typed, up to and with the closing quote
            closed = line.find("'", i)
            stop, quote = (n, quote) if closed < 0 else (closed + 1, None)
            out.append(line[i:stop])
            i = stop
            continue
        if c in "{}" and line.startswith(c * 2, i):
            out.append(c)
            i += 2
            continue
        if c == "{" and global_ns is not None:
            end = _closing(line, i)
            if end is not None:
                value = _evaluate(line[i + 1 : end], global_ns, local_ns)
                if value is not None:
                    out.append(value if quote else shlex.quote(value))
                    i = end + 1
                    continue
        elif c in "'\"":
            quote = None if quote == c else (c if quote is None else quote)
        elif c == "\\" and i + 1 < n:
            out.append(line[i : i + 2])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def typed_word(fragment: str) -> str:
    """What a partly typed word reads back as, for comparing with raw names and values at Tab.

    The inverse of ``line_word`` on a prefix of one: quoting undone (an open quote forgiven) and
    ``{{`` / ``}}`` outside single quotes made single. A ``{expr}`` is never evaluated here: Tab
    must not run code.
    """
    text = expand_braces(fragment, None)
    for closing in ("", "\\", "'", '"'):  # as typed, else a trailing backslash or an open quote closed
        try:
            return "".join(shlex.split(text + closing))
        except ValueError:
            continue
    return text


def strip_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (a ``#`` at the start of a word, outside quotes)."""
    if "#" not in line:
        return line
    for i, c in unquoted(line):
        if c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line


def unquoted(line: str) -> Iterator[tuple[int, str]]:
    """The characters of ``line`` outside quotes, with their index, as the magic's split reads it.

    Quote characters themselves and backslash escapes (outside single quotes) are skipped. The one
    reading of a line's quoting, shared by comment stripping and Tab's "where does this word start".
    """
    quote: str | None = None
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and quote != "'":
            i += 2
            continue
        if c in "'\"":
            quote = None if quote == c else (c if quote is None else quote)
        elif quote is None:
            yield i, c
        i += 1


def _closing(line: str, start: int) -> int | None:
    """The index of the ``}`` that closes the ``{`` at ``start`` (nested braces counted), or ``None``."""
    depth = 0
    for j in range(start, len(line)):
        if line[j] == "{":
            depth += 1
        elif line[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _evaluate(text: str, global_ns: Mapping[str, Any], local_ns: Mapping[str, Any] | None) -> str | None:
    """``str(eval(text))``, or ``None`` when ``text`` is no plain expression or does not evaluate."""
    if not text.strip():
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None  # a JSON object's inside ("a": 1) and other non-expressions stay as typed
    if isinstance(tree.body, ast.Dict | ast.Set | ast.DictComp | ast.SetComp | ast.Tuple):  # {a, b} is a set display
        return None
    try:
        # one namespace, the locals over the globals, as IPython's var_expand does: a comprehension or a
        # lambda in the expression sees a function's locals too
        if local_ns is None or local_ns is global_ns:
            namespace = global_ns if isinstance(global_ns, dict) else dict(global_ns)
        else:
            namespace = {**global_ns, **local_ns}
        value = eval(compile(tree, "<%mcp line>", "eval"), namespace)  # noqa: S307 - the user's own cell
    except Exception:  # noqa: BLE001 - like IPython's `!`: a group that does not evaluate stays as typed
        return None
    return str(value)
