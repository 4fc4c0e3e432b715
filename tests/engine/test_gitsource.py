"""Fetching repositories with the git CLI: shallow, at a ref, no prompts, no hooks, no tricks."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.engine.gitsource import GitOptions, GitSourceError, check_url, git_fetch
from tests.engine.gitrepo import commit, git, make_repo, write_skill

LOCAL = GitOptions(allow_local=True, timeout_s=30)


def test_fetch_branch_tag_and_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "origin")
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v1")
    write_skill(repo, ".claude/skills/incident-rca", "incident-rca")
    second = commit(repo, "second")

    head = git_fetch(f"file://{repo}", "main", options=LOCAL)
    assert head.commit == second
    assert (head.path / ".claude/skills/incident-rca/SKILL.md").is_file()
    assert git(head.path, "rev-list", "--count", "HEAD") == "1"  # shallow

    tagged = git_fetch(str(repo), "v1", options=LOCAL)
    assert tagged.commit == first
    assert not (tagged.path / ".claude/skills/incident-rca").exists()

    pinned = git_fetch(f"file://{repo}", first, options=LOCAL)
    assert pinned.commit == first

    default = git_fetch(f"file://{repo}", "", options=LOCAL)
    assert default.commit == second and default.ref == "HEAD"


def test_unknown_ref_fails_cleanly(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "origin")
    dest = tmp_path / "checkout"
    with pytest.raises(GitSourceError) as caught:
        git_fetch(f"file://{repo}", "no-such-branch", options=LOCAL)
    assert caught.value.code == "git-failed" and "git fetch failed" in caught.value.message
    assert not dest.exists()


@pytest.mark.parametrize(
    ("url", "code", "message"),
    [
        ("ext::sh -c touch% /tmp/pwned", "git-transport", "remote-helper"),
        ("fd::17", "git-transport", "remote-helper"),
        ("--upload-pack=touch /tmp/pwned", "git-url", "starts with '-'"),
        ("file:///etc", "git-local", "file:// URLs are not accepted"),
        ("/srv/repo", "git-local", "local paths"),
        ("http://example.com/r.git", "git-transport", "not http://"),
        ("git://example.com/r.git", "git-transport", "not git://"),
        ("ftp://example.com/r.git", "git-transport", "not ftp://"),
        ("", "git-url", "no repository URL"),
        ("https://github.com/onlyowner", "git-url", "owner/repository"),
    ],
)
def test_hostile_urls_are_refused_before_git_runs(url: str, code: str, message: str) -> None:
    with pytest.raises(GitSourceError) as caught:
        git_fetch(url, "main", options=GitOptions(git="/nonexistent/git"))  # git never runs
    assert caught.value.code == code
    assert message in caught.value.message


@pytest.mark.parametrize("ref", ["--upload-pack=x", "a..b", "main\n", "x y", "refs//x", "a.lock"])
def test_hostile_refs_are_refused(ref: str) -> None:
    with pytest.raises(GitSourceError) as caught:
        git_fetch("https://github.com/o/r", ref, options=GitOptions(git="/nonexistent/git"))
    assert caught.value.code == "git-ref"


def test_accepted_urls() -> None:
    assert check_url("https://github.com/o/r.git") == "https://github.com/o/r.git"
    assert check_url("git@github.com:o/r.git") == "git@github.com:o/r.git"
    assert check_url("ssh://git@gitlab.example.com/g/r") == "ssh://git@gitlab.example.com/g/r"


def test_no_prompt_and_timeout(tmp_path: Path) -> None:
    # An unreachable https host must fail (not hang on a credential prompt) within the timeout.
    with pytest.raises(GitSourceError) as caught:
        git_fetch("https://127.0.0.1:9/o/r.git", "main", options=GitOptions(timeout_s=20))
    assert caught.value.code in {"git-failed", "git-timeout"}


def test_timeout_is_enforced(tmp_path: Path) -> None:
    fake_git = tmp_path / "slow-git"
    fake_git.write_text("#!/bin/sh\nsleep 5\n")
    fake_git.chmod(0o755)
    with pytest.raises(GitSourceError) as caught:
        git_fetch("https://github.com/o/r", "main", options=GitOptions(git=str(fake_git), timeout_s=0.5))
    assert caught.value.code == "git-timeout"


def test_hooks_and_user_configuration_never_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A worker whose own git configuration installs hooks (or a template with hooks) must not run them.
    repo = make_repo(tmp_path / "origin")
    hooks = tmp_path / "evil-hooks"
    hooks.mkdir()
    marker = tmp_path / "hook-ran"
    for name in ("post-checkout", "post-merge", "reference-transaction"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
        hook.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[core]\n\thooksPath = {hooks}\n[init]\n\ttemplateDir = {tmp_path}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_TEMPLATE_DIR", str(tmp_path))
    checkout = git_fetch(f"file://{repo}", "main", options=LOCAL)
    assert (checkout.path / ".claude/skills/deploy/SKILL.md").is_file()
    assert not marker.exists()
