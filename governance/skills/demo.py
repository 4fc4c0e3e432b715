"""Demo skills from every source kind, stored through the real ingest services. Idempotent.

The folders live in ``demo_skills/`` beside this file: managed and bundled skills, a user's
personal skills, one folder per demo project (a monorepo among them), a plugin marketplace, and
the skills an MCP server serves. Among them, on purpose: a project ``security-review`` that
shadows the managed one, a look-alike ``security-reviеw`` (Cyrillic ``е``), an invalid skill,
a skill with hooks and an unscoped ``Bash``, conditional (``paths:``) and hidden skills, and a
runbook whose body is far past the 5,000-token compaction cap.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from governance.skills.models import IngestStatus, Source
from governance.skills.services import (
    McpSkill,
    mcp_skills_push,
    source_ingest_now,
    source_register,
)
from portal.accounts.demo import DemoOrg

DEMO_DIR = Path(__file__).resolve().parent / "demo_skills"

# (kind, folder under demo_skills/, display name, project slug or None)
DEMO_SOURCES: list[tuple[str, str, str, str | None]] = [
    ("managed", "managed", "Acme managed skills", None),
    ("bundled", "bundled", "Claude Code bundled (demo)", None),
    ("user", "user/dana-dev", "dana-dev's personal skills", None),
    ("project", "projects/payments-api", "acme-demo/payments-api", "payments-api"),
    ("project", "projects/ledger", "acme-demo/ledger", "ledger"),
    ("project", "projects/platform-infra", "acme-demo/platform-infra", "platform-infra"),
    ("project", "projects/web-monorepo", "acme-demo/web-monorepo", "web-monorepo"),
    ("project", "projects/mobile-app", "acme-demo/mobile-app", "mobile-app"),
    ("plugin", "marketplace", "acme-demo marketplace", None),
]
MCP_SERVER = "docs-server"


def _mcp_skills() -> list[McpSkill]:
    folder = DEMO_DIR / "mcp" / MCP_SERVER
    return [
        McpSkill(name=skill_dir.name, skill_md=(skill_dir / "SKILL.md").read_text(encoding="utf-8"))
        for skill_dir in sorted(p for p in folder.iterdir() if (p / "SKILL.md").is_file())
    ]


def seed(*, demo: DemoOrg, stdout: TextIO) -> None:
    admin = demo.users.get("alice-admin")
    for kind, folder, display_name, project_slug in DEMO_SOURCES:
        project = demo.projects.get(project_slug) if project_slug else None
        source = source_register(
            kind=kind,
            location=str(DEMO_DIR / folder),
            project=project,
            display_name=display_name,
            actor=admin,
        )
        if source.runs.filter(status=IngestStatus.SUCCEEDED).exists():
            continue  # already seeded: a second run would only add an empty report
        run = source_ingest_now(source=source, requested_by=admin)
        stdout.write(f"skills: {display_name}: {run.status}, {run.counts.get('skills_found', 0)} skills\n")
    if not Source.objects.filter(kind="mcp", identity=f"mcp:{MCP_SERVER}").exists():
        run = mcp_skills_push(server=MCP_SERVER, skills=_mcp_skills(), requested_by=admin)
        stdout.write(f"skills: MCP {MCP_SERVER}: {run.status}, {run.counts.get('skills_found', 0)} skills\n")
