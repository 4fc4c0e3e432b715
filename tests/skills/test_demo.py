"""Demo skills: every source kind, stored through the real ingest path, idempotent."""

from __future__ import annotations

import io

import pytest

from governance.skills.demo import seed
from governance.skills.models import IngestRun, Skill, SkillVersion, Source
from portal.accounts.demo import seed_accounts

pytestmark = pytest.mark.django_db


def test_demo_covers_every_source_kind_and_the_planted_cases() -> None:
    demo = seed_accounts()
    seed(demo=demo, stdout=io.StringIO())
    kinds = set(Source.objects.values_list("kind", flat=True))
    assert kinds == {"managed", "bundled", "user", "project", "plugin", "mcp"}
    skills = Skill.objects.select_related("source", "current_version")
    assert skills.count() >= 30
    by = {(s.source.kind, s.qualified_name): s for s in skills}
    assert ("managed", "security-review") in by and ("project", "security-review") in by
    assert ("project", "security-reviеw") in by  # Cyrillic е
    assert ("plugin", "pdf-tools:pdf-extract") in by and ("mcp", "docs-search") in by
    invalid = [s for s in skills if s.current_version and not s.current_version.valid]
    assert [s.name for s in invalid] == ["Month_End_Close"]
    rollout = by[("project", "k8s-rollout")].current_version
    assert (
        rollout is not None
        and "hooks" in rollout.frontmatter
        and rollout.frontmatter["allowed-tools"] == "Bash Read Write"
    )
    runbook = by[("project", "ledger-close-runbook")].current_version
    assert runbook is not None and len(runbook.body) > 20_000
    assert by[("project", "deploy")].location == "apps/web/.claude/skills/deploy"
    assert Source.objects.get(display_name="acme-demo/payments-api").project == demo.projects["payments-api"]


def test_demo_is_idempotent() -> None:
    demo = seed_accounts()
    seed(demo=demo, stdout=io.StringIO())
    before = (
        Source.objects.count(),
        Skill.objects.count(),
        SkillVersion.objects.count(),
        IngestRun.objects.count(),
    )
    seed(demo=demo, stdout=io.StringIO())
    after = (
        Source.objects.count(),
        Skill.objects.count(),
        SkillVersion.objects.count(),
        IngestRun.objects.count(),
    )
    assert before == after
