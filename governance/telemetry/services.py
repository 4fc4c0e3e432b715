"""Writes of the telemetry concern: ingest, rollups, retention. Keyword-only, typed, no HTTP.

Ingest order (one transaction): validate → resolve names against the catalog → pseudonymise what
the catalog does not know → insert in bulk, ignoring event ids already stored → mark the touched
days as pending rollup. Only then, after commit, a rollup task is enqueued; if the broker is down
the pending rows stay and the sweeper (beat) redoes the work.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Exists, IntegerField, Max, OuterRef, Q, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from django.utils import timezone

from governance.engine.telemetry import (
    EventIn,
    EventType,
    Invalid,
    SkillRef,
    pseudonym,
    validate_event,
)
from governance.telemetry.models import Channel, Event, FleetDaily, PendingRollup, SkillDaily, SkillDay
from governance.telemetry.partitions import partitions_drop_before, partitions_ensure

logger = logging.getLogger(__name__)

COLUMNS = (
    "event_id",
    "occurred_at",
    "received_at",
    "type",
    "channel",
    "agent",
    "agent_version",
    "session",
    "actor",
    "team_id",
    "project_id",
    "skill_id",
    "skill_key",
    "skill_source",
    "trigger",
    "outcome",
    "tokens",
    "tokens_kept",
    "tokens_cut",
    "cost_usd",
    "data",
)
ANON_PREFIX = "anon-"
SQLITE_CHUNK = 500


class OverCapacity(Exception):
    """Too many ingest requests at once in this process: the client should retry later (429)."""


_slots_lock = threading.Lock()
_slots_used = 0


@contextmanager
def ingest_slot() -> Iterator[None]:
    """Bound concurrent ingests per process (settings.TELEMETRY_MAX_CONCURRENT_INGEST)."""
    global _slots_used
    with _slots_lock:
        if _slots_used >= settings.TELEMETRY_MAX_CONCURRENT_INGEST:
            raise OverCapacity
        _slots_used += 1
    try:
        yield
    finally:
        with _slots_lock:
            _slots_used -= 1


# --- names ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogSnapshot:
    version: tuple[Any, ...]
    skills: dict[str, tuple[int, str]]  # qualified name → (id, source kind), the most trusted wins
    plugins: set[str]
    teams: dict[str, int]
    projects: dict[str, int]


_snapshot: CatalogSnapshot | None = None
# Changes whenever a skill, team or project is added, removed or renamed (ids alone can repeat
# after a rolled-back transaction; creation times and slug lengths tell those apart).
VERSION_SQL = (
    "SELECT (SELECT COUNT(*) FROM skills_skill), (SELECT MAX(id) FROM skills_skill), "
    "(SELECT MAX(created_at) FROM skills_skill), "
    "(SELECT COUNT(*) FROM accounts_team), (SELECT MAX(id) FROM accounts_team), "
    "(SELECT SUM(LENGTH(slug)) FROM accounts_team), "
    "(SELECT COUNT(*) FROM accounts_project), (SELECT MAX(id) FROM accounts_project), "
    "(SELECT SUM(LENGTH(slug)) FROM accounts_project)"
)


def _catalog_snapshot() -> CatalogSnapshot:
    global _snapshot
    from governance.skills.models import TRUST_RANK, Skill
    from portal.accounts.models import Project, Team

    with connection.cursor() as cursor:
        cursor.execute(VERSION_SQL)
        version = (connection.alias, connection.settings_dict["NAME"], *(cursor.fetchone() or ()))
    if _snapshot is not None and _snapshot.version == version:
        return _snapshot
    best: dict[str, tuple[int, str, int]] = {}
    plugins: set[str] = set()
    for skill_id, name, plugin, kind in Skill.objects.values_list("id", "name", "plugin", "source__kind"):
        qualified = f"{plugin}:{name}" if plugin else name
        rank = TRUST_RANK.get(kind, 0)
        if qualified not in best or rank > best[qualified][2]:
            best[qualified] = (skill_id, kind, rank)
        if plugin:
            plugins.add(plugin)
    _snapshot = CatalogSnapshot(
        version=version,
        skills={name: (value[0], value[1]) for name, value in best.items()},
        plugins=plugins,
        teams=dict(Team.objects.values_list("slug", "id")),
        projects=dict(Project.objects.values_list("slug", "id")),
    )
    return _snapshot


@dataclass
class Resolver:
    """Resolves names of one batch against the catalog, and pseudonymises what it does not know."""

    key: str
    skills: dict[str, tuple[int, str]] = field(default_factory=dict)  # qualified name → (id, kind)
    plugins: set[str] = field(default_factory=set)
    teams: dict[str, int] = field(default_factory=dict)
    projects: dict[str, int] = field(default_factory=dict)
    _cache: dict[tuple[str, str], str] = field(default_factory=dict)

    @classmethod
    def for_events(cls, events: Sequence[EventIn]) -> Resolver:
        """A resolver over a snapshot of the catalog (names, plugins, teams, projects).

        The snapshot is kept per process and reloaded when the catalog's version changes (one
        cheap query per batch instead of one lookup query per kind of name).
        """
        snapshot = _catalog_snapshot()
        return cls(
            key=settings.PSEUDONYM_KEY,
            skills=snapshot.skills,
            plugins=snapshot.plugins,
            teams=snapshot.teams,
            projects=snapshot.projects,
        )

    def pseudo(self, kind: str, value: str) -> str:
        if not value:
            return ""
        cached = self._cache.get((kind, value))
        if cached is None:
            cached = pseudonym(self.key, kind, value)
            self._cache[(kind, value)] = cached
        return cached

    def skill(self, ref: SkillRef | None) -> tuple[int | None, str, str]:
        """(catalog id, stored key, source kind): a known name, an anonymous bucket, or a pseudonym."""
        if ref is None:
            return None, "", ""
        if ref.is_bucket:
            return None, ref.name.replace("third_party", "third-party"), ref.source
        qualified = f"{ref.plugin}:{ref.name}" if ref.plugin else ref.name
        known = self.skills.get(qualified)
        if known is not None:
            return known[0], qualified, ref.source if ref.source != "unknown" else known[1]
        return None, ANON_PREFIX + self.pseudo("skill", qualified)[:16], ref.source


def _plugin_data(resolver: Resolver, data: dict[str, Any]) -> dict[str, Any]:
    plugin = str(data.get("plugin", ""))
    if plugin and plugin not in resolver.plugins:
        return {**data, "plugin": ANON_PREFIX + resolver.pseudo("plugin", plugin)[:16]}
    return data


def _rows(events: Sequence[EventIn], *, channel: str, resolver: Resolver) -> list[tuple[Any, ...]]:
    received_at = timezone.now()
    rows: list[tuple[Any, ...]] = []
    for event in events:
        skill_id, skill_key, skill_source = resolver.skill(event.skill)
        session = resolver.pseudo("session", event.session)
        actor = resolver.pseudo("user", event.user)
        team_id = resolver.teams.get(event.team)
        project_id = resolver.projects.get(event.project)
        data = _plugin_data(resolver, event.data) if event.type == EventType.PLUGIN_LOADED else event.data
        outcome = event.outcome
        if event.type == EventType.LISTING_DEGRADED:
            outcome = str(event.data.get("truncation_mode", ""))
        rows.append(
            (
                event.event_id,
                event.occurred_at,
                received_at,
                event.type,
                channel,
                event.agent,
                event.agent_version,
                session,
                actor,
                team_id,
                project_id,
                skill_id,
                skill_key,
                skill_source,
                event.trigger,
                outcome,
                event.tokens,
                event.tokens_kept,
                event.tokens_cut,
                event.cost_usd,
                data,
            )
        )
        # One derived row per skill cut from a degraded listing, so rollups stay plain GROUP BYs.
        for index, (ref, mode) in enumerate(event.cut_skills):
            cut_id, cut_key, cut_source = resolver.skill(ref)
            rows.append(
                (
                    uuid.uuid5(event.event_id, f"cut:{index}"),
                    event.occurred_at,
                    received_at,
                    EventType.LISTING_CUT.value,
                    channel,
                    event.agent,
                    event.agent_version,
                    session,
                    actor,
                    team_id,
                    project_id,
                    cut_id,
                    cut_key,
                    cut_source,
                    "",
                    mode,
                    0,
                    0,
                    0,
                    0.0,
                    {},
                )
            )
    return rows


# --- storage -------------------------------------------------------------------------------------


def _insert_postgres(rows: Sequence[tuple[Any, ...]]) -> set[uuid.UUID]:
    """COPY straight into the events; if an id is already stored (a retried batch), fall back to
    COPY into a temp table then one INSERT … ON CONFLICT DO NOTHING (the ids it returns)."""
    from psycopg import errors
    from psycopg.types.json import Jsonb

    column_list = ", ".join(COLUMNS)
    savepoint = transaction.savepoint()
    try:
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY telemetry_event ({column_list}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row((*row[:-1], Jsonb(row[-1])))
    except errors.UniqueViolation:
        transaction.savepoint_rollback(savepoint)
    else:
        transaction.savepoint_commit(savepoint)
        return {row[0] for row in rows}
    stage_sql = f"CREATE TEMP TABLE IF NOT EXISTS telemetry_stage ON COMMIT DELETE ROWS AS SELECT {column_list} FROM telemetry_event WITH NO DATA"  # noqa: S608 (constant column names)
    insert_sql = f"INSERT INTO telemetry_event ({column_list}) SELECT {column_list} FROM telemetry_stage ON CONFLICT (event_id, occurred_at) DO NOTHING RETURNING event_id"  # noqa: S608 (constant column names)
    with connection.cursor() as cursor:
        cursor.execute(stage_sql)
        with cursor.cursor.copy(f"COPY telemetry_stage ({column_list}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row((*row[:-1], Jsonb(row[-1])))
        cursor.execute(insert_sql)
        inserted = {row[0] for row in cursor.fetchall()}
    return inserted  # the staging rows go at commit (ON COMMIT DELETE ROWS)


def _insert_sqlite(rows: Sequence[tuple[Any, ...]]) -> set[uuid.UUID]:
    import json

    inserted: set[uuid.UUID] = set()
    placeholders = "(" + ", ".join(["%s"] * len(COLUMNS)) + ")"
    insert = f"INSERT INTO telemetry_event ({', '.join(COLUMNS)}) VALUES "  # noqa: S608 (constant column names)
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        for start in range(0, len(rows), SQLITE_CHUNK):
            chunk = rows[start : start + SQLITE_CHUNK]
            params: list[Any] = []
            for row in chunk:
                params.extend(
                    (
                        row[0].hex,
                        adapt(row[1]),
                        adapt(row[2]),
                        *row[3:-1],
                        json.dumps(row[-1]),
                    )
                )
            cursor.execute(
                insert
                + ", ".join([placeholders] * len(chunk))
                + " ON CONFLICT (event_id, occurred_at) DO NOTHING RETURNING event_id",
                params,
            )
            inserted.update(uuid.UUID(str(value)) for (value,) in cursor.fetchall())
    return inserted


def _mark_pending(days: Iterable[date]) -> list[date]:
    """Bump the pending-rollup row of each day (last statement of the ingest transaction)."""
    new_days: list[date] = []
    now = timezone.now()
    with connection.cursor() as cursor:
        for day in sorted(set(days)):  # one lock order for every writer: no deadlock
            cursor.execute(
                "INSERT INTO telemetry_pendingrollup (day, seq, requested_at) VALUES (%s, 1, %s) "
                "ON CONFLICT (day) DO UPDATE SET seq = telemetry_pendingrollup.seq + 1, "
                "requested_at = excluded.requested_at RETURNING seq",
                [day, now],
            )
            (seq,) = cursor.fetchone() or (0,)
            if seq == 1:
                new_days.append(day)
    return new_days


def rollups_enqueue(days: Iterable[date], *, countdown: float | None = None) -> None:
    """Ask the workers for rollups; a broker outage is logged, not raised (the sweeper redoes it)."""
    from governance.telemetry.tasks import rollup_day

    delay = settings.TELEMETRY_ROLLUP_DELAY_SECONDS if countdown is None else countdown
    for day in days:
        try:
            rollup_day.apply_async(args=[day.isoformat()], countdown=delay)
        except Exception as exc:  # the events are stored; the sweeper will compute this day
            logger.warning("rollup of %s not enqueued (%s); the sweeper will redo it", day, exc)


@dataclass
class IngestResult:
    accepted: list[str] = field(default_factory=list)  # stored by this request
    duplicates: list[str] = field(default_factory=list)  # already stored (same event_id)
    rejected: list[dict[str, Any]] = field(default_factory=list)  # {index, event_id, error}


def events_store(*, events: Sequence[EventIn], channel: str) -> tuple[set[uuid.UUID], list[date]]:
    """Store validated events (pseudonymised), idempotently; returns the ids stored now."""
    if not events:
        return set(), []
    resolver = Resolver.for_events(events)
    rows = _rows(events, channel=channel, resolver=resolver)
    days = {row[1].astimezone(UTC).date() for row in rows}
    with transaction.atomic():
        partitions_ensure(days)
        inserted = _insert_postgres(rows) if connection.vendor == "postgresql" else _insert_sqlite(rows)
        new_days = _mark_pending(days) if inserted else []
        if new_days:
            transaction.on_commit(lambda: rollups_enqueue(new_days))
    return inserted, new_days


def events_ingest(*, payload: Any, now: datetime | None = None) -> IngestResult:
    """A native batch ``{"events": [...]}`` → stored events and a per-event answer."""
    now = now or timezone.now()
    if not isinstance(payload, dict) or not isinstance(payload.get("events"), list):
        raise Invalid('body must be a JSON object {"events": [...]}')
    raw_events = payload["events"]
    if len(raw_events) > settings.TELEMETRY_MAX_BATCH_EVENTS:
        raise Invalid(
            f"events: at most {settings.TELEMETRY_MAX_BATCH_EVENTS} per batch (got {len(raw_events)})"
        )
    result = IngestResult()
    valid: list[EventIn] = []
    seen: set[uuid.UUID] = set()
    for index, raw in enumerate(raw_events):
        raw_id = raw.get("event_id") if isinstance(raw, dict) else None
        try:
            event = validate_event(raw, now=now, max_age_days=settings.TELEMETRY_RETENTION_DAYS)
        except Invalid as exc:
            result.rejected.append({"index": index, "event_id": str(raw_id or ""), "error": str(exc)})
            continue
        if event.event_id in seen:
            result.duplicates.append(str(event.event_id))
            continue
        seen.add(event.event_id)
        valid.append(event)
    inserted, _days = events_store(events=valid, channel=Channel.API)
    for event in valid:
        (result.accepted if event.event_id in inserted else result.duplicates).append(str(event.event_id))
    return result


# --- rollups -------------------------------------------------------------------------------------


def _day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return start, start + timedelta(days=1)


SKILL_DIMS = ("skill_key", "skill_id", "team_id", "project_id", "agent", "agent_version")
FLEET_DIMS = ("team_id", "project_id", "agent", "agent_version")


def _type(name: EventType, **extra: Any) -> Q:
    return Q(type=name.value, **extra)


def _skill_aggregates() -> dict[str, Any]:
    inv = EventType.SKILL_INVOKED
    cut = EventType.LISTING_CUT
    spend = Q(type=EventType.API_REQUEST.value)
    metric = Q(type=EventType.USAGE_METRIC.value)
    return {
        "events": Count("id"),
        "source": Max("skill_source", filter=~Q(skill_source__in=["", "unknown"])),
        "sessions": Count("session", distinct=True, filter=~Q(session="")),
        "loads": Count("id", filter=_type(EventType.SKILL_LOADED)),
        "inv_user": Count("id", filter=_type(inv, trigger="user-slash")),
        "inv_model": Count("id", filter=_type(inv, trigger="model")),
        "inv_nested": Count("id", filter=_type(inv, trigger="nested")),
        "already_loaded": Count("id", filter=_type(inv, outcome="already_loaded")),
        "cut_truncated": Count("id", filter=_type(cut, outcome="truncated")),
        "cut_name_only": Count("id", filter=_type(cut, outcome="name_only")),
        "cut_dropped": Count("id", filter=_type(cut, outcome="dropped")),
        "degraded_sessions": Count("session", distinct=True, filter=_type(cut) & ~Q(session="")),
        "reinjections": Count("id", filter=_type(EventType.SKILL_REINJECTED)),
        "cut_tails": Count("id", filter=_type(EventType.SKILL_REINJECTED, tokens_cut__gt=0)),
        "tokens_cut_sum": Sum("tokens_cut", filter=_type(EventType.SKILL_REINJECTED)),
        "evictions": Count("id", filter=_type(EventType.SKILL_EVICTED)),
        "unloads": Count("id", filter=_type(EventType.SKILL_UNLOADED)),
        "denials": Count("id", filter=_type(EventType.PERMISSION_DECISION, outcome="deny")),
        "hooks": Count("id", filter=_type(EventType.HOOKS_REGISTERED)),
        "tokens_sum": Sum("tokens", filter=spend),
        "cost_sum": Sum("cost_usd", filter=spend),
        "metric_tokens_sum": Sum("tokens", filter=metric),
        "metric_cost_sum": Sum("cost_usd", filter=metric),
        "last_used": Max("occurred_at", filter=_type(inv)),
    }


def _fleet_aggregates() -> dict[str, Any]:
    compaction = _type(EventType.COMPACTION)
    degraded = _type(EventType.LISTING_DEGRADED)
    spend = Q(type=EventType.API_REQUEST.value)
    metric = Q(type=EventType.USAGE_METRIC.value)
    return {
        "events_n": Count("id"),
        "sessions_n": Count("session", distinct=True, filter=~Q(session="")),
        "compactions_n": Count("id", filter=compaction),
        "pre": Sum(Cast(KT("data__pre_tokens"), IntegerField()), filter=compaction),
        "post": Sum(Cast(KT("data__post_tokens"), IntegerField()), filter=compaction),
        "degraded_n": Count("id", filter=degraded),
        "degraded_sessions_n": Count("session", distinct=True, filter=degraded & ~Q(session="")),
        "name_only_n": Count("id", filter=degraded & Q(outcome="name_only")),
        "plugins_n": Count("id", filter=_type(EventType.PLUGIN_LOADED)),
        "tokens_sum": Sum("tokens", filter=spend),
        "cost_sum": Sum("cost_usd", filter=spend),
        "metric_tokens_sum": Sum("tokens", filter=metric),
        "metric_cost_sum": Sum("cost_usd", filter=metric),
    }


def _ghosts(start: datetime, end: datetime) -> dict[tuple[Any, ...], int]:
    """Invocations refused as "already loaded" in a session that had evicted the skill before."""
    evicted_before = Event.objects.filter(
        type=EventType.SKILL_EVICTED.value,
        session=OuterRef("session"),
        skill_key=OuterRef("skill_key"),
        occurred_at__lt=OuterRef("occurred_at"),
        occurred_at__gte=start - timedelta(days=1),
    )
    rows = (
        Event.objects.filter(
            occurred_at__gte=start,
            occurred_at__lt=end,
            type=EventType.SKILL_INVOKED.value,
            outcome="already_loaded",
        )
        .exclude(session="")
        .filter(Exists(evicted_before))
        .values(*SKILL_DIMS)
        .annotate(n=Count("id"))
        .order_by()
    )
    return {tuple(row[d] for d in SKILL_DIMS): row["n"] for row in rows}


FRECENCY_DEBOUNCE = timedelta(seconds=60)


def _frecency_uses(start: datetime, end: datetime) -> dict[tuple[Any, ...], int]:
    """Invocations that count for frecency (DOMAIN §8): per user and skill, an invocation within 60 s
    of the last counted one is dropped. The user is the actor pseudonym, else the session.

    Invocations of the minute before the day seed the state (taken as counted) so a burst across
    midnight is not counted twice.
    """
    rows = (
        Event.objects.filter(
            occurred_at__gte=start - FRECENCY_DEBOUNCE,
            occurred_at__lt=end,
            type=EventType.SKILL_INVOKED.value,
        )
        .exclude(skill_key="")
        .order_by("skill_key", "actor", "session", "occurred_at")
        .values_list(*SKILL_DIMS, "actor", "session", "occurred_at")
    )
    uses: dict[tuple[Any, ...], int] = {}
    last: dict[tuple[str, str], datetime] = {}
    for *dims, actor, session, occurred_at in rows:
        user = (dims[0], actor or f"session:{session}")
        previous = last.get(user)
        if previous is not None and occurred_at - previous < FRECENCY_DEBOUNCE:
            continue
        last[user] = occurred_at
        if occurred_at >= start:
            key = tuple(dims)
            uses[key] = uses.get(key, 0) + 1
    return uses


def _compute_day(day: date) -> tuple[int, int]:
    start, end = _day_bounds(day)
    in_day = Event.objects.filter(occurred_at__gte=start, occurred_at__lt=end)
    ghosts = _ghosts(start, end)
    uses = _frecency_uses(start, end)
    skill_rows = []
    for row in in_day.exclude(skill_key="").values(*SKILL_DIMS).annotate(**_skill_aggregates()).order_by():
        dims = tuple(row[d] for d in SKILL_DIMS)
        skill_rows.append(
            SkillDaily(
                day=day,
                **{d: row[d] for d in SKILL_DIMS},
                skill_source=row["source"] or "unknown",
                events=row["events"],
                sessions=row["sessions"],
                loads=row["loads"],
                inv_user=row["inv_user"],
                inv_model=row["inv_model"],
                inv_nested=row["inv_nested"],
                already_loaded=row["already_loaded"],
                uses=uses.get(dims, 0),
                ghosts=ghosts.get(dims, 0),
                cut_truncated=row["cut_truncated"],
                cut_name_only=row["cut_name_only"],
                cut_dropped=row["cut_dropped"],
                degraded_sessions=row["degraded_sessions"],
                reinjections=row["reinjections"],
                cut_tails=row["cut_tails"],
                tokens_cut=row["tokens_cut_sum"] or 0,
                evictions=row["evictions"],
                unloads=row["unloads"],
                denials=row["denials"],
                hooks=row["hooks"],
                tokens=row["tokens_sum"] or 0,
                cost_usd=row["cost_sum"] or 0.0,
                metric_tokens=row["metric_tokens_sum"] or 0,
                metric_cost_usd=row["metric_cost_sum"] or 0.0,
                last_used_at=row["last_used"],
            )
        )
    fleet_rows = [
        FleetDaily(
            day=day,
            **{d: row[d] for d in FLEET_DIMS},
            events=row["events_n"],
            sessions=row["sessions_n"],
            compactions=row["compactions_n"],
            pre_tokens=row["pre"] or 0,
            post_tokens=row["post"] or 0,
            degraded_listings=row["degraded_n"],
            degraded_sessions=row["degraded_sessions_n"],
            name_only_listings=row["name_only_n"],
            plugins_loaded=row["plugins_n"],
            tokens=row["tokens_sum"] or 0,
            cost_usd=row["cost_sum"] or 0.0,
            metric_tokens=row["metric_tokens_sum"] or 0,
            metric_cost_usd=row["metric_cost_sum"] or 0.0,
        )
        for row in in_day.exclude(type=EventType.LISTING_CUT.value)
        .values(*FLEET_DIMS)
        .annotate(**_fleet_aggregates())
        .order_by()
    ]
    SkillDaily.objects.filter(day=day).delete()
    SkillDay.objects.filter(day=day).delete()
    FleetDaily.objects.filter(day=day).delete()
    SkillDaily.objects.bulk_create(skill_rows, batch_size=1000)
    SkillDay.objects.bulk_create(_sum_dimensions(day, skill_rows), batch_size=1000)
    FleetDaily.objects.bulk_create(fleet_rows, batch_size=1000)
    return len(skill_rows), len(fleet_rows)


COUNTERS = tuple(
    f.name
    for f in SkillDay._meta.get_fields()
    if f.name not in {"id", "day", "skill_key", "skill_id", "skill_source", "last_used_at"}
)


def _sum_dimensions(day: date, rows: Sequence[SkillDaily]) -> list[SkillDay]:
    """Per-dimension rows of one day → one row per skill (what unfiltered dashboards read)."""
    totals: dict[str, SkillDay] = {}
    for row in rows:
        total = totals.get(row.skill_key)
        if total is None:
            total = totals[row.skill_key] = SkillDay(day=day, skill_key=row.skill_key, skill_id=row.skill_id)
        for name in COUNTERS:
            setattr(total, name, getattr(total, name) + getattr(row, name))
        if row.skill_id is not None:
            total.skill_id = row.skill_id
        if row.skill_source != "unknown" or not total.skill_source:
            total.skill_source = row.skill_source
        if row.last_used_at is not None and (
            total.last_used_at is None or row.last_used_at > total.last_used_at
        ):
            total.last_used_at = row.last_used_at
    return list(totals.values())


@dataclass
class RollupResult:
    day: date
    skill_rows: int
    fleet_rows: int
    still_pending: bool


def rollup_compute(*, day: date) -> RollupResult:
    """Recompute one day's rollups from the stored events (idempotent: any number of re-runs).

    1. lock the day's pending row briefly: ingest transactions that bumped it must commit first;
    2. recompute the day (serialised per day by an advisory lock on PostgreSQL);
    3. clear the pending row only if no ingest bumped it meanwhile (else the day stays pending).
    """
    with transaction.atomic():
        pending = PendingRollup.objects.select_for_update().filter(day=day).first()
        seq = pending.seq if pending is not None else None
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"telemetry-rollup-{day}"])
        skill_rows, fleet_rows = _compute_day(day)
    still_pending = False
    if seq is not None:
        deleted, _ = PendingRollup.objects.filter(day=day, seq=seq).delete()
        still_pending = deleted == 0
    return RollupResult(day=day, skill_rows=skill_rows, fleet_rows=fleet_rows, still_pending=still_pending)


def rollups_sweep(*, older_than_seconds: float = 0) -> list[RollupResult]:
    """Compute every day still pending (what lost or delayed task messages did not do)."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    days = list(
        PendingRollup.objects.filter(requested_at__lte=cutoff).order_by("day").values_list("day", flat=True)
    )
    return [rollup_compute(day=day) for day in days]


