"""API tokens end to end: created on the Tokens page or by the command, shown once, stored hashed,
scoped, revocable, sent as ``Authorization: Bearer``."""

from __future__ import annotations

import re
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client

from portal.accounts.models import ApiToken, hash_token
from portal.accounts.services import VALID_SCOPES, token_create
from tests.conftest import bearer

TOKEN_RE = re.compile(r"sgp_[A-Za-z0-9_-]{40,}")


@pytest.fixture
def scoped_urls(settings: Any) -> None:
    settings.ROOT_URLCONF = "tests.portal.scoped_urls"


def raw_token_appears_in_database(raw: str) -> list[str]:
    """Every table and column whose text contains ``raw`` (there must be none)."""
    hits = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")  # noqa: S608 (names from introspection)
            columns = [col[0] for col in cursor.description]
            for row in cursor.fetchall():
                for column, value in zip(columns, row, strict=True):
                    if value is not None and raw in str(value):
                        hits.append(f"{table}.{column}")
    return hits


@pytest.mark.django_db
def test_tokens_page_creates_token_shown_once_and_stored_hashed(
    developer_client: Client, developer_user: User
) -> None:
    response = developer_client.post(
        "/account/tokens/", {"name": "laptop", "scopes": ["skills:read", "telemetry:write"]}
    )
    assert response.status_code == 200
    raw = TOKEN_RE.search(response.content.decode())
    assert raw is not None, "the new token must be shown"
    token = ApiToken.objects.get(user=developer_user)
    assert token.name == "laptop"
    assert token.scopes == ["skills:read", "telemetry:write"]
    assert token.token_hash == hash_token(raw.group())
    assert raw.group().startswith(token.prefix)
    assert raw_token_appears_in_database(raw.group()) == []

    again = developer_client.get("/account/tokens/")
    assert raw.group() not in again.content.decode(), "a token is shown once, never again"
    assert token.prefix in again.content.decode()


@pytest.mark.django_db
def test_tokens_page_refuses_missing_and_unknown_scopes(developer_client: Client) -> None:
    none = developer_client.post("/account/tokens/", {"name": "x"})
    assert none.status_code == 400
    assert "This field is required" in none.content.decode()
    unknown = developer_client.post("/account/tokens/", {"name": "x", "scopes": ["root:all"]})
    assert unknown.status_code == 400
    assert "Select a valid choice" in unknown.content.decode()
    assert ApiToken.objects.count() == 0


@pytest.mark.django_db
def test_create_token_command_prints_the_token_once(developer_user: User) -> None:
    out = StringIO()
    call_command("create_token", user="dana-dev", scopes="telemetry:write,skills:read", stdout=out)
    printed = out.getvalue().strip()
    assert TOKEN_RE.fullmatch(printed), f"the command prints only the token, got {printed!r}"
    token = ApiToken.objects.get(user=developer_user)
    assert token.scopes == ["skills:read", "telemetry:write"]
    assert token.token_hash == hash_token(printed)
    assert raw_token_appears_in_database(printed) == []
    me = Client().get("/api/v1/me", **bearer(printed))
    assert me.status_code == 200
    assert me.json() == {
        "username": "dana-dev",
        "role": "developer",
        "scopes": ["skills:read", "telemetry:write"],
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("scopes", "message"),
    [
        (
            "skills:read,root:all",
            "unknown scope(s): root:all; valid scopes: " + ", ".join(sorted(VALID_SCOPES)),
        ),
        (" , ", "at least one scope is required"),
    ],
)
def test_create_token_command_explains_bad_scopes(developer_user: User, scopes: str, message: str) -> None:
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("create_token", user="dana-dev", scopes=scopes, stdout=StringIO())
    assert ApiToken.objects.count() == 0


@pytest.mark.django_db
def test_create_token_command_explains_unknown_user() -> None:
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("create_token", user="nobody", scopes="skills:read", stdout=StringIO())


