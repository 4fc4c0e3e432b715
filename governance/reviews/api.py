"""API router of the reviews concern (mounted at /api/v1/reviews by portal/api.py)."""

from ninja import Router

router = Router(tags=["reviews"])
