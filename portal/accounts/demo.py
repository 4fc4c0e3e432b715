"""Demo organisation, teams, projects and accounts. Idempotent: running it twice changes nothing."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction

from portal.accounts.models import Organisation, Project, Role, Team
from portal.accounts.services import user_create

DEMO_ACCOUNTS = {
    # username: (role, password, teams)
    "alice-admin": (Role.ADMIN, "demo-admin-2026", ["platform"]),
    "liam-lead": (Role.LEAD, "demo-lead-2026", ["payments", "platform"]),
    "dana-dev": (Role.DEVELOPER, "demo-dev-2026", ["payments"]),
}

DEMO_TEAMS = {
    "platform": "Platform",
    "payments": "Payments",
    "mobile": "Mobile",
}

DEMO_PROJECTS = [
    # slug, name, team, repository
    ("payments-api", "payments-api", "payments", "https://github.com/acme-demo/payments-api"),
    ("ledger", "ledger", "payments", "https://github.com/acme-demo/ledger"),
    ("platform-infra", "platform-infra", "platform", "https://github.com/acme-demo/platform-infra"),
    ("web-monorepo", "web-monorepo", "platform", "https://github.com/acme-demo/web-monorepo"),
    ("mobile-app", "mobile-app", "mobile", "https://github.com/acme-demo/mobile-app"),
]


@dataclass
class DemoOrg:
    organisation: Organisation
    teams: dict[str, Team]
    projects: dict[str, Project]
    users: dict[str, User]


@transaction.atomic
def seed_accounts() -> DemoOrg:
    org, _ = Organisation.objects.get_or_create(slug="acme", defaults={"name": "Acme Demo"})
    teams = {
        slug: Team.objects.get_or_create(organisation=org, slug=slug, defaults={"name": name})[0]
        for slug, name in DEMO_TEAMS.items()
    }
    projects = {
        slug: Project.objects.get_or_create(
            slug=slug, defaults={"name": name, "team": teams[team], "repository_url": repo}
        )[0]
        for slug, name, team, repo in DEMO_PROJECTS
    }
    users: dict[str, User] = {}
    for username, (role, password, team_slugs) in DEMO_ACCOUNTS.items():
        user = User.objects.filter(username=username).first()
        if user is None:
            user = user_create(
                username=username,
                password=password,
                organisation=org,
                role=role,
                teams=[teams[slug] for slug in team_slugs],
            )
        users[username] = user
    return DemoOrg(organisation=org, teams=teams, projects=projects, users=users)
