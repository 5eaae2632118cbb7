"""Read a URL the way a browser will, so what the user is shown is what the click opens.

A server may put any text in a URL-mode elicitation. What matters to the user is the host the
browser will open, and browsers parse with the WHATWG URL Standard, not RFC 3986. Python's
``urllib.parse`` follows neither exactly, and where they differ a server can make the page lie:
``https://evil.example\\@accounts.google.com/`` is ``accounts.google.com`` to ``urllib``, but a
browser reads the backslash as ``/`` and opens ``evil.example``. So the host comes from ada
(``ada-url``, a WHATWG parser that agrees with browsers), the link's ``href`` is ada's normalized
form of the text, and ``urllib`` is used only to say what the raw text *seems* to say, to warn
when the two disagree.

Warnings (``URLWarning.kind``), each with a plain sentence for the user:

=============  ==================================================================================
userinfo       text before ``@`` that looks like a site but is not the one opened
rewritten      the browser reads the text differently from how it looks (a ``\\``, ``%``-escapes,
               a shortened IP address...): it opens another host
invisible      control, format or bidi characters (the browser drops some; others hide text)
punycode       an international (``xn--``) name, shown with how it reads
confusable     a name mixing scripts, or made only of letters that look like Latin ones
scheme         not ``http``/``https``: not a web page, so it gets no link
odd-host       a host no real site has (``*``, quotes...): browsers disagree on it, so no link
=============  ==================================================================================

``consent_url`` is how every consent screen (a saved record's review and its Resume panel, a
project config's approval and its row, a replay's refusal) shows a URL it would connect to or send
to: the address as the client reaches it (``xn--`` host) and, under it, each warning, in HTML and
in one line of text. A look-alike host (``api.gіthub.com``, Cyrillic ``і``) is never shown
unmarked: its Unicode form appears only inside a warning.

Nothing here fetches anything.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from .text import esc, spell_out

__all__ = ["BrowserURL", "ShownURL", "URLWarning", "consent_url", "read_url", "visible"]

WEB_SCHEMES = ("http", "https")
# Scripts that are written together: a Japanese or Korean name is not "mixed" in the spoofing sense.
_TOGETHER = ({"HAN", "HIRAGANA", "KATAKANA", "LATIN"}, {"HAN", "HANGUL", "LATIN"}, {"HAN", "BOPOMOFO", "LATIN"})
_NEUTRAL = {"COMMON", "INHERITED"}
# A host a link may point to: DNS letters, digits, '-', '_' and dots, or an IPv6 address. WHATWG
# allows more ("a*b.com") and Chromium escapes some of it differently (a%2Ab.com): no link then.
_LINKABLE_HOST = re.compile(r"\[[0-9a-f:.]+\]|[a-z0-9_.-]+")


@dataclass(frozen=True)
class URLWarning:
    kind: str  # one of the kinds in the module docstring
    text: str  # a plain sentence for the user (not HTML: escape it before showing)


@dataclass(frozen=True)
class BrowserURL:
    """One URL as the browser reads it."""

    text: str  # exactly what was given
    href: str  # ada's normalized href: what a link to it opens
    scheme: str  # without the colon, lower case
    host: str  # the WHATWG ``host``: ASCII (punycode) hostname, ``:port`` when not the default
    hostname: str  # the host without the port (IPv6 in brackets)
    port: str  # "" for the scheme's default port
    display_host: str  # ``hostname`` with its xn-- labels decoded to Unicode
    has_userinfo: bool
    warnings: tuple[URLWarning, ...]

    @property
    def linkable(self) -> bool:
        """Only web pages get a link: a ``javascript:`` or ``file:`` URL must not be one click away."""
        return self.scheme in WEB_SCHEMES and bool(_LINKABLE_HOST.fullmatch(self.hostname))

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(w.kind for w in self.warnings)


def visible(text: str) -> str:
    """``text`` with control and format characters (tabs, zero-width, bidi overrides) spelled out (``text.spell_out``)."""
    return spell_out(text)


def read_url(text: str) -> BrowserURL | None:
    """The URL as the browser reads ``text``, with warnings; ``None`` when it is no URL at all."""
    import ada_url  # only where a URL is read (about 2 ms): %load_ext imports this module (bench/overhead.py P3)

    try:
        parts = ada_url.parse_url(text)
    except ValueError:
        return None
    scheme = parts["protocol"].rstrip(":")
    hostname = parts["hostname"]
    display = _unicode(hostname) if parts["host_type"] == ada_url.HostType.DEFAULT else hostname
    has_userinfo = bool(parts["username"] or parts["password"])
    opens = hostname or "(no host)"
    warnings: list[URLWarning] = []
    if has_userinfo:
        warnings.append(URLWarning("userinfo", f"The part before @ is not the site: the browser opens {opens}."))
    seems = _seems(text)
    if seems not in (_bare(hostname), display.lower()):
        how = "a backslash (\\) counts as /, so " if "\\" in text else ""
        warnings.append(
            URLWarning(
                "rewritten",
                f"The browser reads this address differently from how it looks: {how}it opens {opens}, not {visible(seems) or 'what the text suggests'}.",
            )
        )
    if visible(text) != text:
        warnings.append(
            URLWarning(
                "invisible",
                "The address contains invisible or control characters (shown as \\u....); the browser drops or hides them.",
            )
        )
    if any(label.startswith("xn--") for label in hostname.split(".")):
        reads = f", which reads as {display}" if display != hostname else ""
        warnings.append(
            URLWarning(
                "punycode",
                f"This domain is an international name written in punycode (xn--){reads}; it may imitate another site. Check it carefully.",
            )
        )
    look = _lookalike(display)
    if look:
        warnings.append(URLWarning("confusable", f"{display} {look}; it may imitate another site."))
    if scheme in WEB_SCHEMES and hostname and not _LINKABLE_HOST.fullmatch(hostname):
        warnings.append(
            URLWarning("odd-host", f"The host {hostname} has characters no real site name has, so no link is offered.")
        )
    if scheme not in WEB_SCHEMES:
        warnings.append(
            URLWarning("scheme", f"Unusual scheme {scheme}: this is not a web page, so no link is offered.")
        )
    return BrowserURL(
        text=text,
        href=parts["href"],
        scheme=scheme,
        host=parts["host"],
        hostname=hostname,
        port=parts["port"],
        display_host=display,
        has_userinfo=has_userinfo,
        warnings=tuple(warnings),
    )


class ShownURL(str):
    """A URL as a consent screen shows it: the string is the one-line text form, ``html`` the HTML one.

    A ``str``, so the lines of a record's or a config entry's description stay strings (compared,
    joined, escaped as before); the HTML of a consent screen uses ``html`` where it finds one.
    """

    html: str

    def __new__(cls, text: str, html: str) -> ShownURL:
        shown = super().__new__(cls, text)
        shown.html = html
        return shown


_CONSENT_WARN = "border-left:3px solid var(--jp-error-color1,#d32f2f);padding-left:6px"  # the page's text colour: readable in every theme


def consent_url(text: str) -> ShownURL:
    """``text`` (a URL a record or a config names) for a consent screen, in text and HTML.

    An address with nothing to warn about is shown as written. Otherwise the address shown is the
    WHATWG reading (``read_url``: punycode host, control characters dropped or escaped), which is
    what the client reaches, and each warning follows it, marked ⚠: the written form (control and
    bidi characters spelled out) and the Unicode form of an ``xn--`` host appear only there.
    """
    read = read_url(text)
    notes: list[str] = []
    host = ""
    if read is None:
        shown = spell_out(text)
        notes.append("This is not an address a client can reach as written; check where it came from.")
    else:
        host = read.hostname + (f":{read.port}" if read.port else "")
        shown = spell_out(text) if not read.warnings else read.href
        for warning in read.warnings:
            notes.append(_consent_note(warning, read, text))
    line = shown + "".join(f"  ⚠ {spell_out(n)}" for n in notes)
    opens = (
        f' <span class="mcp-opens">host <b class="mcp-domain" style="background:color-mix(in srgb,var(--jp-warn-color1,#f57c00) 25%,var(--jp-layout-color1,#fff));color:var(--jp-ui-font-color1,#000);padding:0 2px">'
        f"{esc(host)}</b></span>"
        if host
        else ""
    )
    warnings = "".join(
        f'<div class="mcp-url-warning" style="{_CONSENT_WARN}">⚠ {esc(spell_out(n))}</div>' for n in notes
    )
    page = f"<code class='mcp-url' style='word-break:break-all'>{esc(shown)}</code>{opens}{warnings}"
    return ShownURL(line, page)


def _consent_note(warning: URLWarning, read: BrowserURL, text: str) -> str:
    """A warning in a consent screen's words: a connection, not a browser tab, is what the address is for."""
    host = read.hostname or "(no host)"
    if warning.kind == "userinfo":
        return f"The part before @ is not the host: the host is {host}."
    if warning.kind == "rewritten":
        seems = spell_out(_seems(text)) or "what the text suggests"
        return f"This address reads differently from how it looks: a browser reads the host as {host}, not {seems}; programs may disagree on it."
    if warning.kind == "invisible":
        return f"The address contains invisible or control characters; as written: {spell_out(text)}"
    if warning.kind == "odd-host":
        return f"The host {host} has characters no real site name has."
    if warning.kind == "scheme":
        return f"Unusual scheme {read.scheme}: this is not a web address."
    return warning.text  # punycode, confusable: about the name, the same for a browser and a client


