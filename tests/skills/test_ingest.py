"""source_ingest: one transaction per source, versions only for changed packages, reports kept."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from governance.audit.models import AuditEntry
from governance.policy.admission import Admission
from governance.skills import services
from governance.skills.models import Blob, IngestRun, IngestStatus, Skill, SkillVersion, Source, VersionFile
from governance.skills.selectors import version_file_contents
from governance.skills.services import ingest_request, source_register
from tests.engine.gitrepo import commit, make_repo, write_skill

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]


def stored() -> tuple[int, int, int, int]:
    return (
        Skill.objects.count(),
        SkillVersion.objects.count(),
        VersionFile.objects.count(),
        Blob.objects.count(),
    )


def run_ingest(source: Source, user: User | None, capture: Any) -> IngestRun:
    with capture(execute=True):
        run = ingest_request(source=source, requested_by=user)
    run.refresh_from_db()
    return run


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "managed"
    write_skill(root, "deploy", "deploy")
    write_skill(root, "security-review", "security-review")
    (root / "deploy/scripts").mkdir()
    (root / "deploy/scripts/ship.sh").write_text("#!/bin/sh\nmake deploy\n")
    write_skill(root, "broken", "Broken_Name")
    return root


def test_directory_ingest_stores_every_skill_and_reports(
    skills_dir: Path, admin_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    source = source_register(kind="managed", location=str(skills_dir), actor=admin_user)
    assert source.identity == f"local:{skills_dir}"
    run = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert run.status == IngestStatus.SUCCEEDED, run.error
    assert run.counts["skills_found"] == 3 and run.counts["new_versions"] == 3 and run.counts["invalid"] == 1
    assert run.duration_ms is not None and run.progress_done == run.progress_total == 3
    assert any(f["code"] == "name-not-lowercase" or f["code"].startswith("name-") for f in run.findings)
    deploy = Skill.objects.get(source=source, name="deploy")
    assert deploy.location == "deploy"
    assert version_file_contents(deploy.current_version)["scripts/ship.sh"] == b"#!/bin/sh\nmake deploy\n"  # type: ignore[arg-type]
    assert Skill.objects.get(source=source, location="broken").current_version.valid is False  # type: ignore[union-attr]
    assert AuditEntry.objects.filter(action="source.registered").count() == 1


def test_reingest_unchanged_creates_nothing_and_changed_creates_one_version(
    skills_dir: Path, admin_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    source = source_register(kind="managed", location=str(skills_dir))
    run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    before = stored()
    again = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert again.status == IngestStatus.SUCCEEDED
    assert again.counts["new_versions"] == 0 and again.counts["unchanged"] == 3
    assert stored() == before

    (skills_dir / "deploy/scripts/ship.sh").write_text("#!/bin/sh\nmake deploy-canary\n")
    shutil.rmtree(skills_dir / "broken")
    third = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert third.counts["new_versions"] == 1 and third.counts["removed"] == 1
    deploy = Skill.objects.get(source=source, name="deploy")
    assert deploy.versions.count() == 2 and deploy.current_version.number == 2  # type: ignore[union-attr]
    assert Blob.objects.count() == before[3] + 1  # only the changed script is new
    assert Skill.objects.get(source=source, location="broken").removed_at is not None


def test_git_ingest_records_commit_and_skips_the_same_commit(
    tmp_path: Path,
    admin_user: User,
    settings: Any,
    skill_storage: Path,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.SKILL_GIT_ALLOW_LOCAL = True
    repo = make_repo(tmp_path / "origin")
    source = source_register(kind="project", location=f"file://{repo}", ref="main")
    run = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert run.status == IngestStatus.SUCCEEDED, run.error
    assert len(run.commit) == 40
    assert sorted(Skill.objects.filter(source=source).values_list("location", flat=True)) == [
        ".claude/skills/db-migrations",
        ".claude/skills/deploy",
    ]
    assert SkillVersion.objects.filter(commit=run.commit).count() == 2
    before = stored()
    same = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert same.counts.get("unchanged_commit") is True and stored() == before
    write_skill(repo, ".claude/skills/incident-rca", "incident-rca")
    new_commit = commit(repo, "add rca")
    later = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert later.commit == new_commit and later.counts["new_versions"] == 1
    assert list((skill_storage / "work").iterdir()) == []  # checkouts are removed after each run


def test_git_ingest_refuses_local_urls_by_default(
    tmp_path: Path, admin_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    repo = make_repo(tmp_path / "origin")
    source = source_register(kind="project", location=f"file://{repo}")
    run = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert run.status == IngestStatus.FAILED
    assert "file:// URLs are not accepted" in run.error
    assert Skill.objects.count() == 0


def test_refused_by_policy_stores_nothing_but_the_report(
    skills_dir: Path,
    admin_user: User,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    calls: list[dict[str, Any]] = []

    def refuse(**kwargs: Any) -> Admission:
        calls.append(kwargs)
        return Admission(allowed=False, reason="not on the source allowlist")

    source = source_register(kind="managed", location=str(skills_dir))  # admitted, then refused
    monkeypatch.setattr(services, "source_admission", refuse)
    run = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert run.status == IngestStatus.REFUSED
    assert run.error == "refused by policy: not on the source allowlist"
    assert calls[0]["kind"] == "managed" and calls[0]["location"] == str(skills_dir)
    assert stored() == (0, 0, 0, 0)


def test_real_admission_refusal_is_audited(
    admin_user: User, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    from governance.policy import admission

    source = source_register(kind="project", location="https://github.com/evil/skills")
    monkeypatch.setattr(
        services,
        "source_admission",
        lambda **kw: admission.Admission(allowed=False, reason="denied by source rule 'evil'"),
    )
    run = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert run.status == IngestStatus.REFUSED and Skill.objects.count() == 0


def test_failure_mid_store_rolls_back_everything_and_keeps_the_report(
    skills_dir: Path,
    admin_user: User,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    source = source_register(kind="managed", location=str(skills_dir))

    def explode(**kwargs: Any) -> None:
        raise RuntimeError("disk full")

    real_blobs = services.blobs_store

    def blobs_then_explode(**kwargs: Any) -> int:
        real_blobs(**kwargs)
        explode()
        return 0

    monkeypatch.setattr(services, "blobs_store", blobs_then_explode)
    run = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert run.status == IngestStatus.FAILED and "disk full" in run.error
    assert stored() == (0, 0, 0, 0)
    assert IngestRun.objects.filter(pk=run.pk).exists()


def test_missing_directory_fails_with_a_clear_error(
    tmp_path: Path, admin_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    source = source_register(kind="managed", location=str(tmp_path / "gone"))
    run = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert run.status == IngestStatus.FAILED and "no such file or folder" in run.error


def test_a_second_request_while_pending_returns_the_same_run(skills_dir: Path, admin_user: User) -> None:
    source = source_register(kind="managed", location=str(skills_dir))
    first = ingest_request(source=source, requested_by=admin_user)
    second = ingest_request(source=source, requested_by=admin_user)
    assert first.pk == second.pk


def test_execute_is_idempotent(skills_dir: Path, admin_user: User) -> None:
    source = source_register(kind="managed", location=str(skills_dir))
    run = ingest_request(source=source, requested_by=admin_user)  # on_commit not run: still pending
    assert services.ingest_run_execute(run_id=run.pk) is not None
    assert services.ingest_run_execute(run_id=run.pk) is None  # already claimed
    run.refresh_from_db()
    assert run.status == IngestStatus.SUCCEEDED and run.attempts == 1


def test_sweeper_requeues_lost_pending_runs(
    skills_dir: Path, admin_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    from datetime import timedelta

    from django.conf import settings
    from django.utils import timezone

    from governance.skills.tasks import ingest_runs_sweep

    assert settings.CELERY_BEAT_SCHEDULE["skills-ingest-sweep"]["task"] == "skills.ingest_runs_sweep"
    source = source_register(kind="managed", location=str(skills_dir))
    run = ingest_request(source=source, requested_by=admin_user)  # message "lost": on_commit never ran
    assert ingest_runs_sweep() == 0  # too recent to be called lost
    IngestRun.objects.filter(pk=run.pk).update(enqueued_at=timezone.now() - timedelta(minutes=10))
    with django_capture_on_commit_callbacks(execute=True):
        assert ingest_runs_sweep() == 1
    run.refresh_from_db()
    assert run.status == IngestStatus.SUCCEEDED


def test_sweeper_retries_runs_whose_worker_died_then_gives_up(
    skills_dir: Path, admin_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    source = source_register(kind="managed", location=str(skills_dir))
    long_ago = timezone.now() - timedelta(hours=2)
    dead = IngestRun.objects.create(
        source=source,
        source_kind="managed",
        location=str(skills_dir),
        status=IngestStatus.RUNNING,
        started_at=long_ago,
        attempts=1,
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert services.ingest_runs_requeue() == [dead.pk]
    dead.refresh_from_db()
    assert dead.status == IngestStatus.SUCCEEDED and dead.attempts == 2
    alive = IngestRun.objects.create(
        source=source,
        source_kind="managed",
        location=str(skills_dir),
        status=IngestStatus.RUNNING,
        started_at=long_ago,
        heartbeat_at=timezone.now(),
        attempts=1,
    )
    hopeless = IngestRun.objects.create(
        source=source,
        source_kind="managed",
        location=str(skills_dir),
        status=IngestStatus.RUNNING,
        started_at=long_ago,
        attempts=3,
    )
    assert services.ingest_runs_requeue() == []
    hopeless.refresh_from_db()
    assert hopeless.status == IngestStatus.FAILED and "3 times" in hopeless.error
    alive.refresh_from_db()
    assert alive.status == IngestStatus.RUNNING  # a long run that still reports progress is left alone


@pytest.mark.parametrize(
    ("kind", "location", "message"),
    [
        ("mcp", "/srv", "kind must be one of"),
        ("galaxy", "/srv", "kind must be one of"),
        ("project", "", "empty source location"),
        ("project", "ext::sh -c id", "ext::"),
        ("project", "mcp:docs", "pushed through the API"),
    ],
)
def test_register_refuses_bad_input(kind: str, location: str, message: str) -> None:
    with pytest.raises(services.IngestRefused, match=message):
        source_register(kind=kind, location=location)
    assert Source.objects.count() == 0


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_carries_out_the_run(
    skills_dir: Path, admin_user: User, celery_worker_live: Any
) -> None:
    import time

    from portal.celery import app

    app.conf.task_always_eager = False
    source = source_register(kind="managed", location=str(skills_dir))
    run = ingest_request(source=source, requested_by=admin_user)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.finished:
            break
        time.sleep(0.2)
    assert run.status == IngestStatus.SUCCEEDED, run.error
    assert Skill.objects.filter(source=source).count() == 3


def test_a_published_policy_refuses_a_denied_repository_in_any_spelling(
    admin_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    from governance.policy.services import policy_draft_update, policy_publish

    # Registered before the policy denied it (registration itself refuses afterwards): ingest refuses.
    source = source_register(kind="project", location="git@github.com:Unvetted/Skills-Dump.git")
    policy_draft_update(
        actor=admin_user,
        document={
            "source_rules": [
                {"effect": "deny", "kind": "repository", "pattern": "https://github.com/unvetted/skills-dump"}
            ]
        },
    )
    policy_publish(actor=admin_user)
    run = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert run.status == IngestStatus.REFUSED
    assert run.error.startswith("refused by policy: denied by source rule")
    entry = AuditEntry.objects.get(action="source.refused")
    assert entry.evidence["location"] == "git@github.com:Unvetted/Skills-Dump.git"
    assert stored() == (0, 0, 0, 0)


def test_packages_are_read_again_when_stored_and_a_change_meanwhile_fails_the_run(
    skills_dir: Path,
    admin_user: User,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    real_store = services.skills_store

    def edit_then_store(**kwargs: Any) -> dict[str, Any]:
        assert all(not f.content for p in kwargs["parsed"] for f in p.files if f.size)  # not kept in memory
        (skills_dir / "deploy/scripts/ship.sh").write_text("#!/bin/sh\nrm -rf /\n")
        return real_store(**kwargs)

    monkeypatch.setattr(services, "skills_store", edit_then_store)
    source = source_register(kind="managed", location=str(skills_dir))
    run = run_ingest(source, admin_user, django_capture_on_commit_callbacks)
    assert run.status == IngestStatus.FAILED
    assert "deploy/scripts/ship.sh changed while it was being ingested" in run.error
    assert stored() == (0, 0, 0, 0)
