from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from portal.accounts.services import InvalidScopes, token_create


class Command(BaseCommand):
    help = "Create an API token for a user and print it once (it is stored hashed)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True)
        parser.add_argument(
            "--scopes", required=True, help="comma-separated, e.g. telemetry:write,skills:read"
        )
        parser.add_argument("--name", default="cli")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"no user named {options['user']!r}")
        try:
            _, raw = token_create(user=user, name=options["name"], scopes=options["scopes"])
        except InvalidScopes as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(raw)
