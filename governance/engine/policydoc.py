"""The policy document: what admins write, validated field by field, diffable, hashable.

Plain Python. A document is a JSON object; ``parse_document`` returns the typed policy and the
errors keyed by the path of the field that is wrong (``skill_rules[2].name``), so forms and the
raw JSON view can show each message where it belongs.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from governance.engine.permissions import LOCK_SURFACES, Effect, PermissionSettings, SkillRule
from governance.engine.sources import SourceRule, SourceRuleKind, validate_source_pattern
from governance.engine.types import SourceKind

SKILL_OVERRIDE_VALUES = ("on", "name-only", "user-invocable-only", "off")
TELEMETRY_PROTOCOLS = ("http/json", "http/protobuf")
PLUGIN_ID_RE = re.compile(r"^[A-Za-z0-9][\w.\-]*@[A-Za-z0-9][\w.\-]*$")
NAME_PATTERN_RE = re.compile(r"^[\w.:*?\[\]\-]+$")
SLUG_RE = re.compile(r"^[\w\-]+$")
DOCUMENT_VERSION = 1


@dataclass(slots=True)
class PolicyDocument:
    skill_rules: list[SkillRule] = field(default_factory=list)
    source_rules: list[SourceRule] = field(default_factory=list)
    channel_lock: list[str] = field(default_factory=list)  # surfaces locked to plugins
    managed_hooks_only: bool = False
    trusted_hook_plugins: list[str] = field(default_factory=list)
    model_is_sensitive: bool = True
    fork_is_sensitive: bool = True
    enabled_plugins: dict[str, bool] = field(default_factory=dict)
    skill_overrides: dict[str, str] = field(default_factory=dict)
    disable_skill_shell_execution: bool = False
    managed_permission_rules_only: bool = False
    telemetry_enabled: bool = True
    telemetry_protocol: str = "http/json"

    def permission_settings(self) -> PermissionSettings:
        return PermissionSettings(
            rules=tuple(self.skill_rules),
            model_is_sensitive=self.model_is_sensitive,
            fork_is_sensitive=self.fork_is_sensitive,
            trusted_hook_plugins=tuple(self.trusted_hook_plugins),
            plugin_only=frozenset(self.channel_lock),
            managed_hooks_only=self.managed_hooks_only,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": DOCUMENT_VERSION,
            "skill_rules": [
                {
                    "effect": r.effect.value,
                    **{c: getattr(r, c) for c in SkillRule.CRITERIA if getattr(r, c)},
                    **({"note": r.note} if r.note else {}),
                }
                for r in self.skill_rules
            ],
            "source_rules": [
                {
                    "effect": r.effect,
                    "kind": r.kind.value,
                    "pattern": r.pattern,
                    **({"note": r.note} if r.note else {}),
                }
                for r in self.source_rules
            ],
            "channel_lock": sorted(self.channel_lock, key=LOCK_SURFACES.index),
            "hooks": {
                "managed_only": self.managed_hooks_only,
                "trusted_plugins": list(self.trusted_hook_plugins),
            },
            "sensitive": {"model": self.model_is_sensitive, "context_fork": self.fork_is_sensitive},
            "enabled_plugins": dict(sorted(self.enabled_plugins.items())),
            "skill_overrides": dict(sorted(self.skill_overrides.items())),
            "disable_skill_shell_execution": self.disable_skill_shell_execution,
            "managed_permission_rules_only": self.managed_permission_rules_only,
            "telemetry": {"enabled": self.telemetry_enabled, "protocol": self.telemetry_protocol},
        }


Errors = dict[str, list[str]]


class _Reader:
    def __init__(self) -> None:
        self.errors: Errors = {}

    def error(self, path: str, message: str) -> None:
        self.errors.setdefault(path, []).append(message)

    def boolean(self, data: dict[str, Any], key: str, path: str, default: bool) -> bool:
        value = data.get(key, default)
        if not isinstance(value, bool):
            self.error(path, "must be true or false")
            return default
        return value

    def text(self, data: dict[str, Any], key: str, path: str, *, max_len: int = 500) -> str:
        value = data.get(key, "")
        if value is None:
            return ""
        if not isinstance(value, str):
            self.error(path, "must be a string")
            return ""
        value = value.strip()
        if len(value) > max_len:
            self.error(path, f"at most {max_len} characters (got {len(value)})")
        return value

    def mapping(self, data: dict[str, Any], key: str, path: str) -> dict[str, Any]:
        value = data.get(key, {})
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.error(path, "must be an object")
            return {}
        return value

    def array(self, data: dict[str, Any], key: str, path: str) -> list[Any]:
        value = data.get(key, [])
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(path, "must be a list")
            return []
        return value


def _skill_rule(reader: _Reader, item: Any, path: str) -> SkillRule | None:
    if not isinstance(item, dict):
        reader.error(path, "must be an object")
        return None
    unknown = sorted(set(item) - {"effect", "note", *SkillRule.CRITERIA})
    if unknown:
        reader.error(path, f"unknown field(s): {', '.join(unknown)}")
    effect_raw = item.get("effect")
    try:
        effect = Effect(str(effect_raw))
    except ValueError:
        reader.error(f"{path}.effect", "must be one of allow, ask, deny")
        effect = None
    values = {c: reader.text(item, c, f"{path}.{c}", max_len=300) for c in SkillRule.CRITERIA}
    note = reader.text(item, "note", f"{path}.note")
    if not any(values.values()):
        reader.error(
            f"{path}.name", "a rule needs at least one criterion (name, source kind, source, plugin, team...)"
        )
    if values["name"] and not NAME_PATTERN_RE.match(values["name"]):
        reader.error(f"{path}.name", "a skill name or glob: letters, digits, - _ . : and * ? [ ] (no spaces)")
    if values["source_kind"] and values["source_kind"] not in {k.value for k in SourceKind}:
        reader.error(f"{path}.source_kind", "must be one of " + ", ".join(k.value for k in SourceKind))
    for key in ("team", "project"):
        if values[key] and not SLUG_RE.match(values[key]):
            reader.error(f"{path}.{key}", f"a {key} slug (letters, digits, - and _)")
    if effect is None:
        return None
    return SkillRule(effect=effect, note=note, **values)


def _source_rule(reader: _Reader, item: Any, path: str) -> SourceRule | None:
    if not isinstance(item, dict):
        reader.error(path, "must be an object")
        return None
    unknown = sorted(set(item) - {"effect", "kind", "pattern", "note"})
    if unknown:
        reader.error(path, f"unknown field(s): {', '.join(unknown)}")
    effect = item.get("effect")
    if effect not in {"allow", "deny"}:
        reader.error(f"{path}.effect", "must be allow or deny")
    try:
        kind = SourceRuleKind(str(item.get("kind")))
    except ValueError:
        reader.error(f"{path}.kind", "must be one of repository, marketplace, host")
        kind = None
    pattern = reader.text(item, "pattern", f"{path}.pattern")
    note = reader.text(item, "note", f"{path}.note")
    if kind is not None:
        problem = validate_source_pattern(kind, pattern)
        if problem:
            reader.error(f"{path}.pattern", problem)
    if kind is None or effect not in {"allow", "deny"}:
        return None
    return SourceRule(effect=str(effect), kind=kind, pattern=pattern, note=note)


def parse_document(data: Any) -> tuple[PolicyDocument, Errors]:
    """Typed policy and field errors; the document is usable only when errors is empty."""
    reader = _Reader()
    doc = PolicyDocument()
    if not isinstance(data, dict):
        reader.error("", "the policy must be a JSON object")
        return doc, reader.errors
    known = {
        "version", "skill_rules", "source_rules", "channel_lock", "hooks", "sensitive",
        "enabled_plugins", "skill_overrides", "disable_skill_shell_execution",
        "managed_permission_rules_only", "telemetry",
    }  # fmt: skip
    for key in sorted(set(data) - known):
        reader.error(key, "unknown field")
    for index, item in enumerate(reader.array(data, "skill_rules", "skill_rules")):
        rule = _skill_rule(reader, item, f"skill_rules[{index}]")
        if rule is not None:
            doc.skill_rules.append(rule)
    for index, item in enumerate(reader.array(data, "source_rules", "source_rules")):
        source_rule = _source_rule(reader, item, f"source_rules[{index}]")
        if source_rule is not None:
            doc.source_rules.append(source_rule)
    lock = reader.array(data, "channel_lock", "channel_lock")
    bad = [s for s in lock if s not in LOCK_SURFACES]
    if bad:
        reader.error("channel_lock", f"unknown surface(s) {bad}; choose from {', '.join(LOCK_SURFACES)}")
    doc.channel_lock = sorted({s for s in lock if s in LOCK_SURFACES}, key=LOCK_SURFACES.index)
    hooks = reader.mapping(data, "hooks", "hooks")
    doc.managed_hooks_only = reader.boolean(hooks, "managed_only", "hooks.managed_only", False)
    trusted = reader.array(hooks, "trusted_plugins", "hooks.trusted_plugins")
    for index, plugin in enumerate(trusted):
        if not isinstance(plugin, str) or not re.match(r"^[\w.\-*?@]+$", plugin):
            reader.error(f"hooks.trusted_plugins[{index}]", "a plugin name or plugin@marketplace")
        else:
            doc.trusted_hook_plugins.append(plugin)
    sensitive = reader.mapping(data, "sensitive", "sensitive")
    doc.model_is_sensitive = reader.boolean(sensitive, "model", "sensitive.model", True)
    doc.fork_is_sensitive = reader.boolean(sensitive, "context_fork", "sensitive.context_fork", True)
    for plugin_id, enabled in reader.mapping(data, "enabled_plugins", "enabled_plugins").items():
        if not PLUGIN_ID_RE.match(plugin_id):
            reader.error(f"enabled_plugins.{plugin_id}", "use plugin@marketplace")
        elif not isinstance(enabled, bool):
            reader.error(f"enabled_plugins.{plugin_id}", "must be true or false")
        else:
            doc.enabled_plugins[plugin_id] = enabled
    for name, visibility in reader.mapping(data, "skill_overrides", "skill_overrides").items():
        if not NAME_PATTERN_RE.match(name) or any(ch in name for ch in "*?[]"):
            reader.error(f"skill_overrides.{name}", "an exact skill name (no globs)")
        elif visibility not in SKILL_OVERRIDE_VALUES:
            reader.error(f"skill_overrides.{name}", "must be one of " + ", ".join(SKILL_OVERRIDE_VALUES))
        else:
            doc.skill_overrides[name] = visibility
    doc.disable_skill_shell_execution = reader.boolean(
        data, "disable_skill_shell_execution", "disable_skill_shell_execution", False
    )
    doc.managed_permission_rules_only = reader.boolean(
        data, "managed_permission_rules_only", "managed_permission_rules_only", False
    )
    telemetry = reader.mapping(data, "telemetry", "telemetry")
    doc.telemetry_enabled = reader.boolean(telemetry, "enabled", "telemetry.enabled", True)
    protocol = telemetry.get("protocol", "http/json")
    if protocol not in TELEMETRY_PROTOCOLS:
        reader.error("telemetry.protocol", "must be http/json or http/protobuf")
    else:
        doc.telemetry_protocol = protocol
    return doc, reader.errors


def empty_document() -> dict[str, Any]:
    return PolicyDocument().as_dict()


def canonical_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def document_sha256(data: Any) -> str:
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for key, value in data.items():
            out.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out or {prefix: {}}
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        out = {}
        for index, value in enumerate(data):
            out[f"{prefix}[{index}]"] = json.dumps(value, sort_keys=True)
        return out
    return {prefix: data}


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    change: str  # added | removed | changed
    before: Any
    after: Any


def diff_documents(before: dict[str, Any], after: dict[str, Any]) -> tuple[list[Change], str]:
    """Field-level changes and a unified diff of the canonical JSON."""
    a, b = _flatten(before), _flatten(after)
    changes: list[Change] = []
    for path in sorted(set(a) | set(b)):
        if path not in a:
            changes.append(Change(path, "added", None, b[path]))
        elif path not in b:
            changes.append(Change(path, "removed", a[path], None))
        elif a[path] != b[path]:
            changes.append(Change(path, "changed", a[path], b[path]))
    text = "".join(
        difflib.unified_diff(
            canonical_json(before).splitlines(keepends=True),
            canonical_json(after).splitlines(keepends=True),
            fromfile="before",
            tofile="after",
        )
    )
    return changes, text
