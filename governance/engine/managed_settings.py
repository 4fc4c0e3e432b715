"""Claude Code ``managed-settings.json``: compile a policy into it, and evaluate skills under one.

Plain Python. ``compile_managed_settings`` turns a ``PolicyDocument`` into the keys Claude Code
reads (one file, or the ``managed-settings.d/`` drop-in form that Claude Code merges
alphabetically: scalars later-wins, lists unioned). ``portal_only`` lists the rules the file
cannot express, so admins know which rules only the portal enforces. ``evaluate_managed``
answers "what would Claude Code do with this skill under this file" for ``skills check``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from governance.engine.permissions import (
    PLUGIN_CHANNEL,
    Decision,
    Effect,
    PermissionSettings,
    Reason,
    SkillSubject,
    decide,
)
from governance.engine.policydoc import PolicyDocument
from governance.engine.sources import (
    SourceRule,
    SourceRuleKind,
    canonical_identity,
    github_repo,
    is_remote,
    pattern_spec,
    source_host,
)
from governance.engine.types import SourceKind

SCHEMA_URL = "https://json.schemastore.org/claude-code-settings.json"
TOKEN_PLACEHOLDER = "REPLACE_WITH_TELEMETRY_WRITE_TOKEN"  # noqa: S105 (a placeholder, not a secret)
DROPIN_FILES = {
    "10-skill-governance-permissions.json": ("permissions", "allowManagedPermissionRulesOnly"),
    "20-skill-governance-marketplaces.json": (
        "strictKnownMarketplaces",
        "blockedMarketplaces",
        "enabledPlugins",
    ),
    "30-skill-governance-customization.json": (
        "allowManagedHooksOnly",
        "strictPluginOnlyCustomization",
        "skillOverrides",
        "disableSkillShellExecution",
    ),
    "40-skill-governance-telemetry.json": ("env",),
}


def _is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def skill_permission_rules(name: str) -> list[str]:
    """``Skill(...)`` rules for one exact name: bare and with arguments."""
    if name == "*":
        return ["Skill"]
    return [f"Skill({name})", f"Skill({name} *)"]


def _marketplace_entry(rule: SourceRule) -> dict[str, str] | None:
    """The Claude Code marketplace source entry for a rule, or None when it has no exact form."""
    if rule.kind is SourceRuleKind.HOST:
        return {"source": "hostPattern", "hostPattern": rule.pattern}
    if _is_glob(rule.pattern) or not is_remote(rule.pattern):
        return None
    repo = github_repo(rule.pattern)
    if repo is not None:
        # strictKnownMarketplaces compares exact, case-sensitive owner/repo spellings.
        return {"source": "github", "repo": repo}
    if rule.pattern.startswith(("http://", "https://")) and rule.pattern.endswith(".json"):
        return {"source": "url", "url": rule.pattern}
    return {"source": "git", "url": rule.pattern}


def _unique(items: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def telemetry_env(*, otlp_endpoint: str, protocol: str) -> dict[str, str]:
    return {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_endpoint,
        "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer {TOKEN_PLACEHOLDER}",
    }


def compile_managed_settings(doc: PolicyDocument, *, otlp_endpoint: str) -> dict[str, Any]:
    """The published policy as one ``managed-settings.json`` object."""
    permissions: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    for rule in doc.skill_rules:
        if rule.only_by_name and (rule.name == "*" or not _is_glob(rule.name)):
            permissions[rule.effect.value].extend(skill_permission_rules(rule.name))
    out: dict[str, Any] = {"$schema": SCHEMA_URL}
    compiled_permissions = {k: _unique(v) for k, v in permissions.items() if v}
    if compiled_permissions:
        out["permissions"] = compiled_permissions
    if doc.managed_permission_rules_only:
        out["allowManagedPermissionRulesOnly"] = True
    allows = [r for r in doc.source_rules if r.effect == "allow"]
    if allows:
        out["strictKnownMarketplaces"] = _unique(
            [e for e in (_marketplace_entry(r) for r in allows) if e is not None]
        )
    blocked = _unique(
        [e for e in (_marketplace_entry(r) for r in doc.source_rules if r.effect == "deny") if e is not None]
    )
    if blocked:
        out["blockedMarketplaces"] = blocked
    if doc.enabled_plugins:
        out["enabledPlugins"] = dict(doc.enabled_plugins)
    out["allowManagedHooksOnly"] = doc.managed_hooks_only
    if doc.channel_lock:
        out["strictPluginOnlyCustomization"] = list(doc.channel_lock)
    if doc.skill_overrides:
        out["skillOverrides"] = dict(doc.skill_overrides)
    out["disableSkillShellExecution"] = doc.disable_skill_shell_execution
    if doc.telemetry_enabled:
        out["env"] = telemetry_env(otlp_endpoint=otlp_endpoint, protocol=doc.telemetry_protocol)
    return out


def compile_dropins(doc: PolicyDocument, *, otlp_endpoint: str) -> dict[str, dict[str, Any]]:
    """The same settings split into ``managed-settings.d/`` files (only non-empty ones)."""
    full = compile_managed_settings(doc, otlp_endpoint=otlp_endpoint)
    files: dict[str, dict[str, Any]] = {}
    for filename, keys in DROPIN_FILES.items():
        part = {k: full[k] for k in keys if k in full}
        if part:
            files[filename] = {"$schema": SCHEMA_URL, **part}
    return files


def merge_dropins(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Claude Code's drop-in merge: files in order, scalars later-wins, lists unioned, maps deep."""
    merged: dict[str, Any] = {}

    def merge(into: dict[str, Any], other: Mapping[str, Any]) -> None:
        for key, value in other.items():
            if isinstance(value, list) and isinstance(into.get(key), list):
                into[key] = _unique([*into[key], *value])
            elif isinstance(value, Mapping) and isinstance(into.get(key), dict):
                merge(into[key], value)
            else:
                into[key] = json.loads(json.dumps(value))
        return None

    for part in parts:
        merge(merged, part)
    return merged


