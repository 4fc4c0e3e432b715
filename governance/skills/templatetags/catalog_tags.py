"""Template helpers of the catalog: ``{% load catalog_tags %}``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

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
