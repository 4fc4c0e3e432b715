"""`make run` loads the demo with `seed_demo`: the accounts log in, and a second run adds nothing."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.test import Client

from portal.accounts.demo import DEMO_ACCOUNTS
from portal.accounts.models import Role
from portal.accounts.services import user_role

# Rows that legitimately change on every run (none of them demo data).
VOLATILE = {"sessions.Session", "admin.LogEntry", "accounts.Heartbeat"}


@pytest.fixture
def debug(settings: Any) -> None:
    settings.DEBUG = True  # the test runner turns DEBUG off; seed_demo runs only in development


def row_counts() -> dict[str, int]:
    return {
        model._meta.label: model._default_manager.count()
        for model in apps.get_models()
        if model._meta.label not in VOLATILE
    }


@pytest.mark.django_db
def test_seed_demo_accounts_log_in_and_a_second_run_adds_nothing(debug: None) -> None:
    # One test on purpose: seeding runs every concern's demo and is the slowest step of the suite.
    out = StringIO()
    call_command("seed_demo", stdout=out)
    printed = out.getvalue()
    first = row_counts()
    assert first["auth.User"] == len(DEMO_ACCOUNTS)
    for username, (role, password, _teams) in DEMO_ACCOUNTS.items():
        assert username in printed and password in printed
        client = Client()
        assert client.login(username=username, password=password), username
        assert user_role(client.get("/").wsgi_request.user) is role
    assert {role for role, _password, _teams in DEMO_ACCOUNTS.values()} == set(Role)

    call_command("seed_demo", stdout=StringIO())
    assert row_counts() == first


@pytest.mark.django_db
def test_seed_demo_refuses_with_debug_off(settings: Any) -> None:
    settings.DEBUG = False
    with pytest.raises(CommandError, match="refusing to load demo accounts with DEBUG off"):
        call_command("seed_demo", stdout=StringIO())
    assert not apps.get_model("auth", "User").objects.exists()
