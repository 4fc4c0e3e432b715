"""The reference checker (PyPI skills-ref 0.1.1), fetched at test time into .cache/ (never committed).

``reference_sdist()`` downloads and unpacks its source distribution (for its test suite);
``reference_python()`` installs it into its own virtual environment (to compare outputs).
"""

from __future__ import annotations

import contextlib
import fcntl
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

REFERENCE = "skills-ref==0.1.1"
REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "skills-ref"
SHIM = Path(__file__).resolve().parent / "skills_ref_shim"


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """One test process at a time prepares the cache (the SQLite and PostgreSQL runs may overlap)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def reference_sdist() -> Path:
    """The unpacked sdist folder (with its ``tests/``)."""
    with _locked():
        return _reference_sdist()


def _reference_sdist() -> Path:
    unpacked = CACHE / "skills_ref-0.1.1"
    if (unpacked / "tests").is_dir():
        return unpacked
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-binary",
            ":all:",
            "--no-deps",
            REFERENCE,
            "-d",
            str(CACHE),
        ],
        check=True,
        capture_output=True,
    )
    with tarfile.open(CACHE / "skills_ref-0.1.1.tar.gz") as archive:
        archive.extractall(CACHE, filter="data")
    return unpacked


def reference_python() -> Path:
    """A Python interpreter whose environment has the real skills-ref installed."""
    with _locked():
        return _reference_python()


def _reference_python() -> Path:
    venv = CACHE / "venv"
    python = venv / "bin" / "python"
    if python.exists() and (venv / ".installed").exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(venv)], check=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", REFERENCE],
        check=True,
        capture_output=True,
    )
    (venv / ".installed").touch()
    return python


def shim_env(base: dict[str, str]) -> dict[str, str]:
    """Environment where ``import skills_ref`` finds the shim (delegating to this engine)."""
    env = {k: v for k, v in base.items() if k not in ("DJANGO_SETTINGS_MODULE",)}
    env["PYTHONPATH"] = f"{SHIM}:{REPO}"
    return env
