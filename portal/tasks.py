"""Site-level Celery tasks (thin: the work is in portal.health)."""

from __future__ import annotations

from celery import shared_task

from portal.health import heartbeat_record


@shared_task(name="portal.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Scheduled by beat every minute; proves beat → broker → worker → database works end to end."""
    heartbeat_record()
