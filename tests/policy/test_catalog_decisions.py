"""Per-skill decisions and risk on the catalog pages, under the published policy."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from governance.policy.services import policy_draft_update, policy_publish
from tests.conftest import Org
from tests.policy.factories import stored_skill


@pytest.mark.django_db
def test_catalog_shows_decision_and_risk(developer_client: Client, admin_user: User, org: Org) -> None:
    risky = stored_skill(
        "shell-tools",
        project=org.payments_api,
        frontmatter={"allowed-tools": "Bash", "hooks": {"PostToolUse": []}},
        extra_files={"scripts/run.sh": b"echo\n"},
    )
    stored_skill("plain", project=org.payments_api)
    listing = developer_client.get("/catalog/").content.decode()
    assert 'data-decision="ask"' in listing and 'data-decision="allow"' in listing
    assert "high risk" in listing
    detail = developer_client.get(f"/catalog/skills/{risky.pk}/")
    assert detail.status_code == 200
    page = detail.content.decode()
    assert 'data-testid="decision">ask<' in page
    assert "risk: high" in page and "allowed-tools-workspace-trust" in page
    assert "declared, <strong>blocked</strong>" in page
    assert "scripts/run.sh" in page
    overview = developer_client.get("/policy/").content.decode()
    assert "allow 1</span>" in overview and "ask 1</span>" in overview and "deny 0</span>" in overview
    policy_draft_update(actor=admin_user, document={"skill_rules": [{"effect": "deny", "name": "shell-*"}]})
    policy_publish(actor=admin_user)
    page = developer_client.get(f"/catalog/skills/{risky.pk}/").content.decode()
    assert 'data-testid="decision">deny<' in page and "under policy v1" in page
    assert "deny rule matches (deny name=shell-*)" in page
    overview = developer_client.get("/policy/").content.decode()
    assert "deny 1</span>" in overview and "ask 0</span>" in overview  # the cached counts follow the policy
