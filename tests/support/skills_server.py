"""A server offering skills (SEP-2640, ``io.modelcontextprotocol/skills``) on the SDK's server ``Extension`` hooks.

``make_skills_server(skills, served=...)`` lists each skill's entry (its ``SKILL.md`` address, the
frontmatter, every file with its ``sha256:`` digest and byte size) from ``skills`` and serves the
files as resources. ``served`` replaces what a file's read returns, so a test can make the server
lie about one file (the entry keeps the digest of the listed text). ``reads`` records every
``resources/read`` address, in order, so a test sees what was fetched and what was not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"

PDF_SKILL = {
    "skill://pdf-processing/SKILL.md": (
        "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n"
        "# PDF processing\n\nUse `pypdf` to read forms; see [the forms guide](skill://pdf-processing/references/FORMS.md).\n"
    ),
    "skill://pdf-processing/references/FORMS.md": "Fill a form field by its name, then flatten.\n",
}


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry(files: dict[str, str], frontmatter: dict[str, Any]) -> dict[str, Any]:
    """A ``skills/list`` entry for ``files`` (the first is the SKILL.md), each with its digest and size."""
    first = next(iter(files))
    return {
        "uri": first,
        "frontmatter": frontmatter,
        "resources": [{"uri": u, "digest": digest(t), "size": len(t.encode("utf-8"))} for u, t in files.items()],
    }


class _ListParams(types.RequestParams):
    cursor: str | None = None


@dataclass
class SkillsExtension(Extension):
    identifier = SKILLS_EXTENSION

    entries: list[dict[str, Any]]
    lists: int = 0
    reads: list[str] = field(default_factory=list)

    def methods(self) -> Sequence[MethodBinding]:
        return [MethodBinding(method="skills/list", params_type=_ListParams, handler=self._list)]

    async def _list(self, ctx: ServerRequestContext[Any, Any], params: _ListParams) -> dict[str, Any]:
        self.lists += 1
        return {"resultType": "complete", "skills": self.entries}


def make_skills_server(
    skills: Sequence[tuple[dict[str, str], dict[str, Any]]] = (
        (PDF_SKILL, {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}),
    ),
    served: dict[str, str] | None = None,
    name: str = "skills",
) -> tuple[MCPServer, SkillsExtension]:
    """The server and its extension (whose ``lists`` and ``reads`` say what the client asked for)."""
    extension = SkillsExtension([entry(files, front) for files, front in skills])
    server = MCPServer(name, extensions=[extension])
    texts = {uri: text for files, _ in skills for uri, text in files.items()} | (served or {})
    for uri in texts:
        server.resource(uri, name=uri.rsplit("/", 1)[-1], mime_type="text/markdown")(_reader(extension, texts, uri))
    return server, extension


def _reader(extension: SkillsExtension, texts: dict[str, str], uri: str) -> Any:
    def read() -> str:
        extension.reads.append(uri)
        return texts[uri]

    return read
