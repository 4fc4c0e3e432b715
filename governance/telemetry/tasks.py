"""Celery tasks of the telemetry concern: thin, idempotent wrappers around services."""

from __future__ import annotations

from datetime import date

from celery import shared_task
from django.conf import settings

from governance.telemetry import services


@shared_task(name="telemetry.rollup_day", acks_late=True)
def rollup_day(day: str) -> dict[str, object]:
    result = services.rollup_compute(day=date.fromisoformat(day))
    if result.still_pending:  # events arrived while computing: go again shortly
        services.rollups_enqueue([result.day])
    return {"day": day, "skill_rows": result.skill_rows, "still_pending": result.still_pending}


@shared_task(name="telemetry.rollups_sweep", acks_late=True)
def rollups_sweep() -> list[str]:
    """Beat: compute the days still pending (lost messages, broker outages)."""
    grace = settings.TELEMETRY_ROLLUP_DELAY_SECONDS + 30  # leave the queued tasks their turn
    return [r.day.isoformat() for r in services.rollups_sweep(older_than_seconds=grace)]


@shared_task(name="telemetry.retention", acks_late=True)
def retention() -> dict[str, object]:
    result = services.events_retention_apply()
    return {"cutoff": result.cutoff.isoformat(), "partitions_dropped": len(result.partitions_dropped)}


@shared_task(name="telemetry.partitions_prepare", acks_late=True)
def partitions_prepare() -> list[str]:
    return [day.isoformat() for day in services.partitions_prepare()]
