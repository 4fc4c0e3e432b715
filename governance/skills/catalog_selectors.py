"""Reads for the catalog: the effective skills of a project per agent, listing and fleet figures.

Scope: a source attached to a project (``Source.project``) belongs to that project only; a source
without one (managed, bundled, builtin, user, plugin, mcp) applies to every project. A project's
catalog is therefore its own sources plus the organisation-wide ones, resolved by the engine.

Everything a page needs comes from one ``values()`` query over skills joined with their current
version (no model instances, bodies only when compaction is asked for), so a project page stays
in milliseconds with 10,000 skills in the database (see ``bench/catalog.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.db.models import Q
from django.db.models.functions import Length

from governance.engine.listing import (
    Listing,
    ListingInput,
    ListingProfile,
    Survival,
    build_listing,
    compaction_survival,
)
from governance.engine.resolve import (
    TRUST_LABEL,
    AgentProfile,
    Candidate,
    Resolution,
    Resolved,
    Status,
    agent_profile,
    paths_of,
    resolve,
)
from governance.engine.types import SourceKind
from governance.skills.models import Skill, SkillVersion
from portal.accounts.models import Project

SEVERITY_RANK = {"info": 1, "warning": 2, "error": 3}
PRODUCT_SOURCES = {SourceKind.BUNDLED, SourceKind.BUILTIN}

_FIELDS = (
    "id",
    "name",
    "plugin",
    "location",
    "source_id",
    "source__kind",
    "source__identity",
    "source__display_name",
    "source__project_id",
    "source__project__team_id",
    "current_version_id",
    "current_version__number",
    "current_version__description",
    "current_version__frontmatter",
    "current_version__valid",
    "current_version__findings",
)


@dataclass(frozen=True, slots=True)
class CatalogRow:
    """One skill with its current version, as lists and resolution need it (no body)."""

    skill_id: int
    name: str
    plugin: str
    location: str
    source_id: int
    source_kind: SourceKind
    source_label: str
    project_id: int | None
    team_id: int | None
    version_id: int
    version_number: int
    description: str
    when_to_use: str
    paths: tuple[str, ...]
    hidden: bool
    valid: bool
    findings: tuple[dict[str, Any], ...]
    body_chars: int

    @property
    def qualified_name(self) -> str:
        return f"{self.plugin}:{self.name}" if self.plugin else self.name

    @property
    def trust_label(self) -> str:
        return TRUST_LABEL.get(self.source_kind, "")

    @property
    def worst_severity(self) -> str:
        ranks = [SEVERITY_RANK.get(str(f.get("severity")), 0) for f in self.findings]
        best = max(ranks, default=0)
        return {3: "error", 2: "warning", 1: "info"}.get(best, "")

    def candidate(self, *, hidden: bool | None = None) -> Candidate:
        return Candidate(
            key=str(self.skill_id),
            name=self.name,
            source=self.source_kind,
            location=self.location,
            plugin=self.plugin,
            description=self.description,
            when_to_use=self.when_to_use,
            paths=self.paths,
            disable_model_invocation=self.hidden if hidden is None else hidden,
            valid=self.valid,
            is_command="/commands/" in f"/{self.location}/",
            source_label=self.source_label,
        )


def _row(values: Mapping[str, Any]) -> CatalogRow:
    fm = values["current_version__frontmatter"] or {}
    if not isinstance(fm, dict):
        fm = {}
    wtu = fm.get("when_to_use", fm.get("whenToUse"))
    findings = values["current_version__findings"] or []
    return CatalogRow(
        skill_id=values["id"],
        name=values["name"],
        plugin=values["plugin"] or "",
        location=values["location"],
        source_id=values["source_id"],
        source_kind=SourceKind(values["source__kind"]),
        source_label=values["source__display_name"] or values["source__identity"],
        project_id=values["source__project_id"],
        team_id=values["source__project__team_id"],
        version_id=values["current_version_id"],
        version_number=values["current_version__number"],
        description=values["current_version__description"] or "",
        when_to_use=wtu if isinstance(wtu, str) else "",
        paths=paths_of(fm.get("paths")),
        hidden=fm.get("disable-model-invocation") is True,
        valid=bool(values["current_version__valid"]),
        findings=tuple(f for f in findings if isinstance(f, dict)),
        body_chars=values["body_chars"] or 0,
    )


def _rows(q: Q | None = None) -> list[CatalogRow]:
    qs = Skill.objects.filter(removed_at__isnull=True, current_version__isnull=False)
    if q is not None:
        qs = qs.filter(q)
    values = qs.values(*_FIELDS, body_chars=Length("current_version__body")).order_by("name", "id")
    return [_row(v) for v in values]


def rows_where(q: Q) -> list[CatalogRow]:
    """Catalog rows for any filter on skills (e.g. a collection's members)."""
    return _rows(q)


def scope_rows(project: Project | None) -> list[CatalogRow]:
    """The skills a project's agents can see: its own sources plus organisation-wide ones."""
    if project is None:
        return _rows(Q(source__project__isnull=True))
    return _rows(Q(source__project__isnull=True) | Q(source__project_id=project.pk))


@dataclass(slots=True)
class ProjectCatalog:
    project: Project | None
    agent: AgentProfile
    rows: dict[int, CatalogRow]
    resolution: Resolution
    hidden_overrides: frozenset[int] = field(default_factory=frozenset)

    def resolved(self) -> list[tuple[CatalogRow, Resolved]]:
        return [(self.rows[int(r.candidate.key)], r) for r in self.resolution.skills]

    def status_of(self, skill_id: int) -> Resolved | None:
        return self.resolution.by_key().get(str(skill_id))

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Status}
        for r in self.resolution.skills:
            out[r.status.value] += 1
        return out

    def listing_inputs(
        self,
        *,
        remove: Iterable[int] = (),
        descriptions: Mapping[int, str] | None = None,
        invocations: Mapping[int, int] | None = None,
    ) -> list[ListingInput]:
        """Active skills in listing order (hidden, conditional, shadowed, rejected excluded)."""
        removed = set(remove)
        descs = descriptions or {}
        calls = invocations or {}
        out: list[ListingInput] = []
        for row, r in self.resolved():
            if r.status is not Status.ACTIVE or row.skill_id in removed:
                continue
            out.append(
                ListingInput(
                    key=str(row.skill_id),
                    name=r.listed_name,
                    description=descs.get(row.skill_id, row.description),
                    when_to_use=row.when_to_use,
                    bundled=row.source_kind in PRODUCT_SOURCES,
                    invocations=calls.get(row.skill_id, 0),
                )
            )
        out.sort(key=lambda i: (not i.bundled, i.name))
        return out


