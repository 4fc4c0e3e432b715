"""Reading SKILL.md through the engine (strict mode)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from governance.engine.rules import READ_CODES
from governance.engine.skillfile import find_skill_md as _find_skill_md
from governance.engine.skillfile import load_skill_folder, parse_skill_md
from governance.engine.types import ParsedSkill, Severity, SourceKind

from .errors import ParseError, ValidationError
from .models import SkillProperties

__all__ = ["ParseError", "ValidationError", "find_skill_md", "parse_frontmatter", "read_properties"]


def find_skill_md(skill_dir: Path) -> Path | None:
    return _find_skill_md(Path(skill_dir))


def _raise_if_unreadable(skill: ParsedSkill) -> None:
    for finding in skill.findings:
        if finding.severity is Severity.ERROR and finding.code in READ_CODES:
            raise ParseError(finding.message)


def _as_text(value: Any) -> Any:
    """The reference reads every scalar as text (strictyaml); the engine keeps YAML types."""
    if isinstance(value, dict):
        return {str(k): _as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_text(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def parse_frontmatter(content: str) -> tuple[dict[str, Any], str]:
    skill = parse_skill_md(content.encode("utf-8", "surrogatepass"), folder="", strict=True)
    _raise_if_unreadable(skill)
    return _as_text(skill.frontmatter), skill.body.strip()


def load(skill_dir: Path) -> ParsedSkill:
    skill_dir = Path(skill_dir)
    return load_skill_folder(skill_dir, root=skill_dir, source=SourceKind.PROJECT, strict=True)


def read_properties(skill_dir: Path) -> SkillProperties:
    skill_dir = Path(skill_dir)
    if find_skill_md(skill_dir) is None:
        raise ParseError(f"SKILL.md not found in {skill_dir}")
    skill = load(skill_dir)
    _raise_if_unreadable(skill)
    by_code = {f.code: f.message for f in skill.findings}
    for code in ("name-missing", "description-missing", "name-empty", "description-empty"):
        if code in by_code:
            raise ValidationError(by_code[code])
    data = skill.frontmatter
    metadata = data.get("metadata")
    return SkillProperties(
        name=data["name"].strip(),
        description=data["description"].strip(),
        license=data.get("license"),
        compatibility=data.get("compatibility"),
        allowed_tools=data.get("allowed-tools"),
        metadata=_as_text(metadata) if isinstance(metadata, dict) else metadata,
    )
