from __future__ import annotations

import importlib
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from portal.accounts.demo import DEMO_ACCOUNTS, seed_accounts

# Each concern seeds its own demo data with ``seed(demo=..., stdout=...)``; order matters
# (skills before telemetry and reviews, which refer to them).
DEMO_MODULES = [
    "governance.skills.demo",
    "governance.skills.catalog_demo",
    "governance.policy.demo",
    "governance.telemetry.demo",
    "governance.reviews.demo",
]


class Command(BaseCommand):
    help = "Load the demo organisation, accounts, skills and telemetry (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="seed even with DEBUG off")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG and not options["force"]:
            raise CommandError(
                "refusing to load demo accounts with DEBUG off (use --force on a test instance)"
            )
        demo = seed_accounts()
        for module_name in DEMO_MODULES:
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                if exc.name != module_name:  # a broken import inside the module must not pass silently
                    raise
                continue
            module.seed(demo=demo, stdout=self.stdout)
        self.stdout.write(self.style.SUCCESS("Demo data ready. Log in at the address below with:"))
        for username, (role, password, _teams) in DEMO_ACCOUNTS.items():
            self.stdout.write(f"  {role.label:<10} {username:<12} password: {password}")
