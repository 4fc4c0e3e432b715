"""Catalog pages through HTTP: what each role gets, what the page says, bad input is a 400."""

from __future__ import annotations

from typing import Any

from django.test import Client

from tests.catalog.conftest import Catalog, store_skill


def test_catalog_lists_skills_with_status_and_security(developer_client: Client, catalog: Catalog) -> None:
    response = developer_client.get("/catalog/", {"project": "payments-api", "agent": "opencode"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "security-review" in html and "security-reviеw" in html
    assert 'data-testid="security-count"' in html
    assert "Content-Security-Policy" in response.headers
    assert "terraform-plan" not in html  # another project's skill


def test_catalog_search_in_bodies_and_bad_filter(developer_client: Client, catalog: Catalog) -> None:
    response = developer_client.get("/catalog/", {"q": "report no findings"})
    assert response.status_code == 200
    assert response.context["total"] == 1
    bad = developer_client.get("/catalog/", {"status": "sleeping"})
    assert bad.status_code == 400
    assert "sleeping" in bad.content.decode()


def test_skill_detail_renders_safely_and_diffs_versions(developer_client: Client, catalog: Catalog) -> None:
    store_skill(
        catalog.payments_repo,
        "deploy",
        description="Deploy payments-api.",
        body="# Deploy\n\n## Steps\n\n1. Build and test.\n",
    )
    url = f"/catalog/skills/{catalog.deploy.pk}/"
    response = developer_client.get(url, {"a": "1", "b": "2"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "<script>window.__pwned" not in html  # v1's script appears escaped in the diff only
    assert "scripts/deploy.sh" in html  # removed in v2: shown in the diff
    assert (
        "echo deploy" in developer_client.get(url, {"v": "1", "file": "scripts/deploy.sh"}).content.decode()
    )
    assert "Build and test." in html  # in the diff
    v1 = developer_client.get(url, {"v": "1"}).content.decode()
    assert "<script>window.__pwned" not in v1
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in v1
    assert "tracker.example/p.png" in v1 and "<img" not in v1
    assert developer_client.get(url, {"file": "../../etc/passwd"}).status_code == 404
    assert developer_client.get(url, {"v": "x"}).status_code == 400
    assert developer_client.get(url, {"v": "9" * 40}).status_code == 400
    assert developer_client.get(url, {"v": "²"}).status_code == 400
    assert developer_client.get(url, {"a": "1", "b": "9" * 40}).status_code == 400
    assert developer_client.get("/catalog/skills/999999/").status_code == 404


def test_skill_detail_shows_the_shadow_chain(developer_client: Client, catalog: Catalog) -> None:
    response = developer_client.get(f"/catalog/skills/{catalog.project_review.pk}/", {"agent": "opencode"})
    html = response.content.decode()
    assert "security: trust crossed" in html
    assert "shadows-higher-trust" in html


def test_listing_budget_page_and_what_if(developer_client: Client, catalog: Catalog) -> None:
    for n in range(45):
        store_skill(catalog.payments_repo, f"payments-skill-{n:02d}", description="x" * 240)
    base = developer_client.get("/catalog/listing/", {"project": "payments-api", "window": "200000"})
    assert base.status_code == 200
    assert base.context["listing"].level == 2
    ids = [
        str(sid)
        for sid in catalog.payments_repo.skills.filter(name__startswith="payments-skill").values_list(
            "id", flat=True
        )
    ]
    what_if = developer_client.get(
        "/catalog/listing/",
        {
            "project": "payments-api",
            "window": "200000",
            "remove": ids[:30],
            "hide": ids[30:40],
        },
    )
    assert what_if.context["what_if"] is True
    assert what_if.context["listing"].level == 1
    big = developer_client.get("/catalog/listing/", {"project": "payments-api", "window": "1000000"})
    assert big.context["listing"].level == 1
    custom = developer_client.get("/catalog/listing/", {"window": "custom"})
    assert custom.status_code == 400
    assert "custom window" in custom.content.decode()


def test_conditional_tester(developer_client: Client, catalog: Catalog) -> None:
    response = developer_client.get(
        "/catalog/conditional/", {"project": "payments-api", "paths": "db/migrations/0001.sql\nREADME.md"}
    )
    assert response.status_code == 200
    assert response.context["activated"] == 1
    assert 'data-activated="yes"' in response.content.decode()


def test_fleet(developer_client: Client, catalog: Catalog, org: Any) -> None:
    response = developer_client.get("/catalog/fleet/", {"window": "200000"})
    assert response.status_code == 200
    assert {p.project.slug for p in response.context["projects"]} == {"payments-api", "infra"}


def test_dashboard_counts_security_findings(developer_client: Client, catalog: Catalog) -> None:
    response = developer_client.get("/")
    html = response.content.decode()
    assert 'data-testid="catalog-security"' in html
    assert "<strong>1</strong> same-name group where a lower-trust copy" in html
    assert "<strong>1</strong> look-alike name group" in html


def test_skill_page_states_its_own_status(developer_client: Client, catalog: Catalog) -> None:
    html = developer_client.get(f"/catalog/skills/{catalog.hidden.pk}/").content.decode()
    assert 'data-testid="own-status">In payments-api' in html and 'data-status="hidden"' in html
    shadowed = developer_client.get(f"/catalog/skills/{catalog.project_review.pk}/").content.decode()
    assert "shadowed by <code>security-review@managed</code>" in shadowed
