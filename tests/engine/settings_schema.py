"""The SchemaStore schema of Claude Code settings, from the shared schemas folder (not vendored)."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

DEFAULT = Path("/work/shared/schemas/claude-code-settings.json")


@cache
def settings_schema() -> dict[str, Any]:
    path = Path(os.environ.get("CLAUDE_CODE_SETTINGS_SCHEMA", str(DEFAULT)))
    if not path.exists():
        pytest.fail(f"Claude Code settings schema not found at {path}: set CLAUDE_CODE_SETTINGS_SCHEMA")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def validate_settings(settings: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``settings`` is a valid settings file."""
    jsonschema.Draft7Validator(settings_schema(), format_checker=jsonschema.FormatChecker()).validate(
        settings
    )
