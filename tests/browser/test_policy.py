"""An admin edits and publishes the policy in a real browser; a developer is refused."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from governance.policy.models import PolicyStatus, PolicyVersion
from tests.conftest import Org
from tests.policy.factories import stored_skill

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = Path(os.environ.get("SCREENSHOTS_DIR", Path(__file__).resolve().parents[2] / "test-artifacts"))


def shot(page: Any, name: str) -> None:
    if os.environ.get("SCREENSHOTS"):
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_admin_edits_previews_and_publishes(login: Any, admin_user: User, org: Org) -> None:
    stored_skill("deploy", project=org.payments_api)
    page = login(admin_user)
    page.click("[data-nav=policy]")
    page.click("text=Edit draft")
    # a wrong field gets its message next to it, and nothing is saved
    form = page.locator("[data-form=source_rule]")
    form.locator("select[name=source_rule-kind]").select_option("host")
    form.locator("input[name=source_rule-pattern]").fill("(unclosed")
    form.locator("button[type=submit]").click()
    assert "not a valid regular expression" in page.inner_text("[data-error-for=pattern]")
    page.locator("[data-form=source_rule]").scroll_into_view_if_needed()
    shot(page, "policy-edit-error")
    assert not PolicyVersion.objects.exists()
    # a skill rule, then a source rule
    form = page.locator("[data-form=skill_rule]")
    form.locator("select[name=skill_rule-effect]").select_option("deny")
    form.locator("input[name=skill_rule-name]").fill("deploy")
    form.locator("select[name=skill_rule-team]").select_option("payments")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("text=Draft saved")
    assert '"name": "deploy"' in page.inner_text("[data-testid=raw-json]")
    form = page.locator("[data-form=source_rule]")
    form.locator("select[name=source_rule-effect]").select_option("deny")
    form.locator("input[name=source_rule-pattern]").fill("git@github.com:evil/skills.git")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("text=Draft saved")
    shot(page, "policy-edit")
    page.click("[data-testid=to-impact]")
    assert "1 skill change decision" in " ".join(page.inner_text("[data-testid=impact-skills]").split())
    assert "payments-api" in page.inner_text("[data-testid=impact-projects]")
    shot(page, "policy-impact")
    page.fill("#id_note", "block deploy for payments")
    page.click("[data-testid=publish]")
    page.wait_for_selector("text=Policy v1 published")
    assert "Version 1 published" in page.inner_text("[data-testid=published-version]")
    assert "deny name=deploy team=payments" in page.inner_text("[data-testid=portal-only]")
    shot(page, "policy-overview")
    version = PolicyVersion.objects.get()
    assert version.status == PolicyStatus.PUBLISHED and version.published_by == admin_user
    page.click("text=History")
    page.click("text=diff")
    assert "skill_rules[0]" in page.inner_text("[data-testid=changes]")


def test_developer_is_refused_the_editor(login: Any, developer_user: User) -> None:
    page = login(developer_user)
    page.click("[data-nav=policy]")
    assert page.locator("text=Edit draft").count() == 0
    response = page.goto("/policy/edit/")
    assert response.status == 403
    response = page.goto("/policy/impact/")
    assert response.status == 403


def test_developer_sees_decision_and_risk_in_the_catalog(login: Any, developer_user: User, org: Org) -> None:
    risky = stored_skill(
        "shell-tools",
        project=org.payments_api,
        frontmatter={"allowed-tools": "Bash Read", "hooks": {"PostToolUse": []}, "preExecCommand": "x"},
        extra_files={"scripts/run.sh": b"echo\n"},
    )
    page = login(developer_user)
    page.goto("/catalog/")
    row = page.locator("tr[data-skill=shell-tools]")
    assert "ask" in row.inner_text() and "high risk" in row.inner_text()
    shot(page, "catalog-permission")
    page.goto(f"/catalog/skills/{risky.pk}/")
    section = page.locator("[data-testid=permission]")
    assert section.locator("[data-testid=decision]").inner_text() == "ask"
    assert "preExecCommand" in section.inner_text()
    assert "blocked" in section.locator("[data-testid=risk-summary]").inner_text()
    section.scroll_into_view_if_needed()
    shot(page, "catalog-skill-permission")
