"""Writes of the skills concern: versions of whole packages, sources, ingest runs.

Batch-first: blobs, skills, versions and files are written with ``bulk_create`` (blobs skip
what is already stored, by sha256); nothing on the ingest path saves row by row.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Max, OuterRef, Q, Subquery
from django.utils import timezone

from governance.audit.services import audit_record
from governance.engine.archives import ArchiveLimits, ArchiveRefused, extract_archive
from governance.engine.archives import check_name as _check_archive_name
from governance.engine.gitsource import GitCheckout, GitOptions, GitSourceError, check_ref, git_fetch
from governance.engine.identity import IdentityError, parse_location
from governance.engine.scan import ScanError, ScanResult, scan_remote_plugin, scan_source
from governance.engine.skillfile import parse_skill_md
from governance.engine.types import PackageFile, ParsedSkill, Severity, SourceKind
from governance.policy.admission import source_admission
from governance.skills.models import (
    Blob,
    IngestRun,
    IngestStatus,
    Skill,
    SkillVersion,
    Source,
    VersionFile,
    VersionOrigin,
)
from portal.accounts.models import Project

logger = logging.getLogger(__name__)

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
        frontmatter_text=_text(parsed.frontmatter_text),
        body=_text(parsed.body),
        description=_text(parsed.description),
        valid=parsed.valid,
        findings=_jsonable([f.as_dict() for f in parsed.findings]),
        origin=origin,
        commit=commit,
        ingest_run=ingest_run,
        created_by=created_by,
        created_at=timezone.now(),
    )


def _text(value: str) -> str:
    """Text as PostgreSQL stores it: NUL characters cannot be stored (the exact bytes stay in the blob)."""
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


def _jsonable(value: object) -> Any:
    """Frontmatter as JSON: typed YAML values that JSON lacks (dates, bytes) become strings."""
    if isinstance(value, dict):
        return {_text(str(k)): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str):
        return _text(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    return _text(str(value))


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


# --------------------------------------------------------------------------------------------
# Sources and ingest runs
# --------------------------------------------------------------------------------------------


def has_control_chars(value: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 for c in value)


class IngestRefused(ValueError):
    """Input that is refused before anything is stored; ``code`` is stable for API clients."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


SOURCE_MAX_LOCATION = 500  # the canonical identity column holds 500 characters
SOURCE_MAX_REF = 200
MCP_MAX_SERVER_NAME = 200
_GITHUB_SHORTHAND = re.compile(r"^(?:github:)?[^/:]+/[^/:]+$")
INGESTIBLE_KINDS = frozenset(k.value for k in SourceKind if k is not SourceKind.MCP)
RUN_FINDINGS_CAP = 500
PROGRESS_EVERY_S = 0.5


