"""Celery tasks of the skills concern: thin, idempotent wrappers around the services."""

from __future__ import annotations

from celery import shared_task

from governance.skills import services


@shared_task(name="skills.ingest_run_execute", acks_late=True)
def ingest_run_execute(run_id: int) -> str:
    """Carry out one pending ingest run; a run already claimed (or finished) is left alone."""
    run = services.ingest_run_execute(run_id=run_id)
    return "skipped" if run is None else str(run.status)


@shared_task(name="skills.ingest_runs_sweep")
def ingest_runs_sweep() -> int:
    """Re-enqueue pending runs whose message was lost (broker restart, crash before send)."""
    return len(services.ingest_runs_requeue())
