from __future__ import annotations

from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from governance.telemetry.services import rollup_compute, rollups_rebuild, rollups_sweep


class Command(BaseCommand):
    help = "Compute telemetry rollups: the pending days (default), one --day, or --rebuild every day."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--day", help="YYYY-MM-DD: recompute this day")
        parser.add_argument("--rebuild", action="store_true", help="recompute every day that has events")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["day"]:
            try:
                day = date.fromisoformat(options["day"])
            except ValueError:
                raise CommandError(f"--day must be YYYY-MM-DD, got {options['day']!r}") from None
            results = [rollup_compute(day=day)]
        elif options["rebuild"]:
            results = rollups_rebuild()
        else:
            results = rollups_sweep()
        for result in results:
            self.stdout.write(f"{result.day}: {result.skill_rows} skill rows, {result.fleet_rows} fleet rows")
        self.stdout.write(self.style.SUCCESS(f"{len(results)} day(s) computed."))