def source_register(
    *,
    kind: str,
    location: str,
    ref: str = "",
    project: Project | None = None,
    display_name: str = "",
    actor: User | None = None,
) -> Source:
    """Register a directory path or git URL as a source (idempotent by canonical identity).

    Raises ``IngestRefused`` (code ``source-refused``) when the published policy denies it.
    """
    if kind not in INGESTIBLE_KINDS:
        raise IngestRefused(
            "source-kind", f"kind must be one of {', '.join(sorted(INGESTIBLE_KINDS))}, got {kind!r}"
        )
    if len(location.strip()) > SOURCE_MAX_LOCATION:
        raise IngestRefused(
            "source-location", f"the location is longer than {SOURCE_MAX_LOCATION} characters"
        )
    if len(ref) > SOURCE_MAX_REF:
        raise IngestRefused("git-ref", f"the ref is longer than {SOURCE_MAX_REF} characters")
    try:
        parsed = parse_location(location)
    except IdentityError as exc:
        raise IngestRefused("source-location", str(exc)) from None
    if "://" in location and urlsplit(location.strip()).password:
        # It would be stored, shown on pages leads can read and kept in the audit ledger.
        raise IngestRefused(
            "source-credentials",
            "the URL carries a password or token: give the worker git credentials instead",
        )
    if len(parsed.identity) > SOURCE_MAX_LOCATION:
        raise IngestRefused(
            "source-location", f"the location is longer than {SOURCE_MAX_LOCATION} characters"
        )
    if parsed.kind == "mcp":
        raise IngestRefused("source-location", "MCP skills are pushed through the API, not registered")
    if has_control_chars(display_name):
        raise IngestRefused("source-display-name", "the display name contains control characters")
    if parsed.kind == "github" and _GITHUB_SHORTHAND.match(location.strip()):
        location = f"https://github.com/{parsed.path}"  # ``owner/repo``: store what git can fetch
    if ref:
        try:
            check_ref(ref)
        except GitSourceError as exc:
            raise IngestRefused(exc.code, exc.message) from None
    # A source the published policy denies is refused here, before any row of it exists
    # (source_admission writes the ``source.refused`` audit entry); ingest checks again.
    admission = source_admission(kind=kind, location=location, actor=actor)
    if not admission.allowed:
        raise IngestRefused("source-refused", f"refused by policy: {admission.reason}")
    source, created = Source.objects.get_or_create(
        kind=kind,
        identity=parsed.identity,
        defaults={
            "location": location.strip(),
            "ref": ref,
            "project": project,
            "display_name": display_name[:300],
        },
    )
    if not created:
        changed = {"location": location.strip(), "ref": ref}
        if project is not None:
            changed["project"] = project  # type: ignore[assignment]
        if display_name:
            changed["display_name"] = display_name[:300]
        Source.objects.filter(pk=source.pk).update(**changed)
        source.refresh_from_db()
    else:
        audit_record(
            actor=actor,
            action="source.registered",
            target_type="source",
            target_id=source.pk,
            target_label=str(source),
            evidence={"kind": kind, "identity": source.identity, "location": source.location, "ref": ref},
        )
    return source


def ingest_request(*, source: Source, requested_by: User | None) -> IngestRun:
    """Create a pending run for ``source`` and enqueue its task once the transaction commits.

    A source with a run already pending or running gets that run back (no double ingest).
    """
    with transaction.atomic():
        Source.objects.select_for_update().filter(pk=source.pk).first()
        active = IngestRun.objects.filter(
            source=source, status__in=[IngestStatus.PENDING, IngestStatus.RUNNING]
        ).first()
        if active is not None:
            return active
        run = IngestRun.objects.create(
            source=source,
            source_kind=source.kind,
            location=source.location,
            ref=source.ref,
            requested_by=requested_by,
            enqueued_at=timezone.now(),
        )
        transaction.on_commit(lambda: _enqueue(run.pk))
    return run


def _enqueue(run_id: int) -> None:
    from governance.skills.tasks import ingest_run_execute

    ingest_run_execute.delay(run_id)


MAX_ATTEMPTS = 3


def _recover_stale_running(stale_after_s: int) -> None:
    """Runs left ``running`` by a worker that died: back to pending, or failed after 3 attempts."""
    cutoff = timezone.now() - timedelta(seconds=stale_after_s)
    stale = IngestRun.objects.filter(status=IngestStatus.RUNNING, source__isnull=False).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )
    stale.filter(attempts__gte=MAX_ATTEMPTS).update(
        status=IngestStatus.FAILED,
        error=f"the worker stopped during the run {MAX_ATTEMPTS} times; giving up",
        finished_at=timezone.now(),
        phase="done",
    )
    stale.filter(attempts__lt=MAX_ATTEMPTS).update(status=IngestStatus.PENDING, enqueued_at=None, phase="")


def ingest_runs_requeue(*, older_than_s: int = 120, stale_running_s: int | None = None) -> list[int]:
    """Re-send pending runs whose message was lost (the database is the source of truth).

    Runs stuck in ``running`` longer than ``stale_running_s`` (setting
    ``SKILL_INGEST_STALE_RUNNING_S``, default 30 minutes) lost their worker: they are retried.
    """
    if stale_running_s is None:
        stale_running_s = int(getattr(settings, "SKILL_INGEST_STALE_RUNNING_S", 1800))
    _recover_stale_running(stale_running_s)
    cutoff = timezone.now() - timedelta(seconds=older_than_s)
    ids = list(
        IngestRun.objects.filter(status=IngestStatus.PENDING, source__isnull=False)
        .filter(Q(enqueued_at__lt=cutoff) | Q(enqueued_at__isnull=True))
        .values_list("pk", flat=True)[:100]
    )
    if ids:
        IngestRun.objects.filter(pk__in=ids).update(enqueued_at=timezone.now())
        for run_id in ids:
            transaction.on_commit(lambda run_id=run_id: _enqueue(run_id))  # type: ignore[misc]
    return ids