@dataclass(frozen=True, slots=True)
class PortalOnly:
    rule: str
    why: str


def portal_only(doc: PolicyDocument) -> list[PortalOnly]:
    """Rules of the policy that managed-settings.json cannot express: only the portal checks them."""
    out: list[PortalOnly] = []
    for rule in doc.skill_rules:
        if not rule.only_by_name:
            out.append(
                PortalOnly(
                    rule.label,
                    "Skill(...) permission rules match a skill name only; source, marketplace, plugin, "
                    "team and project criteria are checked by the portal (catalog, skills check, ingest)",
                )
            )
        elif _is_glob(rule.name) and rule.name != "*":
            out.append(
                PortalOnly(
                    rule.label, "Skill(...) rules take exact names; name globs are checked by the portal"
                )
            )
    for source_rule in doc.source_rules:
        if _marketplace_entry(source_rule) is None:
            out.append(
                PortalOnly(
                    source_rule.label,
                    "not an exact marketplace source (glob, marketplace name or local path): "
                    "the portal refuses it at ingest, Claude Code cannot match it",
                )
            )
        elif source_rule.kind is SourceRuleKind.REPOSITORY:
            out.append(
                PortalOnly(
                    source_rule.label,
                    "Claude Code applies it to marketplaces only; a repository's own .claude/skills "
                    "reach developers through git, which the portal (ingest, catalog) covers",
                )
            )
    if doc.trusted_hook_plugins:
        out.append(
            PortalOnly(
                "hooks.trusted_plugins",
                "Claude Code cannot trust hooks per plugin: allowManagedHooksOnly drops all plugin hooks, "
                "so the allowlist is enforced by the portal's decisions only",
            )
        )
    out.append(
        PortalOnly(
            "unreviewed frontmatter keys / sensitive model and context: fork",
            "Claude Code uses its own list of safe skill properties; the portal's allowlist decision "
            "(ask on any unreviewed key) shows in the catalog and skills check",
        )
    )
    out.append(
        PortalOnly(
            "allowed-tools risk (unscoped Bash/Write/Edit, repository skills pre-approving Bash)",
            "Claude Code honours a skill's allowed-tools without workspace trust; the portal flags them",
        )
    )
    return out


