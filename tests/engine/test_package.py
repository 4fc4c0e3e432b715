"""load_skill_folder: every package file, bounded, links that leave the root refused."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from governance.engine.skillfile import load_skill_folder
from governance.engine.types import Limits, Severity, SourceKind

from .helpers import GOOD, codes, only, skill_md


def make_skill(root: Path, name: str = "my-skill", frontmatter: str = GOOD) -> Path:
    folder = root / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(skill_md(frontmatter))
    (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (folder / "references").mkdir()
    (folder / "references" / "guide.md").write_text("# Guide\n")
    return folder


def test_reads_every_file_with_sha256_and_posix_paths(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "repo" / ".claude" / "skills")
    skill = load_skill_folder(folder, root=tmp_path / "repo", source=SourceKind.PROJECT)
    assert skill.valid, skill.findings
    assert skill.path == ".claude/skills/my-skill"
    assert [f.path for f in skill.files] == ["SKILL.md", "references/guide.md", "scripts/run.sh"]
    run = skill.files[2]
    assert run.content == b"#!/bin/sh\necho hi\n"
    assert run.sha256 == hashlib.sha256(run.content).hexdigest() and run.size == len(run.content)
    assert skill.skill_md_sha256 == skill.files[0].sha256


def test_root_itself_is_the_skill(tmp_path: Path) -> None:
    folder = make_skill(tmp_path)
    skill = load_skill_folder(folder, root=folder, source=SourceKind.USER)
    assert skill.path == "." and skill.valid


def test_link_leaving_the_root_is_refused_and_not_stored(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    root = tmp_path / "repo"
    folder = make_skill(root)
    os.symlink(secret, folder / "leak.txt")
    skill = load_skill_folder(folder, root=root, source=SourceKind.PROJECT)
    finding = only(skill, "package-symlink-escapes")
    assert finding.severity is Severity.WARNING and finding.file == "leak.txt"
    assert finding.message.startswith("'leak.txt' is a link that leaves the scanned root")
    assert "leak.txt" not in [f.path for f in skill.files]


def test_link_inside_the_root_is_read(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    folder = make_skill(root)
    (root / "shared.md").write_text("shared")
    os.symlink(root / "shared.md", folder / "shared.md")
    os.symlink(folder / "references", folder / "refs")
    skill = load_skill_folder(folder, root=root, source=SourceKind.PROJECT)
    paths = [f.path for f in skill.files]
    assert "shared.md" in paths
    assert skill.valid


def test_directory_link_loop_terminates(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    folder = make_skill(root)
    os.symlink(folder, folder / "references" / "loop")
    skill = load_skill_folder(folder, root=root, source=SourceKind.PROJECT)
    assert len(skill.files) == 3


def test_skill_md_link_leaving_root_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_bytes(skill_md(GOOD))
    root = tmp_path / "repo"
    folder = root / "my-skill"
    folder.mkdir(parents=True)
    os.symlink(outside, folder / "SKILL.md")
    skill = load_skill_folder(folder, root=root, source=SourceKind.PROJECT)
    assert codes(skill) == ["skill-md-missing"]
    assert "leaves the scanned root" in skill.findings[0].message
    assert not skill.valid and skill.files == []


def test_missing_skill_md_and_missing_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    skill = load_skill_folder(tmp_path / "empty", root=tmp_path, source=SourceKind.PROJECT)
    assert [(f.code, f.message) for f in skill.findings] == [
        ("skill-md-missing", "Missing required file: SKILL.md")
    ]
    gone = load_skill_folder(tmp_path / "gone", root=tmp_path, source=SourceKind.PROJECT)
    assert gone.findings[0].code == "skill-folder-missing"
    assert gone.findings[0].message.startswith("Path does not exist: ")


def test_lowercase_skill_md_is_accepted_with_info(tmp_path: Path) -> None:
    folder = tmp_path / "my-skill"
    folder.mkdir()
    (folder / "skill.md").write_bytes(skill_md(GOOD))
    skill = load_skill_folder(folder, root=tmp_path, source=SourceKind.PROJECT)
    assert skill.valid and skill.skill_md_name == "skill.md"
    assert only(skill, "skill-md-lowercase").severity is Severity.INFO


def test_too_many_files_stops_reading(tmp_path: Path) -> None:
    folder = make_skill(tmp_path)
    for index in range(10):
        (folder / f"f{index}.txt").write_text("x")
    skill = load_skill_folder(folder, root=tmp_path, source=SourceKind.PROJECT, limits=Limits(max_files=5))
    finding = only(skill, "package-too-many-files")
    assert finding.severity is Severity.ERROR
    assert finding.message.startswith("The skill folder has more than 5 files: reading stopped at")
    assert len(skill.files) == 5


def test_file_and_package_size_limits(tmp_path: Path) -> None:
    folder = make_skill(tmp_path)
    (folder / "big.bin").write_bytes(b"x" * 2000)
    skill = load_skill_folder(
        folder, root=tmp_path, source=SourceKind.PROJECT, limits=Limits(max_file_bytes=1000)
    )
    assert only(skill, "package-file-too-large").message == (
        "'big.bin' is 2,000 bytes, over the 1,000-byte limit per file: not stored."
    )
    assert "big.bin" not in [f.path for f in skill.files]
    skill = load_skill_folder(
        folder, root=tmp_path, source=SourceKind.PROJECT, limits=Limits(max_package_bytes=1500)
    )
    assert "package-too-large" in codes(skill)


def test_fifo_is_not_opened(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    folder = make_skill(tmp_path)
    os.mkfifo(folder / "pipe")
    skill = load_skill_folder(folder, root=tmp_path, source=SourceKind.PROJECT)
    assert only(skill, "package-special-file").file == "pipe"


def test_git_and_node_modules_are_skipped(tmp_path: Path) -> None:
    folder = make_skill(tmp_path)
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref")
    (folder / "node_modules" / "x").mkdir(parents=True)
    (folder / "node_modules" / "x" / "index.js").write_text("")
    skill = load_skill_folder(folder, root=tmp_path, source=SourceKind.PROJECT)
    assert [f.path for f in skill.files] == ["SKILL.md", "references/guide.md", "scripts/run.sh"]


def test_nested_skill_is_reported(tmp_path: Path) -> None:
    folder = make_skill(tmp_path)
    make_skill(
        folder / "tools", "inner-skill", "name: inner-skill\ndescription: Inner helper skill for tests only."
    )
    skill = load_skill_folder(folder, root=tmp_path, source=SourceKind.PROJECT)
    finding = only(skill, "skill-nested")
    assert finding.message.startswith("Folder 'tools/inner-skill' inside this skill has its own SKILL.md")


def test_license_file_reference(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, frontmatter=GOOD + "\nlicense: Proprietary. LICENSE.txt has complete terms")
    skill = load_skill_folder(folder, root=tmp_path, source=SourceKind.PROJECT)
    missing = only(skill, "license-file-missing")
    assert missing.message.startswith("The licence points to 'LICENSE.txt'")
    assert missing.line == 4
    (folder / "LICENSE.txt").write_text("terms")
    skill = load_skill_folder(folder, root=tmp_path, source=SourceKind.PROJECT)
    assert "license-file-missing" not in codes(skill)
    assert only(skill, "license-proprietary").severity is Severity.INFO


def test_file_names_that_are_not_utf8_are_refused(tmp_path: Path) -> None:
    folder = make_skill(tmp_path)
    with open(os.path.join(os.fsencode(folder), b"bad\xff.txt"), "wb") as handle:
        handle.write(b"x")
    skill = load_skill_folder(folder, root=tmp_path, source=SourceKind.PROJECT)
    finding = only(skill, "package-file-name-invalid")
    assert (
        finding.message == "'bad\\xff.txt' has a name that is not valid UTF-8: not stored. Rename the file."
    )
    assert all(f.path.isascii() for f in skill.files) and skill.valid


def test_folder_name_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    raw = os.path.join(os.fsencode(tmp_path), b"sk\xffill")
    os.mkdir(raw)
    with open(os.path.join(raw, b"SKILL.md"), "wb") as handle:
        handle.write(skill_md(GOOD))
    skill = load_skill_folder(Path(os.fsdecode(raw)), root=tmp_path, source=SourceKind.PROJECT)
    assert codes(skill) == ["skill-folder-name-invalid"]
    assert skill.path == "sk\\xffill" and skill.files == []
    skill.path.encode("utf-8")  # storable


def test_broken_link_is_reported(tmp_path: Path) -> None:
    folder = make_skill(tmp_path)
    os.symlink(folder / "missing.md", folder / "dangling.md")
    skill = load_skill_folder(folder, root=tmp_path, source=SourceKind.PROJECT)
    assert only(skill, "package-symlink-broken").message == (
        "'dangling.md' is a link to nothing (or cannot be read): not stored."
    )


def test_too_deep_folders_are_not_read(tmp_path: Path) -> None:
    folder = make_skill(tmp_path)
    deep = folder / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "x.txt").write_text("x")
    skill = load_skill_folder(folder, root=tmp_path, source=SourceKind.PROJECT, limits=Limits(max_depth=2))
    assert only(skill, "package-too-deep").message == "'a/b/c' is nested deeper than 2 folders: not read."
    assert "a/b/c/x.txt" not in [f.path for f in skill.files]


def test_unreadable_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_skill(tmp_path)
    (folder / "secret.txt").write_text("x")
    real_open = os.open

    def deny(path: str, flags: int, *args: int) -> int:  # root reads everything: deny like chmod 000 would
        if str(path).endswith("secret.txt"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", deny)
    skill = load_skill_folder(folder, root=tmp_path, source=SourceKind.PROJECT)
    assert (
        only(skill, "package-unreadable").message
        == "'secret.txt' cannot be read (Permission denied): not stored."
    )
    assert skill.valid and "secret.txt" not in [f.path for f in skill.files]


def test_skill_folder_that_is_a_link(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    real = make_skill(root / "shared")
    (root / ".claude" / "skills").mkdir(parents=True)
    os.symlink(real, root / ".claude" / "skills" / "my-skill")
    inside = load_skill_folder(root / ".claude" / "skills" / "my-skill", root=root, source=SourceKind.PROJECT)
    assert inside.valid and inside.path == ".claude/skills/my-skill" and len(inside.files) == 3
    outside = make_skill(tmp_path / "elsewhere")
    os.symlink(outside, root / ".claude" / "skills" / "escape")
    refused = load_skill_folder(root / ".claude" / "skills" / "escape", root=root, source=SourceKind.PROJECT)
    assert codes(refused) == ["package-symlink-escapes"]
    assert refused.findings[0].severity is Severity.ERROR and refused.files == []
    assert "resolves outside the scanned root" in refused.findings[0].message
