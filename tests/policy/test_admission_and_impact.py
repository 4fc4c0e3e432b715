"""Source admission from the published policy, per-skill decisions and the impact preview."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from governance.audit.models import AuditEntry
from governance.engine.types import SourceKind
from governance.policy.admission import source_admission
from governance.policy.selectors import (
    policy_document,
    policy_draft,
    policy_impact,
    published_document,
    skill_permissions,
)
from governance.policy.services import policy_draft_update, policy_publish
from tests.conftest import Org
from tests.policy.factories import stored_skill

SPELLINGS = [
    "git@github.com:evil/skills.git",
    "https://github.com/evil/skills",
    "https://github.com/evil/skills/",
    "https://GitHub.com/Evil/Skills.git",
]


@pytest.mark.django_db
def test_without_a_published_policy_everything_is_admitted() -> None:
    assert source_admission(kind="git", location=SPELLINGS[0]).allowed
    assert not AuditEntry.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_a_denied_repository_is_refused_and_logged(
    admin_user: User, admin_client: Client, spelling: str
) -> None:
    policy_draft_update(
        actor=admin_user,
        document={"source_rules": [{"effect": "deny", "kind": "repository", "pattern": "evil/skills"}]},
    )
    # a draft does not apply until published
    assert source_admission(kind="git", location=spelling).allowed
    policy_publish(actor=admin_user)
    result = source_admission(kind="git", location=spelling, actor=admin_user)
    assert not result.allowed and result.policy_version == 1
    entry = AuditEntry.objects.get(action="source.refused")
    assert entry.actor == admin_user
    assert entry.evidence["identity"] == "github.com/evil/skills"
    assert entry.evidence["location"] == spelling
    assert source_admission(kind="git", location="https://github.com/acme/ok").allowed
    overview = admin_client.get("/policy/").content.decode()
    assert spelling in overview and "denied by source rule" in overview


@pytest.mark.django_db
def test_skill_permissions_use_the_published_policy(admin_user: User, org: Org) -> None:
    plain = stored_skill("plain", project=org.payments_api)
    tools = stored_skill(
        "shell-tools",
        project=org.payments_api,
        frontmatter={"allowed-tools": "Bash", "preExec": "x"},
        extra_files={"scripts/run.sh": b"echo hi\n"},
    )
    perms = skill_permissions([plain.pk, tools.pk])
    assert perms[plain.pk].decision.decision.value == "allow"
    tool_perm = perms[tools.pk]
    assert tool_perm.decision.decision.value == "ask"
    assert tool_perm.decision.unreviewed_keys == ["preExec"]
    assert tool_perm.risk.level.value == "high"
    assert tool_perm.risk.scripts == ["scripts/run.sh"]
    assert {f.code for f in tool_perm.risk.findings} == {
        "allowed-tools-unscoped",
        "allowed-tools-workspace-trust",
    }
    policy_draft_update(actor=admin_user, document={"skill_rules": [{"effect": "deny", "team": "payments"}]})
    policy_publish(actor=admin_user)
    after = skill_permissions([plain.pk])[plain.pk]
    assert after.decision.decision.value == "deny"
    assert after.decision.reasons[0].rule == "deny team=payments"


@pytest.mark.django_db
def test_impact_preview_lists_changed_skills_blocked_sources_and_projects(admin_user: User, org: Org) -> None:
    stored_skill("deploy", project=org.payments_api)
    stored_skill("infra-tool", project=org.infra, location="https://github.com/acme/infra")
    stored_skill(
        "lint", kind=SourceKind.PLUGIN, plugin="acme-tools", location="https://github.com/shady/market"
    )
    policy_draft_update(
        actor=admin_user,
        document={
            "skill_rules": [{"effect": "deny", "name": "deploy"}],
            "source_rules": [
                {"effect": "deny", "kind": "repository", "pattern": "git@github.com:Shady/Market.git"}
            ],
        },
    )
    draft = policy_draft()
    assert draft is not None
    impact = policy_impact(before=published_document(), after=policy_document(draft))
    assert impact.skills_checked == 3
    assert [
        (c.skill.qualified_name, c.before.decision.value, c.after.decision.value)
        for c in impact.decision_changes
    ] == [("deploy", "allow", "deny")]
    assert [s.location for s in impact.sources_blocked] == ["https://github.com/shady/market"]
    assert impact.projects == ["payments-api"]
    assert impact.counts == {"allow→deny": 1}