def ingest_run_execute(*, run_id: int) -> IngestRun | None:
    """Claim a pending run and carry it out. Idempotent: a run already claimed is left alone."""
    now = timezone.now()
    claimed = IngestRun.objects.filter(pk=run_id, status=IngestStatus.PENDING).update(
        status=IngestStatus.RUNNING, started_at=now, attempts=F("attempts") + 1, phase="starting"
    )
    if not claimed:
        return None
    run = IngestRun.objects.select_related("source", "requested_by").get(pk=run_id)
    return source_ingest(run=run)


class _Progress:
    """Writes progress outside the store transaction, at most twice a second."""

    def __init__(self, run: IngestRun) -> None:
        self.run = run
        self.last = 0.0

    def phase(self, phase: str) -> None:
        IngestRun.objects.filter(pk=self.run.pk).update(phase=phase, heartbeat_at=timezone.now())
        self.run.phase = phase

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.last < PROGRESS_EVERY_S:
            return
        self.last = now
        IngestRun.objects.filter(pk=self.run.pk).update(
            progress_done=done, progress_total=total, heartbeat_at=timezone.now()
        )
        self.run.progress_done, self.run.progress_total = done, total


def _finish(run: IngestRun, status: str, *, started: float, error: str = "") -> IngestRun:
    run.status = status
    run.error = _text(error[:5000])
    run.findings = _jsonable(run.findings)
    run.counts = _jsonable(run.counts)
    run.finished_at = timezone.now()
    run.duration_ms = int((time.monotonic() - started) * 1000)
    run.phase = "done"
    if status == IngestStatus.SUCCEEDED:
        run.progress_done = run.progress_total
    run.save(
        update_fields=[
            "status",
            "error",
            "finished_at",
            "duration_ms",
            "phase",
            "counts",
            "findings",
            "commit",
            "progress_done",
            "progress_total",
            "source",
        ]
    )
    return run


def _admit(run: IngestRun, *, kind: str, location: str, started: float) -> bool:
    admission = source_admission(kind=kind, location=location, actor=run.requested_by)
    if admission.allowed:
        return True
    run.counts = {}
    _finish(run, IngestStatus.REFUSED, started=started, error=f"refused by policy: {admission.reason}")
    return False


def source_ingest(*, run: IngestRun) -> IngestRun:
    """Carry out one run: admission, fetch (git) or read (directory), scan, store in one transaction.

    The run's report (counts, findings, duration, error) is kept whatever happens.
    """
    started = time.monotonic()
    source = run.source
    if source is None:
        return _finish(run, IngestStatus.FAILED, started=started, error="the source was deleted")
    if run.started_at is None:
        run.started_at = timezone.now()
        run.status = IngestStatus.RUNNING
        run.save(update_fields=["started_at", "status"])
    progress = _Progress(run)
    location = parse_location(source.location)
    if not _admit(run, kind=source.kind, location=source.location, started=started):
        return run
    checkout: GitCheckout | None = None
    try:
        if location.is_remote or source.location.startswith("file://"):
            progress.phase("fetching")
            checkout = _fetch(source.location, source.ref)
            run.commit = checkout.commit
            if _unchanged_commit(source, checkout.commit):
                run.counts = {"unchanged_commit": True, "skills_found": source.skills.count()}
                return _finish(run, IngestStatus.SUCCEEDED, started=started)
            root = checkout.path
        else:
            root = Path(location.path)
        progress.phase("scanning")
        # The registered folder (or checkout) is the boundary: no walking up past it.
        result = scan_source(
            root,
            kind=SourceKind(source.kind),
            identity=source.identity,
            label=".",
            progress=progress,
            walk_up=False,
            keep_content=False,
        )
        if result.unreadable:
            run.findings = [e.as_dict() for e in result.errors]
            return _finish(run, IngestStatus.FAILED, started=started, error=result.errors[0].message)
        if result.remote_plugins and getattr(settings, "SKILL_FETCH_REMOTE_PLUGINS", False):
            progress.phase("fetching plugins")
            _fetch_remote_plugins(run=run, source=source, result=result)
        progress.phase("storing")
        _store_result(run=run, source=source, result=result, commit=run.commit)
    except GitSourceError as exc:
        return _finish(run, IngestStatus.FAILED, started=started, error=exc.message)
    except Exception as exc:  # the report must survive any failure; the transaction rolled back
        logger.exception("ingest run %s failed", run.pk)
        return _finish(run, IngestStatus.FAILED, started=started, error=f"{type(exc).__name__}: {exc}")
    finally:
        if checkout is not None:
            shutil.rmtree(checkout.path, ignore_errors=True)
    return _finish(run, IngestStatus.SUCCEEDED, started=started)


