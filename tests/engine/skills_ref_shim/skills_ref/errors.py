"""Exception types of the reference API."""

from __future__ import annotations


class SkillError(Exception):
    """Any problem with a skill."""


class ParseError(SkillError):
    """SKILL.md cannot be read (no frontmatter, invalid YAML...)."""


class ValidationError(SkillError):
    """A required property is missing or empty; ``errors`` lists every message."""

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.errors = errors if errors is not None else [message]
