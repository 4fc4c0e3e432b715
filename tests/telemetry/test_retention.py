"""Retention: events older than TELEMETRY_RETENTION_DAYS go (whole partitions on PostgreSQL)."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import connection

from governance.engine.telemetry import validate_event
from governance.telemetry.models import Event, SkillDaily
from governance.telemetry.partitions import partition_name, partitions_list
from governance.telemetry.services import events_retention_apply, events_store, rollups_sweep
from tests.telemetry.factories import native


def _store_days_ago(*days: int) -> None:
    now = datetime.now(UTC)
    events = [native("skill_invoked", trigger="model", when=now - timedelta(days=d, hours=1)) for d in days]
    events_store(events=[validate_event(e, now=now, max_age_days=90) for e in events], channel="api")


@pytest.mark.django_db
def test_retention_drops_old_events_and_keeps_rollups() -> None:
    _store_days_ago(1, 10, 40)
    rollups_sweep()
    rollup_days = SkillDaily.objects.count()
    result = events_retention_apply(days=30)
    remaining = list(Event.objects.values_list("occurred_at", flat=True))
    assert len(remaining) == 2
    assert all(when > datetime.now(UTC) - timedelta(days=31) for when in remaining)
    assert SkillDaily.objects.count() == rollup_days  # dashboards of past months keep working
    if connection.vendor == "postgresql":
        old_day = (datetime.now(UTC) - timedelta(days=40, hours=1)).date()
        assert old_day in result.partitions_dropped
        assert partition_name(old_day) not in {name for _, name in partitions_list()}
        with connection.cursor() as cursor:
            cursor.execute("SELECT to_regclass(%s)", [partition_name(old_day)])
            assert cursor.fetchone()[0] is None
    else:
        assert result.rows_deleted == 1


@pytest.mark.django_db
def test_retention_command_uses_the_setting(settings: object) -> None:
    _store_days_ago(2, 5)
    out = io.StringIO()
    call_command("telemetry_retention", "--days", "3", stdout=out)
    assert Event.objects.count() == 1
    assert "removed" in out.getvalue()


@pytest.mark.django_db
def test_partitions_are_daily_with_brin_on_postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite keeps one plain table")
    _store_days_ago(0, 1)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT partstrat FROM pg_partitioned_table WHERE partrelid = 'telemetry_event'::regclass"
        )
        assert cursor.fetchone()[0] == "r"
        cursor.execute(
            "SELECT am.amname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_am am ON am.oid = c.relam WHERE i.indrelid = 'telemetry_event'::regclass"
        )
        assert "brin" in {row[0] for row in cursor.fetchall()}
    assert len(partitions_list()) >= 2
