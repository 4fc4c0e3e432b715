"""API router of the telemetry concern (mounted at /api/v1/telemetry by portal/api.py)."""

from ninja import Router

router = Router(tags=["telemetry"])
