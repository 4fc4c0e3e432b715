"""Catalog API: the effective catalog and listing of a project, per agent, with a token."""

from __future__ import annotations

from typing import Any

from django.test import Client

from tests.catalog.conftest import Catalog


def test_effective_catalog_per_agent(catalog: Catalog, developer_user: Any, make_token: Any) -> None:
    headers = {"Authorization": f"Bearer {make_token(developer_user, 'skills:read')}"}
    response = Client().get(
        "/api/v1/catalog/effective", {"project": "payments-api", "agent": "opencode"}, headers=headers
    )
    assert response.status_code == 200
    body = response.json()
    by_id = {s["id"]: s for s in body["skills"]}
    assert by_id[catalog.project_review.pk]["status"] == "active"
    assert by_id[catalog.managed_review.pk]["shadowed_by"] == "security-review@project"
    assert body["security_groups"] == 1 and body["look_alike_groups"] == 1
    assert body["listing"]["budget"] == 8000 and body["listing"]["level"] == 1
    assert body["listing"]["text"].startswith("- commit: ")
    trust = Client().get("/api/v1/catalog/effective", {"project": "payments-api"}, headers=headers).json()
    assert {s["id"]: s["status"] for s in trust["skills"]}[catalog.project_review.pk] == "shadowed"


def test_bad_input_is_a_precise_4xx(catalog: Catalog, developer_user: Any, make_token: Any) -> None:
    headers = {"Authorization": f"Bearer {make_token(developer_user, 'skills:read')}"}
    bad_agent = Client().get("/api/v1/catalog/effective", {"agent": "cursor"}, headers=headers)
    assert bad_agent.status_code == 400 and "cursor" in bad_agent.json()["detail"]
    missing = Client().get("/api/v1/catalog/effective", {"project": "nope"}, headers=headers)
    assert missing.status_code == 404
    assert (
        Client().get("/api/v1/catalog/effective", {"window_tokens": "5"}, headers=headers).status_code == 400
    )
    assert Client().get("/api/v1/catalog/effective").status_code == 401