def project_catalog(
    project: Project | None,
    agent: str | AgentProfile,
    *,
    hide: Iterable[int] = (),
    rows: Sequence[CatalogRow] | None = None,
) -> ProjectCatalog:
    """Resolve a project's skills for ``agent``; ``hide`` marks skills disable-model-invocation
    (the listing page's "what if")."""
    profile = agent if isinstance(agent, AgentProfile) else agent_profile(agent)
    hidden = frozenset(hide)
    scoped = list(rows) if rows is not None else scope_rows(project)
    candidates = [r.candidate(hidden=True if r.skill_id in hidden else None) for r in scoped]
    return ProjectCatalog(
        project, profile, {r.skill_id: r for r in scoped}, resolve(candidates, profile), hidden
    )


def project_listing(
    catalog: ProjectCatalog,
    *,
    window_tokens: int,
    profile: ListingProfile | str,
    remove: Iterable[int] = (),
    descriptions: Mapping[int, str] | None = None,
    invocations: Mapping[int, int] | None = None,
) -> Listing:
    inputs = catalog.listing_inputs(remove=remove, descriptions=descriptions, invocations=invocations)
    return build_listing(inputs, window_tokens=window_tokens, profile=profile)


def project_compaction(catalog: ProjectCatalog) -> list[Survival]:
    """Compaction survival of every skill the model can invoke (active, hidden skills included
    since a user can invoke them), most recently invoked first in listing order."""
    wanted = [
        (row, r)
        for row, r in catalog.resolved()
        if r.status in {Status.ACTIVE, Status.HIDDEN, Status.CONDITIONAL}
    ]
    bodies = dict(
        SkillVersion.objects.filter(id__in=[row.version_id for row, _ in wanted]).values_list("id", "body")
    )
    return compaction_survival(
        [(str(row.skill_id), r.listed_name, bodies.get(row.version_id, "")) for row, r in wanted]
    )


# --------------------------------------------------------------------------------------------
# Organisation-wide views
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class CatalogEntry:
    row: CatalogRow
    resolved: Resolved
    findings: list[dict[str, Any]]  # stored findings + resolution findings
    project_name: str


