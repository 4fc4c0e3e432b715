"""Directory scans: where skills are found, what is skipped, and what is refused."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from governance.engine.discover import DiscoverError, DiscoverLimits, discover_skills


def skill(folder: Path, name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    name = name or folder.name
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Does {name}.\n---\nBody\n")
    return folder


def rels(root: Path, **kwargs: object) -> list[str]:
    return [s.rel for s in discover_skills(root, **kwargs).skills]  # type: ignore[arg-type]


def git_init(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


def test_skills_folder_repository_and_monorepo(tmp_path: Path) -> None:
    skill(tmp_path / ".claude/skills/deploy")
    skill(tmp_path / ".agents/skills/review")
    skill(tmp_path / "apps/web/.claude/skills/deploy")
    skill(tmp_path / "apps/api/.claude/skills/migrate")
    assert rels(tmp_path) == [
        ".agents/skills/review",
        ".claude/skills/deploy",
        "apps/api/.claude/skills/migrate",
        "apps/web/.claude/skills/deploy",
    ]
    assert rels(tmp_path / ".claude/skills") == ["deploy"]
    assert rels(tmp_path / ".claude/skills/deploy") == ["."]


def test_git_node_modules_and_gitignored_folders_are_skipped(tmp_path: Path) -> None:
    git_init(tmp_path)
    skill(tmp_path / ".claude/skills/deploy")
    skill(tmp_path / "node_modules/pkg/.claude/skills/evil")
    skill(tmp_path / ".git/hooks/.claude/skills/evil")
    skill(tmp_path / "vendor/lib/.claude/skills/evil")
    skill(tmp_path / "build/out/.claude/skills/evil")
    skill(tmp_path / "packages/a/generated/.claude/skills/evil")
    skill(tmp_path / "packages/a/generated/keep/.claude/skills/kept")
    skill(tmp_path / "packages/b/.claude/skills/logs")
    (tmp_path / ".gitignore").write_text("vendor/\n/build\n*.log\n")
    # nested .gitignore: relative to its own folder, with a negation that re-includes a file only
    (tmp_path / "packages/a/.gitignore").write_text("generated/*\n!generated/keep/\n")
    (tmp_path / "packages/b/.gitignore").write_text("logs\n")  # no slash: matches files and folders
    assert rels(tmp_path) == [".claude/skills/deploy", "packages/a/generated/keep/.claude/skills/kept"]


def test_gitignore_semantics_match_git_check_ignore(tmp_path: Path) -> None:
    git_init(tmp_path)
    for folder in ["a/x", "a/y", "b/deep/x", "c", "d/e"]:
        skill(tmp_path / folder / ".claude/skills/s")
    (tmp_path / ".gitignore").write_text("a/*\n!a/y\n**/deep\nd/\n")
    (tmp_path / "c/.gitignore").write_text(".claude/\n")
    found = rels(tmp_path)
    for folder in ["a/x", "a/y", "b/deep/x", "c", "d/e"]:
        rel = f"{folder}/.claude/skills/s"
        ignored = subprocess.run(["git", "-C", str(tmp_path), "check-ignore", "-q", rel]).returncode == 0
        assert (rel not in found) == ignored, rel


def test_walks_up_to_the_git_root_and_no_further(tmp_path: Path) -> None:
    skill(tmp_path / ".claude/skills/outside")  # above the repository: never read
    repo = tmp_path / "repo"
    git_init(repo)
    skill(repo / ".claude/skills/root-level")
    skill(repo / "apps/.claude/skills/middle")
    skill(repo / "apps/web/.claude/skills/deploy")
    found = rels(repo / "apps/web", walk_up=True)
    assert found == [".claude/skills/deploy", "../.claude/skills/middle", "../../.claude/skills/root-level"]
    assert rels(repo / "apps/web") == [".claude/skills/deploy"]


def test_links_leaving_the_root_are_refused_with_a_finding(tmp_path: Path) -> None:
    outside = skill(tmp_path / "outside/secret")
    (tmp_path / "outside/passwd").write_text("root:x:0:0\n")
    root = tmp_path / "root"
    deploy = skill(root / "deploy")
    os.symlink(outside, root / "linked-skill")
    os.symlink(tmp_path / "outside/passwd", deploy / "passwd")
    discovery = discover_skills(root)
    assert [s.rel for s in discovery.skills] == ["deploy"]
    [deploy_dir] = discovery.skills
    assert [f.code for f in deploy_dir.findings] == ["link-outside-root"]
    assert deploy_dir.refused_files == {"passwd"}
    assert deploy_dir.findings[0].severity == "error"
    assert [(f.code, f.file) for f in discovery.findings] == [("link-outside-root", "linked-skill")]


def test_dedupe_by_realpath_not_inode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skill(tmp_path / "skills/deploy")
    os.symlink(tmp_path / "skills/deploy", tmp_path / "skills/deploy-alias")  # inside: followed once
    skill(tmp_path / "skills/review")

    # On some container/NFS file systems every inode is 0: that must not merge distinct skills.
    real_stat = os.stat

    def zero_inode(path, *args, **kwargs):
        result = real_stat(path, *args, **kwargs)
        return os.stat_result((result.st_mode, 0, 0, *tuple(result)[3:10]))

    monkeypatch.setattr(os, "stat", zero_inode)
    assert rels(tmp_path / "skills") == ["deploy", "review"]


def test_nested_skills_are_reported(tmp_path: Path) -> None:
    skill(tmp_path / "outer")
    skill(tmp_path / "outer/examples/inner")
    discovery = discover_skills(tmp_path)
    inner = discovery.skills[1]
    assert inner.rel == "outer/examples/inner" and inner.nested_in == "outer"
    assert inner.findings[0].code == "skill-nested"
    assert "lies inside skill outer" in inner.findings[0].message


def test_depth_and_folder_bounds_are_reported(tmp_path: Path) -> None:
    deep = tmp_path
    for i in range(8):
        deep = deep / f"d{i}"
    skill(deep)
    discovery = discover_skills(tmp_path, limits=DiscoverLimits(max_depth=4))
    assert discovery.skills == []
    assert [f.code for f in discovery.findings] == ["scan-depth-limit"]
    for i in range(30):
        (tmp_path / f"wide{i}").mkdir()
    discovery = discover_skills(tmp_path, limits=DiscoverLimits(max_folders=10))
    assert "scan-folder-limit" in [f.code for f in discovery.findings]


def test_missing_or_file_root(tmp_path: Path) -> None:
    with pytest.raises(DiscoverError, match="no such file"):
        discover_skills(tmp_path / "nope")
    (tmp_path / "f").write_text("x")
    with pytest.raises(DiscoverError, match="not a folder"):
        discover_skills(tmp_path / "f")


def test_in_a_repository_only_skill_folders_agents_load_count(tmp_path: Path) -> None:
    skill(tmp_path / ".claude/skills/deploy")
    skill(tmp_path / "apps/web/.agents/skills/lint")
    skill(tmp_path / "tests/fixtures/broken-skill")
    skill(tmp_path / "docs/examples/example-skill")
    discovery = discover_skills(tmp_path)
    assert [s.rel for s in discovery.skills] == [".claude/skills/deploy", "apps/web/.agents/skills/lint"]
    infos = sorted(f.file or "" for f in discovery.findings if f.code == "skill-outside-skills-folder")
    assert infos == ["docs/examples/example-skill", "tests/fixtures/broken-skill"]
    # a checkout laid out as skills/<name> (no .claude/skills anywhere) keeps every skill
    other = tmp_path / "checkout"
    skill(other / "skills/pdf")
    skill(other / "skills/docx")
    assert rels(other) == ["skills/docx", "skills/pdf"]
