"""Writes of the policy concern: drafts, edits, publishing. Admins only; every change is audited."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from governance.audit.services import audit_record
from governance.engine.policydoc import (
    Errors,
    diff_documents,
    document_sha256,
    empty_document,
    parse_document,
)
from governance.policy.models import PolicyStatus, PolicyVersion
from portal.accounts.services import user_is_admin

Actor = AbstractBaseUser | AnonymousUser


class PolicyInvalid(ValueError):
    """The document has errors; ``errors`` maps each wrong field's path to its messages."""

    def __init__(self, errors: Errors) -> None:
        self.errors = errors
        first = next(iter(errors.items()))
        super().__init__(f"{first[0] or 'policy'}: {first[1][0]}")


class PolicyStateError(ValueError):
    pass


def _require_admin(actor: Actor) -> None:
    if not user_is_admin(actor):
        raise PermissionDenied("only admins change the policy")


def _user(actor: Actor) -> Any:
    return actor if actor.is_authenticated else None


@transaction.atomic
def policy_draft_open(*, actor: Actor) -> PolicyVersion:
    """The open draft, created from the published version (or an empty policy) when there is none."""
    _require_admin(actor)
    draft = PolicyVersion.objects.select_for_update().filter(status=PolicyStatus.DRAFT).first()
    if draft is not None:
        return draft
    published = PolicyVersion.objects.filter(status=PolicyStatus.PUBLISHED).first()
    document = published.document if published is not None else empty_document()
    number = (PolicyVersion.objects.aggregate(m=Max("number"))["m"] or 0) + 1
    draft = PolicyVersion.objects.create(
        number=number,
        status=PolicyStatus.DRAFT,
        document=document,
        document_sha256=document_sha256(document),
        based_on=published,
        created_by=_user(actor),
        updated_by=_user(actor),
    )
    audit_record(
        actor=actor,
        action="policy.draft_opened",
        target_type="policy",
        target_id=draft.number,
        target_label=f"policy v{draft.number}",
        evidence={"based_on": published.number if published else None},
        after_sha256=draft.document_sha256,
    )
    return draft


@transaction.atomic
def policy_draft_update(
    *, actor: Actor, document: Any, note: str = "", base_sha256: str = ""
) -> PolicyVersion:
    """Replace the draft's document after validating it; nothing is written when it has errors.

    ``base_sha256`` is the hash of the document the editor started from: when another admin
    saved in between, the update is refused instead of silently overwriting their change.
    """
    _require_admin(actor)
    parsed, errors = parse_document(document)
    if errors:
        raise PolicyInvalid(errors)
    draft = policy_draft_open(actor=actor)
    draft = PolicyVersion.objects.select_for_update().get(pk=draft.pk)
    if base_sha256 and base_sha256 != draft.document_sha256:
        raise PolicyStateError(
            "the draft changed since you opened it (another admin saved); reload and apply your change again"
        )
    canonical = parsed.as_dict()
    after = document_sha256(canonical)
    if after == draft.document_sha256 and (not note or note == draft.note):
        return draft
    before = draft.document_sha256
    changes, _ = diff_documents(draft.document, canonical)
    draft.document = canonical
    draft.document_sha256 = after
    if note:
        draft.note = note.strip()[:300]
    draft.updated_by = _user(actor)
    draft.updated_at = timezone.now()
    draft.save(update_fields=["document", "document_sha256", "note", "updated_by", "updated_at"])
    audit_record(
        actor=actor,
        action="policy.draft_updated",
        target_type="policy",
        target_id=draft.number,
        target_label=f"policy v{draft.number}",
        evidence={"changes": [{"path": c.path, "change": c.change} for c in changes][:200]},
        before_sha256=before,
        after_sha256=after,
    )
    return draft


@transaction.atomic
def policy_publish(*, actor: Actor, note: str = "") -> PolicyVersion:
    """Publish the open draft; the previously published version becomes superseded."""
    _require_admin(actor)
    draft = PolicyVersion.objects.select_for_update().filter(status=PolicyStatus.DRAFT).first()
    if draft is None:
        raise PolicyStateError("there is no draft to publish")
    _, errors = parse_document(draft.document)
    if errors:
        raise PolicyInvalid(errors)
    previous = PolicyVersion.objects.select_for_update().filter(status=PolicyStatus.PUBLISHED).first()
    if previous is not None:
        previous.status = PolicyStatus.SUPERSEDED
        previous.save(update_fields=["status"])
    now = timezone.now()
    draft.status = PolicyStatus.PUBLISHED
    draft.published_by = _user(actor)
    draft.published_at = now
    if note:
        draft.note = note.strip()[:300]
    draft.save(update_fields=["status", "published_by", "published_at", "note"])
    changes, _ = diff_documents(previous.document if previous else empty_document(), draft.document)
    audit_record(
        actor=actor,
        action="policy.published",
        target_type="policy",
        target_id=draft.number,
        target_label=f"policy v{draft.number}",
        evidence={
            "previous": previous.number if previous else None,
            "note": draft.note,
            "changes": [{"path": c.path, "change": c.change} for c in changes][:200],
        },
        before_sha256=previous.document_sha256 if previous else "",
        after_sha256=draft.document_sha256,
    )
    return draft


@transaction.atomic
def policy_draft_discard(*, actor: Actor) -> None:
    _require_admin(actor)
    draft = PolicyVersion.objects.select_for_update().filter(status=PolicyStatus.DRAFT).first()
    if draft is None:
        raise PolicyStateError("there is no draft to discard")
    audit_record(
        actor=actor,
        action="policy.draft_discarded",
        target_type="policy",
        target_id=draft.number,
        target_label=f"policy v{draft.number}",
        before_sha256=draft.document_sha256,
    )
    draft.delete()
