"""The home dashboard collects one card per fact worth seeing first, from every concern.

Extension point (how to add a card for your concern):
    In governance/<concern>/selectors.py define

        def dashboard_cards(user: User) -> list[Card]:
            return [Card(title="Skills", value=str(n), text="in the catalogue", url=reverse("catalog"))]

    Return [] for a user who may not see it (respect the role: a developer never gets an admin card).
    Keep it to one or two cheap aggregate queries: the home page runs it on every visit.
    Nothing to register: home calls it for every installed ``governance.*`` app that defines it.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from django.apps import apps
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from portal.accounts.models import ApiToken
from portal.accounts.services import user_is_admin
from portal.health import health_check

logger = logging.getLogger(__name__)

Tone = Literal["", "ok", "info", "warning", "error"]


@dataclass(frozen=True)
class Card:
    title: str
    value: str  # the headline figure or word, e.g. "42" or "ok"
    text: str = ""  # one line saying what the value means
    url: str = ""  # where to look further ("" = no link)
    tone: Tone = ""  # colours the value: ok, info, warning, error
    items: list[str] = field(default_factory=list)  # up to five short lines (e.g. the worst offenders)
    order: int = 100  # lower comes first


CardProvider = Callable[[User], list[Card]]


def card_providers() -> list[tuple[str, CardProvider]]:
    """``dashboard_cards`` of every installed governance app that defines one, in INSTALLED_APPS order."""
    providers = []
    for config in apps.get_app_configs():
        if not config.name.startswith("governance."):
            continue
        module_name = f"{config.name}.selectors"
        if importlib.util.find_spec(module_name) is None:
            continue
        provider = getattr(importlib.import_module(module_name), "dashboard_cards", None)
        if callable(provider):
            providers.append((config.label, provider))
    return providers


def foundation_cards(user: User) -> list[Card]:
    active = ApiToken.objects.filter(user=user, revoked_at__isnull=True).count()
    cards = [
        Card(
            title="Your API tokens",
            value=str(active),
            text="active token" + ("" if active == 1 else "s") + " for agents, CI and the CLI",
            url=reverse("tokens"),
            order=900,
        )
    ]
    if user_is_admin(user):
        health = health_check()
        problems = [
            f"{name}: {state}"
            for name, state in (
                ("database", health.database),
                ("broker", health.broker),
                ("worker", health.worker),
            )
            if state not in {"ok", "eager"}
        ]
        cards.append(
            Card(
                title="System health",
                value="ok" if not problems else "degraded",
                text="database, broker and worker" if not problems else "see /healthz?deep=1",
                url=reverse("healthz") + "?deep=1",
                tone="ok" if not problems else "error",
                items=problems,
                order=950,
            )
        )
        users = User.objects.filter(is_active=True).count()
        cards.append(
            Card(
                title="Users",
                value=str(users),
                text="active accounts; manage roles and teams in Admin",
                url=reverse("admin:auth_user_changelist"),
                order=960,
            )
        )
    return cards


def dashboard_cards(user: User) -> list[Card]:
    """Every card this user may see, ordered. A failing provider costs its card, not the page."""
    cards = foundation_cards(user)
    for label, provider in card_providers():
        try:
            cards.extend(provider(user))
        except Exception:  # one broken concern must not take the landing page down; it is logged
            logger.exception("dashboard_cards of %s failed", label)
            cards.append(
                Card(title=label.capitalize(), value="unavailable", text="see the server log", tone="error")
            )
    return sorted(cards, key=lambda card: card.order)


def generated_at() -> str:
    return timezone.now().strftime("%Y-%m-%d %H:%M UTC")
