"""Template helpers of the catalog: ``{% load catalog_tags %}``."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()


@register.filter
def get_item(mapping: Mapping[Any, Any] | None, key: Any) -> Any:
    """``{{ mapping|get_item:key }}``: a dictionary lookup with a variable key ("" when absent)."""
    if not mapping:
        return ""
    return mapping.get(key, "")


@register.inclusion_tag("catalog/_dashboard_card.html")
def catalog_dashboard_card() -> dict[str, Any]:
    """The home page card: skills known, and trust crossings and look-alike names to look at."""
    from governance.skills.catalog_selectors import security_summary

    return {"summary": security_summary()}


@register.simple_tag
def status_pill(status: str) -> SafeString:
    """A resolution status (active, shadowed, hidden, conditional, rejected) as a coloured pill."""
    return format_html(
        '<span class="status status-{0}" data-status="{0}" title="{1}">{0}</span>',
        status,
        STATUS_TITLES.get(status, ""),
    )


STATUS_TITLES = {
    "active": "In the listing: the model can pick it",
    "shadowed": "A same-named copy wins: this one is never loaded",
    "hidden": "disable-model-invocation: out of the listing (zero listing cost), user /name only",
    "conditional": "paths: globs: out of the listing until a touched file matches",
    "rejected": "Invalid or denied: never loaded",
}


@register.simple_tag
def skill_url(skill_id: int) -> str:
    """The skill page URL (cached prefix: pages list hundreds of skills)."""
    return f"{_skill_prefix()}{int(skill_id)}/"


@lru_cache(maxsize=1)
def _skill_prefix() -> str:
    return reverse("catalog-skill", kwargs={"skill_id": 0})[: -len("0/")]
