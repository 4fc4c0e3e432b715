"""The queue and detail pages: filters, counts, oldest first, diffs, health, comments, bulk approval."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from governance.audit.models import AuditEntry
from governance.reviews.models import Proposal, ProposalComment, ProposalState
from governance.telemetry.models import SkillDay
from tests.reviews.conftest import ProjectSkill, improved, store_version, suggestion

pytestmark = pytest.mark.django_db


@pytest.fixture
def three(project_skill: ProjectSkill, propose: Callable[..., Any]) -> list[int]:
    """An old plain proposal, a bloat one, and a duplicate of the first."""
    ids = [
        propose(suggestion(project_skill)).json()["id"],
        propose(
            suggestion(
                project_skill,
                proposed_text=improved(project_skill.text, "- Run the tests with `make test`\n"),
            )
        ).json()["id"],
        propose(
            suggestion(
                project_skill,
                proposed_text=improved(
                    project_skill.text, "* 4. check `scripts/check.sh`; success: it prints ok\n"
                ),
            )
        ).json()["id"],
    ]
    Proposal.objects.filter(pk=ids[0]).update(created_at=timezone.now() - timedelta(days=10))
    return ids


def queue_ids(client: Client, **params: str) -> list[int]:
    response = client.get("/reviews/", params)
    assert response.status_code == 200
    return [row.pk for row, _ in response.context["rows"]]


def test_queue_is_oldest_first_with_counts_and_filters(three: list[int], lead_client: Client) -> None:
    assert queue_ids(lead_client) == three
    response = lead_client.get("/reviews/")
    assert response.context["counts"]["pending"] == 3
    assert queue_ids(lead_client, flag="bloat") == [three[1]]
    assert queue_ids(lead_client, flag="duplicate") == [three[2]]
    assert queue_ids(lead_client, flag="none") == [three[0]]
    assert queue_ids(lead_client, min_age_days="7") == [three[0]]
    assert queue_ids(lead_client, team="payments", skill="depl") == three
    assert queue_ids(lead_client, team="platform") == []
    assert queue_ids(lead_client, state="dismissed") == []


def test_queue_shows_nothing_of_other_teams(three: list[int], outsider_client: Client) -> None:
    assert queue_ids(outsider_client) == []
    assert outsider_client.get(f"/reviews/{three[0]}/").status_code == 404


def test_detail_shows_both_diffs_reasons_evidence_health_and_versions(
    three: list[int], project_skill: ProjectSkill, lead_client: Client
) -> None:
    SkillDay.objects.create(
        day=timezone.now().date(),
        skill_key="deploy",
        skill_id=project_skill.skill.pk,
        inv_model=7,
    )
    # The skill moved on since: the proposal is stale and shows against base and current.
    store_version(project_skill.skill, improved(project_skill.text, "5. Announce in #deploys.\n"))
    Proposal.objects.filter(pk=three[0]).update(state=ProposalState.STALE)
    response = lead_client.get(f"/reviews/{three[0]}/")
    html = response.content.decode()
    assert [d["before_label"] for d in response.context["diffs"]] == ["base v1", "current v2"]
    assert "+4. Check `scripts/check.sh`; success: it prints ok." in response.context["diffs"][0]["unified"]
    assert "you forgot to check the health endpoint again" in html
    assert "s-123" in html and "claude-code" in html
    assert "<strong>7</strong> invocations" in html
    assert [v.number for v in response.context["versions"]] == [2, 1]
    assert "Stale: made against v1" in html
    assert 'data-testid="approve"' not in html  # a stale proposal can only be dismissed


def test_comment_is_stored_and_shown(three: list[int], developer_client: Client) -> None:
    response = developer_client.post(
        f"/reviews/{three[0]}/comment/", {"body": "Happened to me too."}, follow=True
    )
    assert "Happened to me too." in response.content.decode()
    assert ProposalComment.objects.get().proposal_id == three[0]
    assert AuditEntry.objects.filter(action="proposal.commented").count() == 1


def test_bulk_approve_lists_the_selection_and_approves_only_after_confirmation(
    three: list[int], lead_client: Client
) -> None:
    first, bloat, _ = three
    confirm = lead_client.post("/reviews/bulk-approve/", {"ids": [first, bloat]})
    assert confirm.status_code == 200
    assert [p.pk for p in confirm.context["chosen"]] == [first, bloat]
    assert Proposal.objects.filter(state=ProposalState.PENDING).count() == 3  # nothing yet
    done = lead_client.post("/reviews/bulk-approve/", {"ids": [first, bloat], "confirm": "on"}, follow=True)
    html = done.content.decode()
    # The first lands; the second was made against the same base, so it turned stale.
    assert Proposal.objects.get(pk=first).state in (ProposalState.APPROVED, ProposalState.APPLIED)
    assert Proposal.objects.get(pk=bloat).state == ProposalState.STALE
    assert "Approved 1 of 2" in html and "stale" in html


def test_bulk_approve_without_a_selection_approves_nothing(three: list[int], lead_client: Client) -> None:
    response = lead_client.post("/reviews/bulk-approve/", {"confirm": "on"}, follow=True)
    assert "Select the proposals to approve" in response.content.decode()
    assert Proposal.objects.filter(state=ProposalState.PENDING).count() == 3


def test_developer_bulk_approval_is_refused(three: list[int], developer_client: Client) -> None:
    response = developer_client.post(
        "/reviews/bulk-approve/", {"ids": [three[0]], "confirm": "on"}, follow=True
    )
    assert "only team leads decide proposals" in response.content.decode()
    assert Proposal.objects.get(pk=three[0]).state == ProposalState.PENDING


def test_developer_posting_the_approve_form_gets_403(three: list[int], developer_client: Client) -> None:
    assert developer_client.post(f"/reviews/{three[0]}/approve/").status_code == 403
    assert developer_client.post(f"/reviews/{three[0]}/dismiss/", {"reason": "no"}).status_code == 403
    assert Proposal.objects.get(pk=three[0]).state == ProposalState.PENDING
