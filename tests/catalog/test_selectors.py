"""The effective catalog of a project, from stored skills."""

from __future__ import annotations

from typing import Any

from governance.engine.listing import Level
from governance.engine.resolve import Status
from governance.skills import catalog_selectors as sel
from tests.catalog.conftest import Catalog, store_skill


def _status(cat: sel.ProjectCatalog, skill_id: int) -> str:
    res = cat.status_of(skill_id)
    assert res is not None
    return res.status.value


def test_project_scope_includes_org_wide_sources_and_not_other_projects(catalog: Catalog, org: Any) -> None:
    ids = {r.skill_id for r in sel.scope_rows(org.payments_api)}
    assert catalog.managed_review.pk in ids and catalog.bundled_commit.pk in ids
    assert catalog.deploy.pk in ids
    assert catalog.infra_only.pk not in ids


def test_statuses_per_agent(catalog: Catalog, org: Any) -> None:
    trust = sel.project_catalog(org.payments_api, "trust-first")
    assert _status(trust, catalog.managed_review.pk) == "active"
    assert _status(trust, catalog.project_review.pk) == "shadowed"
    assert trust.status_of(catalog.project_review.pk).shadowed_by == "security-review@managed"  # type: ignore[union-attr]
    assert _status(trust, catalog.hidden.pk) == "hidden"
    assert _status(trust, catalog.conditional.pk) == "conditional"

    nearest = sel.project_catalog(org.payments_api, "opencode")
    assert _status(nearest, catalog.project_review.pk) == "active"
    assert any(g.security for g in nearest.resolution.groups)
    # the Cyrillic look-alike is grouped with the real name
    assert nearest.resolution.look_alikes[0].names == sorted(["security-review", "security-reviеw"])


def test_listing_excludes_hidden_conditional_and_shadowed(catalog: Catalog, org: Any) -> None:
    cat = sel.project_catalog(org.payments_api, "trust-first")
    listing = sel.project_listing(cat, window_tokens=200_000, profile="classic")
    names = [e.name for e in listing.entries]
    assert names[0] == "commit"  # bundled first
    assert "release-notes" not in names and "sql-style" not in names
    assert names.count("security-review") == 1
    assert listing.level is Level.FULL
    assert "- deploy: Deploy payments-api to production." in listing.text


def test_catalog_entries_filters(catalog: Catalog, org: Any) -> None:
    entries = sel.catalog_entries(agent="trust-first")
    by_id = {e.row.skill_id: e for e in entries}
    assert by_id[catalog.project_review.pk].resolved.status is Status.SHADOWED
    assert by_id[catalog.infra_only.pk].project_name == "infra"
    body_hit = sel.catalog_entries(agent="trust-first", search="report no findings")
    assert [e.row.skill_id for e in body_hit] == [catalog.project_review.pk]
    warn = sel.catalog_entries(agent="trust-first", severity="warning")
    assert catalog.infra_only.pk in {e.row.skill_id for e in warn}
    hidden = sel.catalog_entries(agent="trust-first", status="hidden")
    assert [e.row.skill_id for e in hidden] == [catalog.hidden.pk]
    team = sel.catalog_entries(agent="trust-first", team=org.platform.pk)
    assert {e.row.skill_id for e in team} == {catalog.infra_only.pk}


def test_fleet_and_security_summary(catalog: Catalog, org: Any) -> None:
    for n in range(40):
        store_skill(catalog.infra_repo, f"infra-skill-{n:02d}", description="d" * 240)
    projects = sel.fleet(agent="trust-first", window_tokens=200_000, profile="classic")
    assert projects[0].project == org.infra and projects[0].listing.degraded
    summary = sel.security_summary()
    assert summary["shadowing"] == 1 and summary["look_alikes"] == 1


def test_org_wide_figures_are_cached_until_the_catalog_changes(catalog: Catalog, org: Any) -> None:
    before = sel.security_summary()
    stamp = sel.catalog_stamp()
    assert sel.security_summary() == before and sel.catalog_stamp() == stamp
    store_skill(catalog.infra_repo, "security-review", description="Infra's own review.")
    assert sel.catalog_stamp() != stamp
    assert sel.security_summary()["shadowing"] == before["shadowing"] + 1
    entries = sel.catalog_entries(agent="trust-first")
    assert any(e.row.name == "security-review" and e.project_name == "infra" for e in entries)


def test_skills_denied_by_policy_are_rejected_and_shadow_nothing(
    catalog: Catalog, org: Any, admin_user: Any
) -> None:
    from governance.policy.services import policy_draft_update, policy_publish

    before = sel.security_summary()
    policy_draft_update(actor=admin_user, document={"skill_rules": [{"effect": "deny", "team": "payments"}]})
    policy_publish(actor=admin_user)
    cat = sel.project_catalog(org.payments_api, "opencode")
    project_copy = cat.status_of(catalog.project_review.pk)
    assert project_copy is not None and project_copy.status is Status.REJECTED
    assert project_copy.reason.startswith("denied by policy")
    assert _status(cat, catalog.managed_review.pk) == "active"
    assert not any(g.security for g in cat.resolution.groups)
    # the organisation-wide figures follow the published policy at once
    assert sel.security_summary()["shadowing"] == before["shadowing"] - 1
