"""The repository holds only what a fresh clone needs: no links to one machine's folders.

A worktree links .venv or static/vendor to a shared copy; committing such a link breaks every
other checkout (the target does not exist there, or it points at itself).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tracked_links() -> list[tuple[str, str]]:
    listing = subprocess.run(
        ["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    links = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        if meta.startswith("120000 "):
            target = subprocess.run(
                ["git", "cat-file", "blob", meta.split()[1]],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            links.append((path, target))
    return links


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_no_tracked_link_leaves_the_repository() -> None:
    outside = [
        f"{path} -> {target}"
        for path, target in tracked_links()
        if Path(target).is_absolute()
        or not (ROOT / path).parent.joinpath(target).resolve().is_relative_to(ROOT)
    ]
    assert not outside, f"tracked links pointing outside the repository: {outside}"


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
@pytest.mark.parametrize("path", [".venv", "node_modules", "static/vendor", "staticfiles", "db.sqlite3"])
def test_local_state_is_not_tracked(path: str) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "--", path], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert tracked == "", f"{path} is local state and must not be committed: {tracked.split()}"
