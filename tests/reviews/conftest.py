"""A project skill with a stored version, its repository as a local bare git repository, and a
helper that sends proposals through the real API."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from governance.engine.skillfile import parse_skill_md
from governance.engine.types import PackageFile, SourceKind
from governance.reviews import services
from governance.reviews.models import Delivery, Proposal
from governance.skills.models import Skill, SkillVersion, Source, VersionOrigin
from governance.skills.services import skill_version_create
from portal.accounts.models import Role
from tests.conftest import Org, _make_user

FOLDER = ".claude/skills/deploy"
SKILL_MD = (
    "---\n"
    "name: deploy\n"
    "description: Deploy the payments API to staging and production. Use when asked to deploy or release.\n"
    "allowed-tools: Bash(make:*) Bash(git:*)\n"
    "---\n"
    "# Deploy\n"
    "\n"
    "## Steps\n"
    "1. Run the tests with `make test`; success: every test passes.\n"
    "2. Tag the release with `git tag`; success: the tag is pushed.\n"
    "3. Run `make deploy ENV=staging`; success: the health check answers 200.\n"
)
CHECK_SH = b"#!/bin/sh\ncurl -fsS http://localhost/healthz\n"


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def package(skill_md: str) -> list[PackageFile]:
    files = {"SKILL.md": skill_md.encode(), "scripts/check.sh": CHECK_SH}
    return [PackageFile(path=p, sha256=sha(c), size=len(c), content=c) for p, c in sorted(files.items())]


def store_version(skill: Skill, skill_md: str, user: User | None = None) -> SkillVersion:
    parsed = parse_skill_md(skill_md.encode(), folder="deploy", path=FOLDER, source=SourceKind.PROJECT)
    parsed.files = package(skill_md)
    return skill_version_create(skill=skill, parsed=parsed, origin=VersionOrigin.INGEST, created_by=user)


@dataclass
class ProjectSkill:
    skill: Skill
    v1: SkillVersion
    text: str

    @property
    def sha(self) -> str:
        return self.v1.skill_md_sha256


def make_project_skill(org: Org) -> ProjectSkill:
    source = Source.objects.create(
        kind="project",
        identity="github.com/acme/payments-api",
        location="https://github.com/acme/payments-api",
        project=org.payments_api,
    )
    skill = Skill.objects.create(source=source, location=FOLDER, name="deploy")
    v1 = store_version(skill, SKILL_MD)
    skill.refresh_from_db()
    return ProjectSkill(skill=skill, v1=v1, text=SKILL_MD)


@pytest.fixture
def project_skill(org: Org) -> ProjectSkill:
    """deploy, a project skill of payments-api (owned by the payments team), at v1."""
    return make_project_skill(org)


def make_proposal(org: Org) -> Proposal:
    """A pending proposal on deploy, sent by an agent of the payments team (no HTTP: for builders)."""
    ps = make_project_skill(org)
    agent = _make_user(org, "agent-bot", Role.DEVELOPER, [org.payments])
    body = suggestion(ps)
    return services.proposal_submit(
        actor=agent,
        submission=services.Submission(
            skill=services.SkillRef(**body["skill"]),
            base_sha256=body["base_sha256"],
            updates=[services.Update(**u) for u in body["updates"]],
            proposed_text=body["proposed_text"],
            evidence=body["evidence"],
            proposer=body["proposer"],
        ),
    )


def make_patch_delivery(org: Org) -> Delivery:
    """An approved proposal delivered as a patch (payments-api has no push URL)."""
    proposal = make_proposal(org)
    reviewer = _make_user(org, "lara-lead", Role.LEAD, [org.payments])
    services.proposal_approve(proposal_id=proposal.pk, reviewer=reviewer)
    delivery = Delivery.objects.get(proposal=proposal)
    services.delivery_run(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    return delivery


def improved(
    text: str = SKILL_MD, line: str = "4. Check `scripts/check.sh`; success: it prints ok.\n"
) -> str:
    return text + line


def suggestion(ps: ProjectSkill, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "skill": {
            "name": "deploy",
            "source": "project",
            "repository": "git@github.com:acme/payments-api.git",
        },
        "base_sha256": ps.sha,
        "updates": [
            {
                "section": "Steps",
                "change": "add a final health check step",
                "reason": "user: 'you forgot to check the health endpoint again'",
            }
        ],
        "proposed_text": improved(ps.text),
        "evidence": {
            "session_id": "s-123",
            "prompt_id": "p-9",
            "agent": "claude-code",
            "agent_version": "2.1.0",
        },
        "proposer": "claude-code (dana-dev)",
    }
    body.update(overrides)
    return body


@pytest.fixture
def agent_token(developer_user: User, make_token: Callable[..., str]) -> str:
    """The token Dana's Claude Code installation uses to send proposals."""
    return make_token(developer_user, "reviews:write")


@pytest.fixture
def propose(agent_token: str) -> Callable[..., Any]:
    def send(body: dict[str, Any], token: str | None = None) -> Any:
        return Client().post(
            "/api/v1/reviews/suggestions",
            data=body,
            content_type="application/json",
            headers=auth(token or agent_token),
        )

    return send


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def make_bare_repo(tmp_path: Path, org: Org) -> Path:
    """payments-api as a bare repository holding v1 of the skill; registered as the push URL."""
    work = tmp_path / "seed"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    (work / FOLDER / "scripts").mkdir(parents=True)
    (work / FOLDER / "SKILL.md").write_text(SKILL_MD)
    (work / FOLDER / "scripts" / "check.sh").write_bytes(CHECK_SH)
    (work / FOLDER / "scripts" / "check.sh").chmod(0o755)
    (work / "README.md").write_text("payments api\n")
    git("add", "-A", cwd=work)
    git("-c", "user.name=Seed", "-c", "user.email=seed@example.com", "commit", "-qm", "init", cwd=work)
    bare = tmp_path / "payments-api.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    org.payments_api.push_url = str(bare)
    org.payments_api.save()
    return bare


@pytest.fixture
def bare_repo(tmp_path: Path, project_skill: ProjectSkill, org: Org) -> Path:
    return make_bare_repo(tmp_path, org)


def branch_file(bare: Path, branch: str, path: str) -> str:
    return git("show", f"{branch}:{path}", cwd=bare)
