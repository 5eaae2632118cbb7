"""Skills (SEP-2640, the ``io.modelcontextprotocol/skills`` extension): listed on request, fetched only when asked, verified.

A server offering skills answers ``skills/list`` with entries: a skill's ``SKILL.md`` address, the
frontmatter it declares (``name``, ``description``, ...) and every file of the skill with its
``sha256:`` digest and byte size. The files themselves are ordinary resources (``resources/read``).

The extension's duties for a host, which this module keeps:

* **no prefetch**: listing reads no file; nothing is read on connecting or listing, only when a
  skill is loaded (``load_skill``);
* **verification on read**: every file read is checked against its entry, size first (a length that
  differs is a failure whatever its digest), then digest; unverified content is never used, and a
  failure stops the load before any further file is read;
* **frontmatter comparison**: the ``SKILL.md`` read is parsed (YAML between ``---`` lines) and
  compared field by field with the entry's frontmatter; any difference refuses the skill (the entry
  is what was shown, and approved, in the listing; the file is what a model would follow).

Everything a server sends is bounded (entries, files, sizes, frontmatter), and YAML aliases are
refused (they let a few bytes stand for a huge structure).
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import mcp.types as types
from pydantic import ConfigDict

from ..errors import FlowError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .connection import Connection

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_SKILL_BYTES",
    "SKILLS_EXTENSION",
    "LoadedSkill",
    "Skill",
    "SkillFile",
    "SkillRefused",
    "list_skills",
    "load_skill",
    "offers_skills",
    "parse_frontmatter",
]

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
MAX_SKILLS = 500
MAX_FILES = 100  # files of one skill
MAX_FILE_BYTES = 1_000_000
MAX_SKILL_BYTES = 4_000_000  # all files of one skill
MAX_FRONTMATTER = 16_384
MAX_FRONTMATTER_DEPTH = 32  # nested mappings and lists: a real frontmatter uses a few
MAX_PAGES = 20
_DIGEST = re.compile(r"sha256:([0-9a-fA-F]{64})")


class SkillRefused(FlowError):
    """A skill's file failed verification (size, digest, frontmatter) or its entry is malformed: nothing of it is used."""


class _Loose(types.Result):
    model_config = ConfigDict(extra="allow")


class _ListParams(types.RequestParams):
    cursor: str | None = None


class _ListSkills(types.Request[_ListParams, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: _ListParams
    name_param: ClassVar[str | None] = None


@dataclass(frozen=True)
class SkillFile:
    """One file of a skill as its entry declares it."""

    uri: str
    digest: str  # the hex sha256 (lower case)
    size: int


@dataclass(frozen=True)
class Skill:
    """One entry of ``skills/list``: where its ``SKILL.md`` is, what it declares, and its files."""

    uri: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]

    @property
    def name(self) -> str:
        value = self.frontmatter.get("name")
        return value if isinstance(value, str) and value else self.uri

    @property
    def description(self) -> str:
        value = self.frontmatter.get("description")
        return value if isinstance(value, str) else ""

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


@dataclass
class LoadedSkill:
    """A skill read and verified: its ``SKILL.md`` text, its body (after the frontmatter), and every other file."""

    server: str
    skill: Skill
    text: str
    body: str
    files: dict[str, str] = field(default_factory=dict)  # uri -> verified text, SKILL.md first


def offers_skills(conn: Connection) -> bool:
    """Whether the server declared the skills extension in its capabilities."""
    capabilities = conn.live.session.server_capabilities
    return capabilities is not None and SKILLS_EXTENSION in (capabilities.extensions or {})


async def list_skills(conn: Connection) -> list[Skill]:
    """Every skill of ``conn`` (pages followed, bounded); reads no file."""
    await conn.opened()
    skills: list[Skill] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await conn.live.session.send_request(_ListSkills(params=_ListParams(cursor=cursor)), _Loose)
        raw = page.model_dump(by_alias=True, mode="json", exclude_none=True)
        entries = raw.get("skills")
        if not isinstance(entries, list):
            raise SkillRefused(f"{conn.name} answered skills/list without a list of skills", kind="skill_refused")
        skills += [_entry(conn.name, e) for e in entries[: MAX_SKILLS - len(skills)]]
        cursor = raw.get("nextCursor") if isinstance(raw.get("nextCursor"), str) else None
        if not cursor or len(skills) >= MAX_SKILLS:
            break
    return skills


def _entry(server: str, raw: Any) -> Skill:
    def bad(why: str) -> SkillRefused:
        return SkillRefused(f"{server} listed a malformed skill ({why})", kind="skill_refused", server=server)

    if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str):
        raise bad("an entry without a SKILL.md address")
    frontmatter = raw.get("frontmatter")
    if not isinstance(frontmatter, dict) or len(repr(frontmatter)) > MAX_FRONTMATTER:
        raise bad(f"{raw['uri']}: no frontmatter, or too much of it")
    files: list[SkillFile] = []
    for item in raw.get("resources") or []:
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            raise bad(f"{raw['uri']}: a file without an address")
        digest = _DIGEST.fullmatch(str(item.get("digest", "")))
        size = item.get("size")
        if digest is None or not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise bad(f"{item['uri']}: no sha256 digest or byte size")
        files.append(SkillFile(item["uri"], digest.group(1).lower(), size))
    if len(files) > MAX_FILES:
        raise bad(f"{raw['uri']}: {len(files)} files, more than {MAX_FILES}")
    if raw["uri"] not in {f.uri for f in files}:
        raise bad(f"{raw['uri']}: its SKILL.md has no digest and size among its files")
    return Skill(raw["uri"], dict(frontmatter), tuple(files))


