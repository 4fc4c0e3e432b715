"""Catalog pages in a real browser: what a developer sees, and that skill text cannot act."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.catalog.conftest import Catalog, build_catalog, store_skill

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def catalog(org: Any) -> Catalog:
    from governance.skills.catalog_selectors import clear_cache

    clear_cache()
    return build_catalog(org)


SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"catalog-{name}.png"), full_page=True)


def test_catalog_filters_and_flags_trust_crossings(
    login: Any, developer_user: User, catalog: Catalog
) -> None:
    page = login(developer_user)
    page.click("[data-nav=catalog]")
    page.select_option("select[name=project]", "payments-api")
    page.select_option("select[name=agent]", "opencode")
    page.click("[data-testid=catalog-filters] button[type=submit]")
    assert "security-count" in page.inner_html("main")
    rows = page.locator("[data-testid=catalog-table] tbody tr")
    project_copy = page.locator("tr[data-skill='security-review'][data-source='project']")
    assert project_copy.locator("[data-status]").inner_text() == "active"
    assert "shadows-higher-trust" in project_copy.inner_text()
    assert page.locator("tr[data-skill='security-reviеw']").count() == 1  # Cyrillic е
    assert rows.count() == 7
    shot(page, "list")
    page.fill("input[name=q]", "report no findings")
    page.click("[data-testid=catalog-filters] button[type=submit]")
    assert page.locator("[data-testid=catalog-table] tbody tr").count() == 1


def test_skill_page_renders_body_without_running_it(
    login: Any, developer_user: User, catalog: Catalog
) -> None:
    store_skill(
        catalog.payments_repo,
        "deploy",
        description="Deploy payments-api.",
        body="# Deploy\n\n## Steps\n\n1. Build and test.\n",
    )
    page = login(developer_user)
    remote: list[str] = []
    page.on(
        "request", lambda request: remote.append(request.url) if "tracker.example" in request.url else None
    )
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"/catalog/skills/{catalog.deploy.pk}/?v=1")
    body = page.locator("[data-testid=body]")
    assert "<script>window.__pwned = 1</script>" in body.inner_text()  # shown as text
    assert page.evaluate("typeof window.__pwned") == "undefined"  # never ran
    assert "[image not loaded: pixel]" in body.inner_text()
    assert body.locator("img").count() == 0 and remote == []
    assert page.locator("[data-testid=frontmatter]").inner_text().count("description") == 1
    page.click("[data-testid=file-tree] >> text=deploy.sh")
    assert "echo deploy" in page.inner_text("[data-testid=file-content]")
    shot(page, "skill")
    page.select_option("select[name=a]", "1")
    page.select_option("select[name=b]", "2")
    page.click("[data-testid=versions] button[type=submit]")
    diff = page.locator("[data-testid=diff]")
    assert "+1. Build and test." in diff.inner_text()
    assert "scripts/deploy.sh" in diff.inner_text()
    assert errors == []


def test_shadow_chain_names_winner_and_loser(login: Any, developer_user: User, catalog: Catalog) -> None:
    page = login(developer_user)
    page.goto(f"/catalog/skills/{catalog.project_review.pk}/")
    chain = page.locator("[data-testid=shadow-chain]")
    assert "security-review@managed" in chain.inner_text()
    assert "portal default" in chain.inner_text()
    page.select_option("[data-testid=shadow-chain] select[name=agent]", "opencode")
    page.click("[data-testid=shadow-chain] button[type=submit]")
    assert "security: trust crossed" in page.locator("[data-testid=shadow-chain]").inner_text()


def test_listing_budget_chart_table_and_what_if(login: Any, developer_user: User, catalog: Catalog) -> None:
    for n in range(45):
        store_skill(
            catalog.payments_repo, f"payments-skill-{n:02d}", description="Handles payments case. " * 10
        )
    page = login(developer_user)
    page.goto("/catalog/listing/?project=payments-api&window=200000")
    assert page.inner_text("[data-testid=level]").startswith("2")
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('listing-chart'))")
    assert "truncated" in page.inner_text("[data-testid=listing-table]")
    assert (
        page.locator("[data-testid=listing-text]")
        .inner_text()
        .startswith("- commit: Write a commit message.")
    )
    shot(page, "listing")
    # what if: drop 30 skills and hide 10 from the model → everything fits again
    boxes = page.locator("input[name=remove]")
    for i in range(30):
        boxes.nth(i + 5).check()
    page.click("[data-testid=simulate-what-if]")
    assert page.inner_text("[data-testid=level]").startswith("1")
    assert "what-if applied" in page.inner_text("[data-testid=listing-summary]")
    page.select_option("select[name=window]", "1000000")
    page.locator("[data-testid=listing-form] button[type=submit]").first.click()
    assert "of 40000 characters" in page.inner_text("[data-testid=chars-used]")


def test_conditional_tester(login: Any, developer_user: User, catalog: Catalog) -> None:
    page = login(developer_user)
    page.goto("/catalog/conditional/?project=payments-api")
    page.fill("textarea[name=paths]", "db/migrations/0001.sql\nREADME.md")
    page.click("[data-testid=conditional-form] button[type=submit]")
    assert "1 conditional skill activated by 2 paths" in page.inner_text("[data-testid=activated-count]")
    assert page.locator("tr[data-skill='sql-style'][data-activated=yes]").count() == 1
    shot(page, "conditional")


def test_fleet_view(login: Any, developer_user: User, catalog: Catalog) -> None:
    for n in range(40):
        store_skill(catalog.infra_repo, f"infra-skill-{n:02d}", description="Infrastructure helper. " * 10)
    page = login(developer_user)
    page.goto("/catalog/fleet/")
    assert "1 of 2 projects degraded at 200000 tokens" in page.inner_text("[data-testid=fleet-summary]")
    first = page.locator("[data-testid=fleet-table] tbody tr").first
    assert first.get_attribute("data-project") == "infra"
    shot(page, "fleet")


def test_lead_curates_a_collection_and_downloads_exports(
    login: Any, lead_user: User, catalog: Catalog
) -> None:
    page = login(lead_user)
    page.goto("/catalog/collections/")
    page.fill("[data-testid=collection-form] input[name=slug]", "security")
    page.fill("[data-testid=collection-form] input[name=name]", "Security")
    page.click("[data-testid=collection-form] button[type=submit]")
    assert "Collection Security created." in page.inner_text("main")
    page.goto(f"/catalog/skills/{catalog.managed_review.pk}/")
    page.click("[data-testid=add-to-collection] button[type=submit]")
    assert "1 skill added to Security." in page.inner_text("main")
    page.goto("/catalog/collections/security/")
    assert page.locator("[data-testid=collection-skills] tr[data-skill='security-review']").count() == 1
    assert page.inner_text("[data-testid=registry-url]").endswith("/registry/collections/security/index.json")
    with page.expect_download() as download:
        page.click("[data-testid=exports] >> text=Export as plugin marketplace")
    assert download.value.suggested_filename == "security-marketplace.tar.gz"
    shot(page, "collection")


def test_developer_cannot_create_collections(login: Any, developer_user: User, catalog: Catalog) -> None:
    page = login(developer_user)
    page.goto("/catalog/collections/")
    assert page.locator("[data-testid=collection-form]").count() == 0
    page.goto(f"/catalog/skills/{catalog.managed_review.pk}/")
    assert page.locator("[data-testid=add-to-collection]").count() == 0
