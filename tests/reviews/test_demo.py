"""The reviews demo seeds pending proposals against demo project skills, once."""

from __future__ import annotations

import io

import pytest

from governance.reviews.demo import seed
from governance.reviews.models import Proposal, ProposalState
from governance.skills.models import Skill, Source
from portal.accounts.demo import seed_accounts
from tests.reviews.conftest import SKILL_MD, store_version

pytestmark = pytest.mark.django_db


def test_demo_seeds_pending_proposals_idempotently() -> None:
    demo = seed_accounts()
    source = Source.objects.create(
        kind="project", identity="github.com/acme-demo/payments-api", project=demo.projects["payments-api"]
    )
    skill = Skill.objects.create(source=source, location=".claude/skills/deploy", name="deploy")
    store_version(skill, SKILL_MD)
    out = io.StringIO()
    seed(demo=demo, stdout=out)
    seed(demo=demo, stdout=out)
    first, again = Proposal.objects.order_by("id")
    assert first.state == again.state == ProposalState.PENDING
    assert first.team == demo.teams["payments"]
    assert first.updates[0]["reason"].startswith("user:")
    assert again.duplicate_of == first
    assert "2 demo proposal(s) added" in out.getvalue()
    assert "0 demo proposal(s) added" in out.getvalue()


def test_demo_without_project_skills_says_so() -> None:
    out = io.StringIO()
    seed(demo=seed_accounts(), stdout=out)
    assert "no demo project skill yet" in out.getvalue()
    assert Proposal.objects.count() == 0
