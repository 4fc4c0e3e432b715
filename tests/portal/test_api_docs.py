"""The OpenAPI document and the interactive docs are for the organisation's users and tools only."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.conftest import bearer

pytestmark = pytest.mark.django_db


def test_anonymous_tool_gets_401_for_the_openapi_document() -> None:
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 401
    assert response.json() == {"detail": "Unauthorized"}


def test_anonymous_browser_is_sent_to_login_from_the_docs() -> None:
    response = Client().get("/api/v1/docs")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/api/v1/docs")


def test_a_developer_session_reads_the_docs_and_the_document(developer_client: Client) -> None:
    assert developer_client.get("/api/v1/docs").status_code == 200
    document = developer_client.get("/api/v1/openapi.json").json()
    assert "/api/v1/telemetry/events" in document["paths"]


def test_any_active_token_reads_the_document_and_a_revoked_one_does_not(
    developer_user: User, make_token: Callable[..., str]
) -> None:
    raw = make_token(developer_user, "telemetry:write")
    assert Client().get("/api/v1/openapi.json", **bearer(raw)).status_code == 200

    developer_user.api_tokens.update(revoked_at="2026-01-01T00:00:00Z")
    assert Client().get("/api/v1/openapi.json", **bearer(raw)).status_code == 401
    assert Client().get("/api/v1/openapi.json", **bearer("sgp_not-a-token")).status_code == 401
