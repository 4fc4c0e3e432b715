"""Rollups: computed from stored events, idempotent, swept after lost messages or broker outages."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from governance.engine.telemetry import validate_event
from governance.telemetry.models import Event, FleetDaily, PendingRollup, SkillDaily
from governance.telemetry.selectors import Window, frecency, skill_health
from governance.telemetry.services import events_store, rollup_compute, rollups_sweep
from tests.telemetry.factories import auth, native

NOON = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=1)
DAY = NOON.date()
MIDNIGHT = datetime(DAY.year, DAY.month, DAY.day, tzinfo=UTC)


def store(*events: dict[str, Any]) -> None:
    now = datetime.now(UTC)
    events_store(events=[validate_event(e, now=now, max_age_days=90) for e in events], channel="api")


def at(minutes: int) -> datetime:
    return NOON + timedelta(minutes=minutes)


def session_story() -> list[dict[str, Any]]:
    """Two sessions of 2.0.14 and one of 2.1.3, with every kind of degradation."""
    return [
        native(
            "listing_degraded",
            skill=None,
            when=at(0),
            session="s1",
            agent_version="2.0.14",
            skill_count=40,
            budget=8000,
            full_total=9089,
            truncation_mode="name_only",
            bundled_count=2,
            bundled_chars=300,
            cut_skills=[{"name": "deploy"}, {"name": "lint", "mode": "truncated"}],
        ),
        native("skill_loaded", when=at(1), session="s1", agent_version="2.0.14"),
        native("skill_invoked", when=at(2), session="s1", agent_version="2.0.14", trigger="model"),
        native(
            "compaction",
            skill=None,
            when=at(30),
            session="s1",
            agent_version="2.0.14",
            pre_tokens=180000,
            post_tokens=30000,
        ),
        native(
            "skill_reinjected",
            when=at(30),
            session="s1",
            agent_version="2.0.14",
            tokens_kept=5000,
            tokens_cut=2100,
        ),
        native(
            "skill_evicted",
            when=at(31),
            session="s1",
            agent_version="2.0.14",
            reason="compaction",
            resolved=True,
        ),
        native(
            "skill_invoked",
            when=at(40),
            session="s1",
            agent_version="2.0.14",
            trigger="user-slash",
            outcome="already_loaded",
        ),
        native(
            "skill_invoked",
            when=at(50),
            session="s2",
            agent_version="2.0.14",
            trigger="user-slash",
            outcome="already_loaded",
        ),
        native("skill_invoked", when=at(60), session="s3", agent_version="2.1.3", trigger="nested"),
        native(
            "skill_reinjected",
            when=at(61),
            session="s3",
            agent_version="2.1.3",
            tokens_kept=900,
            tokens_cut=0,
        ),
        native("skill_unloaded", when=at(62), session="s3", agent_version="2.1.3"),
        native(
            "api_request",
            when=at(63),
            session="s3",
            agent_version="2.1.3",
            input_tokens=1000,
            output_tokens=200,
            cost_usd=0.25,
        ),
    ]


@pytest.mark.django_db
def test_rollup_counts_every_health_signal(org: Any) -> None:
    store(*session_story())
    result = rollup_compute(day=DAY)
    assert result.skill_rows > 0 and not result.still_pending
    assert not PendingRollup.objects.exists()
    [deploy] = skill_health(window=Window(since=DAY, until=DAY))[:0] or [
        r
        for r in skill_health(window=Window(since=DAY, until=DAY))
        if r.skill_key.startswith("anon-") and r.loads
    ]
    assert deploy.loads == 1
    assert (deploy.inv_model, deploy.inv_user, deploy.inv_nested) == (1, 2, 1)
    assert deploy.cut_name_only == 1 and deploy.degraded_sessions == 1 and deploy.sessions == 3
    assert deploy.cut_sessions_share == pytest.approx(1 / 3)
    assert deploy.reinjections == 2 and deploy.cut_tails == 1 and deploy.tokens_cut == 2100
    assert deploy.evictions == 1 and deploy.unloads == 1
    assert deploy.already_loaded == 2 and deploy.ghosts == 1  # s2 had no eviction before: not a ghost
    assert deploy.cost == pytest.approx(0.25) and deploy.all_tokens == 1200
    assert deploy.status == "degraded"
    by_version = {r.agent_version: r for r in FleetDaily.objects.filter(day=DAY)}
    assert by_version["2.0.14"].degraded_listings == 1 and by_version["2.0.14"].name_only_listings == 1
    assert by_version["2.0.14"].compactions == 1 and by_version["2.0.14"].pre_tokens == 180000
    assert by_version["2.1.3"].cost_usd == pytest.approx(0.25)


@pytest.mark.django_db
def test_rollups_are_idempotent_and_follow_late_events(org: Any) -> None:
    store(*session_story())
    rollup_compute(day=DAY)
    first = sorted(SkillDaily.objects.values_list("skill_key", "agent_version", "events", "ghosts"))
    rollup_compute(day=DAY)
    assert sorted(SkillDaily.objects.values_list("skill_key", "agent_version", "events", "ghosts")) == first
    store(native("skill_invoked", when=at(90), session="s9", agent_version="2.1.3", trigger="model"))
    assert PendingRollup.objects.filter(day=DAY).exists()
    rollups_sweep()
    assert sum(SkillDaily.objects.values_list("inv_model", flat=True)) == 2
    assert not PendingRollup.objects.exists()


@pytest.mark.django_db
def test_a_batch_arriving_during_a_rollup_keeps_the_day_pending(org: Any) -> None:
    store(native("skill_loaded", when=at(1)))
    pending = PendingRollup.objects.get(day=DAY)
    seq_seen_by_rollup = pending.seq
    store(native("skill_loaded", when=at(2)))  # bumps seq after the rollup "started"
    PendingRollup.objects.filter(day=DAY, seq=seq_seen_by_rollup).delete()  # what rollup_compute does
    assert PendingRollup.objects.filter(day=DAY).exists()  # the later batch is not forgotten


def test_frecency_follows_the_domain_formula() -> None:
    assert frecency(10, 0) == pytest.approx(10)
    assert frecency(10, 7) == pytest.approx(5)
    assert frecency(10, 14) == pytest.approx(2.5)
    assert frecency(10, 70) == pytest.approx(1)  # floor at 0.1
    assert frecency(0, 1) == 0 and frecency(3, None) == 0


@pytest.mark.django_db
def test_frecency_drops_invocations_within_60_s_of_the_users_last_counted_one(org: Any) -> None:
    """DOMAIN §8: writes within 60 s of the last are dropped, per user and skill."""
    seconds = [0, 30, 59, 60, 75, 130, 300]  # kept: 0, 60, 130, 300 (75 is 15 s after 60)
    store(
        *[
            native(
                "skill_invoked",
                when=NOON + timedelta(seconds=s),
                session="s1",
                user="ana@acme.test",
                trigger="model",
            )
            for s in seconds
        ],
        native(
            "skill_invoked",
            when=NOON + timedelta(seconds=10),
            session="s2",
            user="bo@acme.test",
            trigger="user-slash",
        ),
        native(
            "skill_invoked",
            when=MIDNIGHT - timedelta(seconds=20),
            session="s3",
            user="cy@acme.test",
            trigger="model",
        ),
        native(
            "skill_invoked",
            when=MIDNIGHT + timedelta(seconds=20),
            session="s3",
            user="cy@acme.test",
            trigger="model",
        ),
    )
    rollup_compute(day=DAY)
    rollup_compute(day=DAY - timedelta(days=1))
    rows = SkillDaily.objects.all()  # one skill ("deploy", pseudonymised: not in the catalog)
    today = sum(r.uses for r in rows.filter(day=DAY))
    assert sum(r.invocations for r in rows.filter(day=DAY)) == 9
    assert today == 4 + 1  # ana 4, bo 1; cy's call 20 s after midnight repeats the one before it
    assert sum(r.uses for r in rows.filter(day=DAY - timedelta(days=1))) == 1
    [health] = skill_health(window=Window(since=DAY, until=DAY))
    assert health.invocations == 9 and health.totals["uses"] == 5
    assert health.frecency == pytest.approx(frecency(5, health.days_since_last_use))


@pytest.mark.django_db
def test_management_command_rebuilds_and_sweeps(org: Any) -> None:
    store(*session_story())
    call_command("telemetry_rollups", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert SkillDaily.objects.exists() and not PendingRollup.objects.exists()
    SkillDaily.objects.all().delete()
    call_command("telemetry_rollups", "--rebuild", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert SkillDaily.objects.exists()


def _reset_pool(app: Any) -> None:
    """Drop pooled broker connections so the next message uses the current broker URL."""
    app._pool = None
    app.amqp._producer_pool = None


@pytest.mark.django_db(transaction=True)
def test_broker_outage_loses_nothing_and_the_sweep_catches_up(
    org: Any, developer_user: User, make_token: Callable[..., str], settings: Any, caplog: Any
) -> None:
    """Events arrive while the broker is unreachable: they are stored, the answer is 200, and the
    sweeper computes the rollups later."""
    from portal.celery import app

    token = make_token(developer_user, "telemetry:write")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.task_always_eager = False
    old_broker = app.conf.broker_write_url
    old_timeout, old_options = app.conf.broker_connection_timeout, app.conf.broker_transport_options
    app.conf.broker_write_url = "redis://127.0.0.1:1/0"  # nothing listens there
    app.conf.broker_connection_timeout = 0.5
    app.conf.broker_transport_options = {"max_retries": 0, "socket_connect_timeout": 0.5}
    _reset_pool(app)
    try:
        batch = session_story()
        response = Client().post(
            "/api/v1/telemetry/events",
            data=json.dumps({"events": batch}),
            content_type="application/json",
            headers=auth(token),
        )
    finally:
        app.conf.broker_write_url = old_broker
        app.conf.broker_connection_timeout, app.conf.broker_transport_options = old_timeout, old_options
        app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER
        _reset_pool(app)
    assert response.status_code == 200
    assert response.json()["counts"]["accepted"] == len(batch)
    assert "not enqueued" in caplog.text  # the broker really was unreachable
    assert Event.objects.exclude(type="listing_cut").count() == len(batch)
    assert not SkillDaily.objects.exists()  # no task ran
    assert list(PendingRollup.objects.values_list("day", flat=True)) == [DAY]
    rollups_sweep()
    assert SkillDaily.objects.filter(day=DAY).exists()
    assert not PendingRollup.objects.exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_computes_rollups_and_the_beat_sweep(
    celery_worker_live: Any, developer_user: User, make_token: Callable[..., str], settings: Any
) -> None:
    from governance.telemetry.tasks import rollups_sweep as sweep_task

    settings.TELEMETRY_ROLLUP_DELAY_SECONDS = 0
    token = make_token(developer_user, "telemetry:write")
    batch = [native("skill_invoked", when=at(i), trigger="model") for i in range(3)]
    response = Client().post(
        "/api/v1/telemetry/events",
        data=json.dumps({"events": batch}),
        content_type="application/json",
        headers=auth(token),
    )
    assert response.status_code == 200
    deadline = time.time() + 20
    while time.time() < deadline and not SkillDaily.objects.filter(day=DAY).exists():
        time.sleep(0.2)
    assert sum(SkillDaily.objects.filter(day=DAY).values_list("inv_model", flat=True)) == 3
    # A lost message: the day is pending but no task was sent; the beat task picks it up.
    PendingRollup.objects.create(
        day=DAY - timedelta(days=1), requested_at=datetime.now(UTC) - timedelta(hours=1)
    )
    sweep_task.delay()
    deadline = time.time() + 20
    while time.time() < deadline and PendingRollup.objects.exists():
        time.sleep(0.2)
    assert not PendingRollup.objects.exists()
