from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from governance.audit.models import AuditEntry


def audit_record(
    *,
    actor: AbstractBaseUser | AnonymousUser | None,
    action: str,
    target_type: str,
    target_id: str | int = "",
    target_label: str = "",
    evidence: dict[str, Any] | None = None,
    before_sha256: str = "",
    after_sha256: str = "",
    actor_label: str | None = None,
) -> AuditEntry:
    """Append one ledger entry. Entries are never updated or deleted."""
    user = actor if actor is not None and actor.is_authenticated else None
    label = actor_label or (user.get_username() if user is not None else "system")
    return AuditEntry.objects.create(
        actor=user,  # type: ignore[misc]
        actor_label=label,
        action=action,
        target_type=target_type,
        target_id=str(target_id),
        target_label=target_label[:300],
        evidence=evidence or {},
        before_sha256=before_sha256,
        after_sha256=after_sha256,
    )
