"""Reads for the catalog: the effective skills of a project per agent, listing and fleet figures.

Scope: a source attached to a project (``Source.project``) belongs to that project only; a source
without one (managed, bundled, builtin, user, plugin, mcp) applies to every project. A project's
catalog is therefore its own sources plus the organisation-wide ones, resolved by the engine.

Everything a page needs comes from one ``values()`` query over skills joined with their current
version (no model instances, bodies only when compaction is asked for), so a project page stays
in milliseconds with 10,000 skills in the database (see ``bench/catalog.py``).
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

from django.db.models import Count, Max, Q
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
    skeleton,
)
from governance.engine.types import SourceKind
from governance.skills.models import Collection, Skill, SkillVersion, Source
from portal.accounts.models import Project

T = TypeVar("T")
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

    def candidate(self, *, hidden: bool | None = None, denied: str = "") -> Candidate:
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
            rejected_reason=denied,
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
        body_chars=values.get("body_chars") or 0,
    )


def _rows(q: Q | None = None, *, with_size: bool = False) -> list[CatalogRow]:
    """Rows for skills matching ``q``. The body's length is read only when asked (``with_size``):
    across the whole catalog it would read every body."""
    qs = Skill.objects.filter(removed_at__isnull=True, current_version__isnull=False)
    if q is not None:
        qs = qs.filter(q)
    if with_size:
        values = qs.values(*_FIELDS, body_chars=Length("current_version__body"))
    else:
        values = qs.values(*_FIELDS)
    return [_row(v) for v in values.order_by("name", "id")]


def catalog_stamp() -> str:
    """Changes whenever the catalog does (a skill added, re-versioned, removed; a source or a
    project added): the key of the organisation-wide caches below, with a TTL as a safety net."""
    skills = Skill.objects.aggregate(
        n=Count("id"), updated=Max("updated_at"), version=Max("current_version_id"), removed=Max("removed_at")
    )
    sources = Source.objects.aggregate(n=Count("id"), last=Max("id"))
    from governance.policy.selectors import policy_published

    policy = policy_published()
    return "|".join(
        str(v)
        for v in (
            *skills.values(),
            *sources.values(),
            Project.objects.count(),
            Collection.objects.count(),
            policy.pk if policy else "",
        )
    )


CACHE_SECONDS = 600
_MEMO: OrderedDict[str, tuple[float, Any]] = OrderedDict()
_MEMO_SIZE = 16
_MEMO_LOCK = threading.Lock()


def _cached(name: str, compute: Callable[[], T], *parts: object) -> T:
    """Memoise an organisation-wide computation in this process, keyed by the catalog stamp.

    In process rather than in Django's cache: these are tens of thousands of small objects, and
    pickling them in and out of a cache costs as much as computing them again. Every process
    checks the stamp (one aggregate query) so none serves a stale catalog past a change.
    """
    key = "|".join([name, catalog_stamp(), *map(str, parts)])
    now = time.monotonic()
    with _MEMO_LOCK:
        hit = _MEMO.get(key)
        if hit is not None and now - hit[0] < CACHE_SECONDS:
            _MEMO.move_to_end(key)
            return cast(T, hit[1])
    value = compute()
    with _MEMO_LOCK:
        _MEMO[key] = (now, value)
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    return value


def clear_cache() -> None:
    with _MEMO_LOCK:
        _MEMO.clear()


def policy_denials(skill_ids: Sequence[int]) -> dict[int, str]:
    """Skills the published policy denies (skill id → why): they are ``rejected``, never loaded,
    and cannot shadow anything."""
    from governance.policy.selectors import skill_permissions

    out: dict[int, str] = {}
    for skill_id, permission in skill_permissions(skill_ids).items():
        if permission.decision.decision.value == "deny":
            reasons = "; ".join(r.message for r in permission.decision.reasons[:2])
            out[skill_id] = f"denied by policy: {reasons}" if reasons else "denied by policy"
    return out


def rows_where(q: Q) -> list[CatalogRow]:
    """Catalog rows for any filter on skills (e.g. a collection's members)."""
    return _rows(q)


def scope_rows(project: Project | None) -> list[CatalogRow]:
    """The skills a project's agents can see: its own sources plus organisation-wide ones."""
    if project is None:
        return _rows(Q(source__project__isnull=True), with_size=True)
    return _rows(Q(source__project__isnull=True) | Q(source__project_id=project.pk), with_size=True)


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
    denied: Mapping[int, str] | None = None,
) -> ProjectCatalog:
    """Resolve a project's skills for ``agent``; ``hide`` marks skills disable-model-invocation
    (the listing page's "what if")."""
    profile = agent if isinstance(agent, AgentProfile) else agent_profile(agent)
    hidden = frozenset(hide)
    scoped = list(rows) if rows is not None else scope_rows(project)
    if denied is None:
        denied = policy_denials([r.skill_id for r in scoped])
    candidates = [
        r.candidate(hidden=True if r.skill_id in hidden else None, denied=denied.get(r.skill_id, ""))
        for r in scoped
    ]
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