def rollups_rebuild(*, since: date | None = None) -> list[RollupResult]:
    """Recompute every day that has events (after a pseudonym key rotation, or a repair)."""
    dates = Event.objects.dates("occurred_at", "day")
    if since is not None:
        dates = dates.filter(occurred_at__date__gte=since)
    return [rollup_compute(day=day) for day in dates]


# --- retention -----------------------------------------------------------------------------------


@dataclass
class RetentionResult:
    cutoff: date
    partitions_dropped: list[date]
    rows_deleted: int


def events_retention_apply(*, now: datetime | None = None, days: int | None = None) -> RetentionResult:
    """Drop events older than settings.TELEMETRY_RETENTION_DAYS (whole partitions on PostgreSQL).

    Rollups are kept: they hold no event-level detail, and dashboards of past months need them.
    """
    now = now or timezone.now()
    keep = settings.TELEMETRY_RETENTION_DAYS if days is None else days
    cutoff = (now - timedelta(days=keep)).astimezone(UTC).date()
    with transaction.atomic():
        dropped = partitions_drop_before(cutoff) if connection.vendor == "postgresql" else []
        start, _ = _day_bounds(cutoff)
        deleted, _ = Event.objects.filter(occurred_at__lt=start).delete()
        PendingRollup.objects.filter(day__lt=cutoff).delete()
    return RetentionResult(cutoff=cutoff, partitions_dropped=dropped, rows_deleted=deleted)


def partitions_prepare(*, now: datetime | None = None, days_ahead: int = 2) -> list[date]:
    now = now or timezone.now()
    today = now.astimezone(UTC).date()
    with transaction.atomic():  # the advisory lock that serialises creators lasts until commit
        return partitions_ensure(today + timedelta(days=offset) for offset in range(days_ahead + 1))
