"""Reads for the health pages and the skill page. Rollups only: never the event table.

Definitions (shown on the pages):
- invocations by trigger: user-slash, model, nested;
- degraded share: sessions in which the skill's listing entry was cut (truncated, name only or
  dropped) over the sessions in which the skill appeared at all;
- frecency (DOMAIN §8): uses × max(0.5^(days since last use / 7), 0.1), where uses are invocations
  with those within 60 s of the user's last counted one dropped (computed by the rollup);
- cost: the larger of api_request cost and the cost metric (Claude Code reports the same spend
  both ways; adding them would count it twice);
- trend: invocations of the last 7 days against the 7 days before (None when both are zero).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db.models import Count, F, FloatField, Func, Max, Q, QuerySet, Sum, Value
from django.db.models import Window as Over
from django.db.models.functions import Cast, Coalesce, Greatest, Least, Power, RowNumber
from django.utils import timezone

from governance.telemetry.models import FleetDaily, SkillDaily, SkillDay

STALE_AFTER_DAYS = 30
DEGRADED_SHARE_ALERT = 0.25
ANON_PREFIX = "anon-"
BUCKET_LABELS = {
    "custom_skill": "custom skills (anonymous bucket)",
    "third-party": "third-party skills (bucket)",
}
GROUPS = {"team": "team_id", "project": "project_id", "agent_version": "agent_version"}

SUMMED = (
    "events",
    "sessions",
    "loads",
    "inv_user",
    "inv_model",
    "inv_nested",
    "already_loaded",
    "uses",
    "ghosts",
    "cut_truncated",
    "cut_name_only",
    "cut_dropped",
    "degraded_sessions",
    "reinjections",
    "cut_tails",
    "tokens_cut",
    "evictions",
    "unloads",
    "denials",
    "hooks",
    "tokens",
    "cost_usd",
    "metric_tokens",
    "metric_cost_usd",
)


def frecency(usage_count: int, days_since_last_use: float | None) -> float:
    if usage_count <= 0 or days_since_last_use is None:
        return 0.0
    return usage_count * max(0.5 ** (days_since_last_use / 7), 0.1)


class DaysSince(Func):
    """Days (fractional) from the second datetime to the first, in SQL."""

    arity = 2
    output_field = FloatField()
    # double precision: EXTRACT returns numeric, and numeric POWER() costs ~30 µs a row.
    template = "(EXTRACT(EPOCH FROM (%(expressions)s))::double precision / 86400.0)"
    arg_joiner = " - "

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler,
            connection,
            template="(julianday(%(expressions)s))",
            arg_joiner=") - julianday(",
            **extra,
        )


def display_name(skill_key: str) -> str:
    if skill_key.startswith(ANON_PREFIX):
        return f"private-{skill_key[len(ANON_PREFIX) : len(ANON_PREFIX) + 8]}"
    return BUCKET_LABELS.get(skill_key, skill_key)


@dataclass
class Window:
    since: date
    until: date  # inclusive

    @classmethod
    def last(cls, days: int, *, today: date | None = None) -> Window:
        today = today or timezone.now().astimezone(UTC).date()
        return cls(since=today - timedelta(days=days - 1), until=today)

    @property
    def days(self) -> list[date]:
        return [self.since + timedelta(days=i) for i in range((self.until - self.since).days + 1)]


@dataclass
class Filters:
    team_id: int | None = None
    project_id: int | None = None
    agent_version: str = ""

    @property
    def active(self) -> bool:
        return bool(self.team_id or self.project_id or self.agent_version)

    def skills(self, *, group: str = "") -> QuerySet[Any]:
        """The skill rollup to read: per-skill totals unless a filter or a grouping needs dimensions."""
        if not self.active and group not in GROUPS:
            return SkillDay.objects.all()
        return self.apply(SkillDaily.objects.all())

    def apply(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.team_id:
            queryset = queryset.filter(team_id=self.team_id)
        if self.project_id:
            queryset = queryset.filter(project_id=self.project_id)
        if self.agent_version:
            queryset = queryset.filter(agent_version=self.agent_version)
        return queryset


@dataclass
class SkillHealth:
    skill_key: str
    skill_id: int | None
    group: Any = None
    group_label: str = ""
    totals: dict[str, float] = field(default_factory=dict)
    last_used_at: datetime | None = None
    previous_invocations: int = 0
    recent_invocations: int = 0

    def __getattr__(self, name: str) -> Any:
        totals = self.__dict__.get("totals", {})
        if name in totals:
            return totals[name]
        raise AttributeError(name)

    @property
    def name(self) -> str:
        return display_name(self.skill_key)

    @property
    def is_private(self) -> bool:
        return self.skill_key.startswith(ANON_PREFIX) or self.skill_key in BUCKET_LABELS

    @property
    def invocations(self) -> int:
        return int(self.totals["inv_user"] + self.totals["inv_model"] + self.totals["inv_nested"])

    @property
    def cut_sessions_share(self) -> float:
        sessions = self.totals["sessions"]
        return min(1.0, self.totals["degraded_sessions"] / sessions) if sessions else 0.0

    @property
    def name_only_share(self) -> float:
        cuts = self.totals["cut_truncated"] + self.totals["cut_name_only"] + self.totals["cut_dropped"]
        return (self.totals["cut_name_only"] + self.totals["cut_dropped"]) / cuts if cuts else 0.0

    @property
    def cost(self) -> float:
        return float(max(self.totals["cost_usd"], self.totals["metric_cost_usd"]))

    @property
    def all_tokens(self) -> int:
        return int(max(self.totals["tokens"], self.totals["metric_tokens"]))

    @property
    def days_since_last_use(self) -> float | None:
        if self.last_used_at is None:
            return None
        return max(0.0, (timezone.now() - self.last_used_at).total_seconds() / 86400)

    @property
    def frecency(self) -> float:
        return frecency(int(self.totals["uses"]), self.days_since_last_use)

    @property
    def stale(self) -> bool:
        days = self.days_since_last_use
        return days is None or days >= STALE_AFTER_DAYS

    @property
    def trend(self) -> float | None:
        if not self.previous_invocations and not self.recent_invocations:
            return None
        if not self.previous_invocations:
            return 1.0
        return (self.recent_invocations - self.previous_invocations) / self.previous_invocations

    @property
    def degradation_score(self) -> float:
        """For ranking "most degraded": listing cuts, lost tails and ghosts, per session."""
        sessions = max(1.0, self.totals["sessions"])
        return self.cut_sessions_share + (self.totals["cut_tails"] + 2 * self.totals["ghosts"]) / sessions

    @property
    def status(self) -> str:
        if self.stale:
            return "stale"
        if (
            self.totals["ghosts"]
            or self.cut_sessions_share >= DEGRADED_SHARE_ALERT
            or self.totals["cut_tails"]
        ):
            return "degraded"
        return "healthy"


def _sums() -> dict[str, Any]:
    return {name: Sum(name) for name in SUMMED}


def skill_health(
    *,
    window: Window,
    filters: Filters | None = None,
    group: str = "",
    skill_key: str | None = None,
    skill_id: int | None = None,
    skill_ids: Iterable[int] | None = None,
    keys: Iterable[str] | None = None,
) -> list[SkillHealth]:
    """One row per skill (and per group value when ``group`` is team, project or agent_version)."""
    filters = filters or Filters()
    base = filters.skills(group=group)
    if keys is not None:
        base = base.filter(skill_key__in=list(keys))
    if skill_key is not None:
        base = base.filter(skill_key=skill_key)
    if skill_id is not None:
        base = base.filter(skill_id=skill_id)
    if skill_ids is not None:
        base = base.filter(skill_id__in=list(skill_ids))
    dims = ["skill_key"] + ([GROUPS[group]] if group in GROUPS else [])
    # One query over max(window, STALE_AFTER_DAYS) days: window sums, the trend's two weeks and the
    # last use (enough to tell "stale": not used in STALE_AFTER_DAYS days) come out together.
    history_since = min(window.since, window.until - timedelta(days=STALE_AFTER_DAYS - 1))
    in_window = Q(day__gte=window.since)
    week = window.until - timedelta(days=6)
    recent, previous = Q(day__gte=week), Q(day__lt=week, day__gte=week - timedelta(days=7))
    invocations = ("inv_user", "inv_model", "inv_nested")
    rows = (
        base.filter(day__gte=history_since, day__lte=window.until)
        .values(*dims)
        .annotate(
            **{f"w_{name}": Sum(name, filter=in_window) for name in SUMMED},
            skill_ref=Max("skill_id"),
            last=Max("last_used_at"),
            seen=Max("day", filter=in_window),
            recent=sum(
                (Coalesce(Sum(f, filter=recent), 0) for f in invocations[1:]),
                Coalesce(Sum(invocations[0], filter=recent), 0),
            ),
            previous=sum(
                (Coalesce(Sum(f, filter=previous), 0) for f in invocations[1:]),
                Coalesce(Sum(invocations[0], filter=previous), 0),
            ),
        )
        .order_by()
    )
    return [
        SkillHealth(
            skill_key=row["skill_key"],
            skill_id=row["skill_ref"],
            group=row[dims[1]] if len(dims) > 1 else None,
            totals={name: row[f"w_{name}"] or 0 for name in SUMMED},
            last_used_at=row["last"],
            recent_invocations=row["recent"],
            previous_invocations=row["previous"],
        )
        for row in rows
        if row["seen"] is not None  # reported in the window
    ]


@dataclass
class Ranking:
    rows: list[SkillHealth]  # the first ``limit`` by frecency
    degraded: list[SkillHealth]
    costly: list[SkillHealth]
    total: int


def skill_ranking(
    *, window: Window, filters: Filters | None = None, limit: int = 100, top: int = 10
) -> Ranking:
    """The overview's tables without loading every skill's every counter.

    A light query ranks all skills (frecency, degradation, cost); only the skills that make one of
    the three lists are then read in full.
    """
    filters = filters or Filters()
    history_since = min(window.since, window.until - timedelta(days=STALE_AFTER_DAYS - 1))
    in_window = Q(day__gte=window.since)

    def window_sum(name: str) -> Any:
        return Cast(Coalesce(Sum(name, filter=in_window), 0), FloatField())

    # Ranked by the database (ORDER BY over each score, keep the first rows): a fleet reports
    # thousands of skills, and only the ~70 that make a list leave PostgreSQL.
    days = Least(Coalesce(DaysSince(Value(timezone.now()), Max("last_used_at")), 365.0), 365.0)
    sessions = window_sum("sessions")
    light = (
        filters.skills()
        .filter(day__gte=history_since, day__lte=window.until)
        .values("skill_key")
        .annotate(seen=Max("day", filter=in_window))
        .filter(seen__isnull=False)  # reported in the window
        .annotate(
            frec=window_sum("uses") * Greatest(Power(0.5, days / 7.0), 0.1),
            degradation=Least(1.0, window_sum("degraded_sessions") / Greatest(sessions, 1.0))
            + (window_sum("cut_tails") + 2 * window_sum("ghosts")) / Greatest(sessions, 1.0),
            cost=Greatest(window_sum("cost_usd"), window_sum("metric_cost_usd")),
        )
        .annotate(
            by_frec=Over(RowNumber(), order_by=F("frec").desc()),
            by_degradation=Over(RowNumber(), order_by=F("degradation").desc()),
            by_cost=Over(RowNumber(), order_by=F("cost").desc()),
            total=Over(Count("skill_key")),
        )
        .filter(Q(by_frec__lte=limit) | Q(by_degradation__lte=top) | Q(by_cost__lte=top))
        .order_by()
        .values_list("skill_key", "by_frec", "by_degradation", "by_cost", "degradation", "cost", "total")
    )
    ranked = list(light)
    total = ranked[0][-1] if ranked else 0
    by_frecency = [k for _n, k in sorted((r[1], r[0]) for r in ranked if r[1] <= limit)]
    degraded = [k for _n, k in sorted((r[2], r[0]) for r in ranked if r[2] <= top and r[4] > 0)]
    costly = [k for _n, k in sorted((r[3], r[0]) for r in ranked if r[3] <= top and r[5] > 0)]
    wanted = set(by_frecency) | set(degraded) | set(costly)
    full = {row.skill_key: row for row in skill_health(window=window, filters=filters, keys=wanted)}
    return Ranking(
        rows=[full[k] for k in by_frecency if k in full],
        degraded=[full[k] for k in degraded if k in full],
        costly=[full[k] for k in costly if k in full],
        total=total,
    )


def fleet_series(*, window: Window, filters: Filters | None = None) -> dict[str, list[Any]]:
    """Per-day series for the overview charts."""
    filters = filters or Filters()
    skill_days = {
        r["day"]: r
        for r in filters.skills()
        .filter(day__gte=window.since, day__lte=window.until)
        .values("day")
        .annotate(
            inv_user=Sum("inv_user"),
            inv_model=Sum("inv_model"),
            inv_nested=Sum("inv_nested"),
            loads=Sum("loads"),
            cuts=Sum("cut_truncated") + Sum("cut_name_only") + Sum("cut_dropped"),
            tails=Sum("cut_tails"),
            ghosts=Sum("ghosts"),
        )
        .order_by()
    }
    fleet_days = {
        r["day"]: r
        for r in filters.apply(FleetDaily.objects.filter(day__gte=window.since, day__lte=window.until))
        .values("day")
        .annotate(
            sessions=Sum("sessions"),
            compactions=Sum("compactions"),
            degraded=Sum("degraded_listings"),
            cost=Sum("cost_usd"),
            metric_cost=Sum("metric_cost_usd"),
        )
        .order_by()
    }
    series: dict[str, list[Any]] = {
        key: []
        for key in (
            "labels",
            "inv_user",
            "inv_model",
            "inv_nested",
            "loads",
            "cuts",
            "tails",
            "ghosts",
            "sessions",
            "compactions",
            "degraded",
            "cost",
        )
    }
    for day in window.days:
        s = skill_days.get(day, {})
        f = fleet_days.get(day, {})
        series["labels"].append(day.isoformat())
        for key in ("inv_user", "inv_model", "inv_nested", "loads", "cuts", "tails", "ghosts"):
            series[key].append(s.get(key) or 0)
        for key in ("sessions", "compactions", "degraded"):
            series[key].append(f.get(key) or 0)
        series["cost"].append(round(max(f.get("cost") or 0, f.get("metric_cost") or 0), 4))
    return series


@dataclass
class FleetTotals:
    sessions: int
    events: int
    compactions: int
    degraded_listings: int
    cost: float


def fleet_totals(*, window: Window, filters: Filters | None = None) -> FleetTotals:
    filters = filters or Filters()
    row = filters.apply(FleetDaily.objects.filter(day__gte=window.since, day__lte=window.until)).aggregate(
        sessions=Sum("sessions"),
        events=Sum("events"),
        compactions=Sum("compactions"),
        degraded=Sum("degraded_listings"),
        cost=Sum("cost_usd"),
        metric_cost=Sum("metric_cost_usd"),
    )
    return FleetTotals(
        sessions=row["sessions"] or 0,
        events=row["events"] or 0,
        compactions=row["compactions"] or 0,
        degraded_listings=row["degraded"] or 0,
        cost=max(row["cost"] or 0.0, row["metric_cost"] or 0.0),
    )


@dataclass
class VersionHealth:
    agent: str
    agent_version: str
    sessions: int
    degraded_listings: int
    degraded_sessions: int
    name_only_listings: int
    compactions: int
    pre_tokens: int
    post_tokens: int
    cut_tails: int = 0
    ghosts: int = 0
    evictions: int = 0
    invocations: int = 0

    @property
    def degraded_share(self) -> float:
        return min(1.0, self.degraded_sessions / self.sessions) if self.sessions else 0.0

    @property
    def compression(self) -> float | None:
        return self.post_tokens / self.pre_tokens if self.pre_tokens else None


def health_by_agent_version(*, window: Window, filters: Filters | None = None) -> list[VersionHealth]:
    filters = filters or Filters()
    fleet = (
        filters.apply(FleetDaily.objects.filter(day__gte=window.since, day__lte=window.until))
        .values("agent", "agent_version")
        .annotate(
            s=Sum("sessions"),
            d=Sum("degraded_listings"),
            ds=Sum("degraded_sessions"),
            n=Sum("name_only_listings"),
            c=Sum("compactions"),
            pre=Sum("pre_tokens"),
            post=Sum("post_tokens"),
        )
        .order_by()
    )
    skill = {
        (r["agent"], r["agent_version"]): r
        for r in filters.apply(SkillDaily.objects.filter(day__gte=window.since, day__lte=window.until))
        .values("agent", "agent_version")
        .annotate(
            tails=Sum("cut_tails"),
            ghosts=Sum("ghosts"),
            ev=Sum("evictions"),
            inv=Sum("inv_user") + Sum("inv_model") + Sum("inv_nested"),
        )
        .order_by()
    }
    rows = []
    for r in fleet:
        extra = skill.get((r["agent"], r["agent_version"]), {})
        rows.append(
            VersionHealth(
                agent=r["agent"],
                agent_version=r["agent_version"] or "unknown",
                sessions=r["s"] or 0,
                degraded_listings=r["d"] or 0,
                degraded_sessions=r["ds"] or 0,
                name_only_listings=r["n"] or 0,
                compactions=r["c"] or 0,
                pre_tokens=r["pre"] or 0,
                post_tokens=r["post"] or 0,
                cut_tails=extra.get("tails") or 0,
                ghosts=extra.get("ghosts") or 0,
                evictions=extra.get("ev") or 0,
                invocations=extra.get("inv") or 0,
            )
        )
    return sorted(rows, key=lambda v: (v.agent, _version_key(v.agent_version)), reverse=True)


def _version_key(version: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in version.replace("-", ".").split("."))


def stale_catalog_skills(*, limit: int = 50) -> list[dict[str, Any]]:
    """Catalog skills unused for STALE_AFTER_DAYS or never seen: shown, never deleted."""
    from governance.skills.models import Skill

    last = dict(
        SkillDay.objects.filter(skill_id__isnull=False, last_used_at__isnull=False)
        .values("skill_id")
        .annotate(last=Max("last_used_at"))
        .order_by()
        .values_list("skill_id", "last")
    )
    now = timezone.now()
    rows: list[dict[str, Any]] = []
    for skill in Skill.objects.filter(removed_at__isnull=True).select_related("source").order_by("name"):
        used = last.get(skill.pk)
        days = (now - used).days if used else None
        if days is None or days >= STALE_AFTER_DAYS:
            rows.append({"skill": skill, "last_used_at": used, "days": days})
    rows.sort(key=lambda r: (r["days"] is not None, -(r["days"] or 0)))
    return rows[:limit]


def ingest_overview(*, window: Window) -> dict[str, Any]:
    """For the telemetry page: events per day and channel come from rollups; pending work from the DB."""
    from governance.telemetry.models import PendingRollup

    per_day = {
        r["day"]: r["n"]
        for r in FleetDaily.objects.filter(day__gte=window.since, day__lte=window.until)
        .values("day")
        .annotate(n=Sum("events"))
        .order_by()
    }
    return {
        "labels": [d.isoformat() for d in window.days],
        "events": [per_day.get(d, 0) for d in window.days],
        "pending": list(PendingRollup.objects.order_by("day").values("day", "seq", "requested_at")),
    }


def skill_series(
    *, window: Window, skill_key: str | None = None, skill_id: int | None = None
) -> dict[str, list[Any]]:
    """Per-day series of one skill (the skill page's panel chart)."""
    base = SkillDay.objects.filter(day__gte=window.since, day__lte=window.until)
    base = base.filter(skill_key=skill_key) if skill_key is not None else base.filter(skill_id=skill_id)
    per_day: dict[date, dict[str, Any]] = {
        r["day"]: dict(r)
        for r in base.values("day")
        .annotate(
            inv=Sum("inv_user") + Sum("inv_model") + Sum("inv_nested"),
            loads=Sum("loads"),
            cuts=Sum("cut_truncated") + Sum("cut_name_only") + Sum("cut_dropped"),
            tails=Sum("cut_tails"),
            ghosts=Sum("ghosts"),
        )
        .order_by()
    }
    series: dict[str, list[Any]] = {k: [] for k in ("labels", "inv", "loads", "cuts", "tails", "ghosts")}
    for day in window.days:
        row: dict[str, Any] = per_day.get(day, {})
        series["labels"].append(day.isoformat())
        for key in ("inv", "loads", "cuts", "tails", "ghosts"):
            series[key].append(row.get(key) or 0)
    return series


def merge_health(rows: list[SkillHealth]) -> SkillHealth:
    """Several rows of one catalog skill (reported under different keys) as one."""
    merged = SkillHealth(skill_key=rows[0].skill_key, skill_id=rows[0].skill_id)
    merged.totals = {name: sum(r.totals[name] for r in rows) for name in SUMMED}
    used = [r.last_used_at for r in rows if r.last_used_at is not None]
    merged.last_used_at = max(used) if used else None
    merged.recent_invocations = sum(r.recent_invocations for r in rows)
    merged.previous_invocations = sum(r.previous_invocations for r in rows)
    return merged


def dashboard_cards(user: Any) -> list[Any]:
    """Home page: degraded skills of the last 7 days (everyone), and the week's cost (admins)."""
    from django.urls import reverse

    from portal.accounts.services import user_is_admin
    from portal.dashboard import Card

    window = Window.last(7)
    ranking = skill_ranking(window=window, limit=0, top=5)
    if not ranking.total:
        return [
            Card(
                title="Skill health",
                value="no data",
                text="no telemetry in the last 7 days: connect agents on the Telemetry page",
                url=reverse("telemetry"),
                tone="info",
                order=300,
            )
        ]
    degraded = [row for row in ranking.degraded if row.status == "degraded"]
    cards = [
        Card(
            title="Skill health",
            value=str(len(degraded)) if degraded else "ok",
            text=f"degraded skill{'s' if len(degraded) != 1 else ''} of {ranking.total} used in the last 7 days",
            url=reverse("health"),
            tone="warning" if degraded else "ok",
            items=[f"{row.name}: cut in {100 * row.cut_sessions_share:.0f}% of sessions" for row in degraded],
            order=300,
        )
    ]
    if user_is_admin(user):
        totals = fleet_totals(window=window)
        cards.append(
            Card(
                title="Agent cost, 7 days",
                value=f"${totals.cost:,.2f}",
                text=f"{totals.sessions} sessions; attributed per skill on the Health page",
                url=reverse("health") + "?days=7",
                order=310,
            )
        )
    return cards
