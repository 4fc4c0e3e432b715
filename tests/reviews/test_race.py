"""Two approvals racing on the same base: one applies, the other becomes stale."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from governance.reviews import services
from governance.reviews.models import Delivery, Proposal, ProposalState
from governance.skills.models import SkillVersion
from portal.accounts.models import Role
from tests.conftest import Org, _make_user
from tests.reviews.conftest import ProjectSkill, improved, suggestion


@pytest.mark.django_db(transaction=True)
def test_two_approvals_on_the_same_base_one_applies_the_other_turns_stale(
    project_skill: ProjectSkill, propose: Callable[..., Any], lead_user: User, org: Org
) -> None:
    second_lead = _make_user(org, "lena-lead", Role.LEAD, [org.payments])
    first = propose(suggestion(project_skill)).json()["id"]
    second = propose(
        suggestion(project_skill, proposed_text=improved(project_skill.text, "4. Announce it.\n"))
    ).json()["id"]

    start = threading.Barrier(2)
    outcomes: dict[int, str] = {}

    def approve(proposal_id: int, reviewer: User) -> None:
        try:
            start.wait(timeout=10)
            services.proposal_approve(proposal_id=proposal_id, reviewer=reviewer)
            outcomes[proposal_id] = "approved"
        except services.Conflict as exc:
            outcomes[proposal_id] = f"conflict: {exc.message}"
        finally:
            connection.close()

    threads = [
        threading.Thread(target=approve, args=(first, lead_user)),
        threading.Thread(target=approve, args=(second, second_lead)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(v.split(":")[0] for v in outcomes.values()) == ["approved", "conflict"], outcomes
    winner = next(pid for pid, v in outcomes.items() if v == "approved")
    loser = next(pid for pid, v in outcomes.items() if v != "approved")
    assert "stale" in outcomes[loser]
    assert Proposal.objects.get(pk=winner).state == ProposalState.APPROVED or Proposal.objects.get(
        pk=winner
    ).state in (ProposalState.APPLIED, ProposalState.FAILED)
    assert Proposal.objects.get(pk=loser).state == ProposalState.STALE
    # Exactly one new version, and it is the winner's.
    versions = SkillVersion.objects.filter(skill=project_skill.skill).order_by("number")
    assert [v.number for v in versions] == [1, 2]
    project_skill.skill.refresh_from_db()
    assert project_skill.skill.current_version == Proposal.objects.get(pk=winner).result_version
    assert Delivery.objects.filter(proposal_id=loser).count() == 0


@pytest.mark.django_db
def test_a_reviewer_holding_an_old_page_cannot_overwrite_a_newer_version(
    project_skill: ProjectSkill, propose: Callable[..., Any], lead_user: User, admin_user: User
) -> None:
    """The check reads the database under the lock, never the caller's copy of the proposal."""
    first = propose(suggestion(project_skill)).json()["id"]
    second = propose(
        suggestion(project_skill, proposed_text=improved(project_skill.text, "4. Announce it.\n"))
    ).json()["id"]
    Proposal.objects.filter(pk=second).update(state=ProposalState.PENDING)
    services.proposal_approve(proposal_id=first, reviewer=lead_user)
    Proposal.objects.filter(pk=second).update(state=ProposalState.PENDING)  # as if the sweep had not run
    with pytest.raises(services.Conflict, match="stale"):
        services.proposal_approve(proposal_id=second, reviewer=admin_user)
    assert Proposal.objects.get(pk=second).state == ProposalState.STALE
    assert SkillVersion.objects.filter(skill=project_skill.skill).count() == 2
