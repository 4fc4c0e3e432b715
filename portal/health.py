"""What /healthz reports: the database, the broker and the worker, each as a short state string.

Every probe reports instead of raising: this module exists to say what is broken.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from portal.accounts.models import Heartbeat

WORKER = "worker"
# Beat enqueues the heartbeat every HEARTBEAT_SECONDS; three missed beats mean the worker (or beat) is down.
HEARTBEAT_SECONDS = 60.0
STALE_AFTER = timedelta(seconds=3 * HEARTBEAT_SECONDS)


@dataclass(frozen=True)
class Health:
    database: str
    broker: str
    worker: str

    @property
    def healthy(self) -> bool:
        """Database and broker: what every web request may need. The worker is reported, not required."""
        return self.database == "ok" and self.broker in {"ok", "eager"}

    @property
    def deep_healthy(self) -> bool:
        return self.healthy and self.worker in {"ok", "eager"}


def database_state() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any driver error means the database is unusable
        return f"down: {type(exc).__name__}"
    return "ok"


def broker_state() -> str:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return "eager"
    from portal.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # any transport error means the broker is unusable
        return f"down: {type(exc).__name__}"
    return "ok"


def worker_state() -> str:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return "eager"
    try:
        seen_at = Heartbeat.objects.filter(name=WORKER).values_list("seen_at", flat=True).first()
    except Exception as exc:  # the database state already says why
        return f"unknown: {type(exc).__name__}"
    if seen_at is None:
        return "unknown: no heartbeat yet"
    age = timezone.now() - seen_at
    if age > STALE_AFTER:
        return f"stale: last heartbeat {int(age.total_seconds())}s ago"
    return "ok"


def health_check() -> Health:
    database = database_state()
    worker = worker_state() if database == "ok" else "unknown: database down"
    return Health(database=database, broker=broker_state(), worker=worker)


def heartbeat_record(*, name: str = WORKER) -> Heartbeat:
    """Record that ``name`` is alive now (one row per component, updated in place)."""
    heartbeat, _ = Heartbeat.objects.update_or_create(name=name, defaults={"seen_at": timezone.now()})
    return heartbeat