def _fetch_remote_plugins(*, run: IngestRun, source: Source, result: ScanResult) -> None:
    """Fetch the marketplace's git plugins (setting ``SKILL_FETCH_REMOTE_PLUGINS``), each admitted first.

    A plugin that is refused or cannot be fetched stays recorded with the reason; the others'
    skills join the marketplace's in the same transaction.
    """
    remaining = []
    for entry in result.remote_plugins:
        if not entry.fetchable_git:
            remaining.append(entry)
            continue
        admission = source_admission(
            kind="plugin", location=entry.url, marketplace=source.location, actor=run.requested_by
        )
        if not admission.allowed:
            result.errors.append(
                ScanError(
                    entry.name, "plugin-remote-refused", f"plugin {entry.name}: {admission.reason}", "warning"
                )
            )
            continue
        try:
            checkout = _fetch(entry.url, entry.sha or entry.ref)
        except GitSourceError as exc:
            result.errors.append(
                ScanError(entry.name, exc.code, f"plugin {entry.name}: {exc.message}", "warning")
            )
            remaining.append(entry)
            continue
        try:
            fetched = scan_remote_plugin(checkout.path, entry, identity=source.identity)
        finally:
            shutil.rmtree(checkout.path, ignore_errors=True)
        result.skills += fetched.skills
        result.errors += fetched.errors
        result.errors.append(
            ScanError(
                entry.name,
                "plugin-remote-fetched",
                f"plugin {entry.name} fetched from {entry.identity} at {checkout.commit}",
                "info",
            )
        )
    result.remote_plugins = remaining


def _workdir() -> Path:
    """Scratch space for checkouts and unpacked archives (``SKILL_STORAGE_DIR/work``), emptied after use."""
    work = Path(settings.SKILL_STORAGE_DIR) / "work"
    work.mkdir(parents=True, exist_ok=True)
    return work


def _fetch(url: str, ref: str) -> GitCheckout:
    dest = Path(tempfile.mkdtemp(prefix="skill-git-", dir=_workdir()))
    try:
        return git_fetch(url, ref, dest=dest, options=_git_options())
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _git_options() -> GitOptions:
    return GitOptions(
        allow_local=bool(getattr(settings, "SKILL_GIT_ALLOW_LOCAL", False)),
        timeout_s=float(getattr(settings, "SKILL_GIT_TIMEOUT_S", 120)),
    )


def _unchanged_commit(source: Source, commit: str) -> bool:
    return bool(commit) and source.last_commit == commit and source.skills.exists()


def _run_findings(result: ScanResult) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"skill": None, **e.as_dict()} for e in result.errors]
    for skill in result.skills:
        for f in skill.findings:
            if f.severity is Severity.ERROR:
                out.append(
                    {
                        "skill": skill.qualified_name,
                        "path": skill.path,
                        "code": f.code,
                        "severity": f.severity.value,
                        "message": f.message,
                    }
                )
    return out[:RUN_FINDINGS_CAP]


