"""Compiling a policy into Claude Code's managed-settings.json, and evaluating skills under one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governance.engine.managed_settings import (
    ManagedSettings,
    compile_dropins,
    compile_managed_settings,
    evaluate_managed,
    load_managed_settings,
    merge_dropins,
    portal_only,
    skill_rule_matches,
)
from governance.engine.permissions import Effect, SkillSubject
from governance.engine.policydoc import PolicyDocument, parse_document
from governance.engine.types import SourceKind
from tests.engine.settings_schema import validate_settings

OTLP = "https://portal.example.com/otlp"

EVERY_FEATURE: dict[str, Any] = {
    "skill_rules": [
        {"effect": "deny", "name": "security-review", "source_kind": "project", "note": "shadowing"},
        {"effect": "deny", "name": "yolo-deploy"},
        {"effect": "ask", "name": "db-migrate"},
        {"effect": "allow", "name": "acme-tools:lint"},
        {"effect": "allow", "name": "docs-*"},
        {"effect": "allow", "source": "https://github.com/acme/skills", "team": "platform"},
    ],
    "source_rules": [
        {"effect": "allow", "kind": "marketplace", "pattern": "https://github.com/Acme/claude-plugins"},
        {"effect": "allow", "kind": "host", "pattern": r"git\.acme\.internal"},
        {"effect": "allow", "kind": "repository", "pattern": "git@github.com:acme/skills.git"},
        {"effect": "deny", "kind": "repository", "pattern": "https://GitHub.com/evil/skills.git"},
        {"effect": "deny", "kind": "marketplace", "pattern": "https://gitlab.com/shady/market.git"},
        {"effect": "deny", "kind": "host", "pattern": r".*\.evil\.example"},
        {"effect": "deny", "kind": "repository", "pattern": "github.com/badorg/*"},
    ],
    "channel_lock": ["skills", "hooks"],
    "hooks": {"managed_only": True, "trusted_plugins": ["acme-tools@acme"]},
    "sensitive": {"model": True, "context_fork": False},
    "enabled_plugins": {"acme-tools@acme": True, "legacy@acme": False},
    "skill_overrides": {"legacy-context": "name-only", "deploy": "off"},
    "disable_skill_shell_execution": True,
    "managed_permission_rules_only": True,
    "telemetry": {"enabled": True, "protocol": "http/protobuf"},
}


def every_feature() -> PolicyDocument:
    doc, errors = parse_document(EVERY_FEATURE)
    assert errors == {}
    return doc


def validate(settings: dict[str, Any]) -> None:
    validate_settings(settings)


def test_policy_using_every_feature_compiles_to_a_valid_file() -> None:
    out = compile_managed_settings(every_feature(), otlp_endpoint=OTLP)
    validate(out)
    assert out["permissions"] == {
        "allow": ["Skill(acme-tools:lint)", "Skill(acme-tools:lint *)"],
        "ask": ["Skill(db-migrate)", "Skill(db-migrate *)"],
        "deny": ["Skill(yolo-deploy)", "Skill(yolo-deploy *)"],
    }
    # exact spelling Claude Code compares: owner/repo, case kept
    assert {"source": "github", "repo": "Acme/claude-plugins"} in out["strictKnownMarketplaces"]
    assert {"source": "hostPattern", "hostPattern": r"git\.acme\.internal"} in out["strictKnownMarketplaces"]
    assert {"source": "github", "repo": "evil/skills"} in out["blockedMarketplaces"]
    assert {"source": "git", "url": "https://gitlab.com/shady/market.git"} in out["blockedMarketplaces"]
    assert {"source": "hostPattern", "hostPattern": r".*\.evil\.example"} in out["blockedMarketplaces"]
    assert out["allowManagedHooksOnly"] is True
    assert out["strictPluginOnlyCustomization"] == ["skills", "hooks"]
    assert out["enabledPlugins"] == {"acme-tools@acme": True, "legacy@acme": False}
    assert out["skillOverrides"] == {"deploy": "off", "legacy-context": "name-only"}
    assert out["disableSkillShellExecution"] is True
    assert out["allowManagedPermissionRulesOnly"] is True
    env = out["env"]
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == OTLP
    assert env["OTEL_EXPORTER_OTLP_PROTOCOL"] == "http/protobuf"
    assert env["CLAUDE_CODE_ENABLE_TELEMETRY"] == "1"
    assert env["OTEL_EXPORTER_OTLP_HEADERS"].startswith("Authorization=Bearer ")


def test_dropins_validate_and_merge_back_into_the_single_file() -> None:
    doc = every_feature()
    files = compile_dropins(doc, otlp_endpoint=OTLP)
    assert list(files) == sorted(files)
    for content in files.values():
        validate(content)
    assert merge_dropins(list(files.values())) == compile_managed_settings(doc, otlp_endpoint=OTLP)


def test_empty_policy_compiles_to_a_valid_file() -> None:
    out = compile_managed_settings(PolicyDocument(), otlp_endpoint=OTLP)
    validate(out)
    assert "permissions" not in out and "strictKnownMarketplaces" not in out


def test_portal_only_lists_what_claude_code_cannot_enforce() -> None:
    labels = [p.rule for p in portal_only(every_feature())]
    assert "deny name=security-review source_kind=project" in labels
    assert "allow name=docs-*" in labels
    assert "deny repository github.com/badorg/*" in labels
    assert "hooks.trusted_plugins" in labels
    assert "deny name=yolo-deploy" not in labels


@pytest.mark.parametrize(
    "rule,name,expected",
    [
        ("Skill", "anything", True),
        ("Skill(*)", "anything", True),
        ("Skill(deploy)", "deploy", True),
        ("Skill(deploy)", "deploy-prod", False),
        ("Skill(deploy *)", "deploy", True),
        ("Skill(deploy:*)", "deploy-prod", True),
        ("Skill(acme:lint)", "acme:lint", True),
        ("Bash(git:*)", "deploy", False),
    ],
)
def test_skill_rule_syntax(rule: str, name: str, expected: bool) -> None:
    assert skill_rule_matches(rule, name) is expected


def subj(**kw: Any) -> SkillSubject:
    kw.setdefault("source", SourceKind.PROJECT)
    fm = {"name": kw.get("name", "x"), "description": "d", **kw.pop("fm", {})}
    return SkillSubject(name=kw.pop("name", "x"), frontmatter=fm, **kw)


def test_evaluation_under_the_compiled_file_matches_claude_codes_rules() -> None:
    ms = ManagedSettings.from_dict(compile_managed_settings(every_feature(), otlp_endpoint=OTLP))
    # plugin-only for skills: a project skill is not loaded
    assert evaluate_managed(subj(name="anything"), ms).reasons[0].code == "channel-locked"
    plugin = {"source": SourceKind.PLUGIN, "marketplace": "acme"}
    ok = evaluate_managed(
        subj(
            name="lint",
            plugin="acme-tools",
            source_identity="https://github.com/Acme/claude-plugins",
            **plugin,
        ),
        ms,
    )
    assert ok.decision is Effect.ALLOW and ok.reasons[-1].code == "allow-rule"
    # strictKnownMarketplaces compares exact spellings: lower-case owner is a different marketplace
    other = evaluate_managed(
        subj(
            name="lint",
            plugin="acme-tools",
            source_identity="https://github.com/acme/claude-plugins",
            **plugin,
        ),
        ms,
    )
    assert other.decision is Effect.DENY and other.reasons[0].code == "marketplace-unknown"
    # blockedMarketplaces normalises spellings
    blocked = evaluate_managed(
        subj(name="x", plugin="p", source_identity="git@github.com:EVIL/skills.git", **plugin), ms
    )
    assert blocked.reasons[0].code == "marketplace-blocked"
    disabled = evaluate_managed(
        subj(name="x", plugin="legacy", source_identity="https://github.com/Acme/claude-plugins", **plugin),
        ms,
    )
    assert disabled.reasons[0].code == "plugin-disabled"
    hooked = evaluate_managed(
        subj(
            name="h",
            plugin="acme-tools",
            fm={"hooks": {"a": 1}},
            source_identity="Acme/claude-plugins",
            **plugin,
        ),
        ms,
    )
    assert "hooks-blocked" in [r.code for r in hooked.reasons]


def test_evaluation_without_rules_falls_back_to_safe_properties() -> None:
    ms = ManagedSettings.from_dict({"permissions": {"deny": ["Skill(bad)"], "ask": ["Skill(risky *)"]}})
    assert evaluate_managed(subj(name="bad"), ms).decision is Effect.DENY
    assert evaluate_managed(subj(name="risky"), ms).decision is Effect.ASK
    assert evaluate_managed(subj(name="plain"), ms).decision is Effect.ALLOW
    assert evaluate_managed(subj(name="tools", fm={"allowed-tools": "Bash"}), ms).decision is Effect.ASK
    off = ManagedSettings.from_dict({"skillOverrides": {"plain": "off"}})
    assert evaluate_managed(subj(name="plain"), off).reasons[0].code == "override-off"


def test_load_file_or_dropin_folder(tmp_path: Path) -> None:
    files = compile_dropins(every_feature(), otlp_endpoint=OTLP)
    folder = tmp_path / "managed-settings.d"
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_text(json.dumps(content))
    merged = load_managed_settings(folder)
    single = tmp_path / "managed-settings.json"
    single.write_text(json.dumps(compile_managed_settings(every_feature(), otlp_endpoint=OTLP)))
    assert load_managed_settings(single) == merged
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ValueError, match="invalid JSON at line 1"):
        load_managed_settings(bad)
