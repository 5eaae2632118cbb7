"""What ``%mcp skill NAME`` shows: a verified skill's ``SKILL.md`` and its files, as text that cannot become markup.

The ``SKILL.md`` body is a server's markdown: it is rendered by ``safe_markdown`` (raw HTML off,
links only to absolute http(s)/mailto addresses, images never fetched). The other files are shown
escaped, folded, each with its verified size and digest. The object stays usable from Python:
``view.text`` (the ``SKILL.md``), ``view.body``, ``view.files`` (address -> text).
"""

from __future__ import annotations

from typing import Any

from ..core.text import esc, plain_text
from ..wire.skills import LoadedSkill
from .listing import ShownOnce

__all__ = ["SkillView"]


class SkillView(ShownOnce):
    """A loaded, verified skill (``wire.skills.LoadedSkill``) with a rich display."""

    def __init__(self, loaded: LoadedSkill) -> None:
        self.loaded = loaded
        self.text, self.body, self.files = loaded.text, loaded.body, dict(loaded.files)

    def __repr__(self) -> str:
        return f"<skill {self.loaded.skill.name!r} of {self.loaded.server}: {len(self.files)} verified files>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from .safe_markdown import render_markdown

        skill = self.loaded.skill
        head = f"skill {skill.name} from {self.loaded.server}: {skill.description}".rstrip(": ")
        listed = [f"  {f.uri}  {f.size} bytes  sha256:{f.digest[:12]}… verified" for f in skill.files]
        plain = "\n".join([head, *listed, "", self.text])
        others = "".join(
            f"<details><summary><code>{esc(uri)}</code></summary><pre>{esc(text)}</pre></details>"
            for uri, text in self.files.items()
            if uri != skill.uri
        )
        rows = "".join(
            f"<tr><td><code>{esc(f.uri)}</code></td><td>{f.size}</td><td><code>sha256:{esc(f.digest[:12])}…</code> ✓</td></tr>"
            for f in skill.files
        )
        html = (
            f'<div class="mcpnb"><div><b>skill {esc(skill.name)}</b> from <code>{esc(self.loaded.server)}</code>'
            f"{' — ' + esc(skill.description) if skill.description else ''}</div>"
            f"<table><tr><th>file</th><th>bytes</th><th>verified</th></tr>{rows}</table>"
            f'<div class="md">{render_markdown(self.body)}</div>{others}</div>'
        )
        return {"text/plain": plain_text(plain), "text/html": html}
