"""Source admission: is a source allowed before anything of it is fetched or unpacked?

The ingest path calls ``source_admission`` first; the decision comes from the *published*
policy's source rules (deny wins; a non-empty allowlist admits only its entries; every spelling
of one repository is one identity). A refusal is written to the audit ledger; nothing of the
source is stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from governance.audit.services import audit_record
from governance.engine.sources import admit_source, canonical_identity


@dataclass(frozen=True, slots=True)
class Admission:
    allowed: bool
    reason: str
    rule: str = ""
    policy_version: int | None = None


def source_admission(
    *,
    kind: str,
    location: str,
    marketplace: str = "",
    actor: AbstractBaseUser | AnonymousUser | None = None,
) -> Admission:
    """Decide whether a source of ``kind`` at ``location`` (URL or path) may be ingested."""
    from governance.policy.selectors import policy_document, policy_published

    published = policy_published()
    if published is None:
        return Admission(allowed=True, reason="no published policy restricts sources")
    document = policy_document(published)
    result = admit_source(document.source_rules, kind=kind, location=location, marketplace=marketplace)
    admission = Admission(result.allowed, result.reason, result.rule, published.number)
    if not result.allowed:
        audit_record(
            actor=actor,
            action="source.refused",
            target_type="source",
            target_label=location,
            evidence={
                "kind": kind,
                "location": location,
                "identity": canonical_identity(location),
                "marketplace": marketplace,
                "reason": result.reason,
                "rule": result.rule,
                "policy_version": published.number,
            },
        )
    return admission
