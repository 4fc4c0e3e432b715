"""Celery tasks of the reviews concern: thin, idempotent wrappers around services."""

from __future__ import annotations

from celery import shared_task

from governance.reviews import services


@shared_task(name="reviews.deliver", acks_late=True)
def deliver(delivery_id: int) -> str:
    """Deliver one approved version; a second run of the same delivery does nothing."""
    delivery = services.delivery_run(delivery_id=delivery_id)
    return delivery.state if delivery is not None else "skipped"


@shared_task(name="reviews.sweep_deliveries")
def sweep_deliveries() -> int:
    """Re-enqueue deliveries still pending in the database (a lost message, a worker restart)."""
    return len(services.deliveries_sweep())
