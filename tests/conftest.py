"""Shared fixtures: named actors, API tokens, a real Celery worker, and a real browser."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from portal.accounts.models import Organisation, Project, Role, Team
from portal.accounts.services import token_create, user_create

PASSWORD = "correct-horse-battery"


@dataclass
class Org:
    organisation: Organisation
    payments: Team
    platform: Team
    payments_api: Project
    infra: Project


@pytest.fixture
def org(db: None) -> Org:
    organisation = Organisation.objects.create(name="Acme", slug="acme")
    payments = Team.objects.create(organisation=organisation, name="Payments", slug="payments")
    platform = Team.objects.create(organisation=organisation, name="Platform", slug="platform")
    payments_api = Project.objects.create(
        team=payments,
        name="payments-api",
        slug="payments-api",
        repository_url="https://github.com/acme/payments-api",
    )
    infra = Project.objects.create(
        team=platform, name="infra", slug="infra", repository_url="https://github.com/acme/infra"
    )
    return Org(organisation, payments, platform, payments_api, infra)


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    """Actors are created with passwords in most tests; a deliberately slow hash would dominate the
    suite's time (about 0.3 s a user), and no test measures the production hasher."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _make_user(org: Org, username: str, role: Role, teams: list[Team]) -> User:
    return user_create(
        username=username, password=PASSWORD, organisation=org.organisation, role=role, teams=teams
    )


@pytest.fixture
def admin_user(org: Org) -> User:
    """Alice administers policy, sources and users."""
    return _make_user(org, "alice-admin", Role.ADMIN, [org.platform])


@pytest.fixture
def lead_user(org: Org) -> User:
    """Liam leads the payments team: he approves changes to its projects."""
    return _make_user(org, "liam-lead", Role.LEAD, [org.payments])


@pytest.fixture
def developer_user(org: Org) -> User:
    """Dana develops on payments: she browses, cannot approve or change policy."""
    return _make_user(org, "dana-dev", Role.DEVELOPER, [org.payments])


@pytest.fixture
def outsider_user(org: Org) -> User:
    """Olga leads another team: she must not approve for payments."""
    return _make_user(org, "olga-outsider", Role.LEAD, [org.platform])


def _logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def admin_client(admin_user: User) -> Client:
    return _logged_in(admin_user)


@pytest.fixture
def lead_client(lead_user: User) -> Client:
    return _logged_in(lead_user)


@pytest.fixture
def developer_client(developer_user: User) -> Client:
    return _logged_in(developer_user)


@pytest.fixture
def outsider_client(outsider_user: User) -> Client:
    return _logged_in(outsider_user)


@pytest.fixture
def make_token() -> Callable[..., str]:
    """``make_token(user, "skills:read", ...)`` → a raw bearer token with those scopes."""

    def make(user: User, *scopes: str) -> str:
        _, raw = token_create(user=user, name="test", scopes=list(scopes))
        return raw

    return make


def bearer(raw: str) -> dict[str, Any]:
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


@pytest.fixture
def celery_worker_live(transactional_db: None) -> Iterator[Any]:
    """A real Celery worker, in a thread of this process, consuming from the configured broker.

    How to use it (PostgreSQL + Redis run; skipped on the embedded default, where tasks run
    eagerly in-process and a test of the task itself needs no fixture):

        @pytest.mark.worker
        def test_ingest_runs_on_the_worker(celery_worker_live, admin_client):
            admin_client.post(...)                     # enqueues with transaction.on_commit
            assert wait_until(lambda: IngestRun.objects.filter(status="done").exists())

    - ``transactional_db``: the worker thread has its own database connection, so it only sees
      committed rows; the test database is flushed afterwards (no test transaction to roll back).
    - Enqueue with ``transaction.on_commit`` as production code does; in this mode commits are real.
    - Poll the database for the effect (there is no result backend); time out in seconds, not minutes.
    - The broker queue is purged before the worker starts, so leftovers of other tests never run here;
      use your own Redis database number (CELERY_BROKER_URL=redis://127.0.0.1:6379/N).
    - Tasks are found by ``app.autodiscover_tasks()``: put them in ``governance/<concern>/tasks.py``.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("no broker configured: tasks run eagerly (set CELERY_BROKER_URL for a real worker)")
    from celery.contrib.testing.worker import start_worker
    from celery.signals import task_postrun
    from django.db import connections

    from portal.celery import app

    def close_worker_connections(**kwargs: Any) -> None:
        # The worker thread's connections would otherwise outlive the test and block dropping the
        # test database; closing after each task is cheap at test scale.
        connections.close_all()

    task_postrun.connect(close_worker_connections, weak=False)
    app.loader.import_default_modules()
    app.control.purge()
    try:
        with start_worker(
            app, perform_ping_check=False, pool="solo", loglevel="WARNING", shutdown_timeout=10
        ) as worker:
            yield worker
    finally:
        task_postrun.disconnect(close_worker_connections)


def wait_until(predicate: Callable[[], object], timeout: float = 15.0, interval: float = 0.1) -> bool:
    """Poll ``predicate`` until it is truthy or ``timeout`` seconds pass (for effects of worker tasks)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