@pytest.mark.django_db
def test_bearer_me_and_bad_tokens(developer_user: User, make_token: Any) -> None:
    raw = make_token(developer_user, "policy:read")
    assert Client().get("/api/v1/me", **bearer(raw)).json()["scopes"] == ["policy:read"]
    for bad in ["", "sgp_not-a-real-token", raw + "x", "Basic " + raw]:
        response = Client().get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {bad}")
        assert response.status_code == 401, bad
    assert Client().get("/api/v1/me", HTTP_AUTHORIZATION=raw).status_code == 401, (
        "the Bearer scheme is required"
    )


@pytest.mark.django_db
def test_scopes_are_enforced(scoped_urls: None, developer_user: User, make_token: Any) -> None:
    reader = make_token(developer_user, "skills:read")
    writer = make_token(developer_user, "skills:write", "telemetry:write")
    client = Client()
    assert client.get("/api/scoped-test/read", **bearer(reader)).status_code == 200
    assert client.post("/api/scoped-test/write", **bearer(reader)).status_code == 401
    assert client.get("/api/scoped-test/read", **bearer(writer)).status_code == 401
    assert client.post("/api/scoped-test/write", **bearer(writer)).json() == {"user": "dana-dev"}
    assert client.post("/api/scoped-test/machine", **bearer(writer)).status_code == 200


@pytest.mark.django_db
def test_token_only_endpoints_refuse_a_session(scoped_urls: None, developer_client: Client) -> None:
    assert developer_client.post("/api/scoped-test/machine").status_code == 401


@pytest.mark.django_db
def test_inactive_user_tokens_stop_working(developer_user: User, make_token: Any) -> None:
    raw = make_token(developer_user, "skills:read")
    developer_user.is_active = False
    developer_user.save()
    assert Client().get("/api/v1/me", **bearer(raw)).status_code == 401


@pytest.mark.django_db
def test_revoked_token_is_refused(developer_client: Client, developer_user: User, make_token: Any) -> None:
    raw = make_token(developer_user, "skills:read")
    token = ApiToken.objects.get(user=developer_user)
    assert Client().get("/api/v1/me", **bearer(raw)).status_code == 200

    response = developer_client.post(f"/account/tokens/{token.pk}/revoke/")
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert Client().get("/api/v1/me", **bearer(raw)).status_code == 401
    assert "revoked" in developer_client.get("/account/tokens/").content.decode()


@pytest.mark.django_db
def test_nobody_revokes_someone_elses_token(
    developer_user: User, lead_client: Client, admin_client: Client, make_token: Any
) -> None:
    raw = make_token(developer_user, "skills:read")
    token = ApiToken.objects.get(user=developer_user)
    assert lead_client.post(f"/account/tokens/{token.pk}/revoke/").status_code == 404
    assert admin_client.post(f"/account/tokens/{token.pk}/revoke/").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None
    assert Client().get("/api/v1/me", **bearer(raw)).status_code == 200


@pytest.mark.django_db
def test_revoke_is_post_only(developer_client: Client, developer_user: User) -> None:
    token, _ = token_create(user=developer_user, name="t", scopes="skills:read")
    assert developer_client.get(f"/account/tokens/{token.pk}/revoke/").status_code == 405
    token.refresh_from_db()
    assert token.revoked_at is None


@pytest.mark.django_db
def test_tokens_page_lists_only_own_tokens(
    developer_client: Client, lead_user: User, make_token: Any
) -> None:
    token_create(user=lead_user, name="lead-secret-laptop", scopes="skills:read")
    assert "lead-secret-laptop" not in developer_client.get("/account/tokens/").content.decode()


@pytest.mark.django_db
def test_use_is_recorded_at_most_once_a_minute(developer_user: User, make_token: Any) -> None:
    raw = make_token(developer_user, "skills:read")
    token = ApiToken.objects.get(user=developer_user)
    assert token.last_used_at is None
    assert Client().get("/api/v1/me", **bearer(raw)).status_code == 200
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None
    assert Client().get("/api/v1/me", **bearer(raw)).status_code == 200
    token.refresh_from_db()
    assert token.last_used_at == first, "a second use within a minute writes nothing"
