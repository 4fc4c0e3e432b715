"""Shared value types of the skill engine.

Plain Python, no Django: the CLI, the API, the workers and the tests all speak these types.
Every module of ``governance.engine`` takes and returns them, so a rule is written once.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class SourceKind(enum.StrEnum):
    """Where a skill comes from; see DOMAIN.md §1.2 for the trust of each."""

    BUNDLED = "bundled"
    BUILTIN = "builtin"
    MANAGED = "managed"
    USER = "user"
    PROJECT = "project"
    PLUGIN = "plugin"
    MCP = "mcp"


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem or hint about a skill. ``code`` is a stable identifier (e.g. ``name-too-long``)."""

    code: str
    severity: Severity
    message: str
    file: str | None = None
    line: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "file": self.file,
            "line": self.line,
        }


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds applied while reading a skill; anything past them is refused with a finding."""

    max_skill_md_bytes: int = 1024 * 1024  # a SKILL.md larger than 1 MiB is not a skill
    max_frontmatter_bytes: int = 64 * 1024  # the spec's fields fit in 2 KiB; hooks need more
    max_yaml_nodes: int = 10_000  # after alias expansion ("billion laughs" fails here)
    max_yaml_depth: int = 64
    max_files: int = 1_000  # files per package
    max_file_bytes: int = 10 * 1024 * 1024
    max_package_bytes: int = 50 * 1024 * 1024
    max_depth: int = 16  # folder depth inside a package


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class PackageFile:
    """One file of a skill package, addressed by its sha256."""

    path: str  # POSIX path relative to the skill folder, e.g. "scripts/run.sh"
    sha256: str
    size: int
    content: bytes = field(repr=False)


@dataclass(slots=True)
class ParsedSkill:
    """A SKILL.md folder after parsing and validation.

    ``frontmatter`` holds the typed YAML mapping (empty when it could not be parsed);
    ``frontmatter_text`` is the exact text between the delimiters, kept byte-for-byte so
    reviews can prove a proposal left it untouched.
    """

    name: str  # the declared name, or the folder name when none could be read
    folder: str  # folder name on disk
    path: str  # path of the skill folder relative to the scanned root (POSIX)
    source: SourceKind
    frontmatter: dict[str, Any]
    frontmatter_text: str
    body: str
    skill_md_sha256: str
    findings: list[Finding] = field(default_factory=list)
    files: list[PackageFile] = field(default_factory=list)
    # Where the skill came from beyond its kind: repository URL, marketplace, plugin name...
    source_identity: str = ""
    plugin: str | None = None  # plugin name for plugin skills (the listed name is "plugin:name")
    # allowed-tools / disallowed-tools normalised to one list, whatever the spelling
    # (space-separated string, comma string or YAML list).
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    skill_md_name: str = "SKILL.md"  # "skill.md" is accepted too (skills-ref does)
    body_line: int = 1  # line of SKILL.md where the body starts (for findings and headings)
    body_tokens: int = 0  # estimated tokens of the body (governance.engine.tokens)

    @property
    def valid(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def qualified_name(self) -> str:
        return f"{self.plugin}:{self.name}" if self.plugin else self.name

    @property
    def description(self) -> str:
        value = self.frontmatter.get("description")
        return value if isinstance(value, str) else ""

    @property
    def when_to_use(self) -> str:
        value = self.frontmatter.get("when_to_use", self.frontmatter.get("whenToUse"))
        return value if isinstance(value, str) else ""