# --------------------------------------------------------------------------------------------
# Evaluating skills under a managed-settings file, as Claude Code would


@dataclass(slots=True)
class ManagedSettings:
    allow: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    plugin_only: frozenset[str] = frozenset()
    strict_known: list[dict[str, Any]] | None = None  # None = no restriction, [] = lockdown
    blocked: list[dict[str, Any]] = field(default_factory=list)
    managed_hooks_only: bool = False
    enabled_plugins: dict[str, Any] = field(default_factory=dict)
    skill_overrides: dict[str, str] = field(default_factory=dict)
    disable_shell: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ManagedSettings:
        if not isinstance(data, Mapping):
            raise ValueError("managed settings must be a JSON object")
        perms = data.get("permissions") or {}
        lock = data.get("strictPluginOnlyCustomization", False)
        surfaces = (
            frozenset({"skills", "agents", "hooks", "mcp"})
            if lock is True
            else frozenset(lock)
            if isinstance(lock, list)
            else frozenset()
        )
        strict = data.get("strictKnownMarketplaces")
        return cls(
            allow=[str(r) for r in perms.get("allow", [])],
            ask=[str(r) for r in perms.get("ask", [])],
            deny=[str(r) for r in perms.get("deny", [])],
            plugin_only=surfaces,
            strict_known=list(strict) if isinstance(strict, list) else None,
            blocked=list(data.get("blockedMarketplaces") or []),
            managed_hooks_only=bool(data.get("allowManagedHooksOnly", False)),
            enabled_plugins=dict(data.get("enabledPlugins") or {}),
            skill_overrides=dict(data.get("skillOverrides") or {}),
            disable_shell=bool(data.get("disableSkillShellExecution", False)),
        )


def load_managed_settings(path: Path) -> ManagedSettings:
    """A ``managed-settings.json`` file, or a ``managed-settings.d/`` folder merged alphabetically.

    Raises ``ValueError`` with a precise message for unreadable or invalid JSON.
    """
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == ".json" and not p.name.startswith("."))
        parts = [_read_json(p) for p in files]
        return ManagedSettings.from_dict(merge_dropins(parts))
    return ManagedSettings.from_dict(_read_json(path))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ValueError(f"{path}: no such file") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: managed settings must be a JSON object")
    return data


_SKILL_RULE_RE = re.compile(r"^Skill(?:\((?P<spec>[^)]*)\))?$")


def skill_rule_matches(rule: str, qualified_name: str) -> bool:
    """Claude Code ``Skill`` rule matching: ``Skill``, ``Skill(name)``, ``Skill(name *)``, ``Skill(pre:*)``."""
    match = _SKILL_RULE_RE.match(rule.strip())
    if match is None:
        return False
    spec = match.group("spec")
    if spec is None or spec.strip() in {"", "*"}:
        return True
    spec = spec.strip()
    if spec.endswith(":*"):
        return qualified_name.startswith(spec[:-2])
    if spec.endswith(" *"):
        return qualified_name == spec[:-2].rstrip()
    if spec.endswith("*"):
        return qualified_name.startswith(spec[:-1])
    return qualified_name == spec


def _entry_matches(entry: Mapping[str, Any], spec: str, *, exact: bool) -> bool:
    """Does a marketplace source entry match the marketplace at ``spec``?

    ``exact`` follows strictKnownMarketplaces (exact spelling; GitHub as case-sensitive
    owner/repo); otherwise blockedMarketplaces (normalised identities).
    """
    kind = entry.get("source")
    if kind == "hostPattern":
        host = source_host(spec)
        return bool(host) and re.fullmatch(str(entry.get("hostPattern", "")), host) is not None
    if kind == "github":
        repo = github_repo(spec)
        wanted = str(entry.get("repo", ""))
        if repo is None:
            return False
        return (
            repo == wanted
            if exact
            else canonical_identity(pattern_spec(repo)) == canonical_identity(pattern_spec(wanted))
        )
    if kind in {"git", "url"}:
        url = str(entry.get("url", ""))
        return spec == url if exact else canonical_identity(spec) == canonical_identity(url)
    return False


