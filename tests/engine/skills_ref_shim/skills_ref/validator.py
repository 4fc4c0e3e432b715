"""Validation through the engine (strict mode): the error messages of every error finding."""

from __future__ import annotations

from pathlib import Path

from governance.engine.types import Severity

from .parser import load


def validate(skill_dir: Path) -> list[str]:
    return [f.message for f in load(Path(skill_dir)).findings if f.severity is Severity.ERROR]
