"""CSRF stays on: session POSTs to pages and to the API need the token; bearer calls do not."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from portal.accounts.models import ApiToken
from portal.accounts.services import token_create
from tests.conftest import bearer


@pytest.fixture
def strict_client(developer_user: User) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(developer_user)
    return client


def csrf_from(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return str(client.cookies["csrftoken"].value)


@pytest.mark.django_db
def test_page_post_without_csrf_token_is_refused(strict_client: Client) -> None:
    response = strict_client.post("/account/tokens/", {"name": "x", "scopes": ["skills:read"]})
    assert response.status_code == 403
    assert ApiToken.objects.count() == 0


@pytest.mark.django_db
def test_page_post_with_csrf_token_is_accepted(strict_client: Client) -> None:
    token = csrf_from(strict_client, "/account/tokens/")
    response = strict_client.post(
        "/account/tokens/", {"name": "x", "scopes": ["skills:read"], "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 200
    assert ApiToken.objects.count() == 1


@pytest.mark.django_db
def test_revoke_without_csrf_token_is_refused(strict_client: Client, developer_user: User) -> None:
    token, _ = token_create(user=developer_user, name="t", scopes="skills:read")
    assert strict_client.post(f"/account/tokens/{token.pk}/revoke/").status_code == 403
    token.refresh_from_db()
    assert token.revoked_at is None


@pytest.mark.django_db
def test_logout_needs_csrf(strict_client: Client) -> None:
    assert strict_client.post("/accounts/logout/").status_code == 403
    assert strict_client.get("/account/tokens/").status_code == 200, "still logged in"


@pytest.mark.django_db
def test_login_form_needs_csrf(developer_user: User) -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"username": "dana-dev", "password": "correct-horse-battery"})
    assert response.status_code == 403


@pytest.fixture
def scoped_urls(settings: Any) -> None:
    settings.ROOT_URLCONF = "tests.portal.scoped_urls"


@pytest.mark.django_db
def test_api_session_post_needs_csrf(scoped_urls: None, strict_client: Client) -> None:
    refused = strict_client.post("/api/scoped-test/write")
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["detail"]
    token = csrf_from(strict_client, "/account/tokens/")
    accepted = strict_client.post("/api/scoped-test/write", HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 200
    assert accepted.json() == {"user": "dana-dev"}


@pytest.mark.django_db
def test_api_session_get_needs_no_csrf(scoped_urls: None, strict_client: Client) -> None:
    assert strict_client.get("/api/scoped-test/read").status_code == 200


@pytest.mark.django_db
def test_api_bearer_post_needs_no_csrf(scoped_urls: None, developer_user: User, make_token: Any) -> None:
    raw = make_token(developer_user, "skills:write")
    response = Client(enforce_csrf_checks=True).post("/api/scoped-test/write", **bearer(raw))
    assert response.status_code == 200
