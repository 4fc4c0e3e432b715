"""Reads of the reviews concern, for pages and the API."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.db.models import Count, Q, QuerySet
from django.urls import reverse
from django.utils import timezone
from django.utils.timesince import timesince

from governance.reviews.models import Delivery, DeliveryMode, DeliveryState, Proposal, ProposalState
from governance.skills.models import Skill, SkillVersion
from governance.telemetry.selectors import SkillHealth, Window, merge_health, skill_health
from portal.accounts.models import Role, Team
from portal.accounts.services import user_role
from portal.dashboard import Card

FLAGS = ("stale", "bloat", "duplicate")


def _proposals() -> QuerySet[Proposal]:
    return Proposal.objects.select_related(
        "skill",
        "skill__source",
        "skill__current_version",
        "team",
        "project",
        "base_version",
        "result_version",
        "decided_by",
        "duplicate_of",
    )


def proposal_get(*, proposal_id: int) -> Proposal | None:
    return _proposals().prefetch_related("deliveries", "comments__author").filter(pk=proposal_id).first()


def visible_team_ids(user: User) -> set[int] | None:
    """Teams whose proposals ``user`` sees; None means every team (admins)."""
    if user_role(user) is Role.ADMIN:
        return None
    return set(Team.objects.filter(memberships__user_id=user.pk).values_list("id", flat=True))


def proposal_visible(*, user: User, proposal: Proposal) -> bool:
    teams = visible_team_ids(user)
    return teams is None or proposal.team_id in teams or proposal.proposer_id == user.pk


@dataclass(frozen=True, slots=True)
class QueueFilters:
    team: str = ""
    skill: str = ""
    state: str = "pending"
    flag: str = ""
    min_age_days: int | None = None


def proposals_queue(*, user: User, filters: QueueFilters) -> QuerySet[Proposal]:
    """The queue, oldest first, limited to what ``user`` may see."""
    qs = _proposals()
    teams = visible_team_ids(user)
    if teams is not None:
        qs = qs.filter(Q(team_id__in=teams) | Q(proposer_id=user.pk))
    if filters.team:
        qs = qs.filter(team__slug=filters.team)
    if filters.skill:
        qs = qs.filter(skill__name__icontains=filters.skill)
    if filters.state and filters.state != "all":
        qs = qs.filter(state=filters.state)
    if filters.flag == "stale":
        qs = qs.filter(flag_stale=True)
    elif filters.flag == "bloat":
        qs = qs.filter(flag_bloat=True)
    elif filters.flag == "duplicate":
        qs = qs.filter(duplicate_of__isnull=False)
    elif filters.flag == "none":
        qs = qs.filter(flag_stale=False, flag_bloat=False, duplicate_of__isnull=True)
    if filters.min_age_days:
        qs = qs.filter(created_at__lte=timezone.now() - timedelta(days=filters.min_age_days))
    return qs.order_by("created_at", "id")


def state_counts(*, user: User) -> dict[str, int]:
    qs = Proposal.objects.all()
    teams = visible_team_ids(user)
    if teams is not None:
        qs = qs.filter(Q(team_id__in=teams) | Q(proposer_id=user.pk))
    counts = {state.value: 0 for state in ProposalState}
    for row in qs.values("state").annotate(n=Count("id")):
        counts[row["state"]] = row["n"]
    return counts


def teams_for_filter(*, user: User) -> QuerySet[Team]:
    teams = visible_team_ids(user)
    qs = Team.objects.order_by("name")
    return qs if teams is None else qs.filter(id__in=teams)


def recent_versions(*, skill: Skill, limit: int = 8) -> QuerySet[SkillVersion]:
    return SkillVersion.objects.filter(skill=skill).select_related("created_by").order_by("-number")[:limit]


def skill_usage(*, skill: Skill, days: int = 30) -> SkillHealth | None:
    """Telemetry health of a catalog skill over the last ``days`` (None when never reported)."""
    rows = skill_health(window=Window.last(days), skill_id=skill.pk)
    return merge_health(rows) if rows else None


def delivery_get(*, delivery_id: int) -> Delivery | None:
    return Delivery.objects.filter(pk=delivery_id).first()


def delivered_patch(*, delivery_id: int) -> Delivery | None:
    """A delivery whose result is a patch to download (read-only projects), once it is made."""
    return Delivery.objects.filter(
        pk=delivery_id, mode=DeliveryMode.PATCH, state=DeliveryState.DELIVERED
    ).first()


def deliveries_of(*, proposal: Proposal) -> QuerySet[Delivery]:
    return (
        Delivery.objects.filter(proposal=proposal)
        .select_related("version", "requested_by")
        .order_by("created_at")
    )


def dashboard_cards(user: User) -> list[Card]:
    """Pending proposals the user sees; for leads and admins, the ones waiting for their decision."""
    from portal.accounts.services import user_led_team_ids

    counts = state_counts(user=user)
    pending = counts[ProposalState.PENDING]
    led = user_led_team_ids(user)
    mine = Proposal.objects.filter(state=ProposalState.PENDING, team_id__in=led).exclude(proposer_id=user.pk)
    oldest = mine.order_by("created_at").values_list("skill__name", "created_at")[:5]
    items = [f"{name}: waiting {timesince(at)}" for name, at in oldest]
    if counts[ProposalState.FAILED]:
        items.insert(
            0,
            f"{counts[ProposalState.FAILED]} failed deliver{'y' if counts[ProposalState.FAILED] == 1 else 'ies'}",
        )
    to_decide = mine.count() if led else 0
    return [
        Card(
            title="Review queue",
            value=str(to_decide if led else pending),
            text=(
                "proposed skill changes waiting for your decision"
                if led
                else "proposed skill changes pending for your teams"
            ),
            url=reverse("reviews"),
            tone="warning" if (to_decide if led else 0) or counts[ProposalState.FAILED] else "",
            items=items,
            order=40,
        )
    ]


def proposals_by_ids(*, ids: list[int]) -> QuerySet[Proposal]:
    return _proposals().filter(pk__in=ids).order_by("created_at", "id")
