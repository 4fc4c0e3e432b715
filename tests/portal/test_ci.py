""".ci/run fails when `make test` fails or when a run (SQLite, PostgreSQL) ran no tests.

The script runs for real in bash, with `make`, `psql`, `pg_isready` and `redis-cli` replaced by
stubs on PATH, so only its own decisions are tested (the real services are not touched).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SQLITE_OK = "967 passed, 5 skipped, 3 warnings in 524.53s (0:08:44)"
POSTGRES_OK = "971 passed, 1 skipped in 679.28s (0:11:19)"


def stub(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/usr/bin/env bash\n" + body + "\n")
    path.chmod(0o755)


def run_ci(tmp_path: Path, make_output: str, make_status: int) -> subprocess.CompletedProcess[str]:
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "run", repo / ".ci" / "run")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "make.out").write_text(make_output)
    stub(
        bin_dir, "make", f'echo "DATABASE_URL=$DATABASE_URL"; cat {tmp_path / "make.out"}; exit {make_status}'
    )
    stub(bin_dir, "pg_isready", "exit 0")
    stub(bin_dir, "redis-cli", "echo PONG")
    stub(bin_dir, "psql", "echo 1")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", str(repo / ".ci" / "run")], cwd=repo, env=env, capture_output=True, text=True, timeout=60
    )


pytestmark = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(), reason=".ci/run would install chromium"
)


def test_passes_when_both_runs_pass(tmp_path: Path) -> None:
    result = run_ci(tmp_path, f"All checks passed!\n{SQLITE_OK}\n{POSTGRES_OK}\n", 0)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "DATABASE_URL=postgres://postgres@127.0.0.1:5432/portal" in result.stdout
    assert result.stdout.strip().endswith("CI: passed")


def test_fails_when_make_test_fails(tmp_path: Path) -> None:
    result = run_ci(tmp_path, f"{SQLITE_OK}\n1 failed, 970 passed in 600s\n", 2)
    assert result.returncode == 2
    assert "CI: make test failed (exit 2)" in result.stdout


def test_fails_when_a_run_collected_nothing(tmp_path: Path) -> None:
    result = run_ci(tmp_path, f"{SQLITE_OK}\nDATABASE_URL not set: skipping the PostgreSQL run\n", 0)
    assert result.returncode == 1
    assert "expected two test runs with passing tests (SQLite and PostgreSQL), saw 1" in result.stdout
