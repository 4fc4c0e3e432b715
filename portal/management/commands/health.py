from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from portal.health import health_check


class Command(BaseCommand):
    help = "Print the /healthz report; exit 1 when unhealthy (container healthchecks use it)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--deep", action="store_true", help="also require a live worker heartbeat")

    def handle(self, *args: Any, **options: Any) -> None:
        health = health_check()
        self.stdout.write(json.dumps(asdict(health)))
        if not (health.deep_healthy if options["deep"] else health.healthy):
            raise CommandError("unhealthy")