async def load_skill(conn: Connection, skill: Skill) -> LoadedSkill:
    """Read ``skill``'s files, ``SKILL.md`` first, verifying each before the next is read (see the module)."""
    for f in skill.files:
        if f.size > MAX_FILE_BYTES:
            raise SkillRefused(
                f"{f.uri} of skill {skill.name!r} is {f.size} bytes, more than {MAX_FILE_BYTES}: not read",
                kind="skill_refused", server=conn.name,
            )  # fmt: skip
    if skill.size > MAX_SKILL_BYTES:
        raise SkillRefused(
            f"skill {skill.name!r} is {skill.size} bytes in all, more than {MAX_SKILL_BYTES}: not read",
            kind="skill_refused", server=conn.name,
        )  # fmt: skip
    await conn.opened()
    first = next(f for f in skill.files if f.uri == skill.uri)
    text = await _read_verified(conn, skill, first)
    try:
        declared, body = parse_frontmatter(text)
    except SkillRefused as exc:
        raise SkillRefused(
            f"skill {skill.name!r} refused: {exc}; nothing of it was used and no other file was read",
            kind="skill_refused", server=conn.name,
        ) from None  # fmt: skip
    if declared != skill.frontmatter:
        fields = sorted(k for k in {*declared, *skill.frontmatter} if declared.get(k) != skill.frontmatter.get(k))
        raise SkillRefused(
            f"skill {skill.name!r} refused: its SKILL.md's frontmatter differs from what {conn.name} listed "
            f"(field{'s' if len(fields) > 1 else ''} {', '.join(fields)}); nothing of it was used and no other file was read",
            kind="skill_refused", server=conn.name,
        )  # fmt: skip
    loaded = LoadedSkill(conn.name, skill, text, body, {first.uri: text})
    for f in skill.files:
        if f.uri != first.uri:
            loaded.files[f.uri] = await _read_verified(conn, skill, f)
    return loaded


async def _read_verified(conn: Connection, skill: Skill, entry: SkillFile) -> str:
    result = await conn.live.read_resource(entry.uri)
    blocks = list(result.contents)
    if len(blocks) != 1:
        raise _refused(conn, skill, entry, f"the server sent {len(blocks)} contents for it, not one")
    block = blocks[0]
    if isinstance(block, types.TextResourceContents):
        data = block.text.encode("utf-8")
    else:
        try:
            data = base64.b64decode(block.blob, validate=True)
        except ValueError:
            raise _refused(conn, skill, entry, "its blob is not base64") from None
    if len(data) != entry.size:
        raise _refused(conn, skill, entry, f"it is {len(data)} bytes, the listing said {entry.size}")
    if hashlib.sha256(data).hexdigest() != entry.digest:
        raise _refused(conn, skill, entry, "its sha256 digest is not the one listed")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refused(conn, skill, entry, "it is not UTF-8 text") from None


def _refused(conn: Connection, skill: Skill, entry: SkillFile, why: str) -> SkillRefused:
    return SkillRefused(
        f"skill {skill.name!r} refused: {entry.uri} failed verification ({why}); "
        "its content was not used and no further file was read",
        kind="skill_refused", server=conn.name, details={"uri": entry.uri},
    )  # fmt: skip


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """A ``SKILL.md``'s YAML frontmatter (between its first two ``---`` lines) and the body after it.

    Aliases are refused, and so is anything but a mapping: a missing or unreadable frontmatter is a
    discrepancy like any other (``SkillRefused``). So is nesting deeper than ``MAX_FRONTMATTER_DEPTH``,
    counted on YAML's event stream before anything is built: PyYAML builds nested collections
    recursively, and ``[`` a few thousand times (16 KB allows eight thousand) raised ``RecursionError``.
    """
    import yaml

    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise SkillRefused("the SKILL.md has no frontmatter (it must start with a --- line)", kind="skill_refused")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise SkillRefused("the SKILL.md's frontmatter has no closing --- line", kind="skill_refused") from None
    source = "\n".join(lines[1:end])
    if len(source) > MAX_FRONTMATTER:
        raise SkillRefused(
            f"the SKILL.md's frontmatter is longer than {MAX_FRONTMATTER} characters", kind="skill_refused"
        )
    try:
        _check_events(yaml.parse(source, Loader=yaml.SafeLoader))
        data = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        raise SkillRefused(
            f"the SKILL.md's frontmatter is not YAML ({exc.__class__.__name__})", kind="skill_refused"
        ) from None
    if not isinstance(data, dict):
        raise SkillRefused("the SKILL.md's frontmatter is not a mapping of fields", kind="skill_refused")
    # YAML reads `1:` or `true:` as a number or a boolean; the listing's JSON names fields with text
    named = next((k for k in data if not isinstance(k, str)), None)
    if named is not None:
        raise SkillRefused(
            f"the SKILL.md's frontmatter has a field name that is not text ({named!r:.40})", kind="skill_refused"
        )
    return data, "\n".join(lines[end + 1 :]).lstrip("\n")


def _check_events(events: Iterable[Any]) -> None:
    """Refuse aliases and nesting deeper than ``MAX_FRONTMATTER_DEPTH``, reading YAML's events one by one (no recursion)."""
    import yaml

    depth = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            raise SkillRefused("the SKILL.md's frontmatter uses YAML aliases, which are refused", kind="skill_refused")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_FRONTMATTER_DEPTH:
                raise SkillRefused(
                    f"the SKILL.md's frontmatter nests lists or mappings more than {MAX_FRONTMATTER_DEPTH} deep",
                    kind="skill_refused",
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
