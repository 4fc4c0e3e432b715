"""Catalog API (mounted at /api/v1/catalog): a project's effective skills and listing, per agent."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router, Schema
from ninja.errors import HttpError

from governance.engine.listing import LISTING_PROFILES, listing_profile
from governance.engine.resolve import AGENTS, DEFAULT_AGENT
from governance.skills import catalog_selectors as sel
from portal.accounts.models import Project
from portal.auth import token_or_session

router = Router(tags=["catalog"])
READ = token_or_session("skills:read")


class ResolvedOut(Schema):
    id: int
    name: str
    listed_name: str
    source: str
    status: str
    shadowed_by: str | None
    reason: str
    findings: list[dict[str, object]]


class ListingOut(Schema):
    profile: str
    window_tokens: int
    budget: int
    chars_used: int
    full_total: int
    level: int
    dropped: int
    event: dict[str, object]
    entries: list[dict[str, object]]
    text: str


class CatalogOut(Schema):
    project: str | None
    agent: str
    rule: str
    skills: list[ResolvedOut]
    security_groups: int
    look_alike_groups: int
    listing: ListingOut


class CatalogQuery(Schema):
    project: str | None = None
    agent: str = DEFAULT_AGENT
    window_tokens: int = 200_000
    profile: str = "classic"
    fraction: float | None = None


@router.get("/effective", response=CatalogOut, auth=READ)
def effective_catalog(request: HttpRequest, query: Query[CatalogQuery]) -> CatalogOut:
    """What an agent sees in a project: every skill's status (and why), and the listing it builds.

    Without ``project``: the organisation-wide skills only. Needs ``skills:read``.
    """
    if query.agent not in AGENTS:
        raise HttpError(400, f"agent: unknown {query.agent!r}; known: {', '.join(AGENTS)}")
    if query.profile not in LISTING_PROFILES:
        raise HttpError(400, f"profile: unknown {query.profile!r}; known: {', '.join(LISTING_PROFILES)}")
    if not 1_000 <= query.window_tokens <= 100_000_000:
        raise HttpError(400, "window_tokens: between 1000 and 100000000")
    if query.fraction is not None and not 0 < query.fraction <= 0.5:
        raise HttpError(400, "fraction: greater than 0, at most 0.5")
    project = None
    if query.project:
        project = Project.objects.filter(slug=query.project).first()
        if project is None:
            raise HttpError(404, f"project: no project {query.project!r}")
    cat = sel.project_catalog(project, query.agent)
    profile = listing_profile(query.profile, fraction=query.fraction)
    listing = sel.project_listing(cat, window_tokens=query.window_tokens, profile=profile)
    skills = [
        ResolvedOut(
            id=row.skill_id,
            name=row.qualified_name,
            listed_name=res.listed_name,
            source=row.source_kind.value,
            status=res.status.value,
            shadowed_by=res.shadowed_by,
            reason=res.reason,
            findings=[f.as_dict() for f in cat.resolution.findings.get(str(row.skill_id), [])],
        )
        for row, res in cat.resolved()
    ]
    return CatalogOut(
        project=project.slug if project else None,
        agent=cat.agent.key,
        rule=cat.agent.rule,
        skills=skills,
        security_groups=sum(1 for g in cat.resolution.groups if g.security),
        look_alike_groups=len(cat.resolution.look_alikes),
        listing=ListingOut(
            profile=profile.key,
            window_tokens=listing.window_tokens,
            budget=listing.budget,
            chars_used=listing.chars_used,
            full_total=listing.full_total,
            level=int(listing.level),
            dropped=listing.dropped,
            event=dict(listing.event()),
            entries=[
                {
                    "id": int(e.key),
                    "name": e.name,
                    "state": e.state.value,
                    "chars": e.chars,
                    "full_chars": e.full_chars,
                }
                for e in listing.entries
            ],
            text=listing.text,
        ),
    )
