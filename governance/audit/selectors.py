"""Reads of the governance ledger: filtered for the admin page and the JSON-lines export."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from governance.audit.models import AuditEntry


@dataclass(frozen=True, slots=True)
class LedgerFilters:
    actor: str = ""
    action: str = ""
    target_type: str = ""
    target: str = ""
    since: date | None = None
    until: date | None = None


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_current_timezone())


def ledger_entries(*, filters: LedgerFilters) -> QuerySet[AuditEntry]:
    """Entries newest first, narrowed by every filter given."""
    qs = AuditEntry.objects.all().order_by("-at", "-id")
    if filters.actor:
        qs = qs.filter(actor_label__icontains=filters.actor)
    if filters.action:
        qs = qs.filter(action=filters.action)
    if filters.target_type:
        qs = qs.filter(target_type=filters.target_type)
    if filters.target:
        qs = qs.filter(Q(target_label__icontains=filters.target) | Q(target_id=filters.target))
    if filters.since:
        qs = qs.filter(at__gte=_day_start(filters.since))
    if filters.until:
        qs = qs.filter(at__lt=_day_start(filters.until) + timedelta(days=1))
    return qs


def ledger_actions() -> list[str]:
    return sorted(set(AuditEntry.objects.values_list("action", flat=True).distinct()))


def ledger_target_types() -> list[str]:
    return sorted(set(AuditEntry.objects.values_list("target_type", flat=True).distinct()))
