"""API router of the skills concern (mounted at /api/v1/skills by portal/api.py)."""

from ninja import Router

router = Router(tags=["skills"])
