"""Stored catalog rows for policy tests, through the skills concern's real write path."""

from __future__ import annotations

import hashlib
from typing import Any

import yaml

from governance.engine.types import PackageFile, ParsedSkill, SourceKind
from governance.skills.models import Skill, Source, VersionOrigin
from governance.skills.services import skill_version_create
from portal.accounts.models import Project


def _file(path: str, content: bytes) -> PackageFile:
    return PackageFile(
        path=path, sha256=hashlib.sha256(content).hexdigest(), size=len(content), content=content
    )


def stored_skill(
    name: str,
    *,
    kind: SourceKind = SourceKind.PROJECT,
    location: str = "https://github.com/acme/payments-api",
    frontmatter: dict[str, Any] | None = None,
    project: Project | None = None,
    plugin: str = "",
    marketplace: str = "",
    extra_files: dict[str, bytes] | None = None,
) -> Skill:
    fm = {"name": name, "description": f"{name} does a thing when asked.", **(frontmatter or {})}
    fm_text = yaml.safe_dump(fm, sort_keys=False)
    skill_md = f"---\n{fm_text}---\nBody of {name}.\n".encode()
    files = [_file("SKILL.md", skill_md)] + [_file(p, c) for p, c in (extra_files or {}).items()]
    source, _ = Source.objects.get_or_create(
        kind=kind.value,
        identity=location.lower(),
        defaults={"location": location, "project": project, "marketplace": marketplace, "plugin": plugin},
    )
    skill = Skill.objects.create(source=source, location=f".claude/skills/{name}", name=name, plugin=plugin)
    parsed = ParsedSkill(
        name=name,
        folder=name,
        path=f".claude/skills/{name}",
        source=kind,
        frontmatter=fm,
        frontmatter_text=fm_text,
        body=f"Body of {name}.\n",
        skill_md_sha256=files[0].sha256,
        files=files,
        source_identity=location,
        plugin=plugin or None,
    )
    skill_version_create(skill=skill, parsed=parsed, origin=VersionOrigin.INGEST, created_by=None)
    return skill
