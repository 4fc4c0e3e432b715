"""Delivery of approved changes to a real git repository (a local bare one), patches for
read-only projects, failed pushes and their retry, and rollback through the same delivery."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from governance.audit.models import AuditEntry
from governance.reviews import services
from governance.reviews.models import Delivery, DeliveryMode, DeliveryState, Proposal, ProposalState
from governance.skills.models import SkillVersion
from governance.skills.selectors import version_file_contents
from tests.conftest import Org
from tests.reviews.conftest import FOLDER, SKILL_MD, ProjectSkill, branch_file, git, improved, suggestion


def approve(client: Client, proposal_id: int, **body: Any) -> Any:
    return client.post(
        f"/api/v1/reviews/suggestions/{proposal_id}/approve", data=body, content_type="application/json"
    )


@pytest.fixture
def delivery_worker(transactional_db: None, request: pytest.FixtureRequest) -> Iterator[None]:
    """Eager mode delivers in-process after commit; with a broker, a real worker thread does."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        yield None
    else:
        request.getfixturevalue("celery_worker_live")
        yield None


def wait_for(predicate: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the delivery")
        time.sleep(0.1)


@pytest.mark.django_db(transaction=True)
def test_approval_is_committed_on_a_branch_and_pushed_by_the_worker(
    delivery_worker: None,
    bare_repo: Path,
    project_skill: ProjectSkill,
    propose: Callable[..., Any],
    lead_client: Client,
    lead_user: User,
) -> None:
    lead_user.email = "liam@acme.example"
    lead_user.save()
    created = propose(suggestion(project_skill)).json()
    assert approve(lead_client, created["id"]).status_code == 200
    wait_for(lambda: Proposal.objects.get(pk=created["id"]).state == ProposalState.APPLIED)

    branch = f"skill-review/proposal-{created['id']}"
    assert branch_file(bare_repo, branch, f"{FOLDER}/SKILL.md") + "\n" == improved(SKILL_MD)
    author = git("log", "-1", "--format=%an <%ae>", branch, cwd=bare_repo)
    message = git("log", "-1", "--format=%B", branch, cwd=bare_repo)
    assert author == "Skill governance portal <skill-portal@localhost>"
    assert "Reviewed-by: liam-lead <liam@acme.example>" in message
    assert "reason: user: 'you forgot to check the health endpoint again'" in message
    # The script kept its executable bit; main is untouched until someone merges the branch.
    assert "100755" in git("ls-tree", branch, f"{FOLDER}/scripts/check.sh", cwd=bare_repo)
    assert branch_file(bare_repo, "main", f"{FOLDER}/SKILL.md") + "\n" == SKILL_MD
    delivery = Delivery.objects.get(proposal_id=created["id"])
    assert delivery.state == DeliveryState.DELIVERED
    assert delivery.commit_sha == git("rev-parse", branch, cwd=bare_repo)
    assert AuditEntry.objects.filter(action="change.applied", target_id=str(created["id"])).exists()


@pytest.mark.django_db
def test_delivery_is_idempotent(
    bare_repo: Path, project_skill: ProjectSkill, propose: Callable[..., Any], lead_user: User
) -> None:
    created = propose(suggestion(project_skill)).json()
    services.proposal_approve(proposal_id=created["id"], reviewer=lead_user)
    delivery = Delivery.objects.get(proposal_id=created["id"])
    first = services.delivery_run(delivery_id=delivery.pk)
    assert first is not None and first.state == DeliveryState.DELIVERED
    # A duplicate message does nothing; a lost acknowledgement redone finds its own commit.
    assert services.delivery_run(delivery_id=delivery.pk) is None
    Delivery.objects.filter(pk=delivery.pk).update(state=DeliveryState.PENDING)
    again = services.delivery_run(delivery_id=delivery.pk)
    assert again is not None and again.state == DeliveryState.DELIVERED
    assert again.commit_sha == first.commit_sha
    assert len(git("rev-list", f"skill-review/proposal-{created['id']}", cwd=bare_repo).split()) == 2


@pytest.mark.django_db
def test_failed_push_leaves_the_proposal_failed_with_the_error_and_is_retryable(
    bare_repo: Path,
    project_skill: ProjectSkill,
    propose: Callable[..., Any],
    lead_user: User,
    lead_client: Client,
    org: Org,
) -> None:
    org.payments_api.push_url = str(bare_repo.parent / "gone.git")
    org.payments_api.save()
    created = propose(suggestion(project_skill)).json()
    services.proposal_approve(proposal_id=created["id"], reviewer=lead_user)
    delivery = Delivery.objects.get(proposal_id=created["id"])
    services.delivery_run(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    proposal = Proposal.objects.get(pk=created["id"])
    assert proposal.state == ProposalState.FAILED
    assert delivery.state == DeliveryState.FAILED
    assert "git clone failed" in delivery.error and "gone.git" in delivery.error
    assert AuditEntry.objects.filter(action="change.delivery_failed").exists()
    shown = lead_client.get(f"/reviews/{proposal.pk}/")
    assert "git clone failed" in shown.content.decode()

    # The operator fixes the repository; the lead retries from the page.
    org.payments_api.push_url = str(bare_repo)
    org.payments_api.save()
    response = lead_client.post(f"/reviews/deliveries/{delivery.pk}/retry/")
    assert response.status_code == 302
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.PENDING and delivery.error == ""
    assert Proposal.objects.get(pk=proposal.pk).state == ProposalState.APPROVED
    services.delivery_run(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.DELIVERED and delivery.attempts == 2
    assert Proposal.objects.get(pk=proposal.pk).state == ProposalState.APPLIED
    assert branch_file(bare_repo, proposal.branch_name, f"{FOLDER}/SKILL.md") + "\n" == improved(SKILL_MD)


@pytest.mark.django_db
def test_delivery_refuses_to_overwrite_a_change_made_in_git(
    bare_repo: Path, tmp_path: Path, project_skill: ProjectSkill, propose: Callable[..., Any], lead_user: User
) -> None:
    clone = tmp_path / "someone"
    git("clone", "-q", str(bare_repo), str(clone), cwd=tmp_path)
    (clone / FOLDER / "SKILL.md").write_text(SKILL_MD + "Hand-written note.\n")
    git("-c", "user.name=S", "-c", "user.email=s@x", "commit", "-qam", "hand edit", cwd=clone)
    git("push", "-q", "origin", "main", cwd=clone)
    created = propose(suggestion(project_skill)).json()
    services.proposal_approve(proposal_id=created["id"], reviewer=lead_user)
    delivery = services.delivery_run(delivery_id=Delivery.objects.get(proposal_id=created["id"]).pk)
    assert delivery is not None and delivery.state == DeliveryState.FAILED
    assert "no longer holds the version this change was made against" in delivery.error


@pytest.mark.django_db
def test_read_only_project_gets_a_patch_that_git_am_applies(
    bare_repo: Path,
    tmp_path: Path,
    project_skill: ProjectSkill,
    propose: Callable[..., Any],
    lead_user: User,
    lead_client: Client,
    org: Org,
) -> None:
    org.payments_api.read_only = True
    org.payments_api.save()
    created = propose(suggestion(project_skill)).json()
    services.proposal_approve(proposal_id=created["id"], reviewer=lead_user)
    delivery = Delivery.objects.get(proposal_id=created["id"])
    assert delivery.mode == DeliveryMode.PATCH
    services.delivery_run(delivery_id=delivery.pk)
    assert Proposal.objects.get(pk=created["id"]).state == ProposalState.APPLIED
    assert git("branch", "--list", "skill-review/*", cwd=bare_repo) == ""  # nothing pushed

    response = lead_client.get(f"/reviews/deliveries/{delivery.pk}/patch")
    assert response.status_code == 200
    assert response["Content-Disposition"].endswith('.patch"')
    clone = tmp_path / "apply"
    git("clone", "-q", str(bare_repo), str(clone), cwd=tmp_path)
    (tmp_path / "change.patch").write_bytes(response.content)
    git("-c", "user.name=Dana", "-c", "user.email=d@x", "am", "-q", str(tmp_path / "change.patch"), cwd=clone)
    assert (clone / FOLDER / "SKILL.md").read_text() == improved(SKILL_MD)
    assert "Reviewed-by: liam-lead" in git("log", "-1", "--format=%B", cwd=clone)
    assert git("log", "-1", "--format=%an", cwd=clone) == "Skill governance portal"


@pytest.mark.django_db
def test_rollback_creates_a_version_equal_to_the_one_before_and_delivers_it(
    bare_repo: Path,
    project_skill: ProjectSkill,
    propose: Callable[..., Any],
    lead_user: User,
    lead_client: Client,
) -> None:
    created = propose(suggestion(project_skill)).json()
    services.proposal_approve(proposal_id=created["id"], reviewer=lead_user)
    services.delivery_run(delivery_id=Delivery.objects.get(proposal_id=created["id"]).pk)
    assert Proposal.objects.get(pk=created["id"]).state == ProposalState.APPLIED

    response = lead_client.post(f"/reviews/{created['id']}/rollback/")
    assert response.status_code == 302
    rollback = Delivery.objects.get(proposal_id=created["id"], kind="rollback")
    v3 = rollback.version
    assert v3.number == 3 and v3.origin == "rollback"
    assert v3.package_sha256 == project_skill.v1.package_sha256
    assert version_file_contents(v3) == version_file_contents(project_skill.v1)
    project_skill.skill.refresh_from_db()
    assert project_skill.skill.current_version == v3

    done = services.delivery_run(delivery_id=rollback.pk)
    assert done is not None and done.state == DeliveryState.DELIVERED, done and done.error
    # The apply branch was never merged: the rollback branch builds on it and restores v1.
    branch = f"skill-review/proposal-{created['id']}-rollback"
    assert branch_file(bare_repo, branch, f"{FOLDER}/SKILL.md") + "\n" == SKILL_MD
    entry = AuditEntry.objects.get(action="change.rolled_back")
    assert entry.after_sha256 == project_skill.sha
    again = lead_client.post(f"/reviews/{created['id']}/rollback/", follow=True)
    assert "already rolled back" in again.content.decode()
    assert Delivery.objects.filter(proposal_id=created["id"], kind="rollback").count() == 1


@pytest.mark.django_db
def test_rollback_is_refused_when_later_versions_exist(
    project_skill: ProjectSkill, propose: Callable[..., Any], lead_user: User
) -> None:
    created = propose(suggestion(project_skill)).json()
    services.proposal_approve(proposal_id=created["id"], reviewer=lead_user)
    Proposal.objects.filter(pk=created["id"]).update(state=ProposalState.APPLIED)
    from tests.reviews.conftest import store_version

    store_version(project_skill.skill, improved(SKILL_MD, "5. Later change.\n"))
    with pytest.raises(services.Conflict, match="newer versions"):
        services.proposal_rollback(proposal_id=created["id"], reviewer=lead_user)
    assert SkillVersion.objects.filter(skill=project_skill.skill).count() == 3


def test_git_never_prompts_and_refuses_the_ext_transport(tmp_path: Path) -> None:
    from governance.reviews.delivery import Author, Commit, DeliveryError, push_version

    commit = Commit("s", "b", Author("p", "p@x"), __import__("datetime").datetime(2026, 1, 1), "m")
    with pytest.raises(DeliveryError, match="git clone failed"):
        push_version(
            remote="ext::sh -c touch% /tmp/pwned-by-ext",
            branch="b",
            folder="x",
            files={},
            expected={},
            commit=commit,
            timeout=20,
        )
    assert not Path("/tmp/pwned-by-ext").exists()
    with pytest.raises(DeliveryError, match="outside the repository"):
        push_version(
            remote=str(tmp_path), branch="b", folder="../x", files={}, expected={}, commit=commit, timeout=5
        )


@pytest.mark.django_db
def test_the_sweeper_delivers_what_the_database_says_is_pending(
    bare_repo: Path, project_skill: ProjectSkill, propose: Callable[..., Any], lead_user: User
) -> None:
    """A lost task message: the delivery stays pending in the database until the sweeper resends it."""
    from datetime import timedelta

    from django.utils import timezone

    created = propose(suggestion(project_skill)).json()
    services.proposal_approve(proposal_id=created["id"], reviewer=lead_user)  # on_commit never fires here
    delivery = Delivery.objects.get(proposal_id=created["id"])
    assert delivery.state == DeliveryState.PENDING
    assert services.deliveries_sweep() == []  # too young: its own message may still be on the way
    Delivery.objects.filter(pk=delivery.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("with a broker the resent message is consumed by a worker (covered by the worker test)")
    assert services.deliveries_sweep() == [delivery.pk]
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.DELIVERED
    assert Proposal.objects.get(pk=created["id"]).state == ProposalState.APPLIED


@pytest.mark.django_db
def test_with_the_kill_switch_off_approved_changes_wait_and_rollbacks_still_go(
    bare_repo: Path, project_skill: ProjectSkill, propose: Callable[..., Any], lead_user: User
) -> None:
    from django.test import override_settings

    created = propose(suggestion(project_skill)).json()
    services.proposal_approve(proposal_id=created["id"], reviewer=lead_user)
    delivery = Delivery.objects.get(proposal_id=created["id"])
    with override_settings(SELF_EVOLUTION_ENABLED=False):
        assert services.delivery_run(delivery_id=delivery.pk) is None
        delivery.refresh_from_db()
        assert delivery.state == DeliveryState.PENDING and delivery.attempts == 0
    services.delivery_run(delivery_id=delivery.pk)
    with override_settings(SELF_EVOLUTION_ENABLED=False):
        rollback = services.proposal_rollback(proposal_id=created["id"], reviewer=lead_user)
        done = services.delivery_run(delivery_id=rollback.pk)
    assert done is not None and done.state == DeliveryState.DELIVERED


@pytest.mark.django_db
def test_rollback_through_the_api(
    project_skill: ProjectSkill, propose: Callable[..., Any], lead_user: User, make_token: Callable[..., str]
) -> None:
    from tests.reviews.conftest import auth

    created = propose(suggestion(project_skill)).json()
    services.proposal_approve(proposal_id=created["id"], reviewer=lead_user)
    services.delivery_run(delivery_id=Delivery.objects.get(proposal_id=created["id"]).pk)  # a patch
    response = Client().post(
        f"/api/v1/reviews/suggestions/{created['id']}/rollback",
        headers=auth(make_token(lead_user, "reviews:decide")),
    )
    assert response.status_code == 200, response.content
    assert response.json()["rolled_back"] is True
    assert [d["kind"] for d in response.json()["deliveries"]] == ["apply", "rollback"]


@pytest.mark.django_db
def test_a_second_change_stacks_on_the_unmerged_branch_of_the_first(
    bare_repo: Path, project_skill: ProjectSkill, propose: Callable[..., Any], lead_user: User
) -> None:
    first = propose(suggestion(project_skill)).json()["id"]
    services.proposal_approve(proposal_id=first, reviewer=lead_user)
    services.delivery_run(delivery_id=Delivery.objects.get(proposal_id=first).pk)
    v2 = Proposal.objects.get(pk=first).result_version
    assert v2 is not None
    second_text = improved(improved(SKILL_MD), "5. Announce it in #deploys.\n")
    body = suggestion(project_skill, base_sha256=v2.skill_md_sha256, proposed_text=second_text)
    second = propose(body).json()["id"]
    services.proposal_approve(proposal_id=second, reviewer=lead_user)
    done = services.delivery_run(delivery_id=Delivery.objects.get(proposal_id=second).pk)
    assert done is not None and done.state == DeliveryState.DELIVERED, done and done.error
    # main was never merged: the second branch is built on the first, so merging it brings both.
    parent = git("rev-parse", f"skill-review/proposal-{second}^", cwd=bare_repo)
    assert parent == git("rev-parse", f"skill-review/proposal-{first}", cwd=bare_repo)
    assert (
        branch_file(bare_repo, f"skill-review/proposal-{second}", f"{FOLDER}/SKILL.md") + "\n" == second_text
    )
