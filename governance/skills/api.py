"""API router of the skills concern (mounted at /api/v1/skills by portal/api.py).

Reads need ``skills:read``; ingest needs ``skills:write`` plus a role: directory paths and the
managed/bundled kinds are for admins, git URLs, uploads and MCP pushes for leads and admins.
Hostile or broken input gets a 4xx with ``{"code", "detail"}``, never a 500.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import File, Form, Router, Schema, Status
from ninja.files import UploadedFile

from governance.engine.identity import IdentityError, parse_location
from governance.skills import selectors, services
from governance.skills.models import IngestRun, Skill, SkillVersion, Source
from portal.accounts.models import Project, Role
from portal.accounts.services import user_role
from portal.auth import token_or_session

router = Router(tags=["skills"])
READ = token_or_session("skills:read")
WRITE = token_or_session("skills:write")
ADMIN_KINDS = frozenset({"managed", "bundled", "builtin"})


class ErrorOut(Schema):
    code: str
    detail: str


class SourceOut(Schema):
    id: int
    kind: str
    identity: str
    location: str
    ref: str
    display_name: str
    project: str | None
    last_commit: str
    last_ingested_at: datetime | None

    @staticmethod
    def of(source: Source) -> SourceOut:
        return SourceOut(
            id=source.pk,
            kind=source.kind,
            identity=source.identity,
            location=source.location,
            ref=source.ref,
            display_name=source.display_name,
            project=source.project.slug if source.project else None,
            last_commit=source.last_commit,
            last_ingested_at=source.last_ingested_at,
        )


class SkillOut(Schema):
    id: int
    name: str
    qualified_name: str
    plugin: str
    location: str
    source: SourceOut
    version: int | None
    valid: bool | None
    description: str
    removed: bool

    @staticmethod
    def of(skill: Skill) -> SkillOut:
        current = skill.current_version
        return SkillOut(
            id=skill.pk,
            name=skill.name,
            qualified_name=skill.qualified_name,
            plugin=skill.plugin,
            location=skill.location,
            source=SourceOut.of(skill.source),
            version=current.number if current else None,
            valid=current.valid if current else None,
            description=current.description if current else "",
            removed=skill.removed_at is not None,
        )


class FileOut(Schema):
    path: str
    size: int
    sha256: str


class VersionOut(Schema):
    number: int
    package_sha256: str
    skill_md_sha256: str
    valid: bool
    findings: list[dict[str, Any]]
    origin: str
    commit: str
    created_at: datetime
    frontmatter: dict[str, Any]
    body: str | None = None
    files: list[FileOut] | None = None

    @staticmethod
    def of(version: SkillVersion, *, full: bool = False) -> VersionOut:
        out = VersionOut(
            number=version.number,
            package_sha256=version.package_sha256,
            skill_md_sha256=version.skill_md_sha256,
            valid=version.valid,
            findings=version.findings,
            origin=version.origin,
            commit=version.commit,
            created_at=version.created_at,
            frontmatter=version.frontmatter,
        )
        if full:
            out.body = version.body
            out.files = [FileOut(path=f.path, size=f.size, sha256=f.blob_id) for f in version.files.all()]
        return out


class RunOut(Schema):
    id: int
    source_id: int | None
    source_kind: str
    location: str
    status: str
    phase: str
    progress_done: int
    progress_total: int
    counts: dict[str, Any]
    findings: list[dict[str, Any]]
    error: str
    commit: str
    created_at: datetime
    finished_at: datetime | None
    duration_ms: int | None

    @staticmethod
    def of(run: IngestRun) -> RunOut:
        return RunOut(
            id=run.pk,
            source_id=run.source_id,
            source_kind=run.source_kind,
            location=run.location,
            status=run.status,
            phase=run.phase,
            progress_done=run.progress_done,
            progress_total=run.progress_total,
            counts=run.counts,
            findings=run.findings,
            error=run.error,
            commit=run.commit,
            created_at=run.created_at,
            finished_at=run.finished_at,
            duration_ms=run.duration_ms,
        )


class SourceIn(Schema):
    kind: str
    location: str
    ref: str = ""
    project: str | None = None
    display_name: str = ""
    ingest: bool = True


class SourceRegistered(Schema):
    source: SourceOut
    run: RunOut | None


class McpSkillIn(Schema):
    name: str
    skill_md: str
    files: dict[str, str] = {}


class McpPushIn(Schema):
    server: str
    skills: list[McpSkillIn]
    replace: bool = True


def _error(code: str, detail: str) -> dict[str, str]:
    return {"code": code, "detail": detail}


def _role(request: HttpRequest) -> Role | None:
    return user_role(request.user)


def _may_ingest(request: HttpRequest, *, kind: str, local: bool) -> str | None:
    """None when allowed, else why not."""
    role = _role(request)
    if role is Role.ADMIN:
        return None
    if local:
        return "only admins may ingest a directory path"
    if kind in ADMIN_KINDS:
        return f"only admins may ingest {kind} sources"
    if role is not Role.LEAD:
        return "ingesting sources needs the team lead or admin role"
    return None


def _project(slug: str | None) -> Project | None:
    if not slug:
        return None
    if services.has_control_chars(slug):
        raise services.IngestRefused("project-unknown", "a project slug has no control characters")
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise services.IngestRefused("project-unknown", f"no project with slug {slug!r}")
    return project


def _user(request: HttpRequest) -> User | None:
    user = request.user
    return user if isinstance(user, User) else None


@router.get("/", response={200: list[SkillOut], 400: ErrorOut}, auth=READ)
def skills_list(
    request: HttpRequest,
    kind: str | None = None,
    name: str | None = None,
    include_removed: bool = False,
    limit: int = 100,
    offset: int = 0,
) -> Status[Any]:
    """Skills known to the portal, with their current version (filter by source kind and name)."""
    if any(services.has_control_chars(v) for v in (kind or "", name or "")):
        return Status(400, _error("query", "filters cannot contain control characters"))
    limit = max(1, min(limit, 500))
    offset = max(0, min(offset, 10_000_000))
    qs = selectors.skills_list(kind=kind, name=name, include_removed=include_removed)
    return Status(200, [SkillOut.of(s) for s in qs[offset : offset + limit]])


@router.get("/sources", response=list[SourceOut], auth=READ)
def sources_list(request: HttpRequest) -> list[SourceOut]:
    """Registered sources."""
    return [SourceOut.of(s) for s in selectors.sources_list()]


@router.post("/sources", response={201: SourceRegistered, 400: ErrorOut, 403: ErrorOut}, auth=WRITE)
def source_create(request: HttpRequest, payload: SourceIn) -> Status[Any]:
    """Register a directory path (admins) or a git URL (leads, admins) and start its ingest."""
    try:
        local = parse_location(payload.location).kind == "local" or payload.location.strip().startswith(
            "file:"
        )
    except IdentityError as exc:
        return Status(400, _error("source-location", str(exc)))
    refusal = _may_ingest(request, kind=payload.kind, local=local)
    if refusal:
        return Status(403, _error("forbidden", refusal))
    try:
        source = services.source_register(
            kind=payload.kind,
            location=payload.location,
            ref=payload.ref,
            project=_project(payload.project),
            display_name=payload.display_name,
            actor=_user(request),
        )
    except services.IngestRefused as exc:
        return Status(403 if exc.code == "source-refused" else 400, _error(exc.code, exc.message))
    run = services.ingest_request(source=source, requested_by=_user(request)) if payload.ingest else None
    if run is not None:
        run.refresh_from_db()
    return Status(201, SourceRegistered(source=SourceOut.of(source), run=RunOut.of(run) if run else None))


@router.post("/sources/{source_id}/ingest", response={202: RunOut, 403: ErrorOut}, auth=WRITE)
def source_ingest(request: HttpRequest, source_id: int) -> Status[Any]:
    """Ingest a registered source again (a new run; an active one is returned as is)."""
    source = get_object_or_404(Source, pk=source_id)
    local = parse_location(source.location).kind == "local" or source.location.startswith("file:")
    refusal = _may_ingest(request, kind=source.kind, local=local)
    if refusal:
        return Status(403, _error("forbidden", refusal))
    run = services.ingest_request(source=source, requested_by=_user(request))
    run.refresh_from_db()
    return Status(202, RunOut.of(run))


@router.get("/runs/{run_id}", response=RunOut, auth=READ)
def run_get(request: HttpRequest, run_id: int) -> RunOut:
    """One ingest run: status, progress, counts, findings, error."""
    return RunOut.of(get_object_or_404(IngestRun, pk=run_id))


@router.post("/archives", response={201: RunOut, 400: ErrorOut, 403: ErrorOut, 413: ErrorOut}, auth=WRITE)
def archive_upload(
    request: HttpRequest,
    file: File[UploadedFile],
    kind: Form[str] = "project",
    name: Form[str] = "",
    project: Form[str] = "",
) -> Status[Any]:
    """Upload a zip or tar.gz of skill folders (multipart field ``file``)."""
    if any(services.has_control_chars(v) for v in (kind, name, project)):
        return Status(400, _error("form", "form fields cannot contain control characters"))
    refusal = _may_ingest(request, kind=kind, local=False)
    if refusal:
        return Status(403, _error("forbidden", refusal))
    from django.conf import settings

    limit = int(settings.SKILL_UPLOAD_MAX_BYTES)
    if file.size is not None and file.size > limit:
        return Status(413, _error("archive-too-large", f"archive is {file.size} bytes (limit {limit})"))
    data = file.read(limit + 1)
    try:
        run = services.archive_ingest(
            data=data,
            filename=file.name or "upload",
            kind=kind,
            requested_by=_user(request),
            name=name,
            project=_project(project),
        )
    except services.IngestRefused as exc:
        status = 413 if exc.code == "archive-too-large" else 400
        return Status(status, _error(exc.code, exc.message))
    return Status(201, RunOut.of(run))


@router.post("/mcp", response={201: RunOut, 400: ErrorOut, 403: ErrorOut}, auth=WRITE)
def mcp_push(request: HttpRequest, payload: McpPushIn) -> Status[Any]:
    """Push the skills an MCP server serves (source ``mcp``)."""
    refusal = _may_ingest(request, kind="mcp", local=False)
    if refusal:
        return Status(403, _error("forbidden", refusal))
    try:
        run = services.mcp_skills_push(
            server=payload.server,
            skills=[
                services.McpSkill(name=s.name, skill_md=s.skill_md, files=s.files) for s in payload.skills
            ],
            requested_by=_user(request),
            replace=payload.replace,
        )
    except services.IngestRefused as exc:
        return Status(400, _error(exc.code, exc.message))
    return Status(201, RunOut.of(run))


@router.get("/{skill_id}", response=SkillOut, auth=READ)
def skill_get(request: HttpRequest, skill_id: int) -> SkillOut:
    """One skill with its current version."""
    return SkillOut.of(
        get_object_or_404(Skill.objects.select_related("source", "current_version"), pk=skill_id)
    )


@router.get("/{skill_id}/versions", response=list[VersionOut], auth=READ)
def versions_list(request: HttpRequest, skill_id: int) -> list[VersionOut]:
    """Every version of a skill, newest first."""
    skill = get_object_or_404(Skill, pk=skill_id)
    return [VersionOut.of(v) for v in selectors.skill_versions(skill)]


@router.get("/{skill_id}/versions/{number}", response=VersionOut, auth=READ)
def version_get(request: HttpRequest, skill_id: int, number: int) -> VersionOut:
    """One version with its body and the list of its files."""
    version = get_object_or_404(
        SkillVersion.objects.prefetch_related("files"), skill_id=skill_id, number=number
    )
    return VersionOut.of(version, full=True)
