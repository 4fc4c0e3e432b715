"""Routing, separation of duties, approve / edit-then-approve / dismiss through the API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from governance.audit.models import AuditEntry
from governance.reviews.models import Delivery, DeliveryKind, Proposal, ProposalState
from governance.skills.models import SkillVersion
from governance.skills.selectors import version_file_contents
from tests.reviews.conftest import CHECK_SH, ProjectSkill, auth, improved, suggestion

pytestmark = pytest.mark.django_db


def decide(
    client: Client, proposal_id: int, action: str, body: dict[str, Any] | None = None, **extra: Any
) -> Any:
    return client.post(
        f"/api/v1/reviews/suggestions/{proposal_id}/{action}",
        data=body or {},
        content_type="application/json",
        **extra,
    )


@pytest.fixture
def proposal_id(project_skill: ProjectSkill, propose: Callable[..., Any]) -> int:
    return int(propose(suggestion(project_skill)).json()["id"])


def test_lead_of_the_owning_team_approves(
    proposal_id: int, project_skill: ProjectSkill, lead_client: Client, lead_user: User
) -> None:
    response = decide(lead_client, proposal_id, "approve", {"note": "good catch"})
    assert response.status_code == 200, response.content
    assert response.json()["state"] == "approved"
    proposal = Proposal.objects.get(pk=proposal_id)
    assert proposal.decided_by == lead_user
    version = proposal.result_version
    assert version is not None and version.number == 2 and version.origin == "review"
    project_skill.skill.refresh_from_db()
    assert project_skill.skill.current_version == version
    files = version_file_contents(version)
    # The whole package is versioned: the script travels with the new SKILL.md.
    assert files == {"SKILL.md": improved(project_skill.text).encode(), "scripts/check.sh": CHECK_SH}
    delivery = Delivery.objects.get(proposal=proposal)
    assert delivery.kind == DeliveryKind.APPLY and delivery.previous_version == project_skill.v1
    entry = AuditEntry.objects.get(action="proposal.approved")
    assert (entry.before_sha256, entry.after_sha256) == (project_skill.sha, version.skill_md_sha256)


def test_lead_edits_then_approves(proposal_id: int, project_skill: ProjectSkill, lead_client: Client) -> None:
    edited = improved(project_skill.text, "4. Run `scripts/check.sh`; success: it prints ok within 30 s.\n")
    response = decide(lead_client, proposal_id, "approve", {"edited_text": edited})
    assert response.status_code == 200, response.content
    assert response.json()["edited"] is True
    proposal = Proposal.objects.get(pk=proposal_id)
    assert proposal.applied_text == edited
    assert version_file_contents(proposal.result_version)["SKILL.md"] == edited.encode()  # type: ignore[arg-type]
    assert AuditEntry.objects.filter(action="proposal.edited").count() == 1


def test_an_edit_cannot_touch_the_frontmatter(
    proposal_id: int, project_skill: ProjectSkill, lead_client: Client
) -> None:
    edited = improved(project_skill.text).replace("Bash(make:*) Bash(git:*)", "Bash")
    response = decide(lead_client, proposal_id, "approve", {"edited_text": edited})
    assert response.status_code == 422
    assert "frontmatter differs" in response.json()["detail"]
    assert Proposal.objects.get(pk=proposal_id).state == ProposalState.PENDING
    assert SkillVersion.objects.filter(skill=project_skill.skill).count() == 1


def test_a_developer_cannot_approve(
    proposal_id: int, developer_client: Client, project_skill: ProjectSkill
) -> None:
    response = decide(developer_client, proposal_id, "approve")
    assert response.status_code == 403
    assert "only team leads" in response.json()["detail"]
    assert Proposal.objects.get(pk=proposal_id).state == ProposalState.PENDING
    assert SkillVersion.objects.filter(skill=project_skill.skill).count() == 1


def test_a_lead_of_another_team_cannot_approve(
    proposal_id: int, outsider_user: User, make_token: Callable[..., str], project_skill: ProjectSkill
) -> None:
    # Olga leads platform; the skill belongs to payments-api, owned by payments.
    token = make_token(outsider_user, "reviews:decide")
    response = decide(Client(), proposal_id, "approve", headers=auth(token))
    assert response.status_code == 404  # she does not even see it
    client = Client()
    client.force_login(outsider_user)
    assert decide(client, proposal_id, "dismiss", {"reason": "meh"}).status_code == 404
    assert Proposal.objects.get(pk=proposal_id).state == ProposalState.PENDING


def test_a_lead_cannot_approve_their_own_proposal(
    project_skill: ProjectSkill,
    propose: Callable[..., Any],
    lead_user: User,
    lead_client: Client,
    make_token: Callable[..., str],
) -> None:
    own = propose(suggestion(project_skill), token=make_token(lead_user, "reviews:write")).json()
    response = decide(lead_client, own["id"], "approve")
    assert response.status_code == 403
    assert "you made this proposal" in response.json()["detail"]
    assert Proposal.objects.get(pk=own["id"]).state == ProposalState.PENDING


def test_a_lead_cannot_approve_a_change_from_their_own_session(
    project_skill: ProjectSkill, propose: Callable[..., Any], lead_client: Client
) -> None:
    body = suggestion(project_skill)
    body["evidence"]["user"] = "liam-lead"  # the session that prompted it was Liam's
    created = propose(body).json()
    response = decide(lead_client, created["id"], "approve")
    assert response.status_code == 403
    assert "your own session" in response.json()["detail"]


def test_a_reviewer_token_with_the_decide_scope_approves(
    proposal_id: int, lead_user: User, make_token: Callable[..., str]
) -> None:
    response = decide(Client(), proposal_id, "approve", headers=auth(make_token(lead_user, "reviews:decide")))
    assert response.status_code == 200
    assert response.json()["state"] == "approved"


def test_dismiss_needs_a_reason_and_is_recorded(
    proposal_id: int, lead_client: Client, lead_user: User
) -> None:
    assert decide(lead_client, proposal_id, "dismiss", {"reason": " "}).status_code == 422
    response = decide(lead_client, proposal_id, "dismiss", {"reason": "the skill already says this"})
    assert response.status_code == 200
    proposal = Proposal.objects.get(pk=proposal_id)
    assert proposal.state == ProposalState.DISMISSED and proposal.decided_by == lead_user
    assert (
        AuditEntry.objects.get(action="proposal.dismissed").evidence["reason"]
        == "the skill already says this"
    )
    assert decide(lead_client, proposal_id, "approve").status_code == 409


def test_approving_twice_is_refused(proposal_id: int, lead_client: Client, admin_client: Client) -> None:
    assert decide(lead_client, proposal_id, "approve").status_code == 200
    response = decide(admin_client, proposal_id, "approve")
    assert response.status_code == 409
    assert Proposal.objects.get(pk=proposal_id).result_version.number == 2  # type: ignore[union-attr]


def test_the_kill_switch_also_stops_approvals(
    proposal_id: int, lead_client: Client, project_skill: ProjectSkill
) -> None:
    with override_settings(SELF_EVOLUTION_ENABLED=False):
        response = decide(lead_client, proposal_id, "approve")
    assert response.status_code == 403
    assert SkillVersion.objects.filter(skill=project_skill.skill).count() == 1


def test_approving_one_makes_the_other_open_proposals_stale(
    project_skill: ProjectSkill, propose: Callable[..., Any], lead_client: Client
) -> None:
    first = propose(suggestion(project_skill)).json()
    second = propose(
        suggestion(project_skill, proposed_text=improved(project_skill.text, "4. Announce it.\n"))
    ).json()
    assert decide(lead_client, first["id"], "approve").status_code == 200
    assert Proposal.objects.get(pk=second["id"]).state == ProposalState.STALE
    response = decide(lead_client, second["id"], "approve")
    assert response.status_code == 409


def test_reviewers_tools_list_the_pending_proposals_they_see(
    proposal_id: int, lead_user: User, outsider_user: User, make_token: Callable[..., str]
) -> None:
    listed = Client().get(
        "/api/v1/reviews/suggestions", headers=auth(make_token(lead_user, "reviews:decide"))
    )
    assert listed.status_code == 200
    assert [p["id"] for p in listed.json()] == [proposal_id]
    elsewhere = Client().get(
        "/api/v1/reviews/suggestions", headers=auth(make_token(outsider_user, "reviews:decide"))
    )
    assert elsewhere.json() == []
    bad = Client().get(
        "/api/v1/reviews/suggestions?state=nope", headers=auth(make_token(lead_user, "reviews:decide"))
    )
    assert bad.status_code == 422


def test_dashboard_card_counts_what_waits_for_the_lead(proposal_id: int, lead_client: Client) -> None:
    from governance.reviews.selectors import dashboard_cards

    lead = User.objects.get(username="liam-lead")
    card = dashboard_cards(lead)[0]
    assert (card.title, card.value) == ("Review queue", "1")
    assert "deploy: waiting" in card.items[0]
    assert "Review queue" in lead_client.get("/").content.decode()
