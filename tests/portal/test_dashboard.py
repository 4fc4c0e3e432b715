"""The home dashboard: cards per role, and the extension point other concerns use."""

from __future__ import annotations

import importlib.machinery
import sys
import types
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from portal.dashboard import Card, card_providers
from portal.health import health_check


def card_titles(client: Client) -> list[str]:
    response = client.get("/")
    assert response.status_code == 200
    return [card.title for card in response.context["cards"]]


@pytest.mark.django_db
def test_developer_sees_own_tokens_not_admin_cards(
    developer_client: Client, developer_user: User, make_token: Any
) -> None:
    make_token(developer_user, "skills:read")
    response = developer_client.get("/")
    cards = {card.title: card for card in response.context["cards"]}
    assert cards["Your API tokens"].value == "1"
    assert "System health" not in cards
    assert "Users" not in cards
    assert 'data-testid="card"' in response.content.decode()


@pytest.mark.django_db
def test_admin_sees_health_and_users(admin_client: Client, developer_user: User) -> None:
    cards = {card.title: card for card in admin_client.get("/").context["cards"]}
    health = health_check()
    assert cards["System health"].value == ("ok" if health.deep_healthy else "degraded")
    assert cards["System health"].tone == ("ok" if health.deep_healthy else "error")
    assert cards["Users"].value == str(User.objects.filter(is_active=True).count())


def fake_selectors(monkeypatch: pytest.MonkeyPatch, provider: Any) -> None:
    name = "governance.audit.selectors"
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    module.dashboard_cards = provider  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, name, module)


@pytest.mark.django_db
def test_a_concern_adds_cards_through_its_selectors(
    monkeypatch: pytest.MonkeyPatch, developer_client: Client
) -> None:
    def provider(user: User) -> list[Card]:
        return [
            Card(title=f"Ledger for {user.username}", value="7", text="entries", order=1, items=["a", "b"])
        ]

    fake_selectors(monkeypatch, provider)
    assert ("audit", provider) in card_providers()
    titles = card_titles(developer_client)
    assert titles[0] == "Ledger for dana-dev", "cards are ordered by their order field"
    assert "<li>b</li>" in developer_client.get("/").content.decode()


@pytest.mark.django_db
def test_a_failing_provider_costs_its_card_not_the_page(
    monkeypatch: pytest.MonkeyPatch, developer_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    def provider(user: User) -> list[Card]:
        raise RuntimeError("selector bug")

    fake_selectors(monkeypatch, provider)
    response = developer_client.get("/")
    assert response.status_code == 200
    broken = [card for card in response.context["cards"] if card.title == "Audit"]
    assert broken and broken[0].value == "unavailable"
    assert "dashboard_cards of audit failed" in caplog.text
