"""A read-only skill registry in the static layout the ``agentskills-http`` client reads.

Layout under ``/registry/projects/<project>/`` (a project's effective catalog, resolved with the
governance default, trust-first) and ``/registry/collections/<collection>/`` (a named collection)::

    index.json                         {"skills": [skill ids]}
    <skill_id>/SKILL.md                the exact stored bytes of the current version
    <skill_id>/index.json              {"references": [...], "scripts": [...], "assets": [...],
                                        "files": [every path, SKILL.md included]}
    <skill_id>/<path>                  any file of the package, e.g. scripts/run.sh

Rules: a bearer token with ``skills:read`` (401 otherwise, never a redirect to a login page);
404 for anything missing; no redirects at all; strong ETags (the sha256 of the bytes served)
and ``304 Not Modified`` on ``If-None-Match``. Shadowed and rejected skills are not served: the
registry serves what the agent should load. A skill id is the listed name with ``:`` and ``/``
turned into ``.`` (``ops:deploy`` → ``ops.deploy``), since ids must be safe URL segments; names
that still are not (non-ASCII look-alikes) are not served.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.views.decorators.http import require_safe

from governance.engine.resolve import Status
from governance.skills import catalog_selectors as sel
from governance.skills.catalog_collections import collection_rows
from governance.skills.models import VersionFile
from portal.accounts.models import Project, Scope
from portal.accounts.services import token_authenticate

SAFE_ID = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*$")
RESOURCE_KINDS = ("references", "scripts", "assets")
SERVED = {Status.ACTIVE, Status.HIDDEN, Status.CONDITIONAL}
MANIFEST = "index.json"

RegistryView = Callable[..., HttpResponseBase]


def registry_id(listed_name: str) -> str:
    return listed_name.replace(":", ".").replace("/", ".")


@dataclass(frozen=True, slots=True)
class RegistrySkill:
    skill_id: str
    row: sel.CatalogRow


def project_registry(project: Project) -> dict[str, RegistrySkill]:
    """Skill id → skill for a project's effective catalog (trust-first)."""
    cat = sel.project_catalog(project, "trust-first")
    out: dict[str, RegistrySkill] = {}
    for row, res in cat.resolved():
        if res.status not in SERVED:
            continue
        sid = registry_id(res.listed_name)
        if SAFE_ID.match(sid) and sid not in out:
            out[sid] = RegistrySkill(sid, row)
    return out


def collection_registry(slug: str) -> dict[str, RegistrySkill] | None:
    """Skill id → skill for a named collection, or None when there is no such collection."""
    rows = collection_rows(slug)
    if rows is None:
        return None
    out: dict[str, RegistrySkill] = {}
    for row in rows:
        sid = registry_id(row.qualified_name)
        if SAFE_ID.match(sid) and sid not in out:
            out[sid] = RegistrySkill(sid, row)
    return out


def _unauthorised() -> HttpResponse:
    response = HttpResponse(
        "A bearer token with the skills:read scope is required.\n", status=401, content_type="text/plain"
    )
    response["WWW-Authenticate"] = 'Bearer realm="registry", scope="skills:read"'
    return response


def _not_found(what: str) -> HttpResponse:
    return HttpResponse(f"Not found: {what}\n", status=404, content_type="text/plain")


def token_required(view: RegistryView) -> RegistryView:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        header = request.headers.get("Authorization", "")
        scheme, _, raw = header.partition(" ")
        if scheme.lower() != "bearer" or not raw.strip():
            return _unauthorised()
        token = token_authenticate(raw=raw.strip(), scope=Scope.SKILLS_READ.value)
        if token is None:
            return _unauthorised()
        request.user = token.user
        response = view(request, *args, **kwargs)
        response["Cache-Control"] = "private, no-cache"
        # Skill files are untrusted: never let a browser run or render them as a page.
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        response["Vary"] = "Authorization"
        return response

    return wrapper


def _etag_matches(request: HttpRequest, etag: str) -> bool:
    header = request.headers.get("If-None-Match", "")
    if not header:
        return False
    if header.strip() == "*":
        return True
    candidates = {c.strip().removeprefix("W/") for c in header.split(",")}
    return etag in candidates


def _send(request: HttpRequest, content: bytes, content_type: str, sha256: str | None = None) -> HttpResponse:
    etag = f'"{sha256 or hashlib.sha256(content).hexdigest()}"'
    if _etag_matches(request, etag):
        response = HttpResponse(status=304)
    else:
        response = HttpResponse(content, content_type=content_type)
        response["Content-Length"] = str(len(content))
    response["ETag"] = etag
    return response


def _json(request: HttpRequest, payload: dict[str, Any]) -> HttpResponse:
    body = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return _send(request, body, "application/json")


def _scope(kind: str, slug: str) -> dict[str, RegistrySkill] | None:
    if kind == "projects":
        project = Project.objects.filter(slug=slug).first()
        return project_registry(project) if project is not None else None
    return collection_registry(slug)


@require_safe
@token_required
def root_index(request: HttpRequest, kind: str, slug: str) -> HttpResponse:
    skills = _scope(kind, slug)
    if skills is None:
        return _not_found(f"{kind[:-1]} {slug}")
    return _json(request, {"skills": sorted(skills)})


def _files(skill: RegistrySkill) -> dict[str, tuple[str, int]]:
    """path → (sha256, size) of the skill's current version."""
    rows = VersionFile.objects.filter(version_id=skill.row.version_id).values_list("path", "blob_id", "size")
    return {path: (sha, size) for path, sha, size in rows}


@require_safe
@token_required
def skill_index(request: HttpRequest, kind: str, slug: str, skill_id: str) -> HttpResponse:
    skills = _scope(kind, slug)
    if skills is None or skill_id not in skills:
        return _not_found(f"skill {skill_id}")
    paths = sorted(p for p in _files(skills[skill_id]) if p != MANIFEST)
    manifest: dict[str, Any] = {kind_: [] for kind_ in RESOURCE_KINDS}
    for path in paths:
        folder, _, name = path.partition("/")
        if folder in RESOURCE_KINDS and name and "/" not in name:
            manifest[folder].append(name)
    manifest["files"] = paths
    return _json(request, manifest)


@require_safe
@token_required
def skill_file(request: HttpRequest, kind: str, slug: str, skill_id: str, path: str) -> HttpResponse:
    skills = _scope(kind, slug)
    if skills is None or skill_id not in skills:
        return _not_found(f"skill {skill_id}")
    files = _files(skills[skill_id])
    if path not in files or path == MANIFEST:
        return _not_found(f"{skill_id}/{path}")
    sha, _size = files[path]
    if _etag_matches(request, f'"{sha}"'):
        return _send(request, b"", "", sha)
    from governance.skills.models import Blob

    blob = Blob.objects.filter(sha256=sha).values_list("content", flat=True).first()
    if blob is None:
        return _not_found(f"{skill_id}/{path}")
    if path == "SKILL.md" or path.endswith(".md"):
        content_type = "text/markdown; charset=utf-8"
    else:
        guessed, _ = mimetypes.guess_type(path)
        content_type = guessed or "application/octet-stream"
        if content_type.startswith("text/"):
            content_type += "; charset=utf-8"
    return _send(request, bytes(blob), content_type, sha)
