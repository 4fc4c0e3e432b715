"""A team lead edits a proposal and approves it in a real browser; a developer cannot approve."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from governance.reviews.models import Proposal, ProposalState
from tests.conftest import Org
from tests.reviews.conftest import FOLDER, branch_file, make_bare_repo, make_proposal

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = Path(os.environ.get("SCREENSHOTS_DIR", Path(__file__).resolve().parents[2] / "test-artifacts"))


def test_team_lead_edits_then_approves_and_the_change_reaches_the_repository(
    login: Any, lead_user: User, org: Org, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        request.getfixturevalue("celery_worker_live")
    proposal = make_proposal(org)
    bare = make_bare_repo(tmp_path, org)
    page = login(lead_user)

    page.click("[data-nav=reviews]")
    row = page.locator(f"tr[data-proposal='{proposal.pk}']")
    assert "deploy" in row.inner_text()
    row.locator("a").first.click()
    assert page.locator("[data-testid=side-by-side] tr.diff-insert").count() == 1
    assert "you forgot to check the health endpoint" in page.inner_text("[data-testid=updates]")
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "reviews-detail.png"), full_page=True)

    page.click("[data-testid=edit-approve] summary")
    editor = page.locator("[data-testid=edited-text]")
    edited = editor.input_value().replace("it prints ok.", "it prints ok within 30 seconds.")
    editor.fill(edited)
    page.click("[data-testid=approve-edited]")
    assert "approved" in page.inner_text(".flash")

    deadline = time.monotonic() + 30
    while Proposal.objects.get(pk=proposal.pk).state != ProposalState.APPLIED:
        assert time.monotonic() < deadline, "the approved change was not delivered"
        time.sleep(0.2)
    page.reload()
    decision = page.inner_text("[data-testid=decision]")
    assert "edited before approval" in decision and "liam-lead" in decision
    assert "Delivered" in page.inner_text("[data-testid=delivery-apply]")
    page.screenshot(path=str(SHOTS / "reviews-applied.png"), full_page=True)
    text = branch_file(bare, f"skill-review/proposal-{proposal.pk}", f"{FOLDER}/SKILL.md")
    assert "it prints ok within 30 seconds." in text


def test_developer_sees_the_proposal_but_cannot_approve_it(
    login: Any, developer_user: User, org: Org
) -> None:
    proposal = make_proposal(org)
    page = login(developer_user)
    page.goto("/reviews/")
    page.screenshot(path=str(SHOTS / "reviews-queue-developer.png"), full_page=True)
    row = page.locator(f"tr[data-proposal='{proposal.pk}']")
    assert row.locator("input[type=checkbox]").count() == 0
    row.locator("a").first.click()
    assert page.locator("[data-testid=approve]").count() == 0
    assert page.locator("[data-testid=approve-edited]").count() == 0
    assert "only team leads decide proposals" in page.inner_text("[data-testid=cannot-review]")

    # Forging the form post does not help: the server refuses it.
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    response = page.request.post(
        f"/reviews/{proposal.pk}/approve/",
        form={"csrfmiddlewaretoken": token},
        headers={"X-CSRFToken": token},
    )
    assert response.status == 403
    assert Proposal.objects.get(pk=proposal.pk).state == ProposalState.PENDING
