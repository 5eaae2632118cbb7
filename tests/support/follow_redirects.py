"""A stand-in browser for sign-in tests: ``BROWSER="python tests/support/follow_redirects.py %s"``.

Python's ``webbrowser`` runs it with the authorization URL, as it would run a real browser. It
GETs the URL and follows every redirect (the authorization server approves at once in these
tests: the conformance suite's ``/authorize``, ``tests/support/oauth_server.py --consent auto``) until it
reaches the client's callback, the notebook's loopback catcher, which takes the code from there.
The code only ever travels through that redirect, as in a real browser.
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from urllib.parse import urljoin


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def follow(url: str, hops: int = 10) -> int:
    opener = urllib.request.build_opener(_NoRedirect)
    for _ in range(hops):
        try:
            with opener.open(url, timeout=20) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            location = error.headers.get("Location")
            if error.code in (301, 302, 303, 307, 308) and location:
                url = urljoin(url, location)
                continue
            return int(error.code)
    return 0


if __name__ == "__main__":
    sys.exit(0 if follow(sys.argv[1]) < 400 else 1)