def _unicode(hostname: str) -> str:
    if "xn--" not in hostname:
        return hostname
    import ada_url  # as in read_url

    try:
        return ada_url.idna_to_unicode(hostname) or hostname
    except (UnicodeError, ValueError):
        return hostname


def _bare(hostname: str) -> str:
    return hostname[1:-1] if hostname.startswith("[") else hostname


def _seems(text: str) -> str:
    """The host a reader (and RFC 3986-ish ``urllib``) takes from the raw text, lower case; "" if none."""
    try:
        host = urlsplit(text.strip()).hostname or ""
    except ValueError:
        return ""
    try:
        return str(ipaddress.IPv6Address(host)) if ":" in host else host
    except ValueError:
        return host


def _lookalike(name: str) -> str:
    """Why the Unicode host name looks like another one, or "" (ASCII names are what they seem).

    ``confusable_homoglyphs`` loads its Unicode tables (about 20 ms) here, for the first non-ASCII
    host: not in every kernel's first call.
    """
    from confusable_homoglyphs import categories

    for label in name.split("."):
        if label.isascii():
            continue
        letters = [c for c in label if c.isalpha()]
        scripts = {categories.alias(c) for c in letters} - _NEUTRAL
        skeleton = "".join(_latin_twin(c) or c for c in name)
        like = f" and looks like {skeleton}" if skeleton.isascii() else ""
        if len(scripts) > 1 and not any(scripts <= ok for ok in _TOGETHER):
            return f"mixes {' and '.join(s.title() for s in sorted(scripts))} letters{like}"
        if letters and all(c.isascii() or _latin_twin(c) for c in letters):
            return f"is made of letters that look like Latin ones{like}"
    return ""


def _latin_twin(char: str) -> str:
    """An ASCII letter or digit ``char`` is confusable with, or ""."""
    if char.isascii():
        return ""
    from confusable_homoglyphs import confusables

    for found in confusables.is_confusable(char, greedy=True) or []:
        for glyph in found["homoglyphs"]:
            if glyph["c"].isascii() and glyph["c"].isalnum():
                return str(glyph["c"]).lower()
    return ""
