"""Pages of the telemetry concern: fleet health, per-skill health, by agent version, ingest status.

Every logged-in member sees health; only admins see organisation-wide cost.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from governance.telemetry import selectors
from governance.telemetry.models import FleetDaily, SkillDay
from governance.telemetry.partitions import partitions_list
from portal.accounts.models import Project, Team
from portal.accounts.services import user_is_admin

WINDOWS = (7, 30, 90)
TABLE_LIMIT = 50  # skills listed by frecency (a fleet can report thousands of private names)


def _small_int(raw: str) -> bool:
    """ASCII digits that fit a database integer (``"²".isdigit()`` is true; 5,000 digits overflow)."""
    return raw.isascii() and raw.isdigit() and len(raw) <= 18


def _window(request: HttpRequest) -> tuple[int, selectors.Window]:
    raw = request.GET.get("days", "30")
    days = int(raw) if _small_int(raw) and int(raw) in WINDOWS else 30
    return days, selectors.Window.last(days)


def _filters(request: HttpRequest) -> selectors.Filters:
    team = request.GET.get("team", "")
    project = request.GET.get("project", "")
    return selectors.Filters(
        team_id=int(team) if _small_int(team) else None,
        project_id=int(project) if _small_int(project) else None,
        agent_version=request.GET.get("agent_version", "")[:64],
    )


def _filter_choices() -> dict[str, Any]:
    versions = (
        FleetDaily.objects.exclude(agent_version="")
        .order_by("-agent_version")
        .values_list("agent_version", flat=True)
        .distinct()[:50]
    )
    return {
        "teams": Team.objects.order_by("name"),
        "projects": Project.objects.order_by("name"),
        "version_choices": list(versions),
        "windows": WINDOWS,
    }


@require_GET
def health(request: HttpRequest) -> HttpResponse:
    days, window = _window(request)
    filters = _filters(request)
    group = request.GET.get("group", "")
    group = group if group in selectors.GROUPS else ""
    is_admin = user_is_admin(request.user)
    ranking = selectors.skill_ranking(window=window, filters=filters, limit=TABLE_LIMIT)
    rows = ranking.rows
    if group:
        order = {row.skill_key: index for index, row in enumerate(ranking.rows)}
        rows = selectors.skill_health(window=window, filters=filters, group=group, keys=order)
        rows.sort(key=lambda r: (order.get(r.skill_key, 0), -r.invocations))
    series = selectors.fleet_series(window=window, filters=filters)
    if not is_admin:
        series.pop("cost")
    teams = dict(Team.objects.values_list("id", "name"))
    projects = dict(Project.objects.values_list("id", "name"))
    for row in rows:
        if group == "team":
            row.group_label = teams.get(row.group, "no team")
        elif group == "project":
            row.group_label = projects.get(row.group, "no project")
        elif group:
            row.group_label = row.group or "unknown"
    context = {
        "days": days,
        "window": window,
        "filters": filters,
        "group": group,
        "rows": rows,
        "total_skills": ranking.total,
        "table_limit": TABLE_LIMIT,
        "degraded": ranking.degraded,
        "costly": ranking.costly if is_admin else [],
        "stale": selectors.stale_catalog_skills(),
        "totals": selectors.fleet_totals(window=window, filters=filters),
        "series": series,
        "show_cost": is_admin,
        "stale_after": selectors.STALE_AFTER_DAYS,
        **_filter_choices(),
    }
    return render(request, "telemetry/health.html", context)


@require_GET
def health_agents(request: HttpRequest) -> HttpResponse:
    days, window = _window(request)
    filters = _filters(request)
    versions = selectors.health_by_agent_version(window=window, filters=filters)
    chart = {
        "labels": [f"{v.agent} {v.agent_version}" for v in versions][::-1],
        "degraded_share": [round(100 * v.degraded_share, 1) for v in versions][::-1],
        "cut_tails": [v.cut_tails for v in versions][::-1],
        "ghosts": [v.ghosts for v in versions][::-1],
    }
    context = {"days": days, "filters": filters, "versions": versions, "chart": chart, **_filter_choices()}
    return render(request, "telemetry/health_agents.html", context)


@require_GET
def health_skill(request: HttpRequest, skill_key: str) -> HttpResponse:
    days, window = _window(request)
    rows = selectors.skill_health(window=window, skill_key=skill_key)
    if not rows and not SkillDay.objects.filter(skill_key=skill_key).exists():
        raise Http404("no telemetry for this skill")
    by_version = selectors.skill_health(window=window, skill_key=skill_key, group="agent_version")
    by_team = selectors.skill_health(window=window, skill_key=skill_key, group="team")
    teams = dict(Team.objects.values_list("id", "name"))
    for row in by_team:
        row.group_label = teams.get(row.group, "no team")
    context = {
        "days": days,
        "skill_key": skill_key,
        "name": selectors.display_name(skill_key),
        "health": rows[0] if rows else None,
        "series": selectors.skill_series(window=window, skill_key=skill_key),
        "by_version": by_version,
        "by_team": by_team,
        "show_cost": user_is_admin(request.user),
        "windows": WINDOWS,
        "stale_after": selectors.STALE_AFTER_DAYS,
    }
    return render(request, "telemetry/health_skill.html", context)


@require_GET
def telemetry(request: HttpRequest) -> HttpResponse:
    days, window = _window(request)
    context = {
        "days": days,
        "windows": WINDOWS,
        "overview": selectors.ingest_overview(window=window),
        "partitions": partitions_list()[-14:],
        "partitioned": settings.IS_POSTGRES,
        "retention_days": settings.TELEMETRY_RETENTION_DAYS,
        "max_batch": settings.TELEMETRY_MAX_BATCH_EVENTS,
        "max_bytes": settings.TELEMETRY_MAX_BATCH_BYTES,
        "base_url": request.build_absolute_uri("/").rstrip("/"),
    }
    return render(request, "telemetry/telemetry.html", context)
