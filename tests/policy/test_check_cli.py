"""A team tests a policy in CI: portal-compiled managed settings → ``skills check --managed-settings``."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from governance.policy.services import policy_draft_update, policy_publish

SKILL = "---\nname: {name}\ndescription: Handles {name} work. Use when asked to {name}.\n{extra}---\n# Steps\n\n1. Do it.\n"


def write(root: Path, name: str, extra: str = "") -> None:
    (root / name).mkdir(parents=True, exist_ok=True)
    (root / name / "SKILL.md").write_text(SKILL.format(name=name, extra=extra))


def check(*args: str) -> tuple[int, dict[str, Any]]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("skills", "check", *args, "--format", "json", stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    assert out.getvalue(), err.getvalue()
    return code, json.loads(out.getvalue())


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s["permission"] for s in report["skills"]}


@pytest.mark.django_db
def test_downloaded_policy_evaluates_skills_as_claude_code_would(
    tmp_path: Path, admin_user: User, make_token: Callable[..., str]
) -> None:
    project = tmp_path / "repo/.claude/skills"
    write(project, "deploy")
    write(project, "db-migrate")
    write(project, "notes")
    write(project, "shell-helper", extra="allowed-tools: Bash\n")
    write(project, "hooked", extra="hooks:\n  PostToolUse: []\n")
    policy_draft_update(
        actor=admin_user,
        document={
            "skill_rules": [
                {"effect": "deny", "name": "deploy"},
                {"effect": "ask", "name": "db-migrate"},
                {"effect": "allow", "name": "notes"},
            ],
            "hooks": {"managed_only": True},
        },
    )
    policy_publish(actor=admin_user)
    client = Client(headers={"Authorization": f"Bearer {make_token(admin_user, 'policy:read')}"})
    settings_file = tmp_path / "managed-settings.json"
    settings_file.write_bytes(client.get("/api/v1/policy/managed-settings.json").content)

    code, report = check(str(project), "--managed-settings", str(settings_file))
    decisions = by_name(report)
    assert decisions["deploy"]["decision"] == "deny"
    assert (
        decisions["deploy"]["reasons"][0]["message"] == "permissions.deny has Skill(deploy), Skill(deploy *)"
    )
    assert decisions["db-migrate"]["decision"] == "ask"
    assert decisions["notes"]["decision"] == "allow"
    assert decisions["shell-helper"]["decision"] == "ask"
    assert decisions["shell-helper"]["risk"] == "high"
    assert "hooks-blocked" in [r["code"] for r in decisions["hooked"]["reasons"]]
    shell = next(s for s in report["skills"] if s["name"] == "shell-helper")
    assert {"allowed-tools-unscoped", "allowed-tools-workspace-trust"} <= {
        f["code"] for f in shell["findings"]
    }
    assert code == 0  # decisions and risk warnings inform; only error findings fail the build

    # the drop-in folder gives the same answers
    folder = tmp_path / "etc"
    archive = zipfile.ZipFile(io.BytesIO(client.get("/api/v1/policy/managed-settings.d.zip").content))
    archive.extractall(folder)
    _, from_dropins = check(str(project), "--managed-settings", str(folder / "managed-settings.d"))
    assert by_name(from_dropins) == decisions


def test_plugin_only_lock_and_blocked_marketplace(tmp_path: Path) -> None:
    project = tmp_path / "skills"
    write(project, "anything")
    settings_file = tmp_path / "managed-settings.json"
    settings_file.write_text(json.dumps({"strictPluginOnlyCustomization": ["skills"]}))
    _, report = check(str(project), "--managed-settings", str(settings_file))
    permission = report["skills"][0]["permission"]
    assert permission["decision"] == "deny" and permission["reasons"][0]["code"] == "channel-locked"
    _, managed = check(f"managed={project}", "--managed-settings", str(settings_file))
    assert managed["skills"][0]["permission"]["decision"] == "allow"


def test_enabled_plugins_and_plugin_skill_rules_in_a_marketplace_checkout(tmp_path: Path) -> None:
    market = tmp_path / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin/marketplace.json").write_text(
        json.dumps(
            {
                "name": "acme-tools",
                "owner": {"name": "Acme"},
                "plugins": [
                    {"name": "legacy", "source": "./plugins/legacy"},
                    {"name": "lint", "source": "./plugins/lint"},
                ],
            }
        )
    )
    write(market / "plugins/legacy/skills", "old")
    write(market / "plugins/lint/skills", "style")
    settings_file = tmp_path / "managed-settings.json"
    settings_file.write_text(
        json.dumps(
            {
                "enabledPlugins": {"legacy@acme-tools": False},
                "permissions": {"allow": ["Skill(lint:style)"]},
            }
        )
    )
    _, report = check(f"plugin={market}", "--managed-settings", str(settings_file))
    decisions = by_name(report)
    assert decisions["legacy:old"]["decision"] == "deny"
    assert decisions["legacy:old"]["reasons"][0]["code"] == "plugin-disabled"
    assert decisions["lint:style"]["decision"] == "allow"
