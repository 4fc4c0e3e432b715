"""Writes of the skills concern: versions of whole packages, sources, ingest runs.

Batch-first: blobs, skills, versions and files are written with ``bulk_create`` (blobs skip
what is already stored, by sha256); nothing on the ingest path saves row by row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from governance.engine.types import PackageFile, ParsedSkill
from governance.skills.models import (
    Blob,
    IngestRun,
    Skill,
    SkillVersion,
    VersionFile,
    VersionOrigin,
)

SKILL_MD = "SKILL.md"
BATCH = 500


class PackageError(ValueError):
    """A package that cannot be stored as a version (e.g. no SKILL.md among its files)."""


def package_sha256(files: Iterable[PackageFile]) -> str:
    """sha256 over the sorted ``path NUL sha256`` manifest: equal packages, equal digests."""
    digest = hashlib.sha256()
    for path, sha in sorted((f.path, f.sha256) for f in files):
        digest.update(path.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
        digest.update(sha.encode("ascii"))
        digest.update(b"\n")
    return digest.hexdigest()


def blobs_store(*, files: Iterable[PackageFile]) -> int:
    """Store file contents by sha256, skipping those already stored. Returns how many were new."""
    wanted: dict[str, PackageFile] = {}
    for f in files:
        wanted.setdefault(f.sha256, f)
    if not wanted:
        return 0
    existing: set[str] = set()
    keys = list(wanted)
    for start in range(0, len(keys), BATCH):
        existing.update(
            Blob.objects.filter(sha256__in=keys[start : start + BATCH]).values_list("sha256", flat=True)
        )
    new = [
        Blob(sha256=sha, size=f.size, content=f.content) for sha, f in wanted.items() if sha not in existing
    ]
    # ignore_conflicts: a concurrent ingest may store the same content between our read and write.
    Blob.objects.bulk_create(new, batch_size=BATCH, ignore_conflicts=True)
    return len(new)


def _check_package(parsed: ParsedSkill) -> None:
    paths = [f.path for f in parsed.files]
    if SKILL_MD not in paths:
        raise PackageError(f"package of {parsed.qualified_name!r} has no {SKILL_MD} among its files")
    if len(paths) != len(set(paths)):
        raise PackageError(f"package of {parsed.qualified_name!r} lists a file twice")


def _version_row(
    *,
    skill: Skill,
    number: int,
    parsed: ParsedSkill,
    origin: VersionOrigin | str,
    created_by: User | None,
    commit: str,
    ingest_run: IngestRun | None,
) -> SkillVersion:
    return SkillVersion(
        skill=skill,
        number=number,
        package_sha256=package_sha256(parsed.files),
        skill_md_sha256=parsed.skill_md_sha256,
        frontmatter=_jsonable(parsed.frontmatter),
        frontmatter_text=parsed.frontmatter_text,
        body=parsed.body,
        description=parsed.description,
        valid=parsed.valid,
        findings=[f.as_dict() for f in parsed.findings],
        origin=origin,
        commit=commit,
        ingest_run=ingest_run,
        created_by=created_by,
        created_at=timezone.now(),
    )


def _jsonable(value: object) -> object:
    """Frontmatter as JSON: typed YAML values that JSON lacks (dates, bytes) become strings."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _file_rows(version: SkillVersion, files: Sequence[PackageFile]) -> list[VersionFile]:
    return [VersionFile(version=version, path=f.path, blob_id=f.sha256, size=f.size) for f in files]


@transaction.atomic
def skill_version_create(
    *,
    skill: Skill,
    parsed: ParsedSkill,
    origin: VersionOrigin,
    created_by: User | None,
    commit: str = "",
    ingest_run: IngestRun | None = None,
) -> SkillVersion:
    """Store ``parsed`` as the next immutable version of ``skill`` and make it current.

    ``parsed.files`` is the whole package (SKILL.md included): every file is kept by sha256 so a
    rollback restores scripts and references too, not only the SKILL.md. Always creates a
    version (a rollback to old content is a new version); the ingest path skips unchanged
    packages before calling this.
    """
    _check_package(parsed)
    blobs_store(files=parsed.files)
    # Lock the skill row so two writers cannot take the same version number.
    Skill.objects.select_for_update().filter(pk=skill.pk).first()
    last = SkillVersion.objects.filter(skill=skill).aggregate(n=Max("number"))["n"] or 0
    version = _version_row(
        skill=skill,
        number=last + 1,
        parsed=parsed,
        origin=origin,
        created_by=created_by,
        commit=commit,
        ingest_run=ingest_run,
    )
    version.save()
    VersionFile.objects.bulk_create(_file_rows(version, parsed.files), batch_size=BATCH)
    now = timezone.now()
    Skill.objects.filter(pk=skill.pk).update(current_version=version, updated_at=now, removed_at=None)
    skill.current_version = version
    skill.updated_at = now
    skill.removed_at = None
    return version
