"""Download of the compiled managed settings through the API, with a checksum."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from governance.policy.services import policy_draft_update, policy_publish
from tests.engine.settings_schema import validate_settings
from tests.engine.test_managed_settings import EVERY_FEATURE


def as_bearer(token: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {token}"})


@pytest.fixture
def published(admin_user: User) -> None:
    policy_draft_update(actor=admin_user, document=EVERY_FEATURE)
    policy_publish(actor=admin_user)


@pytest.mark.django_db
def test_download_with_policy_read_token(
    published: None, developer_user: User, make_token: Callable[..., str]
) -> None:
    token = make_token(developer_user, "policy:read")
    response = as_bearer(token).get("/api/v1/policy/managed-settings.json")
    assert response.status_code == 200
    assert response["X-Checksum-Sha256"] == hashlib.sha256(response.content).hexdigest()
    assert response["X-Policy-Version"] == "1"
    body = json.loads(response.content)
    validate_settings(body)
    assert body["env"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://testserver/otlp"
    assert {"source": "github", "repo": "Acme/claude-plugins"} in body["strictKnownMarketplaces"]
    manifest = as_bearer(token).get("/api/v1/policy/managed-settings/manifest").json()
    assert manifest["managed_settings_sha256"] == response["X-Checksum-Sha256"]
    archive = as_bearer(token).get("/api/v1/policy/managed-settings.d.zip")
    assert archive["X-Checksum-Sha256"] == hashlib.sha256(archive.content).hexdigest()
    assert archive["X-Checksum-Sha256"] == manifest["dropins_zip_sha256"]
    names = zipfile.ZipFile(io.BytesIO(archive.content)).namelist()
    assert names == [f["path"] for f in manifest["files"][1:]]
    for name in names:
        validate_settings(json.loads(zipfile.ZipFile(io.BytesIO(archive.content)).read(name)))


@pytest.mark.django_db
def test_wrong_scope_and_anonymous_are_refused(
    published: None, developer_user: User, make_token: Callable[..., str]
) -> None:
    token = make_token(developer_user, "skills:read")
    assert as_bearer(token).get("/api/v1/policy/managed-settings.json").status_code == 401
    assert Client().get("/api/v1/policy/managed-settings.json").status_code == 401


@pytest.mark.django_db
def test_published_policy_document_lists_portal_only_rules(
    published: None, developer_user: User, make_token: Callable[..., str]
) -> None:
    body = as_bearer(make_token(developer_user, "policy:read")).get("/api/v1/policy/").json()
    assert body["version"] == 1 and len(body["sha256"]) == 64
    assert body["published_by"] == "alice-admin"
    assert any(p["rule"] == "hooks.trusted_plugins" for p in body["portal_only"])


@pytest.mark.django_db
def test_nothing_published_still_downloads_a_valid_empty_file(
    developer_user: User, make_token: Callable[..., str]
) -> None:
    token = make_token(developer_user, "policy:read")
    response = as_bearer(token).get("/api/v1/policy/managed-settings.json")
    assert response.status_code == 200 and response["X-Policy-Version"] == "0"
    validate_settings(json.loads(response.content))


@pytest.mark.django_db
def test_skill_decision_endpoint(developer_user: User, make_token: Callable[..., str], org: Any) -> None:
    from tests.policy.factories import stored_skill

    skill = stored_skill("tools", project=org.payments_api, frontmatter={"allowed-tools": "Bash(gh:*)"})
    client = as_bearer(make_token(developer_user, "skills:read"))
    body = client.get(f"/api/v1/policy/skills/{skill.pk}/decision").json()
    assert body["decision"] == "ask" and body["skill"] == "tools"
    assert body["reasons"][0]["keys"] == ["allowed-tools"]
    assert body["risk"]["level"] == "high"
    assert [f["code"] for f in body["risk"]["findings"]] == ["allowed-tools-workspace-trust"]
    assert client.get("/api/v1/policy/skills/999999/decision").status_code == 404
    assert (
        as_bearer(make_token(developer_user, "policy:read"))
        .get(f"/api/v1/policy/skills/{skill.pk}/decision")
        .status_code
        == 401
    )
