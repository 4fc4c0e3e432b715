"""The heartbeat goes through the real path: broker → worker thread → database → /healthz."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from portal.accounts.models import Heartbeat
from portal.health import STALE_AFTER, WORKER
from portal.tasks import heartbeat
from tests.conftest import wait_until


@pytest.mark.worker
def test_worker_records_heartbeat_and_healthz_reports_it(celery_worker_live: Any) -> None:
    client = Client()
    before = client.get("/healthz?deep=1")
    assert before.status_code == 503
    assert before.json()["worker"] == "unknown: no heartbeat yet"

    with transaction.atomic():
        transaction.on_commit(heartbeat.delay)

    assert wait_until(lambda: Heartbeat.objects.filter(name=WORKER).exists()), "the worker never ran the task"
    seen_at = Heartbeat.objects.get(name=WORKER).seen_at
    assert timezone.now() - seen_at < timedelta(seconds=30)
    response = client.get("/healthz?deep=1")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "broker": "ok", "worker": "ok"}


@pytest.mark.worker
def test_stale_heartbeat_fails_the_deep_check_only(celery_worker_live: Any) -> None:
    Heartbeat.objects.create(name=WORKER, seen_at=timezone.now() - STALE_AFTER - timedelta(seconds=5))
    client = Client()
    deep = client.get("/healthz?deep=1")
    assert deep.status_code == 503
    assert deep.json()["worker"].startswith("stale: last heartbeat")
    shallow = client.get("/healthz")
    assert shallow.status_code == 200, "a stalled worker must not take the web tier out of rotation"

    with transaction.atomic():
        transaction.on_commit(heartbeat.delay)
    assert wait_until(lambda: timezone.now() - Heartbeat.objects.get(name=WORKER).seen_at < STALE_AFTER)
    assert client.get("/healthz?deep=1").status_code == 200
    assert Heartbeat.objects.filter(name=WORKER).count() == 1


@pytest.mark.django_db
def test_heartbeat_updates_one_row_in_place() -> None:
    heartbeat()
    first = Heartbeat.objects.get(name=WORKER).seen_at
    heartbeat()
    assert Heartbeat.objects.filter(name=WORKER).count() == 1
    assert Heartbeat.objects.get(name=WORKER).seen_at >= first
