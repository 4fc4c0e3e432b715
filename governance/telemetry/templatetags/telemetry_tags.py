"""Template helpers of the telemetry concern, for its own pages and for the catalog's skill page.

On any page: ``{% load telemetry_tags %}`` then ``{% skill_health_badge skill %}`` (a small status
badge) or ``{% skill_health_panel skill %}`` (the per-skill health panel with its chart).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from governance.telemetry import selectors
from portal.accounts.services import user_is_admin

register = template.Library()

STATUS_CLASS = {"healthy": "badge-ok", "degraded": "badge-warning", "stale": "badge-info", "unused": "badge"}
STATUS_TITLE = {
    "healthy": "Used recently, no degradation reported",
    "degraded": "Listing entry cut, tails lost at compaction, or ghost re-invocations",
    "stale": f"Not used for {selectors.STALE_AFTER_DAYS} days or more (never deleted)",
    "unused": "No telemetry for this skill yet",
}


@register.filter
def percent(value: Any) -> str:
    if value is None or value == "":
        return "–"
    try:
        return f"{100 * float(value):.0f}%"
    except (TypeError, ValueError):
        return "–"


@register.simple_tag
def days_ago(days: float | None) -> str:
    if days is None:
        return "never"
    if days < 1:
        return "today"
    return f"{int(days)} d ago"


@register.simple_tag
def trend(value: float | None) -> SafeString:
    if value is None:
        return mark_safe('<span class="muted">–</span>')
    arrow = "▲" if value > 0.05 else "▼" if value < -0.05 else "▶"
    return format_html(
        '<span title="last 7 days vs the 7 before">{} {}%</span>', arrow, f"{100 * value:+.0f}"
    )


def _badge(status: str) -> SafeString:
    return format_html(
        '<span class="badge {}" data-testid="health-badge" title="{}">{}</span>',
        STATUS_CLASS[status],
        STATUS_TITLE[status],
        status,
    )


@register.simple_tag
def status_badge(status: str) -> SafeString:
    return _badge(status if status in STATUS_CLASS else "unused")


@register.simple_tag
def health_status_badge(row: selectors.SkillHealth) -> SafeString:
    return _badge(row.status)


def _health_for(skill: Any, days: int) -> selectors.SkillHealth | None:
    window = selectors.Window.last(days)
    if isinstance(skill, str):
        rows = selectors.skill_health(window=window, skill_key=skill)
    else:
        rows = selectors.skill_health(window=window, skill_id=int(skill.pk))
    if not rows:
        return None
    if len(rows) == 1:
        return rows[0]
    return selectors.merge_health(rows)


@register.simple_tag
def skill_health_badge(skill: Any, days: int = 30) -> SafeString:
    """A status badge for a catalog ``Skill`` (or a telemetry skill key): healthy, degraded, stale."""
    health = _health_for(skill, days)
    return _badge(health.status if health is not None else "unused")


@register.inclusion_tag("telemetry/_skill_health_panel.html", takes_context=True)
def skill_health_panel(context: template.Context, skill: Any, days: int = 30) -> dict[str, Any]:
    """The per-skill health panel (numbers, a 30-day chart, cost for admins) for the skill page."""
    request = context.get("request")
    health = _health_for(skill, days)
    window = selectors.Window.last(days)
    if isinstance(skill, str):
        series = selectors.skill_series(window=window, skill_key=skill)
        key = skill
    else:
        series = selectors.skill_series(window=window, skill_id=int(skill.pk))
        key = health.skill_key if health is not None else ""
    chart_id = "skill-health-" + "".join(c if c.isalnum() else "-" for c in key or "none")
    return {
        "health": health,
        "series": series,
        "days": days,
        "skill_key": key,
        "chart_id": chart_id,
        "data_id": f"{chart_id}-data",
        "show_cost": request is not None and user_is_admin(request.user),
        "stale_after": selectors.STALE_AFTER_DAYS,
    }
