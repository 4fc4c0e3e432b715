"""API router of the policy concern (mounted at /api/v1/policy by portal/api.py)."""

from ninja import Router

router = Router(tags=["policy"])
