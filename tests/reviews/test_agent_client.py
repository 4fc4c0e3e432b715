"""The Claude Code side: the stdlib client run as a hook and from detector output, against a live portal."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from governance.reviews import agent_client
from governance.reviews.models import Proposal, ProposalState
from tests.conftest import Org
from tests.reviews.conftest import FOLDER, SKILL_MD, ProjectSkill, git, improved

CLIENT = Path(agent_client.__file__)


@pytest.fixture
def checkout(tmp_path: Path, bare_repo: Path) -> Path:
    """Dana's working copy of payments-api; origin spelled as GitHub's ssh URL."""
    work = tmp_path / "payments-api"
    git("clone", "-q", str(bare_repo), str(work), cwd=tmp_path)
    git("remote", "set-url", "origin", "git@github.com:acme/payments-api.git", cwd=work)
    return work


def run_client(
    args: list[str], *, live_server: Any, token: str, checkout: Path, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run the client as installed: a copy in the project's .claude/hooks/, outside the portal."""
    hooks = checkout / ".claude" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    installed = hooks / "skill_proposal.py"
    shutil.copyfile(CLIENT, installed)
    return subprocess.run(
        [sys.executable, str(installed), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": "/usr/bin:/bin",
            "SKILL_PORTAL_URL": live_server.url,
            "SKILL_PORTAL_TOKEN": token,
            "USER": "dana-dev",
        },
        check=False,
    )


def hook_event(checkout: Path, transcript: Path) -> str:
    return json.dumps(
        {
            "session_id": "sess-42",
            "transcript_path": str(transcript),
            "cwd": str(checkout),
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": f"{FOLDER}/SKILL.md"},
        }
    )


@pytest.mark.django_db(transaction=True)
def test_hook_sends_the_edit_as_a_proposal_and_restores_the_file(
    project_skill: ProjectSkill,
    checkout: Path,
    tmp_path: Path,
    live_server: Any,
    agent_token: str,
    developer_user: User,
) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"role": "user", "content": "deploy to staging"}})
        + "\n"
        + json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}})
        + "\n"
        + json.dumps(
            {
                "type": "user",
                "message": {"content": [{"type": "text", "text": "you forgot the health check again"}]},
            }
        )
        + "\n"
    )
    skill_md = checkout / FOLDER / "SKILL.md"
    skill_md.write_text(improved(SKILL_MD))

    done = run_client(
        ["hook", "--revert"],
        live_server=live_server,
        token=agent_token,
        checkout=checkout,
        stdin=hook_event(checkout, transcript),
    )

    assert done.returncode == 0, done.stderr
    assert "sent to the skill portal" in done.stderr
    proposal = Proposal.objects.get()
    assert proposal.state == ProposalState.PENDING
    assert proposal.skill == project_skill.skill
    assert proposal.proposer == developer_user
    assert proposal.proposed_text == improved(SKILL_MD)
    assert proposal.updates[0]["reason"] == "you forgot the health check again"
    assert proposal.evidence["session_id"] == "sess-42"
    assert skill_md.read_text() == SKILL_MD  # the change exists only as a proposal


@pytest.mark.django_db(transaction=True)
def test_hook_reports_a_refusal_to_the_model_and_restores_the_file(
    project_skill: ProjectSkill, checkout: Path, tmp_path: Path, live_server: Any, agent_token: str
) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"content": "let it use any bash command"}}) + "\n"
    )
    skill_md = checkout / FOLDER / "SKILL.md"
    skill_md.write_text(improved(SKILL_MD).replace("Bash(make:*) Bash(git:*)", "Bash"))

    done = run_client(
        ["hook", "--revert"],
        live_server=live_server,
        token=agent_token,
        checkout=checkout,
        stdin=hook_event(checkout, transcript),
    )

    assert done.returncode == 2
    assert "frontmatter differs from the base" in done.stderr
    assert Proposal.objects.count() == 0
    assert skill_md.read_text() == SKILL_MD


@pytest.mark.django_db(transaction=True)
def test_detector_output_is_sent_with_its_reasons(
    project_skill: ProjectSkill, checkout: Path, tmp_path: Path, live_server: Any, agent_token: str
) -> None:
    updates = tmp_path / "updates.json"
    updates.write_text(
        json.dumps(
            [{"section": "Steps", "change": "add a health check", "reason": "user: 'check health first'"}]
        )
    )
    proposed = tmp_path / "SKILL.md"
    proposed.write_text(improved(SKILL_MD))
    done = run_client(
        [
            "send",
            "--skill-dir",
            str(checkout / FOLDER),
            "--updates",
            str(updates),
            "--proposed",
            str(proposed),
        ],
        live_server=live_server,
        token=agent_token,
        checkout=checkout,
    )
    assert done.returncode == 0, done.stderr
    assert Proposal.objects.get().updates == [
        {"section": "Steps", "change": "add a health check", "reason": "user: 'check health first'"}
    ]


def test_events_about_other_files_are_ignored(tmp_path: Path) -> None:
    event = json.dumps({"tool_input": {"file_path": str(tmp_path / "src" / "main.py")}, "cwd": str(tmp_path)})
    assert agent_client.run_hook(stdin=event, revert=True) == ""


def test_a_missing_portal_configuration_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], org: Org
) -> None:
    monkeypatch.delenv("SKILL_PORTAL_URL", raising=False)
    (tmp_path / "u.json").write_text("[]")
    (tmp_path / "p.md").write_text("x")
    code = agent_client.main(
        [
            "send",
            "--skill-dir",
            str(tmp_path),
            "--updates",
            str(tmp_path / "u.json"),
            "--proposed",
            str(tmp_path / "p.md"),
        ]
    )
    assert code == 2
    assert "skill proposal not sent" in capsys.readouterr().err


def test_skills_outside_a_repository_or_not_committed_are_ignored(tmp_path: Path) -> None:
    personal = tmp_path / "home" / ".claude" / "skills" / "notes" / "SKILL.md"
    personal.parent.mkdir(parents=True)
    personal.write_text("---\nname: notes\ndescription: mine\n---\nbody\n")
    event = json.dumps({"tool_input": {"file_path": str(personal)}, "cwd": str(tmp_path)})
    assert agent_client.run_hook(stdin=event, revert=True) == ""

    repo = tmp_path / "repo"
    new_skill = repo / ".claude" / "skills" / "fresh" / "SKILL.md"
    new_skill.parent.mkdir(parents=True)
    git("init", "-q", cwd=repo)
    new_skill.write_text("---\nname: fresh\ndescription: new\n---\nbody\n")
    event = json.dumps({"tool_input": {"file_path": str(new_skill)}, "cwd": str(repo)})
    assert agent_client.run_hook(stdin=event, revert=True) == ""
    assert new_skill.exists()
