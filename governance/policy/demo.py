"""Demo policy: one published version using the main features. Idempotent."""

from __future__ import annotations

from typing import Any, TextIO

from governance.engine.policydoc import document_sha256, parse_document
from governance.policy.models import PolicyVersion
from governance.policy.services import policy_draft_update, policy_publish
from portal.accounts.demo import DemoOrg

DEMO_POLICY: dict[str, Any] = {
    "skill_rules": [
        {
            "effect": "deny",
            "name": "security-review",
            "source_kind": "project",
            "note": "the organisation's security review is managed; a repository copy must not shadow it",
        },
        {"effect": "ask", "name": "deploy-*", "note": "deployments are confirmed by a human"},
        {"effect": "allow", "source_kind": "managed", "note": "managed skills are reviewed by platform"},
        {
            "effect": "deny",
            "source_kind": "mcp",
            "team": "payments",
            "note": "no remote skills near card data",
        },
    ],
    "source_rules": [
        {"effect": "allow", "kind": "host", "pattern": r"github\.com"},
        {"effect": "allow", "kind": "marketplace", "pattern": "https://github.com/acme-demo/claude-plugins"},
        {
            "effect": "deny",
            "kind": "repository",
            "pattern": "https://github.com/unvetted/skills-dump",
            "note": "unreviewed dump",
        },
    ],
    "channel_lock": ["hooks"],
    "hooks": {"managed_only": False, "trusted_plugins": ["acme-guardrails@acme-demo"]},
    "sensitive": {"model": True, "context_fork": True},
    "enabled_plugins": {"acme-guardrails@acme-demo": True},
    "skill_overrides": {"legacy-release": "user-invocable-only"},
    "disable_skill_shell_execution": True,
    "managed_permission_rules_only": False,
    "telemetry": {"enabled": True, "protocol": "http/json"},
}


def seed(*, demo: DemoOrg, stdout: TextIO) -> None:
    parsed, errors = parse_document(DEMO_POLICY)
    assert not errors, errors
    wanted = document_sha256(parsed.as_dict())
    if PolicyVersion.objects.filter(document_sha256=wanted, status="published").exists():
        stdout.write("policy: demo policy already published\n")
        return
    admin = demo.users["alice-admin"]
    policy_draft_update(actor=admin, document=DEMO_POLICY, note="Demo policy: guard the security review")
    version = policy_publish(actor=admin)
    stdout.write(f"policy: published demo policy v{version.number}\n")
