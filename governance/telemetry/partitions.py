"""Daily partitions of ``telemetry_event`` on PostgreSQL (SQLite keeps one plain table).

Partitions are created on demand before an insert touches a new day (and a day ahead by the beat
task), and dropped whole by retention: dropping a partition is instant and leaves no bloat, unlike
``DELETE``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

from django.db import connection

PARENT = "telemetry_event"


def partition_name(day: date) -> str:
    return f"{PARENT}_p{day:%Y%m%d}"


def is_partitioned() -> bool:
    return connection.vendor == "postgresql"


def partitions_ensure(days: Iterable[date]) -> list[date]:
    """Create the missing daily partitions; returns the days created. No-op on SQLite.

    One catalog query per call (no process cache: a rolled-back transaction or the retention job
    can remove a partition behind a cache's back).
    """
    if not is_partitioned():
        return []
    wanted = {partition_name(day): day for day in set(days)}
    if not wanted:
        return []
    created: list[date] = []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM unnest(%s::text[]) AS name WHERE to_regclass(quote_ident(name)) IS NULL",
            [sorted(wanted)],
        )
        for (name,) in cursor.fetchall():
            day = wanted[name]
            # Serialise creators (several gunicorn workers may meet the same new day at once).
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [name])
            start = datetime(day.year, day.month, day.day, tzinfo=UTC)
            cursor.execute(
                f'CREATE TABLE IF NOT EXISTS "{name}" PARTITION OF {PARENT} FOR VALUES FROM (%s) TO (%s)',
                [start, start + timedelta(days=1)],
            )
            created.append(day)
    return created


def partitions_list() -> list[tuple[date, str]]:
    if not is_partitioned():
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = %s ORDER BY c.relname",
            [PARENT],
        )
        names = [row[0] for row in cursor.fetchall()]
    result = []
    for name in names:
        try:
            result.append((datetime.strptime(name.rsplit("_p", 1)[1], "%Y%m%d").date(), name))
        except (IndexError, ValueError):
            continue
    return result


def partitions_drop_before(cutoff: date) -> list[date]:
    """Drop every daily partition that ends on or before ``cutoff`` (whole days older than it)."""
    dropped = []
    with connection.cursor() as cursor:
        for day, name in partitions_list():
            if day + timedelta(days=1) <= cutoff:
                cursor.execute(f'DROP TABLE IF EXISTS "{name}"')
                dropped.append(day)
    return dropped