def _store_result(*, run: IngestRun, source: Source, result: ScanResult, commit: str) -> None:
    with transaction.atomic():
        counts = skills_store(
            source=source,
            parsed=result.skills,
            run=run,
            commit=commit,
            created_by=run.requested_by,
            folders=result.folders,
        )
        counts["scan_errors"] = sum(1 for e in result.errors if e.severity == Severity.ERROR.value)
        if result.remote_plugins:
            counts["remote_plugins"] = len(result.remote_plugins)
        run.counts = counts
        findings = _run_findings(result)
        findings += [
            {
                "skill": None,
                "path": p.name,
                "code": "plugin-remote-recorded",
                "severity": "info",
                "message": f"remote plugin {p.name} ({p.source_kind}: {p.identity}) recorded, not fetched",
            }
            for p in result.remote_plugins
        ]
        run.findings = findings[:RUN_FINDINGS_CAP]
        Source.objects.filter(pk=source.pk).update(last_commit=commit, last_ingested_at=timezone.now())


def skills_store(
    *,
    source: Source,
    parsed: Sequence[ParsedSkill],
    run: IngestRun | None,
    commit: str,
    created_by: User | None,
    remove_missing: bool = True,
    folders: dict[int, Path] | None = None,
) -> dict[str, Any]:
    """Store a source's skills in bulk: new skills, a new version for each changed package only.

    ``folders`` (from a scan without kept content) says where to read each package's bytes
    again: only changed packages are read, a chunk at a time, so memory stays flat.

    Skills of the source that were not seen are marked removed (their versions stay).
    Call inside a transaction: the caller decides what "all or nothing" spans.
    """
    now = timezone.now()
    existing = {
        (s.location, s.name): s for s in Skill.objects.filter(source=source).select_related("current_version")
    }
    seen: dict[tuple[str, str], ParsedSkill] = {}
    duplicates = 0
    for p in parsed:
        key = (p.path[:1000], p.name[:200])
        if key in seen:
            duplicates += 1
            continue
        seen[key] = p
    new_skills = [
        Skill(
            source=source,
            location=loc,
            name=name,
            plugin=(p.plugin or "")[:200],
            created_at=now,
            updated_at=now,
        )
        for (loc, name), p in seen.items()
        if (loc, name) not in existing
    ]
    Skill.objects.bulk_create(new_skills, batch_size=BATCH)
    if new_skills:
        existing = {
            (s.location, s.name): s
            for s in Skill.objects.filter(source=source).select_related("current_version")
        }
    changed: list[tuple[Skill, ParsedSkill, str]] = []
    unchanged_removed: list[Skill] = []
    for key, p in seen.items():
        skill = existing[key]
        digest = package_sha256(p.files)
        current = skill.current_version
        if current is not None and current.package_sha256 == digest:
            if skill.removed_at is not None:
                unchanged_removed.append(skill)
            continue
        changed.append((skill, p, digest))
    for p in (p for _, p, _ in changed):
        _check_unique_paths(p)
    blobs_new = 0
    for start in range(0, len(changed), CONTENT_CHUNK):
        chunk = changed[start : start + CONTENT_CHUNK]
        blobs_new += blobs_store(files=[f for _, p, _ in chunk for f in _with_content(p, folders)])
    last_numbers = dict(
        SkillVersion.objects.filter(skill__in=[s for s, _, _ in changed])
        .values("skill_id")
        .annotate(n=Max("number"))
        .values_list("skill_id", "n")
    )
    versions = [
        _version_row(
            skill=skill,
            number=last_numbers.get(skill.pk, 0) + 1,
            parsed=p,
            origin=VersionOrigin.INGEST,
            created_by=created_by,
            commit=commit,
            ingest_run=run,
        )
        for skill, p, _ in changed
    ]
    SkillVersion.objects.bulk_create(versions, batch_size=BATCH)
    if versions and versions[0].pk is None:  # backends that cannot return ids from bulk inserts
        ids = dict(
            SkillVersion.objects.filter(ingest_run=run, skill__in=[v.skill for v in versions]).values_list(
                "skill_id", "pk"
            )
        )
        for v in versions:
            v.pk = ids[v.skill_id]
    files = [row for v, (_, p, _) in zip(versions, changed, strict=True) for row in _file_rows(v, p.files)]
    VersionFile.objects.bulk_create(files, batch_size=BATCH)
    _point_to_latest(changed=[(skill, p) for skill, p, _ in changed], back=unchanged_removed, now=now)
    removed = 0
    if remove_missing:
        gone = [s.pk for key, s in existing.items() if key not in seen and s.removed_at is None]
        removed = Skill.objects.filter(pk__in=gone).update(removed_at=now)
    return {
        "skills_found": len(seen),
        "new_skills": len(new_skills),
        "new_versions": len(versions),
        "unchanged": len(seen) - len(changed),
        "removed": removed,
        "invalid": sum(1 for p in seen.values() if not p.valid),
        "blobs_new": blobs_new,
        "duplicates": duplicates,
    }


