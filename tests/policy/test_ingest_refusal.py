"""Through the real ingest path: every spelling of a denied repository is refused before fetching."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from governance.audit.models import AuditEntry
from governance.policy.services import policy_draft_update, policy_publish
from governance.skills import services
from governance.skills.models import Blob, IngestRun, IngestStatus, Skill, SkillVersion, Source
from governance.skills.services import ingest_request, source_register
from tests.engine.gitrepo import write_skill

SPELLINGS = [
    "git@github.com:evil/skills.git",
    "https://github.com/evil/skills",
    "https://github.com/evil/skills/",
    "https://GitHub.com/Evil/Skills.git",
    "ssh://git@github.com/evil/skills.git",
    "github:evil/skills",
    "evil/skills",
]


@pytest.fixture
def eager() -> Iterator[None]:
    from portal.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


def publish_deny_evil(admin_user: User) -> None:
    policy_draft_update(
        actor=admin_user,
        document={
            "source_rules": [
                {"effect": "deny", "kind": "repository", "pattern": "evil/skills", "note": "dump"}
            ]
        },
    )
    policy_publish(actor=admin_user)


@pytest.fixture
def deny_evil(admin_user: User) -> None:
    publish_deny_evil(admin_user)


@pytest.fixture
def no_fetch(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    fetched: list[str] = []

    def fetch(location: str, *args: Any, **kwargs: Any) -> None:
        fetched.append(location)
        raise AssertionError(f"fetched {location} although the policy denies it")

    monkeypatch.setattr(services, "git_fetch", fetch)
    return fetched


@pytest.mark.django_db
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_is_refused_before_fetch(
    spelling: str,
    no_fetch: list[str],
    eager: None,
    admin_user: User,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Registered before the policy denied it: the ingest itself refuses.
    source = source_register(kind="project", location=spelling, actor=admin_user)
    publish_deny_evil(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        run = ingest_request(source=source, requested_by=admin_user)
    run.refresh_from_db()
    assert run.status == IngestStatus.REFUSED
    assert "denied by source rule 'deny repository evil/skills' (dump)" in run.error
    assert no_fetch == []
    assert (Skill.objects.count(), SkillVersion.objects.count(), Blob.objects.count()) == (0, 0, 0)
    refusal = AuditEntry.objects.get(action="source.refused")
    assert refusal.evidence["identity"] == "github.com/evil/skills" and refusal.actor == admin_user


@pytest.mark.django_db
def test_the_same_policy_admits_other_sources(
    tmp_path: Path, deny_evil: None, eager: None, admin_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    write_skill(tmp_path / "managed", "deploy", "deploy")
    source = source_register(kind="managed", location=str(tmp_path / "managed"), actor=admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        run = ingest_request(source=source, requested_by=admin_user)
    run.refresh_from_db()
    assert run.status == IngestStatus.SUCCEEDED, run.error
    assert Skill.objects.filter(name="deploy").exists()
    assert not AuditEntry.objects.filter(action="source.refused").exists()


@pytest.mark.django_db
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_is_refused_at_registration(
    spelling: str, deny_evil: None, no_fetch: list[str], admin_user: User
) -> None:
    with pytest.raises(services.IngestRefused) as refused:
        source_register(kind="project", location=spelling, actor=admin_user)
    assert refused.value.code == "source-refused"
    assert "denied by source rule 'deny repository evil/skills' (dump)" in refused.value.message
    assert not Source.objects.exists() and not IngestRun.objects.exists()
    assert AuditEntry.objects.get(action="source.refused").evidence["identity"] == "github.com/evil/skills"
    assert not AuditEntry.objects.filter(action="source.registered").exists()
