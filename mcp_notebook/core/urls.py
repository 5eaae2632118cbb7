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

Nothing here fetches anything.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

import ada_url

__all__ = ["BrowserURL", "URLWarning", "read_url", "visible"]

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
    """``text`` with control and format characters (tabs, zero-width, bidi overrides) spelled out."""
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)


def read_url(text: str) -> BrowserURL | None:
    """The URL as the browser reads ``text``, with warnings; ``None`` when it is no URL at all."""
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


def _unicode(hostname: str) -> str:
    if "xn--" not in hostname:
        return hostname
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
