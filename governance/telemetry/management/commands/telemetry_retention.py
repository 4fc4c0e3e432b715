from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from governance.telemetry.services import events_retention_apply, partitions_prepare


class Command(BaseCommand):
    help = "Drop telemetry events older than TELEMETRY_RETENTION_DAYS (whole partitions on PostgreSQL)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=None, help="override the retention for this run")

    def handle(self, *args: Any, **options: Any) -> None:
        result = events_retention_apply(days=options["days"])
        partitions_prepare()
        dropped = ", ".join(day.isoformat() for day in result.partitions_dropped) or "none"
        self.stdout.write(
            f"Events before {result.cutoff} removed: partitions dropped: {dropped}; "
            f"rows deleted: {result.rows_deleted}."
        )
