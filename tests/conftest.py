"""Shared fixtures: named actors, API tokens, a real Celery worker, and a real browser."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from portal.accounts.models import Membership, Organisation, Profile, Project, Role, Team
from portal.accounts.services import token_create

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


def _make_user(org: Org, username: str, role: Role, teams: list[Team]) -> User:
    user = User.objects.create_user(username=username, password=PASSWORD)
    Profile.objects.create(user=user, organisation=org.organisation, role=role)
    for team in teams:
        Membership.objects.create(user=user, team=team)
    return user


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


def bearer(raw: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


@pytest.fixture
def celery_worker_live(transactional_db: None) -> Iterator[Any]:
    """A real Celery worker thread consuming from the configured broker (Redis in CI).

    Skipped on the embedded default, where tasks run eagerly in-process.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("no broker configured: tasks run eagerly (set CELERY_BROKER_URL for a real worker)")
    from celery.contrib.testing.worker import start_worker

    from portal.celery import app

    app.control.purge()
    with start_worker(
        app, perform_ping_check=False, pool="solo", loglevel="WARNING", shutdown_timeout=10
    ) as worker:
        yield worker