def _scoped_entries(profile: AgentProfile, project: Project | None) -> list[CatalogEntry]:
    """Every skill with its status: in ``project``'s scope, or each in its own scope."""
    all_rows = _rows(
        (Q(source__project__isnull=True) | Q(source__project_id=project.pk)) if project else None
    )
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
    denied = policy_denials([r.skill_id for r in all_rows])
    entries: list[CatalogEntry] = []
    for scope, rows in scopes.items():
        resolution = resolve([r.candidate(denied=denied.get(r.skill_id, "")) for r in rows], profile)
        by_id = {r.skill_id: r for r in rows}
        for res in resolution.skills:
            row = by_id[int(res.candidate.key)]
            if project is None and row.project_id != scope:
                continue  # org-wide skills are reported once, in their own scope
            extra = [f.as_dict() for f in resolution.findings.get(res.candidate.key, [])]
            entries.append(
                CatalogEntry(
                    row,
                    res,
                    list(row.findings) + extra,
                    project_names.get(row.project_id, "") if row.project_id else "",
                )
            )
    return entries


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
    project), so a status is never computed against skills its agent cannot see. The
    organisation-wide resolution is cached until the catalog changes (``catalog_stamp``).
    """
    profile = agent_profile(agent)
    if project is None:
        entries = _cached("entries", lambda: _scoped_entries(profile, None), profile.key)
    else:
        entries = _scoped_entries(profile, project)
    if search:
        q = (
            Q(name__icontains=search)
            | Q(current_version__description__icontains=search)
            | Q(current_version__body__icontains=search)
        )
        scope_q = Q(source__project__isnull=True) | Q(source__project_id=project.pk) if project else Q()
        matching = set(Skill.objects.filter(q, scope_q, removed_at__isnull=True).values_list("id", flat=True))
        entries = [e for e in entries if e.row.skill_id in matching]

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
        "size": lambda e: (-sizes.get(e.row.skill_id, 0), e.resolved.listed_name),
    }
    sizes: dict[int, int] = {}
    if sort == "size":
        sizes = dict(
            Skill.objects.filter(id__in=[e.row.skill_id for e in entries]).values_list(
                "id", Length("current_version__body")
            )
        )
    entries = sorted(entries, key=keys.get(sort, keys["name"]))
    return entries


@dataclass(slots=True)
class FleetProject:
    project: Project
    listing: Listing
    counts: dict[str, int]
    security: int


def fleet(*, agent: str, window_tokens: int, profile: str) -> list[FleetProject]:
    """Every project's listing at ``window_tokens``, most characters consumed first (cached
    until the catalog changes)."""
    return _cached("fleet", lambda: _fleet(agent, window_tokens, profile), agent, window_tokens, profile)


def _fleet(agent: str, window_tokens: int, profile: str) -> list[FleetProject]:
    rows = _rows()
    org_wide = [r for r in rows if r.project_id is None]
    per_project: dict[int, list[CatalogRow]] = defaultdict(list)
    for r in rows:
        if r.project_id is not None:
            per_project[r.project_id].append(r)
    denied = policy_denials([r.skill_id for r in rows])
    out: list[FleetProject] = []
    for project in Project.objects.select_related("team").order_by("name"):
        cat = project_catalog(project, agent, rows=org_wide + per_project.get(project.pk, []), denied=denied)
        listing = project_listing(cat, window_tokens=window_tokens, profile=profile)
        security = sum(1 for g in cat.resolution.groups if g.security) + len(cat.resolution.look_alikes)
        out.append(FleetProject(project, listing, cat.counts(), security))
    out.sort(key=lambda f: (-f.listing.full_total, f.project.name))
    return out


def security_summary(agent: str = "trust-first") -> dict[str, int]:
    """Dashboard figures: shadow groups where trust is crossed, and look-alike groups (cached
    until the catalog changes)."""
    return _cached("security", lambda: _security_summary(agent), agent)


@dataclass(frozen=True, slots=True)
class _Light:
    """What shadowing and look-alike detection need of a skill (no JSON columns)."""

    skill_id: int
    name: str
    plugin: str
    location: str
    kind: str
    project_id: int | None
    valid: bool

    def candidate(self, denied: str) -> Candidate:
        return Candidate(
            key=str(self.skill_id),
            name=self.name,
            source=SourceKind(self.kind),
            location=self.location,
            plugin=self.plugin,
            valid=self.valid,
            rejected_reason=denied,
            is_command="/commands/" in f"/{self.location}/",
        )


def _security_summary(agent: str) -> dict[str, int]:
    """Only skills that share a look-alike skeleton with another skill of their scope can shadow
    or impersonate: those few are resolved (and policy-checked), the rest never are."""
    rows = [
        _Light(*values)
        for values in Skill.objects.filter(
            removed_at__isnull=True, current_version__isnull=False
        ).values_list(
            "id", "name", "plugin", "location", "source__kind", "source__project_id", "current_version__valid"
        )
    ]
    org_wide = [r for r in rows if r.project_id is None]
    org_skeletons = Counter(skeleton(r.name) for r in org_wide)
    per_project: dict[int, list[_Light]] = defaultdict(list)
    for r in rows:
        if r.project_id is not None:
            per_project[r.project_id].append(r)
    suspects: dict[int | None, list[_Light]] = {
        None: [r for r in org_wide if org_skeletons[skeleton(r.name)] > 1]
    }
    for pid, own in per_project.items():
        own_skeletons = Counter(skeleton(r.name) for r in own)
        hot = {s for s, n in own_skeletons.items() if n + org_skeletons.get(s, 0) > 1}
        if hot:
            suspects[pid] = [r for r in org_wide + own if skeleton(r.name) in hot]
    denied = policy_denials(sorted({r.skill_id for scoped in suspects.values() for r in scoped}))
    shadow: set[tuple[int | None, str]] = set()
    look_alike: set[tuple[int | None, str]] = set()
    for scope, scoped in suspects.items():
        res = resolve([r.candidate(denied.get(r.skill_id, "")) for r in scoped], agent)
        for g in res.groups:
            if g.security:
                shadow.add((scope, g.name))
        for la in res.look_alikes:
            look_alike.add((scope, la.skeleton))
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
