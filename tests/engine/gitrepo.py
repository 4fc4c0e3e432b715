"""A real local git repository with skills, for the gitsource and ingest tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "HOME": "/nonexistent",
    "PATH": "/usr/bin:/bin",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=ENV, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def write_skill(repo: Path, rel: str, name: str, body: str = "# Steps\n\n1. Run it.\n") -> None:
    folder = repo / rel
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Handles {name}. Use when asked to {name}.\n---\n{body}"
    )


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    write_skill(path, ".claude/skills/deploy", "deploy")
    write_skill(path, ".claude/skills/db-migrations", "db-migrations")
    commit(path, "first")
    return path


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")
