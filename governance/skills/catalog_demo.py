"""Demo collections for the catalog (after the demo skills are ingested). Idempotent."""

from __future__ import annotations

from typing import TextIO

from governance.skills.catalog_collections import collection_add_skills, collection_create
from governance.skills.models import Collection, Skill
from portal.accounts.demo import DemoOrg

DEMO_COLLECTIONS = {
    # slug: (name, description, [(source kind, skill name)])
    "security-essentials": (
        "Security essentials",
        "The organisation's reviewed security skills, for every repository.",
        [("managed", "security-review"), ("managed", "secrets-rotation"), ("plugin", "guard-secrets")],
    ),
    "release-kit": (
        "Release kit",
        "Deploy, changelog and release notes.",
        [("managed", "deploy"), ("plugin", "write-changelog"), ("project", "release-notes")],
    ),
}


def seed(*, demo: DemoOrg, stdout: TextIO) -> None:
    admin = demo.users.get("alice-admin")
    for slug, (name, description, members) in DEMO_COLLECTIONS.items():
        collection = Collection.objects.filter(slug=slug).first()
        if collection is None:
            collection = collection_create(slug=slug, name=name, description=description, created_by=admin)
        ids = [
            skill.pk
            for kind, skill_name in members
            for skill in Skill.objects.filter(source__kind=kind, name=skill_name, removed_at__isnull=True)[:1]
        ]
        added = collection_add_skills(collection=collection, skill_ids=ids, actor=admin)
        if added:
            stdout.write(f"catalog: collection {slug}: {added} skills\n")
