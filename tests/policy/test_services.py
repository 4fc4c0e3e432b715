"""Versioned policies: draft → published, admins only, validation, audit for every change."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied

from governance.audit.models import AuditEntry
from governance.engine.policydoc import document_sha256
from governance.policy.models import PolicyStatus, PolicyVersion
from governance.policy.services import (
    PolicyInvalid,
    PolicyStateError,
    policy_draft_discard,
    policy_draft_open,
    policy_draft_update,
    policy_publish,
)

DENY_EVIL: dict[str, Any] = {
    "source_rules": [{"effect": "deny", "kind": "repository", "pattern": "https://github.com/evil/skills"}]
}


@pytest.mark.django_db
def test_admin_drafts_edits_and_publishes_with_audit(admin_user: User) -> None:
    draft = policy_draft_update(actor=admin_user, document=DENY_EVIL, note="block evil")
    assert draft.status == PolicyStatus.DRAFT and draft.number == 1
    assert draft.document["source_rules"][0]["pattern"] == "https://github.com/evil/skills"
    assert draft.document_sha256 == document_sha256(draft.document)
    published = policy_publish(actor=admin_user)
    assert published.pk == draft.pk and published.status == PolicyStatus.PUBLISHED
    assert published.published_by == admin_user and published.published_at is not None
    # the next draft starts from the published version; publishing supersedes it
    second = policy_draft_update(
        actor=admin_user, document={**DENY_EVIL, "disable_skill_shell_execution": True}
    )
    assert second.number == 2 and second.based_on_id == published.pk
    policy_publish(actor=admin_user, note="no inline shell")
    published.refresh_from_db()
    assert published.status == PolicyStatus.SUPERSEDED
    actions = list(AuditEntry.objects.order_by("id").values_list("action", flat=True))
    assert actions == [
        "policy.draft_opened",
        "policy.draft_updated",
        "policy.published",
        "policy.draft_opened",
        "policy.draft_updated",
        "policy.published",
    ]
    last = AuditEntry.objects.filter(action="policy.published").order_by("-id").first()
    assert last is not None and last.actor == admin_user
    assert last.before_sha256 == published.document_sha256
    assert {"path": "disable_skill_shell_execution", "change": "changed"} in last.evidence["changes"]


@pytest.mark.django_db
@pytest.mark.parametrize("actor", ["lead_user", "developer_user"])
def test_only_admins_edit(actor: str, request: pytest.FixtureRequest) -> None:
    user = request.getfixturevalue(actor)
    with pytest.raises(PermissionDenied):
        policy_draft_update(actor=user, document=DENY_EVIL)
    with pytest.raises(PermissionDenied):
        policy_publish(actor=user)
    assert not PolicyVersion.objects.exists() and not AuditEntry.objects.exists()


@pytest.mark.django_db
def test_invalid_document_writes_nothing(admin_user: User) -> None:
    with pytest.raises(PolicyInvalid) as caught:
        policy_draft_update(actor=admin_user, document={"skill_rules": [{"effect": "deny"}]})
    assert "skill_rules[0].name" in caught.value.errors
    assert not PolicyVersion.objects.exists() and not AuditEntry.objects.exists()


@pytest.mark.django_db
def test_publish_without_draft_and_discard(admin_user: User) -> None:
    with pytest.raises(PolicyStateError):
        policy_publish(actor=admin_user)
    policy_draft_open(actor=admin_user)
    policy_draft_discard(actor=admin_user)
    assert not PolicyVersion.objects.exists()
    assert AuditEntry.objects.filter(action="policy.draft_discarded").count() == 1


@pytest.mark.django_db
def test_unchanged_save_is_not_a_change(admin_user: User) -> None:
    policy_draft_update(actor=admin_user, document=DENY_EVIL)
    policy_draft_update(actor=admin_user, document=DENY_EVIL)
    assert AuditEntry.objects.filter(action="policy.draft_updated").count() == 1
