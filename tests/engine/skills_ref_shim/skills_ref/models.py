"""Skill properties as the reference API returns them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class SkillProperties:
    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: str | None = None
    metadata: dict[str, str] | None = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The properties under their frontmatter names, without the absent ones."""
        result: dict[str, Any] = {"name": self.name, "description": self.description}
        optional = (
            ("license", self.license),
            ("compatibility", self.compatibility),
            ("allowed-tools", self.allowed_tools),
        )
        result.update((key, value) for key, value in optional if value is not None)
        if self.metadata:
            result["metadata"] = self.metadata
        return result
