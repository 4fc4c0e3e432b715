"""Reads of the policy concern: versions, decisions for the stored catalog, impact previews."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max, QuerySet

from governance.audit.models import AuditEntry
from governance.engine.managed_settings import compile_dropins, compile_managed_settings
from governance.engine.permissions import (
    Decision,
    Effect,
    PermissionSettings,
    RiskSummary,
    RuleMatcher,
    SkillSubject,
    decide,
    decide_many,
    evaluate,
)
from governance.engine.policydoc import PolicyDocument, parse_document
from governance.engine.sources import admit_source
from governance.engine.types import SourceKind
from governance.policy.models import PolicyStatus, PolicyVersion
from governance.skills.models import Skill, SkillVersion, Source, VersionFile


def policy_published() -> PolicyVersion | None:
    return PolicyVersion.objects.filter(status=PolicyStatus.PUBLISHED).first()


def policy_draft() -> PolicyVersion | None:
    return PolicyVersion.objects.filter(status=PolicyStatus.DRAFT).first()


def policy_versions() -> QuerySet[PolicyVersion]:
    return PolicyVersion.objects.select_related("created_by", "updated_by", "published_by").order_by(
        "-number"
    )


def source_refusals(*, limit: int = 20) -> QuerySet[AuditEntry]:
    """The latest sources refused by the published policy (from the audit ledger)."""
    return AuditEntry.objects.filter(action="source.refused").order_by("-at", "-id")[:limit]


def policy_document(version: PolicyVersion | None) -> PolicyDocument:
    """The typed document of a version; no version (nothing published) is the empty policy."""
    if version is None:
        return PolicyDocument()
    doc, _ = parse_document(version.document)
    return doc


def published_document() -> PolicyDocument:
    return policy_document(policy_published())


# --------------------------------------------------------------------------------------------
# The stored catalog as decision subjects


@dataclass(frozen=True, slots=True)
class CatalogSkill:
    skill_id: int
    qualified_name: str
    source_id: int
    source_label: str
    project: str
    team: str
    subject: SkillSubject


def source_location(location: str, identity: str) -> str:
    """A spelling the identity parser reads: the registered location, else one built from the identity."""
    if location:
        return location
    if not identity or identity.startswith(("local:", "mcp:")):
        return identity
    return f"https://{identity}"


def _subjects(skills: QuerySet[Skill], *, with_files: bool) -> list[CatalogSkill]:
    rows = list(
        skills.filter(current_version__isnull=False, removed_at__isnull=True).values(
            "id",
            "name",
            "plugin",
            "current_version_id",
            "current_version__frontmatter",
            "source_id",
            "source__kind",
            "source__identity",
            "source__location",
            "source__display_name",
            "source__marketplace",
            "source__project__slug",
            "source__project__team__slug",
        )
    )
    files: dict[int, list[str]] = {}
    if with_files and rows:
        version_ids = [r["current_version_id"] for r in rows]
        for version_id, path in VersionFile.objects.filter(version_id__in=version_ids).values_list(
            "version_id", "path"
        ):
            files.setdefault(version_id, []).append(path)
    out: list[CatalogSkill] = []
    for r in rows:
        try:
            kind = SourceKind(r["source__kind"])
        except ValueError:
            continue
        frontmatter = (
            r["current_version__frontmatter"] if isinstance(r["current_version__frontmatter"], dict) else {}
        )
        subject = SkillSubject(
            name=r["name"],
            source=kind,
            frontmatter=frontmatter,
            source_identity=source_location(r["source__location"], r["source__identity"]),
            plugin=r["plugin"] or "",
            marketplace=r["source__marketplace"] or "",
            team=r["source__project__team__slug"] or "",
            project=r["source__project__slug"] or "",
            files=tuple(files.get(r["current_version_id"], ())),
        )
        out.append(
            CatalogSkill(
                skill_id=r["id"],
                qualified_name=subject.qualified_name,
                source_id=r["source_id"],
                source_label=r["source__display_name"] or f"{kind.value}:{r['source__identity']}",
                project=subject.project,
                team=subject.team,
                subject=subject,
            )
        )
    return out


def catalog_subjects(
    *, skill_ids: Iterable[int] | None = None, with_files: bool = False
) -> list[CatalogSkill]:
    qs = Skill.objects.all()
    if skill_ids is not None:
        qs = qs.filter(id__in=list(skill_ids))
    return _subjects(qs, with_files=with_files)


@dataclass(slots=True)
class SkillPermission:
    decision: Decision
    risk: RiskSummary

    def as_dict(self) -> dict[str, Any]:
        return {**self.decision.as_dict(), "risk": self.risk.as_dict()}


def skill_permissions(
    skill_ids: Iterable[int], *, document: PolicyDocument | None = None
) -> dict[int, SkillPermission]:
    """Decision and risk of each skill under the published policy (or ``document``)."""
    settings = (document or published_document()).permission_settings()
    matcher = RuleMatcher(settings.rules)
    out: dict[int, SkillPermission] = {}
    for item in catalog_subjects(skill_ids=skill_ids, with_files=True):
        decision, risk = evaluate(item.subject, settings, matcher=matcher)
        out[item.skill_id] = SkillPermission(decision, risk)
    return out


def skill_permission(skill: Skill) -> SkillPermission | None:
    return skill_permissions([skill.pk]).get(skill.pk)


def catalog_decision_counts(version: PolicyVersion | None) -> dict[str, int]:
    """How many current skills each decision covers under ``version``.

    Cached per (policy hash, catalog state): the overview page must not re-decide a large
    catalog on every view; any new version or skill changes the key.
    """
    state = Skill.objects.filter(current_version__isnull=False, removed_at__isnull=True).aggregate(
        n=Count("id"), latest=Max("current_version_id"), updated=Max("updated_at")
    )
    key = (
        "policy:counts:"
        + hashlib.sha256(
            f"{version.document_sha256 if version else ''}|{state['n']}|{state['latest']}|{state['updated']}".encode()
        ).hexdigest()
    )
    cached = cache.get(key)
    if isinstance(cached, dict):
        return cached
    settings = policy_document(version).permission_settings()
    counts = {e.value: 0 for e in (Effect.ALLOW, Effect.ASK, Effect.DENY)}
    for _, decision in decide_many((item.subject for item in catalog_subjects()), settings):
        counts[decision.decision.value] += 1
    cache.set(key, counts, timeout=3600)
    return counts


def skill_decision(*, skill: Skill, version: SkillVersion) -> dict[str, Any]:
    """Decision and risk of one stored version (current or not) under the published policy.

    The shape the catalog's skill page renders: ``decision``, ``reasons`` (dicts with code,
    message, rule, keys), ``risk`` (see ``RiskSummary.as_dict``), ``hooks_blocked``, and the
    published ``policy_version`` the decision comes from.
    """
    source = skill.source
    frontmatter = version.frontmatter if isinstance(version.frontmatter, dict) else {}
    subject = SkillSubject(
        name=skill.name,
        source=SourceKind(source.kind),
        frontmatter=frontmatter,
        source_identity=source_location(source.location, source.identity),
        plugin=skill.plugin or "",
        marketplace=source.marketplace or "",
        team=source.project.team.slug if source.project else "",
        project=source.project.slug if source.project else "",
        files=tuple(VersionFile.objects.filter(version=version).values_list("path", flat=True)),
    )
    published = policy_published()
    decision, risk = evaluate(subject, policy_document(published).permission_settings())
    return {
        **SkillPermission(decision, risk).as_dict(),
        "policy_version": published.number if published else None,
    }


# --------------------------------------------------------------------------------------------
# Impact preview


@dataclass(frozen=True, slots=True)
class DecisionChange:
    skill: CatalogSkill
    before: Decision
    after: Decision


@dataclass(frozen=True, slots=True)
class SourceChange:
    source_id: int
    label: str
    location: str
    project: str
    before_allowed: bool
    after_allowed: bool
    reason: str


@dataclass(slots=True)
class Impact:
    skills_checked: int
    decision_changes: list[DecisionChange] = field(default_factory=list)
    sources_blocked: list[SourceChange] = field(default_factory=list)
    sources_unblocked: list[SourceChange] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "skills_checked": self.skills_checked,
            "decision_changes": [
                {
                    "skill_id": c.skill.skill_id,
                    "skill": c.skill.qualified_name,
                    "source": c.skill.source_label,
                    "project": c.skill.project,
                    "before": c.before.decision.value,
                    "after": c.after.decision.value,
                    "reasons": [r.as_dict() for r in c.after.reasons],
                }
                for c in self.decision_changes
            ],
            "sources_blocked": [
                {"source_id": s.source_id, "source": s.label, "reason": s.reason, "project": s.project}
                for s in self.sources_blocked
            ],
            "sources_unblocked": [
                {"source_id": s.source_id, "source": s.label} for s in self.sources_unblocked
            ],
            "projects": self.projects,
            "counts": self.counts,
        }


def _hooks_changed(a: Decision, b: Decision) -> bool:
    return a.hooks_blocked != b.hooks_blocked


def policy_impact(*, before: PolicyDocument, after: PolicyDocument) -> Impact:
    """What publishing ``after`` in place of ``before`` changes in the stored catalog.

    One ``RuleMatcher`` per policy: each distinct name, source identity, team and project is
    matched against the rules once, not once per skill (bench/policy_decisions.py)."""
    settings_before: PermissionSettings = before.permission_settings()
    settings_after: PermissionSettings = after.permission_settings()
    match_before, match_after = RuleMatcher(settings_before.rules), RuleMatcher(settings_after.rules)
    items = catalog_subjects()
    impact = Impact(skills_checked=len(items))
    projects: set[str] = set()
    counts: dict[str, int] = {}
    for item in items:
        a = decide(item.subject, settings_before, matcher=match_before)
        b = decide(item.subject, settings_after, matcher=match_after)
        if a.decision is not b.decision or _hooks_changed(a, b):
            impact.decision_changes.append(DecisionChange(item, a, b))
            key = f"{a.decision.value}→{b.decision.value}"
            counts[key] = counts.get(key, 0) + 1
            if item.project:
                projects.add(item.project)
    for source in Source.objects.select_related("project").order_by("kind", "identity"):
        location = source_location(source.location, source.identity)
        was = admit_source(
            before.source_rules, kind=source.kind, location=location, marketplace=source.marketplace
        )
        now = admit_source(
            after.source_rules, kind=source.kind, location=location, marketplace=source.marketplace
        )
        if was.allowed == now.allowed:
            continue
        change = SourceChange(
            source_id=source.pk,
            label=str(source),
            location=location,
            project=source.project.slug if source.project else "",
            before_allowed=was.allowed,
            after_allowed=now.allowed,
            reason=now.reason,
        )
        (impact.sources_unblocked if now.allowed else impact.sources_blocked).append(change)
        if change.project:
            projects.add(change.project)
    impact.projects = sorted(projects)
    impact.counts = dict(sorted(counts.items()))
    return impact


# --------------------------------------------------------------------------------------------
# What agents download


@dataclass(frozen=True, slots=True)
class CompiledFile:
    filename: str
    content: bytes
    sha256: str
    content_type: str
    version: int | None


def _json_bytes(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


def managed_settings_file(*, base_url: str, version: PolicyVersion | None = None) -> CompiledFile:
    """The published policy (or ``version``) as ``managed-settings.json``."""
    version = version if version is not None else policy_published()
    doc = policy_document(version)
    content = _json_bytes(compile_managed_settings(doc, otlp_endpoint=f"{base_url.rstrip('/')}/otlp"))
    return CompiledFile(
        "managed-settings.json",
        content,
        hashlib.sha256(content).hexdigest(),
        "application/json",
        version.number if version else None,
    )


def managed_settings_dropins(*, base_url: str, version: PolicyVersion | None = None) -> dict[str, bytes]:
    version = version if version is not None else policy_published()
    doc = policy_document(version)
    files = compile_dropins(doc, otlp_endpoint=f"{base_url.rstrip('/')}/otlp")
    return {f"managed-settings.d/{name}": _json_bytes(content) for name, content in files.items()}


def managed_settings_dropins_zip(*, base_url: str, version: PolicyVersion | None = None) -> CompiledFile:
    """The ``managed-settings.d/`` drop-ins as a zip with fixed timestamps (stable checksum)."""
    version = version if version is not None else policy_published()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, content in managed_settings_dropins(base_url=base_url, version=version).items():
            info = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, content)
    content = buffer.getvalue()
    return CompiledFile(
        "managed-settings.d.zip",
        content,
        hashlib.sha256(content).hexdigest(),
        "application/zip",
        version.number if version else None,
    )