def catalog_entries(
    *,
    agent: str,
    project: Project | None = None,
    search: str = "",
    source: str = "",
    status: str = "",
    severity: str = "",
    team: int | None = None,
    sort: str = "name",
) -> list[CatalogEntry]:
    """Catalog rows with their status for ``agent``.

    With a project: exactly what that project's agent sees. Without: every skill, each resolved
    in its own scope (organisation-wide skills among themselves, project skills within their
    project), so a status is never computed against skills its agent cannot see.
    """
    profile = agent_profile(agent)
    q = Q()
    if search:
        q &= (
            Q(name__icontains=search)
            | Q(current_version__description__icontains=search)
            | Q(current_version__body__icontains=search)
        )
    all_rows = _rows(
        (Q(source__project__isnull=True) | Q(source__project_id=project.pk)) if project else None
    )
    if search:
        matching = set(
            Skill.objects.filter(q, id__in=[r.skill_id for r in all_rows]).values_list("id", flat=True)
        )
    else:
        matching = {r.skill_id for r in all_rows}

    scopes: dict[int | None, list[CatalogRow]] = defaultdict(list)
    org_wide = [r for r in all_rows if r.project_id is None]
    if project is not None:
        scopes[project.pk] = all_rows
    else:
        scopes[None] = org_wide
        for r in all_rows:
            if r.project_id is not None:
                scopes[r.project_id].append(r)
        for key in list(scopes):
            if key is not None:
                scopes[key] = org_wide + scopes[key]

    project_names = dict(Project.objects.values_list("id", "name"))
    entries: list[CatalogEntry] = []
    for scope, rows in scopes.items():
        resolution = resolve([r.candidate() for r in rows], profile)
        by_id = {r.skill_id: r for r in rows}
        for res in resolution.skills:
            row = by_id[int(res.candidate.key)]
            if project is None and row.project_id != scope:
                continue  # org-wide skills are reported once, in their own scope
            if row.skill_id not in matching:
                continue
            extra = [f.as_dict() for f in resolution.findings.get(res.candidate.key, [])]
            entries.append(
                CatalogEntry(
                    row,
                    res,
                    list(row.findings) + extra,
                    project_names.get(row.project_id, "") if row.project_id else "",
                )
            )

    if source:
        entries = [e for e in entries if e.row.source_kind.value == source]
    if status:
        entries = [e for e in entries if e.resolved.status.value == status]
    if severity:
        floor = SEVERITY_RANK.get(severity, 0)
        entries = [
            e
            for e in entries
            if any(SEVERITY_RANK.get(str(f.get("severity")), 0) >= floor for f in e.findings)
        ]
    if team is not None:
        entries = [e for e in entries if e.row.team_id == team]

    keys = {
        "name": lambda e: (e.resolved.listed_name.casefold(), e.row.skill_id),
        "source": lambda e: (e.row.source_kind.value, e.resolved.listed_name),
        "status": lambda e: (e.resolved.status.value, e.resolved.listed_name),
        "findings": lambda e: (-len(e.findings), e.resolved.listed_name),
        "trust": lambda e: (-e.resolved.candidate.trust, e.resolved.listed_name),
        "size": lambda e: (-e.row.body_chars, e.resolved.listed_name),
    }
    entries.sort(key=keys.get(sort, keys["name"]))
    return entries


@dataclass(slots=True)
class FleetProject:
    project: Project
    listing: Listing
    counts: dict[str, int]
    security: int


def fleet(*, agent: str, window_tokens: int, profile: str) -> list[FleetProject]:
    """Every project's listing at ``window_tokens``, most characters consumed first."""
    rows = _rows()
    org_wide = [r for r in rows if r.project_id is None]
    per_project: dict[int, list[CatalogRow]] = defaultdict(list)
    for r in rows:
        if r.project_id is not None:
            per_project[r.project_id].append(r)
    out: list[FleetProject] = []
    for project in Project.objects.select_related("team").order_by("name"):
        cat = project_catalog(project, agent, rows=org_wide + per_project.get(project.pk, []))
        listing = project_listing(cat, window_tokens=window_tokens, profile=profile)
        security = sum(1 for g in cat.resolution.groups if g.security) + len(cat.resolution.look_alikes)
        out.append(FleetProject(project, listing, cat.counts(), security))
    out.sort(key=lambda f: (-f.listing.full_total, f.project.name))
    return out


def security_summary(agent: str = "trust-first") -> dict[str, int]:
    """Dashboard figures: shadow groups where trust is crossed, and look-alike groups."""
    rows = _rows()
    org_wide = [r for r in rows if r.project_id is None]
    per_project: dict[int | None, list[CatalogRow]] = defaultdict(list)
    for r in rows:
        per_project[r.project_id].append(r)
    shadow, look_alike = set(), set()
    for pid, own in per_project.items():
        scoped = own if pid is None else org_wide + own
        res = resolve([r.candidate() for r in scoped], agent)
        for g in res.groups:
            if g.security:
                shadow.add((pid, g.name))
        for la in res.look_alikes:
            look_alike.add((pid, la.skeleton))
    return {"shadowing": len(shadow), "look_alikes": len(look_alike), "skills": len(rows)}


def shadow_chain(skill: Skill, agent: str) -> list[tuple[str, ProjectCatalog, Any]]:
    """For a skill: in each scope where it has same-named copies, the group it belongs to."""
    project_ids: list[int | None]
    if skill.source.project_id is not None:
        project_ids = [skill.source.project_id]
    else:
        # an organisation-wide skill meets every project's copies
        project_ids = list(
            Skill.objects.filter(name=skill.name, removed_at__isnull=True, source__project__isnull=False)
            .values_list("source__project_id", flat=True)
            .distinct()
        ) or [None]
    out: list[tuple[str, ProjectCatalog, Any]] = []
    projects = Project.objects.in_bulk([p for p in project_ids if p is not None])
    for pid in project_ids:
        project = projects.get(pid) if pid is not None else None
        cat = project_catalog(project, agent)
        key = str(skill.pk)
        for group in cat.resolution.groups:
            members = ([group.winner] if group.winner else []) + group.shadowed
            if any(m.candidate.key == key for m in members):
                out.append((project.name if project else "organisation-wide", cat, group))
    return out


def with_replaced(rows: Sequence[CatalogRow], **changes: Any) -> list[CatalogRow]:
    return [replace(r, **changes) for r in rows]
