"""Template helpers of the policy concern, for pages of other concerns (the catalog)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def permission_badge(permissions: Mapping[int, Any] | None, skill_id: int) -> str:
    """Decision and risk badges for one skill, from ``skill_permissions(...)``."""
    permission = (permissions or {}).get(skill_id)
    if permission is None:
        return format_html('<span class="badge" title="{}">—</span>', "not evaluated")
    decision = permission.decision.decision.value
    risk = permission.risk.level.value
    why = "; ".join(r.message for r in permission.decision.reasons)
    return format_html(
        '<span class="badge decision-{}" title="{}" data-decision="{}">{}</span> '
        '<span class="badge risk-{}" title="risk">{} risk</span>',
        decision,
        why,
        decision,
        decision,
        risk,
        risk,
    )
