"""Registry over HTTP: token auth, the static layout, 404s, ETags and 304s, what is served."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from tests.catalog.conftest import Catalog, store_skill

BASE = "/registry/projects/payments-api"


def auth(token: str, etag: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}"}
    if etag:
        headers["If-None-Match"] = etag
    return headers


def test_token_with_skills_read_is_required(catalog: Catalog, developer_user: Any, make_token: Any) -> None:
    client = Client()
    anonymous = client.get(f"{BASE}/index.json")
    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Bearer")
    wrong_scope = make_token(developer_user, "telemetry:write")
    assert client.get(f"{BASE}/index.json", headers=auth(wrong_scope)).status_code == 401
    # a browser session is not enough either: agents use tokens, and nothing redirects
    logged_in = Client()
    logged_in.force_login(developer_user)
    assert logged_in.get(f"{BASE}/index.json").status_code == 401


def test_index_serves_the_effective_catalog(catalog: Catalog, developer_user: Any, make_token: Any) -> None:
    token = make_token(developer_user, "skills:read")
    response = Client().get(f"{BASE}/index.json", headers=auth(token))
    assert response.status_code == 200
    skills = json.loads(response.content)["skills"]
    # managed security-review wins; the project copy is shadowed and not served; the Cyrillic
    # look-alike is not a safe URL segment; hidden and conditional skills are served (loadable)
    assert skills == sorted(["commit", "deploy", "release-notes", "security-review", "sql-style"])
    skill_md = Client().get(f"{BASE}/security-review/SKILL.md", headers=auth(token))
    assert b"Review a change for security issues" in skill_md.content
    assert skill_md["Content-Type"].startswith("text/markdown")
    assert skill_md["Content-Security-Policy"] == "default-src 'none'; sandbox"
    assert Client().get("/registry/projects/infra/index.json", headers=auth(token)).json()[
        "skills"
    ] == sorted(["commit", "security-review", "terraform-plan"])


def test_files_manifest_etag_and_404(catalog: Catalog, developer_user: Any, make_token: Any) -> None:
    token = make_token(developer_user, "skills:read")
    client = Client()
    manifest = client.get(f"{BASE}/deploy/index.json", headers=auth(token)).json()
    assert manifest["scripts"] == ["deploy.sh"] and manifest["references"] == ["runbook.md"]
    assert manifest["files"] == ["SKILL.md", "references/runbook.md", "scripts/deploy.sh"]
    script = client.get(f"{BASE}/deploy/scripts/deploy.sh", headers=auth(token))
    assert script.status_code == 200 and script.content == b"#!/bin/sh\necho deploy\n"
    etag = script["ETag"]
    again = client.get(f"{BASE}/deploy/scripts/deploy.sh", headers=auth(token, etag))
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == etag
    index_etag = client.get(f"{BASE}/index.json", headers=auth(token))["ETag"]
    assert client.get(f"{BASE}/index.json", headers=auth(token, index_etag)).status_code == 304

    for missing in [
        f"{BASE}/deploy/scripts/nope.sh",
        f"{BASE}/nope/SKILL.md",
        f"{BASE}/nope/index.json",
        "/registry/projects/no-such-project/index.json",
        f"{BASE}/deploy/scripts/../SKILL.md",
        f"{BASE}/deploy",
        f"{BASE}/",
        f"{BASE}/index.json/",
    ]:
        response = client.get(missing, headers=auth(token))
        assert response.status_code == 404, missing
    # a new version changes the ETag: clients revalidating get the new bytes
    store_skill(catalog.payments_repo, "deploy", description="Deploy, v2.")
    fresh = client.get(f"{BASE}/deploy/SKILL.md", headers=auth(token, etag))
    assert fresh.status_code == 200 and b"Deploy, v2." in fresh.content


def test_plugin_and_nested_names_become_safe_ids(
    catalog: Catalog, developer_user: Any, make_token: Any
) -> None:
    store_skill(
        catalog.payments_repo, "deploy", location="apps/web/.claude/skills/deploy", description="Web deploy."
    )
    token = make_token(developer_user, "skills:read")
    skills = Client().get(f"{BASE}/index.json", headers=auth(token)).json()["skills"]
    assert "apps.web.deploy" in skills
    body = Client().get(f"{BASE}/apps.web.deploy/SKILL.md", headers=auth(token))
    assert b"Web deploy." in body.content


def test_write_methods_are_refused(catalog: Catalog, developer_user: Any, make_token: Any) -> None:
    token = make_token(developer_user, "skills:read")
    assert Client().post(f"{BASE}/index.json", headers=auth(token)).status_code == 405