CONTENT_CHUNK = 200


def _point_to_latest(*, changed: list[tuple[Skill, ParsedSkill]], back: list[Skill], now: datetime) -> None:
    """Make each changed skill's newest version current, in a few set-based UPDATEs.

    (``bulk_update`` builds one CASE per row and field: seconds for thousands of skills.)
    """
    latest = Subquery(SkillVersion.objects.filter(skill=OuterRef("pk")).order_by("-number").values("pk")[:1])
    by_plugin: dict[str, list[int]] = {}
    for skill, parsed in changed:
        by_plugin.setdefault((parsed.plugin or "")[:200], []).append(skill.pk)
    for plugin, ids in by_plugin.items():
        for start in range(0, len(ids), BATCH):
            Skill.objects.filter(pk__in=ids[start : start + BATCH]).update(
                current_version=latest, updated_at=now, removed_at=None, plugin=plugin
            )
    ids = [s.pk for s in back]
    for start in range(0, len(ids), BATCH):
        Skill.objects.filter(pk__in=ids[start : start + BATCH]).update(removed_at=None, updated_at=now)


def _with_content(parsed: ParsedSkill, folders: dict[int, Path] | None) -> list[PackageFile]:
    """The package's files with their bytes, read again from disk when the scan dropped them."""
    folder = (folders or {}).get(id(parsed))
    if folder is None:
        return parsed.files
    files = []
    for f in parsed.files:
        content = (folder / f.path).read_bytes() if f.size else b""
        if hashlib.sha256(content).hexdigest() != f.sha256:
            raise PackageError(
                f"{parsed.path}/{f.path} changed while it was being ingested; run the ingest again"
            )
        files.append(PackageFile(path=f.path, sha256=f.sha256, size=f.size, content=content))
    return files


def _check_unique_paths(parsed: ParsedSkill) -> None:
    """Ingest stores unreadable skills too (no SKILL.md: an invalid version whose findings say why)."""
    if len({f.path for f in parsed.files}) != len(parsed.files):
        raise PackageError(f"package of {parsed.qualified_name!r} lists a file twice")


# --------------------------------------------------------------------------------------------
# Uploaded archives and MCP pushes: checked whole before anything is stored
# --------------------------------------------------------------------------------------------

_UPLOAD_NAME = re.compile(r"[^a-z0-9._-]+")
MCP_MAX_SKILLS = 500
MCP_MAX_FILES = 200


def upload_name(filename: str, name: str = "") -> str:
    """A stable source name for an upload: the given name, else the file name without extension."""
    base = name.strip() or filename.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    for suffix in (".tar.gz", ".tgz", ".zip"):
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
    cleaned = _UPLOAD_NAME.sub("-", base.lower()).strip("-.")[:100]
    if not cleaned:
        raise IngestRefused("upload-name", "give the upload a name of letters, digits, '.', '_' or '-'")
    return cleaned


def _run_start(*, source: Source, location: str, requested_by: User | None) -> IngestRun:
    return IngestRun.objects.create(
        source=source,
        source_kind=source.kind,
        location=location,
        requested_by=requested_by,
        status=IngestStatus.RUNNING,
        started_at=timezone.now(),
        attempts=1,
        phase="storing",
    )


def _refused_run(*, kind: str, location: str, requested_by: User | None, reason: str) -> IngestRun:
    now = timezone.now()
    return IngestRun.objects.create(
        source_kind=kind,
        location=location,
        requested_by=requested_by,
        status=IngestStatus.REFUSED,
        error=f"refused by policy: {reason}",
        started_at=now,
        finished_at=now,
        duration_ms=0,
        phase="done",
    )


