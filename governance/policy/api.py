"""API router of the policy concern (mounted at /api/v1/policy by portal/api.py)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Router, Schema

from governance.engine.managed_settings import portal_only
from governance.policy import selectors
from governance.skills.models import Skill
from portal.auth import token_or_session

router = Router(tags=["policy"])


def portal_base_url(request: HttpRequest) -> str:
    return settings.PORTAL_BASE_URL or request.build_absolute_uri("/").rstrip("/")


class PublishedPolicy(Schema):
    version: int | None
    sha256: str
    published_at: str | None
    published_by: str
    document: dict[str, Any]
    portal_only: list[dict[str, str]]


@router.get("/", response=PublishedPolicy, auth=token_or_session("policy:read"))
def published(request: HttpRequest) -> PublishedPolicy:
    """The published policy document (scope ``policy:read``); version null when none is published."""
    version = selectors.policy_published()
    doc = selectors.policy_document(version)
    return PublishedPolicy(
        version=version.number if version else None,
        sha256=version.document_sha256 if version else "",
        published_at=version.published_at.isoformat() if version and version.published_at else None,
        published_by=version.published_by.get_username() if version and version.published_by else "",
        document=doc.as_dict(),
        portal_only=[{"rule": p.rule, "why": p.why} for p in portal_only(doc)],
    )


def _file_response(compiled: selectors.CompiledFile) -> HttpResponse:
    response = HttpResponse(compiled.content, content_type=compiled.content_type)
    response["Content-Disposition"] = f'attachment; filename="{compiled.filename}"'
    response["X-Checksum-Sha256"] = compiled.sha256
    response["ETag"] = f'"{compiled.sha256}"'
    response["X-Policy-Version"] = str(compiled.version or 0)
    return response


@router.get("/managed-settings.json", auth=token_or_session("policy:read"))
def managed_settings(request: HttpRequest) -> HttpResponse:
    """Claude Code ``managed-settings.json`` compiled from the published policy.

    The sha256 of the body is in the ``X-Checksum-Sha256`` header (and the ETag).
    """
    return _file_response(selectors.managed_settings_file(base_url=portal_base_url(request)))


@router.get("/managed-settings.d.zip", auth=token_or_session("policy:read"))
def managed_settings_dropins(request: HttpRequest) -> HttpResponse:
    """The same settings as ``managed-settings.d/`` drop-in files, zipped (checksum in the header)."""
    return _file_response(selectors.managed_settings_dropins_zip(base_url=portal_base_url(request)))


class ManifestFile(Schema):
    path: str
    sha256: str
    size: int


class Manifest(Schema):
    version: int | None
    managed_settings_sha256: str
    dropins_zip_sha256: str
    files: list[ManifestFile]


@router.get("/managed-settings/manifest", response=Manifest, auth=token_or_session("policy:read"))
def manifest(request: HttpRequest) -> Manifest:
    """Checksums of every downloadable file, to verify a download or detect a new version."""
    import hashlib

    base = portal_base_url(request)
    single = selectors.managed_settings_file(base_url=base)
    archive = selectors.managed_settings_dropins_zip(base_url=base)
    files = [ManifestFile(path=single.filename, sha256=single.sha256, size=len(single.content))]
    for path, content in selectors.managed_settings_dropins(base_url=base).items():
        files.append(ManifestFile(path=path, sha256=hashlib.sha256(content).hexdigest(), size=len(content)))
    return Manifest(
        version=single.version,
        managed_settings_sha256=single.sha256,
        dropins_zip_sha256=archive.sha256,
        files=files,
    )


@router.get("/skills/{skill_id}/decision", auth=token_or_session("skills:read"))
def skill_decision(request: HttpRequest, skill_id: int) -> dict[str, Any]:
    """The permission decision (with reasons) and risk summary of one skill under the published policy."""
    skill = get_object_or_404(Skill, pk=skill_id)
    permission = selectors.skill_permission(skill)
    if permission is None:
        return {"skill_id": skill.pk, "decision": None, "reasons": [], "risk": None}
    return {"skill_id": skill.pk, "skill": skill.qualified_name, **permission.as_dict()}
