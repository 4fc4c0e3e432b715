"""Small builders for engine tests."""

from __future__ import annotations

from governance.engine.skillfile import parse_skill_md
from governance.engine.types import Finding, ParsedSkill, SourceKind


def skill_md(frontmatter: str, body: str = "# Steps\n\n1. Do the thing.\n") -> bytes:
    return f"---\n{frontmatter.strip(chr(10))}\n---\n{body}".encode()


def parse(
    frontmatter: str,
    body: str = "# Steps\n\n1. Do the thing.\n",
    *,
    folder: str = "my-skill",
    strict: bool = False,
    source: SourceKind = SourceKind.PROJECT,
) -> ParsedSkill:
    return parse_skill_md(skill_md(frontmatter, body), folder=folder, strict=strict, source=source)


GOOD = "name: my-skill\ndescription: Formats release notes; use when the user says 'write the changelog'."


def codes(skill: ParsedSkill) -> list[str]:
    return [f.code for f in skill.findings]


def only(skill: ParsedSkill, code: str) -> Finding:
    found = [f for f in skill.findings if f.code == code]
    assert len(found) == 1, f"expected one {code}, got {skill.findings}"
    return found[0]