def _store_inline(
    *,
    source: Source,
    location: str,
    parsed: Sequence[ParsedSkill],
    requested_by: User | None,
    findings: list[dict[str, Any]],
    remove_missing: bool,
) -> IngestRun:
    started = time.monotonic()
    run = _run_start(source=source, location=location, requested_by=requested_by)
    run.progress_total = len(parsed)
    try:
        with transaction.atomic():
            run.counts = skills_store(
                source=source,
                parsed=parsed,
                run=run,
                commit="",
                created_by=requested_by,
                remove_missing=remove_missing,
            )
            run.findings = findings[:RUN_FINDINGS_CAP]
            Source.objects.filter(pk=source.pk).update(last_ingested_at=timezone.now())
    except Exception as exc:  # keep the report; the transaction rolled back
        logger.exception("inline ingest %s failed", run.pk)
        run.counts = {}
        return _finish(run, IngestStatus.FAILED, started=started, error=f"{type(exc).__name__}: {exc}")
    return _finish(run, IngestStatus.SUCCEEDED, started=started)


def archive_ingest(
    *,
    data: bytes,
    filename: str,
    kind: str,
    requested_by: User | None,
    name: str = "",
    project: Project | None = None,
) -> IngestRun:
    """Ingest an uploaded zip or tar.gz.

    Order: admission (policy) → every entry checked in memory → unpack into a fresh temporary
    folder → scan → store in one transaction. A hostile or empty archive raises
    ``IngestRefused`` and leaves nothing behind, on disk or in the database.
    """
    if kind not in INGESTIBLE_KINDS:
        raise IngestRefused(
            "source-kind", f"kind must be one of {', '.join(sorted(INGESTIBLE_KINDS))}, got {kind!r}"
        )
    limit = int(getattr(settings, "SKILL_UPLOAD_MAX_BYTES", 20 * 1024 * 1024))
    if len(data) > limit:
        raise IngestRefused("archive-too-large", f"archive is {len(data)} bytes (limit {limit})")
    label = upload_name(filename, name)
    location = f"upload:{label}"
    admission = source_admission(kind=kind, location=location, actor=requested_by)
    if not admission.allowed:
        return _refused_run(kind=kind, location=location, requested_by=requested_by, reason=admission.reason)
    limits = ArchiveLimits(max_archive_bytes=limit)
    try:
        dest, _plan = extract_archive(data, filename=filename, limits=limits, parent=_workdir())
    except ArchiveRefused as exc:
        raise IngestRefused(exc.code, exc.message) from None
    try:
        # The archive is its own tree: a .gitignore above the scratch space (a portal run from a
        # git clone ignores var/) must not hide its skills, so the unpacked folder is a git root.
        if not (dest / ".git").exists():
            (dest / ".git").mkdir()
        result = scan_source(dest, kind=SourceKind(kind), identity=location, label=filename, walk_up=False)
    finally:
        shutil.rmtree(dest, ignore_errors=True)
    if not result.skills:
        detail = f": {result.errors[0].message}" if result.errors else ""
        raise IngestRefused("archive-no-skills", f"{filename} holds no skill folder (no SKILL.md){detail}")
    source, _ = Source.objects.get_or_create(
        kind=kind if result.kind is not SourceKind.PLUGIN else SourceKind.PLUGIN.value,
        identity=location,
        defaults={"location": location, "display_name": label, "project": project},
    )
    return _store_inline(
        source=source,
        location=location,
        parsed=result.skills,
        requested_by=requested_by,
        findings=_run_findings(result),
        remove_missing=True,
    )


@dataclass(frozen=True, slots=True)
class McpSkill:
    """One skill as an MCP server serves it: its SKILL.md text and optional extra files."""

    name: str
    skill_md: str
    files: dict[str, str] = field(default_factory=dict)


def _mcp_file_path(raw: str, skill: str) -> str:
    try:
        return _check_archive_name(raw, ArchiveLimits())
    except ArchiveRefused as exc:
        raise IngestRefused("mcp-file-path", f"skill {skill}: {exc.message}") from None


