from __future__ import annotations

from django import template
from django.urls import NoReverseMatch, reverse

register = template.Library()


@register.simple_tag
def nav_url(name: str) -> str:
    """The URL of a top-level section, or "#" while that section's pages do not exist yet."""
    try:
        return reverse(name)
    except NoReverseMatch:
        return "#"
