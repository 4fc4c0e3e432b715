"""Marketplace ingest: local plugins stored as plugin:name; git plugins fetched only when allowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from governance.policy.admission import Admission
from governance.skills import services
from governance.skills.models import Skill
from governance.skills.services import ingest_request, source_register
from tests.engine.gitrepo import commit, git, write_skill

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]


@pytest.fixture
def marketplace(tmp_path: Path) -> Path:
    plugin_repo = tmp_path / "plugin-repo"
    plugin_repo.mkdir()
    git(plugin_repo, "init", "-q", "-b", "main")
    write_skill(plugin_repo, "skills/lint-sql", "lint-sql")
    commit(plugin_repo, "plugin")
    root = tmp_path / "market"
    write_skill(root, "plugins/pdf-tools/skills/pdf-extract", "pdf-extract")
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin/marketplace.json").write_text(
        json.dumps(
            {
                "name": "acme",
                "owner": {"name": "Acme"},
                "plugins": [
                    {"name": "pdf-tools", "source": "./plugins/pdf-tools"},
                    {"name": "sql-tools", "source": {"source": "url", "url": f"file://{plugin_repo}"}},
                ],
            }
        )
    )
    return root


def ingest(root: Path, user: User, capture: Any) -> Any:
    source = source_register(kind="plugin", location=str(root))
    with capture(execute=True):
        run = ingest_request(source=source, requested_by=user)
    run.refresh_from_db()
    return run


def test_remote_plugins_are_recorded_not_fetched_by_default(
    marketplace: Path, admin_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    run = ingest(marketplace, admin_user, django_capture_on_commit_callbacks)
    assert run.status == "succeeded", run.error
    assert sorted(s.qualified_name for s in Skill.objects.all()) == ["pdf-tools:pdf-extract"]
    assert run.counts["remote_plugins"] == 1
    assert any(f["code"] == "plugin-remote-recorded" and "sql-tools" in f["message"] for f in run.findings)


def test_git_plugins_are_fetched_when_allowed(
    marketplace: Path, admin_user: User, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.SKILL_FETCH_REMOTE_PLUGINS = True
    settings.SKILL_GIT_ALLOW_LOCAL = True
    run = ingest(marketplace, admin_user, django_capture_on_commit_callbacks)
    assert run.status == "succeeded", run.error
    skills = {s.qualified_name: s for s in Skill.objects.all()}
    assert set(skills) == {"pdf-tools:pdf-extract", "sql-tools:lint-sql"}
    assert skills["sql-tools:lint-sql"].location == "sql-tools@remote/skills/lint-sql"
    assert any(f["code"] == "plugin-remote-fetched" for f in run.findings)


def test_a_refused_remote_plugin_is_not_fetched(
    marketplace: Path,
    admin_user: User,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.SKILL_FETCH_REMOTE_PLUGINS = True
    settings.SKILL_GIT_ALLOW_LOCAL = True

    def admit(**kwargs: Any) -> Admission:
        if kwargs["kind"] == "plugin" and kwargs["location"].startswith("file://"):
            return Admission(allowed=False, reason="not on the allowlist")
        return Admission(allowed=True, reason="ok")

    monkeypatch.setattr(services, "source_admission", admit)
    run = ingest(marketplace, admin_user, django_capture_on_commit_callbacks)
    assert sorted(s.qualified_name for s in Skill.objects.all()) == ["pdf-tools:pdf-extract"]
    assert any(f["code"] == "plugin-remote-refused" for f in run.findings)