def _mcp_parsed(item: McpSkill, identity: str) -> ParsedSkill:
    folder = item.name.strip()
    if (
        not folder
        or "/" in folder
        or "\\" in folder
        or folder in {".", ".."}
        or len(folder) > 200
        or any(ord(c) < 32 or ord(c) == 127 for c in folder)
    ):
        raise IngestRefused("mcp-skill-name", f"invalid skill name {item.name[:80]!r}")
    if "\x00" in item.skill_md:  # no text column (PostgreSQL) can hold it: refuse, never fail half-way
        raise IngestRefused("mcp-skill-md", f"skill {folder}: SKILL.md contains a NUL character")
    try:
        files: dict[str, bytes] = {SKILL_MD: item.skill_md.encode("utf-8")}
        for text in item.files.values():
            text.encode("utf-8")
    except UnicodeEncodeError:
        raise IngestRefused("mcp-encoding", f"skill {folder}: text that is not valid Unicode") from None
    if len(item.files) > MCP_MAX_FILES:
        raise IngestRefused("mcp-too-many-files", f"skill {folder}: more than {MCP_MAX_FILES} files")
    for raw, text in item.files.items():
        path = _mcp_file_path(raw, folder)
        if path in files or path.casefold() == SKILL_MD.casefold():
            raise IngestRefused("mcp-file-path", f"skill {folder}: file {path} given twice")
        files[path] = text.encode("utf-8")
    parsed = parse_skill_md(files[SKILL_MD], folder=folder, path=folder, source=SourceKind.MCP)
    parsed.files = [
        PackageFile(path=p, sha256=hashlib.sha256(c).hexdigest(), size=len(c), content=c)
        for p, c in sorted(files.items())
    ]
    parsed.source_identity = identity
    return parsed


def mcp_skills_push(
    *, server: str, skills: Sequence[McpSkill], requested_by: User | None, replace: bool = True
) -> IngestRun:
    """Store the skills an MCP server serves (source ``mcp``: content can change with no diff).

    ``replace`` marks the server's skills missing from this push as removed. The whole push is
    checked before anything is stored; bad input raises ``IngestRefused``.
    """
    if len(server.strip()) > MCP_MAX_SERVER_NAME:
        raise IngestRefused("mcp-server", f"the server name is longer than {MCP_MAX_SERVER_NAME} characters")
    try:
        location = parse_location(f"mcp:{server}")
    except IdentityError as exc:
        raise IngestRefused("mcp-server", str(exc)) from None
    if not skills:
        raise IngestRefused("mcp-empty", "the push holds no skills")
    if len(skills) > MCP_MAX_SKILLS:
        raise IngestRefused("mcp-too-many-skills", f"a push holds at most {MCP_MAX_SKILLS} skills")
    total = sum(len(s.skill_md) + sum(len(t) for t in s.files.values()) for s in skills)
    limit = int(getattr(settings, "SKILL_UPLOAD_MAX_BYTES", 20 * 1024 * 1024))
    if total > limit:
        raise IngestRefused("mcp-too-large", f"the push holds {total} bytes (limit {limit})")
    names = [s.name.strip() for s in skills]
    if len(set(names)) != len(names):
        raise IngestRefused("mcp-duplicate", "a skill name appears twice in the push")
    parsed = [_mcp_parsed(item, location.identity) for item in skills]
    admission = source_admission(kind=SourceKind.MCP.value, location=location.identity, actor=requested_by)
    if not admission.allowed:
        return _refused_run(
            kind=SourceKind.MCP.value,
            location=location.identity,
            requested_by=requested_by,
            reason=admission.reason,
        )
    source, _ = Source.objects.get_or_create(
        kind=SourceKind.MCP.value,
        identity=location.identity,
        defaults={"location": location.identity, "display_name": server.strip()[:300]},
    )
    findings = [
        {"skill": p.name, "path": p.path, "code": f.code, "severity": f.severity.value, "message": f.message}
        for p in parsed
        for f in p.findings
        if f.severity is Severity.ERROR
    ]
    return _store_inline(
        source=source,
        location=location.identity,
        parsed=parsed,
        requested_by=requested_by,
        findings=findings,
        remove_missing=replace,
    )


def source_ingest_now(*, source: Source, requested_by: User | None) -> IngestRun:
    """Ingest in the calling process (the CLI): a run row, then the same path as the task."""
    run = IngestRun.objects.create(
        source=source,
        source_kind=source.kind,
        location=source.location,
        ref=source.ref,
        requested_by=requested_by,
        status=IngestStatus.RUNNING,
        started_at=timezone.now(),
        attempts=1,
    )
    return source_ingest(run=run)
