"""``skills check``: validate, lint, resolve and permission-check skills on disk, for CI.

Plain Python: no database, no Django. The JSON report is a documented contract (README,
"skills check"); each column comes from one function so the engines that own it plug in:

- ``valid`` and ``findings``: ``scan.scan_source`` (parsing and rules);
- ``status`` and ``shadowed_by``: ``resolve.check_statuses`` (per-agent resolution);
- ``permission``: ``permissions.decide``, or ``managed_settings.evaluate_managed`` under a
  ``managed-settings.json``.

Exit codes: 0 no error findings, 1 error findings, 2 could not run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from governance.engine.scan import ScanError, ScanResult, scan_source
from governance.engine.skillfile import printable_text as _t
from governance.engine.types import Finding, ParsedSkill, Severity, SourceKind

EXIT_OK, EXIT_FINDINGS, EXIT_CANNOT_RUN = 0, 1, 2
CHECK_KINDS = tuple(k.value for k in SourceKind if k is not SourceKind.MCP)
DEFAULT_CHECK_AGENT = "claude-code"


class CheckUsageError(ValueError):
    """Arguments that cannot run (unknown kind or agent, unreadable managed settings)."""


@dataclass(frozen=True, slots=True)
class Target:
    path: str  # as given on the command line
    kind: SourceKind


def parse_targets(args: Sequence[str], default_kind: str) -> list[Target]:
    """``PATH`` or ``KIND=PATH`` (e.g. ``managed=/srv/skills project=.``)."""
    if default_kind not in CHECK_KINDS:
        raise CheckUsageError(f"--source must be one of {', '.join(CHECK_KINDS)}, got {default_kind!r}")
    targets = []
    for arg in args:
        kind, sep, rest = arg.partition("=")
        if sep and kind in CHECK_KINDS:
            if not rest:
                raise CheckUsageError(f"{arg!r}: no path after '{kind}='")
            targets.append(Target(rest, SourceKind(kind)))
        elif sep and kind.isidentifier() and kind.isalpha():
            raise CheckUsageError(
                f"{arg!r}: unknown source kind {kind!r}; use one of {', '.join(CHECK_KINDS)}"
            )
        else:
            targets.append(Target(arg, SourceKind(default_kind)))
    if not targets:
        raise CheckUsageError("give at least one PATH")
    return targets


@dataclass(slots=True)
class Row:
    """One skill of the report, before it becomes JSON."""

    root: str
    skill: ParsedSkill
    status: str = "active"
    shadowed_by: str | None = None
    extra_findings: list[Finding] = field(default_factory=list)
    permission: dict[str, Any] | None = None
    marketplace: str = ""  # name of the marketplace the skill's plugin came from, if any

    @property
    def findings(self) -> list[Finding]:
        return [*self.skill.findings, *self.extra_findings]

    @property
    def valid(self) -> bool:
        return self.skill.valid

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.skill.qualified_name,
            "path": self.skill.path,
            "root": self.root,
            "source": self.skill.source.value,
            "valid": self.valid,
            "findings": [f.as_dict() for f in self.findings],
            "status": self.status,
            "shadowed_by": self.shadowed_by,
            "permission": self.permission,
        }


# --- one function per column --------------------------------------------------------------


def column_status(rows: list[Row], agent: str) -> None:
    """status / shadowed_by from the catalog's resolver (per agent), with its security findings."""
    from governance.engine.resolve import check_statuses

    statuses = check_statuses([r.skill for r in rows], agent)
    for index, row in enumerate(rows):
        found = statuses[index]
        row.status = found.status
        row.shadowed_by = found.shadowed_by
        row.extra_findings += list(found.findings)


def column_permission(rows: list[Row], managed_settings: Any | None) -> None:
    """permission from the policy engine: its default allowlist, or a managed-settings.json."""
    from governance.engine.managed_settings import evaluate_managed
    from governance.engine.permissions import PermissionSettings, SkillSubject, decide, risk_summary

    defaults = PermissionSettings()
    for row in rows:
        subject = SkillSubject.from_parsed(row.skill, marketplace=row.marketplace)
        decision = (
            evaluate_managed(subject, managed_settings) if managed_settings else decide(subject, defaults)
        )
        risk = risk_summary(subject, decision)
        # allowed-tools findings (unscoped Bash/Write/Edit, repository skills pre-approving Bash)
        row.extra_findings += risk.findings
        row.permission = {**decision.as_dict(), "risk": risk.level.value}


