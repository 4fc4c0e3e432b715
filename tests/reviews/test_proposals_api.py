"""POST /api/v1/reviews/suggestions: each refusal gate (4xx, nothing stored) and each flag."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from governance.audit.models import AuditEntry
from governance.reviews.models import Proposal, ProposalState
from governance.skills.models import Skill, Source
from tests.reviews.conftest import ProjectSkill, auth, improved, store_version, suggestion

pytestmark = pytest.mark.django_db


def assert_refused(response: Any, status: int, fragment: str) -> None:
    assert response.status_code == status, response.content
    assert fragment in response.json()["detail"]
    assert Proposal.objects.count() == 0
    refusal = AuditEntry.objects.get(action="proposal.refused")
    assert fragment in refusal.evidence["reason"]


def test_accepted_proposal_is_stored_pending_and_routed(
    project_skill: ProjectSkill, propose: Callable[..., Any], developer_user: User
) -> None:
    response = propose(suggestion(project_skill))
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["state"] == "pending"
    assert body["flags"] == []
    assert body["team"] == "Payments"
    proposal = Proposal.objects.get(pk=body["id"])
    assert proposal.proposer == developer_user
    assert proposal.base_version == project_skill.v1
    assert proposal.proposed_text == improved(project_skill.text)
    assert proposal.updates[0]["reason"].startswith("user:")
    assert proposal.evidence["session_id"] == "s-123"
    entry = AuditEntry.objects.get(action="proposal.received")
    assert entry.before_sha256 == project_skill.sha
    assert entry.after_sha256 == proposal.proposed_sha256
    # Nothing was written to the skill: proposing is not applying.
    project_skill.skill.refresh_from_db()
    assert project_skill.skill.current_version_id == project_skill.v1.pk


def test_get_returns_the_state(
    project_skill: ProjectSkill, propose: Callable[..., Any], agent_token: str
) -> None:
    created = propose(suggestion(project_skill)).json()
    response = Client().get(f"/api/v1/reviews/suggestions/{created['id']}", headers=auth(agent_token))
    assert response.status_code == 200
    assert response.json()["state"] == "pending"


def test_a_diff_against_the_base_is_accepted(
    project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    diff = (
        "--- a/SKILL.md\n+++ b/SKILL.md\n@@ -11,1 +11,2 @@\n"
        " 3. Run `make deploy ENV=staging`; success: the health check answers 200.\n"
        "+4. Check `scripts/check.sh`; success: it prints ok.\n"
    )
    response = propose(suggestion(project_skill, proposed_text=None, diff=diff))
    assert response.status_code == 201, response.content
    assert Proposal.objects.get().proposed_text == improved(project_skill.text)


@pytest.mark.parametrize("kind", ["user", "plugin", "managed", "bundled", "mcp"])
def test_refused_when_the_agent_names_a_non_project_skill(
    kind: str, project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    body = suggestion(project_skill)
    body["skill"]["source"] = kind
    assert_refused(propose(body), 422, f"{kind} skills are never targets")


def test_refused_when_the_catalog_says_the_skill_is_not_a_project_skill(
    project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    user_source = Source.objects.create(kind="user", identity="local:/home/dana/.claude/skills")
    skill = Skill.objects.create(source=user_source, location="deploy", name="deploy")
    store_version(skill, project_skill.text)
    body = suggestion(project_skill, skill={"name": "deploy", "source": "project", "catalog_id": skill.pk})
    assert_refused(propose(body), 422, "user skills are never targets")


def test_refused_when_an_update_has_no_reason(
    project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    updates = [
        {"section": "Steps", "change": "add a step", "reason": "user corrected step 3 twice"},
        {"section": "Steps", "change": "reword", "reason": "   "},
    ]
    assert_refused(
        propose(suggestion(project_skill, updates=updates)), 422, "update 2 (section 'Steps') has no reason"
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("allowed-tools: Bash(make:*) Bash(git:*)\n", "allowed-tools: Bash\n"),  # widening privileges
        ("name: deploy\n", "name: deploy \n"),  # one trailing space
        ("---\nname", "---\r\nname"),  # a line ending
    ],
)
def test_refused_when_the_frontmatter_differs_by_one_byte(
    old: str, new: str, project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    proposed = improved(project_skill.text).replace(old, new, 1)
    assert proposed != improved(project_skill.text)
    assert_refused(
        propose(suggestion(project_skill, proposed_text=proposed)),
        422,
        "frontmatter differs from the base at byte",
    )


def test_refused_when_the_frontmatter_is_reparsed_equal_but_not_byte_equal(
    project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    # Same YAML meaning (quoted string), different bytes: the gate is a byte comparison.
    proposed = improved(project_skill.text).replace("name: deploy\n", 'name: "deploy"\n')
    assert_refused(propose(suggestion(project_skill, proposed_text=proposed)), 422, "frontmatter differs")


def test_refused_when_self_evolution_is_switched_off(
    project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    with override_settings(SELF_EVOLUTION_ENABLED=False):
        assert_refused(propose(suggestion(project_skill)), 403, "self-evolution is switched off")


def test_the_proposing_token_has_no_route_that_writes_a_skill(
    project_skill: ProjectSkill, propose: Callable[..., Any], agent_token: str
) -> None:
    created = propose(suggestion(project_skill)).json()
    for action, body in (("approve", {}), ("dismiss", {"reason": "no"})):
        response = Client().post(
            f"/api/v1/reviews/suggestions/{created['id']}/{action}",
            data=body,
            content_type="application/json",
            headers=auth(agent_token),
        )
        assert response.status_code == 401, action
    assert Proposal.objects.get().state == ProposalState.PENDING


def test_refused_when_the_base_is_unknown(project_skill: ProjectSkill, propose: Callable[..., Any]) -> None:
    assert_refused(propose(suggestion(project_skill, base_sha256="0" * 64)), 409, "matches no stored version")


def test_refused_when_the_diff_does_not_apply(
    project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    diff = "@@ -2,1 +2,1 @@\n-name: other\n+name: deploy\n"
    assert_refused(propose(suggestion(project_skill, proposed_text=None, diff=diff)), 422, "does not apply")


def test_flag_stale_when_the_base_is_not_current(
    project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    store_version(project_skill.skill, improved(project_skill.text, "5. Announce in #deploys.\n"))
    response = propose(suggestion(project_skill))
    assert response.status_code == 201
    body = response.json()
    assert body["state"] == "stale"
    assert body["flags"] == ["stale"]
    assert body["base_sha256"] == project_skill.sha != body["current_sha256"]


def test_flag_bloat_when_the_added_text_is_already_in_the_skill(
    project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    restated = improved(
        project_skill.text, "- run the tests with `make test`;   success: every test passes\n"
    )
    response = propose(suggestion(project_skill, proposed_text=restated))
    assert response.status_code == 201
    assert response.json()["flags"] == ["bloat"]
    assert Proposal.objects.get().flag_bloat


def test_flag_duplicate_when_an_open_proposal_makes_the_same_change(
    project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    first = propose(suggestion(project_skill)).json()
    # The same change, spelled with another bullet and spacing.
    again = improved(project_skill.text, "-  4. check `scripts/check.sh`;  success: it prints ok\n")
    second = propose(suggestion(project_skill, proposed_text=again)).json()
    assert first["flags"] == []
    assert second["flags"] == ["duplicate"]
    assert Proposal.objects.get(pk=second["id"]).duplicate_of_id == first["id"]


def test_a_token_without_the_scope_is_refused(
    project_skill: ProjectSkill,
    propose: Callable[..., Any],
    developer_user: User,
    make_token: Callable[..., str],
) -> None:
    response = propose(suggestion(project_skill), token=make_token(developer_user, "skills:read"))
    assert response.status_code == 401
    assert Proposal.objects.count() == 0


def test_refused_when_the_base_has_no_frontmatter_the_gate_can_delimit(
    project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    # Fail-safe: with nothing to compare, the gate refuses instead of comparing two absences.
    broken = "# Deploy\n1. Run the tests.\n"
    v2 = store_version(project_skill.skill, broken)
    body = suggestion(
        project_skill, base_sha256=v2.skill_md_sha256, proposed_text="allowed-tools: Bash\n" + broken
    )
    assert_refused(propose(body), 422, "does not start with a closed --- frontmatter block")


def test_refused_when_the_skill_was_removed_from_its_repository(
    project_skill: ProjectSkill, propose: Callable[..., Any]
) -> None:
    from django.utils import timezone

    Skill.objects.filter(pk=project_skill.skill.pk).update(removed_at=timezone.now())
    body = suggestion(
        project_skill, skill={"name": "deploy", "source": "project", "catalog_id": project_skill.skill.pk}
    )
    assert_refused(propose(body), 409, "was removed from its repository")
