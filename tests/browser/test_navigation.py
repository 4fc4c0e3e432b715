from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COMMON_NAV = ["Catalog", "Health", "Reviews", "Policy", "Telemetry"]


def nav_labels(page: Any) -> list[str]:
    return [text.strip() for text in page.locator("[data-testid=main-nav] a").all_inner_texts()]


def test_anonymous_visitor_is_sent_to_login(page: Any) -> None:
    page.goto("/")
    assert "/accounts/login/" in page.url
    assert page.locator("[data-testid=main-nav]").count() == 0


def test_admin_sees_admin_entry(login: Any, admin_user: User) -> None:
    page = login(admin_user)
    assert nav_labels(page) == [*COMMON_NAV, "Sources", "Admin"]
    assert "admin" in page.inner_text("[data-testid=role]")


@pytest.mark.parametrize(("actor", "extra"), [("lead_user", ["Sources"]), ("developer_user", [])])
def test_non_admins_see_no_admin_entry(
    login: Any, actor: str, extra: list[str], request: pytest.FixtureRequest
) -> None:
    user = request.getfixturevalue(actor)
    page = login(user)
    assert nav_labels(page) == [*COMMON_NAV, *extra]


def test_wrong_password_is_refused(page: Any, developer_user: User) -> None:
    page.goto("/accounts/login/")
    page.fill("#id_username", developer_user.username)
    page.fill("#id_password", "wrong")
    page.click("button[type=submit]")
    assert page.locator("[role=alert]").inner_text().startswith("Your username and password did not match")