def load_settings(path: str | None) -> Any | None:
    if not path:
        return None
    from governance.engine.managed_settings import load_managed_settings

    try:
        return load_managed_settings(Path(path))
    except (ValueError, OSError) as exc:
        raise CheckUsageError(f"--managed-settings: {exc}") from None


@dataclass(slots=True)
class CheckReport:
    rows: list[Row]
    errors: list[ScanError]
    agent: str
    strict: bool
    cannot_run: bool

    @property
    def exit_code(self) -> int:
        if self.cannot_run:
            return EXIT_CANNOT_RUN
        if any(e.severity == Severity.ERROR.value for e in self.errors):
            return EXIT_FINDINGS
        if any(f.severity is Severity.ERROR for r in self.rows for f in r.findings):
            return EXIT_FINDINGS
        return EXIT_OK

    def as_dict(self) -> dict[str, Any]:
        counts = {s: 0 for s in ("error", "warning", "info")}
        for row in self.rows:
            for f in row.findings:
                counts[f.severity.value] += 1
        return {
            "agent": self.agent,
            "strict": self.strict,
            "skills": [r.as_dict() for r in self.rows],
            "errors": [e.as_dict() for e in self.errors],
            "summary": {
                "skills": len(self.rows),
                "valid": sum(1 for r in self.rows if r.valid),
                "invalid": sum(1 for r in self.rows if not r.valid),
                "findings": counts,
                "exit_code": self.exit_code,
            },
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False, default=str)

    def to_text(self) -> str:
        """One line per skill, its findings below. Everything a skill or a folder supplies (names,
        paths, messages) goes through ``printable_text``: a terminal shows escapes, never obeys them."""
        lines: list[str] = []
        for row in self.rows:
            mark = "ok " if row.valid else "ERR"
            extra = f" shadowed by {_t(row.shadowed_by)}" if row.shadowed_by else ""
            decision = f" permission={_t(str(row.permission['decision']))}" if row.permission else ""
            lines.append(
                f"{mark} {_t(row.skill.qualified_name)} [{row.skill.source.value}] "
                f"{_t(row.root.rstrip('/'))}/{_t(row.skill.path)} {_t(row.status)}{extra}{decision}"
            )
            for f in row.findings:
                file = _t(f.file) if f.file else ""
                where = f" ({file}:{f.line})" if f.file and f.line else (f" ({file})" if f.file else "")
                lines.append(f"    {f.severity.value:<7} {_t(f.code)}: {_t(f.message)}{where}")
        for error in self.errors:
            lines.append(
                f"{_t(error.severity.upper()):<7} {_t(error.path)}: {_t(error.code)}: {_t(error.message)}"
            )
        summary = self.as_dict()["summary"]
        lines.append(
            f"{summary['skills']} skills, {summary['invalid']} invalid; findings: "
            f"{summary['findings']['error']} error, {summary['findings']['warning']} warning, "
            f"{summary['findings']['info']} info (agent {_t(self.agent)}{', strict' if self.strict else ''})"
        )
        return "\n".join(lines)


def run_check(
    targets: Sequence[Target],
    *,
    agent: str = DEFAULT_CHECK_AGENT,
    managed_settings: str | None = None,
    strict: bool = False,
) -> CheckReport:
    """Scan every target, then resolve and decide across all of them together."""
    from governance.engine.resolve import agent_profile

    try:
        agent_profile(agent)
    except ValueError as exc:
        raise CheckUsageError(str(exc)) from None
    settings = load_settings(managed_settings)
    rows: list[Row] = []
    errors: list[ScanError] = []
    cannot_run = False
    for target in targets:
        result: ScanResult = scan_source(target.path, kind=target.kind, strict=strict, label=target.path)
        errors += result.errors
        cannot_run = cannot_run or result.unreadable
        market = result.marketplace.name if result.marketplace is not None else ""
        rows += [
            Row(root=target.path, skill=s, marketplace=market if s.plugin else "") for s in result.skills
        ]
    if rows:
        column_status(rows, agent)
        column_permission(rows, settings)
    return CheckReport(rows=rows, errors=errors, agent=agent, strict=strict, cannot_run=cannot_run)