def evaluate_managed(subject: SkillSubject, settings: ManagedSettings) -> Decision:
    """What Claude Code would do with this skill under these managed settings."""
    reasons: list[Reason] = []
    name = subject.qualified_name

    def result(effect: Effect, base: Decision | None = None) -> Decision:
        if base is None:
            return Decision(effect, reasons)
        base.decision = effect
        base.reasons = reasons + base.reasons
        return base

    if "skills" in settings.plugin_only and subject.source not in PLUGIN_CHANNEL:
        reasons.append(
            Reason(
                "channel-locked",
                f"strictPluginOnlyCustomization locks skills to plugins: a {subject.source.value} skill is not loaded",
            )
        )
        return result(Effect.DENY)
    if subject.source is SourceKind.PLUGIN:
        marketplace_spec = subject.source_identity or subject.marketplace
        for entry in settings.blocked:
            if marketplace_spec and _entry_matches(entry, marketplace_spec, exact=False):
                reasons.append(
                    Reason("marketplace-blocked", f"marketplace {marketplace_spec} is in blockedMarketplaces")
                )
                return result(Effect.DENY)
        if settings.strict_known is not None and not any(
            _entry_matches(e, marketplace_spec, exact=True) for e in settings.strict_known
        ):
            reasons.append(
                Reason(
                    "marketplace-unknown",
                    f"marketplace {marketplace_spec or '(unknown)'} is not in strictKnownMarketplaces "
                    "(exact spelling)",
                )
            )
            return result(Effect.DENY)
        plugin_id = f"{subject.plugin}@{subject.marketplace}" if subject.marketplace else ""
        if plugin_id and settings.enabled_plugins.get(plugin_id) is False:
            reasons.append(Reason("plugin-disabled", f"enabledPlugins turns {plugin_id} off"))
            return result(Effect.DENY)
    visibility = (
        settings.skill_overrides.get(subject.name) if subject.source is not SourceKind.PLUGIN else None
    )
    if visibility == "off":
        reasons.append(Reason("override-off", "skillOverrides hides it everywhere ('off')"))
        return result(Effect.DENY)
    if visibility in {"name-only", "user-invocable-only"}:
        reasons.append(Reason("override", f"skillOverrides shows it as '{visibility}'"))
    has_hooks = bool(subject.frontmatter.get("hooks"))
    hooks_locked = settings.managed_hooks_only or (
        "hooks" in settings.plugin_only and subject.source is not SourceKind.PLUGIN
    )
    trusted = subject.source in {SourceKind.MANAGED, SourceKind.BUNDLED, SourceKind.BUILTIN}
    if has_hooks and hooks_locked and not trusted:
        key = "allowManagedHooksOnly" if settings.managed_hooks_only else "strictPluginOnlyCustomization"
        reasons.append(Reason("hooks-blocked", f"{key}: its hooks are not registered", keys=("hooks",)))
    if settings.disable_shell and not trusted:
        reasons.append(
            Reason("shell-disabled", "disableSkillShellExecution: inline !`...` blocks are replaced, not run")
        )
    for effect, rules in (
        (Effect.DENY, settings.deny),
        (Effect.ASK, settings.ask),
        (Effect.ALLOW, settings.allow),
    ):
        matching = [r for r in rules if skill_rule_matches(r, name)]
        if matching:
            reasons.append(
                Reason(
                    f"{effect.value}-rule",
                    f"permissions.{effect.value} has {', '.join(matching)}",
                    rule=matching[0],
                )
            )
            return result(effect)
    # No managed rule: Claude Code prompts unless the skill has only safe properties.
    base = decide(
        subject,
        PermissionSettings(
            model_is_sensitive=False,
            managed_hooks_only=settings.managed_hooks_only,
            plugin_only=settings.plugin_only - {"skills"},
        ),
    )
    # The hooks-blocked reason, if any, was already given in Claude Code's terms.
    base.reasons = [r for r in base.reasons if r.code != "hooks-blocked"]
    return result(base.decision, base)
