"""Reads of the skills concern, for pages, the API and the other concerns."""

from __future__ import annotations

from django.db.models import QuerySet

from governance.engine.types import PackageFile
from governance.skills.models import IngestRun, Skill, SkillVersion, Source, VersionFile


def version_file_contents(version: SkillVersion) -> dict[str, bytes]:
    """Every file of a version's package, path → bytes (SKILL.md included), in path order."""
    rows = VersionFile.objects.filter(version=version).select_related("blob").order_by("path")
    return {row.path: bytes(row.blob.content) for row in rows}


def version_package_files(version: SkillVersion) -> list[PackageFile]:
    """The package of a version as engine ``PackageFile``s, e.g. to build the next version."""
    rows = VersionFile.objects.filter(version=version).select_related("blob").order_by("path")
    return [
        PackageFile(path=row.path, sha256=row.blob_id, size=row.size, content=bytes(row.blob.content))
        for row in rows
    ]


def skills_list(
    *, kind: str | None = None, name: str | None = None, include_removed: bool = False
) -> QuerySet[Skill]:
    qs = Skill.objects.select_related("source", "source__project", "current_version").order_by(
        "name", "source__kind", "id"
    )
    if kind:
        qs = qs.filter(source__kind=kind)
    if name:
        qs = qs.filter(name__icontains=name)
    if not include_removed:
        qs = qs.filter(removed_at__isnull=True)
    return qs


def skill_versions(skill: Skill) -> QuerySet[SkillVersion]:
    return SkillVersion.objects.filter(skill=skill).order_by("-number")


def sources_list() -> QuerySet[Source]:
    return Source.objects.select_related("project").order_by("kind", "identity")


def ingest_runs_recent(*, source: Source | None = None, limit: int = 50) -> QuerySet[IngestRun]:
    qs = IngestRun.objects.select_related("source", "requested_by").order_by("-created_at", "-id")
    if source is not None:
        qs = qs.filter(source=source)
    return qs[:limit]
