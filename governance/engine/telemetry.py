"""Telemetry events: validation of the native format, and keyed pseudonyms.

Plain Python, no Django. ``validate_event`` turns one JSON object into an :class:`EventIn` or a list
of precise error messages; the OTLP decoder (``otlp.py``) produces the same :class:`EventIn`, so the
service behind both endpoints stores one shape. Only known fields survive validation: free text
(paths, rules, prompts) is never kept, because it is where private names hide.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

MAX_BATCH_EVENTS = 1000
MAX_CUT_SKILLS = 1000
MAX_NAME = 200


class EventType(enum.StrEnum):
    SKILL_LOADED = "skill_loaded"
    SKILL_INVOKED = "skill_invoked"
    LISTING_DEGRADED = "listing_degraded"
    COMPACTION = "compaction"
    SKILL_REINJECTED = "skill_reinjected"
    SKILL_EVICTED = "skill_evicted"
    SKILL_UNLOADED = "skill_unloaded"
    PERMISSION_DECISION = "permission_decision"
    HOOKS_REGISTERED = "hooks_registered"
    API_REQUEST = "api_request"
    PLUGIN_LOADED = "plugin_loaded"
    # Derived at ingest, never sent: one row per skill cut from a degraded listing.
    LISTING_CUT = "listing_cut"
    # From OTLP metrics (claude_code.token.usage / claude_code.cost.usage), delta temporality.
    USAGE_METRIC = "usage_metric"


CLIENT_TYPES = frozenset(t.value for t in EventType) - {EventType.LISTING_CUT, EventType.USAGE_METRIC}
# Types about one skill: the skill reference is required.
SKILL_TYPES = frozenset(
    {
        EventType.SKILL_LOADED,
        EventType.SKILL_INVOKED,
        EventType.SKILL_REINJECTED,
        EventType.SKILL_UNLOADED,
        EventType.PERMISSION_DECISION,
        EventType.HOOKS_REGISTERED,
    }
)

TRIGGERS = ("user-slash", "model", "nested")
OUTCOMES = ("ok", "already_loaded", "denied", "error")
TRUNCATION_MODES = ("truncated", "name_only", "dropped")
DECISIONS = ("allow", "ask", "deny")
EVICTION_REASONS = ("compaction", "history_rewrite", "unskill", "budget", "other")
SOURCES = ("bundled", "builtin", "managed", "user", "project", "plugin", "mcp", "unknown")
# Claude Code reports setting scopes; they map onto the portal's source kinds.
SOURCE_ALIASES = {
    "usersettings": "user",
    "projectsettings": "project",
    "localsettings": "project",
    "policysettings": "managed",
    "enterprise": "managed",
    "personal": "user",
    "skills": "project",
    "commands_deprecated": "project",
}
# Anonymous buckets Claude Code already substitutes for private names; kept as counts.
BUCKETS = frozenset({"custom_skill", "third-party", "third_party"})


@dataclass(frozen=True, slots=True)
class SkillRef:
    name: str
    source: str = "unknown"
    plugin: str = ""
    marketplace: str = ""

    @property
    def is_bucket(self) -> bool:
        return self.name in BUCKETS


@dataclass(slots=True)
class EventIn:
    """A validated event, with raw identifiers (the service pseudonymises them before storage)."""

    event_id: uuid.UUID
    occurred_at: datetime
    type: str
    agent: str
    agent_version: str = ""
    session: str = ""
    user: str = ""
    team: str = ""
    project: str = ""
    skill: SkillRef | None = None
    trigger: str = ""
    outcome: str = ""
    tokens: int = 0
    tokens_kept: int = 0
    tokens_cut: int = 0
    cost_usd: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)
    cut_skills: list[tuple[SkillRef, str]] = field(default_factory=list)


class Invalid(ValueError):
    """One precise reason an event is refused."""


def pseudonym(key: str | bytes, kind: str, value: str) -> str:
    """A stable keyed pseudonym: the same value gives the same pseudonym until the key changes."""
    raw_key = key.encode() if isinstance(key, str) else key
    digest = hmac.new(raw_key, f"{kind}\x00{value}".encode(), hashlib.sha256).hexdigest()
    return digest[:20]


def normalise_source(raw: str) -> str:
    value = raw.strip().lower()
    if value in SOURCES:
        return value
    return SOURCE_ALIASES.get(value.replace("-", "").replace("_", ""), SOURCE_ALIASES.get(value, "unknown"))


def parse_time(raw: Any, *, field_name: str = "timestamp") -> datetime:
    if not isinstance(raw, str) or not raw:
        raise Invalid(f"{field_name}: required, an ISO 8601 date-time with a time zone")
    text = raw.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise Invalid(f"{field_name}: {raw[:40]!r} is not an ISO 8601 date-time") from None
    if value.tzinfo is None:
        raise Invalid(f"{field_name}: {raw[:40]!r} has no time zone (add Z or +00:00)")
    return value.astimezone(UTC)


def _str(obj: dict[str, Any], name: str, *, max_len: int, required: bool = False) -> str:
    value = obj.get(name)
    if value.__class__ is str and 0 < len(value) <= max_len:  # the common case, first
        return value
    if value is None or value == "":
        if required:
            raise Invalid(f"{name}: required")
        return ""
    if not isinstance(value, str):
        raise Invalid(f"{name}: must be a string")
    if len(value) > max_len:
        raise Invalid(f"{name}: at most {max_len} characters (got {len(value)})")
    return value


def _int(obj: dict[str, Any], name: str, *, required: bool = True, minimum: int = 0) -> int:
    value = obj.get(name)
    if value is None:
        if required:
            raise Invalid(f"{name}: required, an integer")
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"{name}: must be an integer")
    if value < minimum:
        raise Invalid(f"{name}: must be at least {minimum}")
    if value > 2**62:
        raise Invalid(f"{name}: too large")
    return value


def _choice(obj: dict[str, Any], name: str, choices: tuple[str, ...], *, default: str | None = None) -> str:
    value = obj.get(name)
    if value is None and default is not None:
        return default
    if value not in choices:
        raise Invalid(f"{name}: must be one of {', '.join(choices)} (got {str(value)[:40]!r})")
    return str(value)


def parse_skill_ref(raw: Any, *, field_name: str = "skill") -> SkillRef:
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise Invalid(f"{field_name}: must be an object with a name")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise Invalid(f"{field_name}.name: required")
    name = name.strip()
    if len(name) > MAX_NAME:
        raise Invalid(f"{field_name}.name: at most {MAX_NAME} characters")
    plugin = raw.get("plugin") or ""
    if not isinstance(plugin, str) or len(plugin) > MAX_NAME:
        raise Invalid(f"{field_name}.plugin: a string of at most {MAX_NAME} characters")
    if not plugin and ":" in name:  # "plugin:name", Claude Code's namespaced form
        plugin, name = name.split(":", 1)
    source = raw.get("source") or ""
    if not isinstance(source, str) or len(source) > 40:
        raise Invalid(f"{field_name}.source: a string of at most 40 characters")
    marketplace = raw.get("marketplace") or ""
    if not isinstance(marketplace, str) or len(marketplace) > MAX_NAME:
        raise Invalid(f"{field_name}.marketplace: a string of at most {MAX_NAME} characters")
    kind = normalise_source(source) if source else ("plugin" if plugin else "unknown")
    return SkillRef(name=name, source=kind, plugin=plugin, marketplace=marketplace)


def validate_event(raw: Any, *, now: datetime, max_age_days: int) -> EventIn:
    """One native event → :class:`EventIn`, or :class:`Invalid` naming the first wrong field."""
    if not isinstance(raw, dict):
        raise Invalid("each event must be a JSON object")
    raw_id = raw.get("event_id")
    try:
        event_id = uuid.UUID(str(raw_id)) if raw_id else None
    except ValueError:
        event_id = None
    if event_id is None:
        raise Invalid("event_id: required, a UUID")
    etype = raw.get("type")
    if etype not in CLIENT_TYPES:
        raise Invalid(f"type: must be one of {', '.join(sorted(CLIENT_TYPES))} (got {str(etype)[:40]!r})")
    occurred_at = parse_time(raw.get("timestamp"))
    check_window(occurred_at, now=now, max_age_days=max_age_days)
    event = EventIn(
        event_id,
        occurred_at,
        etype,
        _str(raw, "agent", max_len=32, required=True),
        _str(raw, "agent_version", max_len=64),
        _str(raw, "session", max_len=200),
        _str(raw, "user", max_len=320),
        _str(raw, "team", max_len=100),
        _str(raw, "project", max_len=100),
    )
    if raw.get("skill") is not None:
        event.skill = parse_skill_ref(raw["skill"])
    elif etype in SKILL_TYPES:
        raise Invalid("skill: required for this type (an object with name and source)")
    _validate_type_fields(event, raw)
    return event


def check_window(occurred_at: datetime, *, now: datetime, max_age_days: int) -> None:
    if occurred_at > now + timedelta(days=1):
        raise Invalid("timestamp: more than one day in the future")
    if occurred_at < now - timedelta(days=max_age_days):
        raise Invalid(f"timestamp: older than the retention period ({max_age_days} days)")


def _validate_type_fields(event: EventIn, raw: dict[str, Any]) -> None:
    etype = event.type
    if etype == EventType.SKILL_LOADED:
        loaded_from = raw.get("loaded_from")
        # Only the kind of place is kept: a path names people and private skills.
        event.data = {"loaded_from": normalise_source(loaded_from) if isinstance(loaded_from, str) else ""}
        if raw.get("tokens") is not None:
            event.data["body_tokens"] = _int(raw, "tokens")
    elif etype == EventType.SKILL_INVOKED:
        event.trigger = _choice(raw, "trigger", TRIGGERS)
        event.outcome = _choice(raw, "outcome", OUTCOMES, default="ok")
    elif etype == EventType.LISTING_DEGRADED:
        event.data = {
            "skill_count": _int(raw, "skill_count"),
            "budget": _int(raw, "budget"),
            "full_total": _int(raw, "full_total"),
            "truncation_mode": _choice(raw, "truncation_mode", TRUNCATION_MODES),
            "bundled_count": _int(raw, "bundled_count"),
            "bundled_chars": _int(raw, "bundled_chars"),
        }
        cut = raw.get("cut_skills", [])
        if not isinstance(cut, list):
            raise Invalid("cut_skills: must be a list of skills")
        if len(cut) > MAX_CUT_SKILLS:
            raise Invalid(f"cut_skills: at most {MAX_CUT_SKILLS} entries")
        mode = event.data["truncation_mode"]
        for index, item in enumerate(cut):
            ref = parse_skill_ref(item, field_name=f"cut_skills[{index}]")
            item_mode = item.get("mode", mode) if isinstance(item, dict) else mode
            if item_mode not in TRUNCATION_MODES:
                raise Invalid(f"cut_skills[{index}].mode: must be one of {', '.join(TRUNCATION_MODES)}")
            event.cut_skills.append((ref, item_mode))
        event.data["cut_count"] = len(event.cut_skills)
    elif etype == EventType.COMPACTION:
        event.data = {"pre_tokens": _int(raw, "pre_tokens"), "post_tokens": _int(raw, "post_tokens")}
    elif etype == EventType.SKILL_REINJECTED:
        event.tokens_kept = _int(raw, "tokens_kept")
        event.tokens_cut = _int(raw, "tokens_cut")
    elif etype == EventType.SKILL_EVICTED:
        resolved = raw.get("resolved", True)
        if not isinstance(resolved, bool):
            raise Invalid("resolved: must be true or false")
        if resolved and event.skill is None:
            raise Invalid("skill: required when the eviction was resolved to a skill")
        event.outcome = "resolved" if resolved else "unresolved"
        event.data = {"reason": _choice(raw, "reason", EVICTION_REASONS, default="other")}
    elif etype == EventType.SKILL_UNLOADED:
        event.data = {"reason": _choice(raw, "reason", EVICTION_REASONS, default="unskill")}
    elif etype == EventType.PERMISSION_DECISION:
        event.outcome = _choice(raw, "decision", DECISIONS)
    elif etype == EventType.HOOKS_REGISTERED:
        event.data = {"hook_count": _int(raw, "hook_count", minimum=1)}
    elif etype == EventType.API_REQUEST:
        event.tokens = _int(raw, "input_tokens", required=False) + _int(raw, "output_tokens", required=False)
        cost = raw.get("cost_usd", 0)
        if isinstance(cost, bool) or not isinstance(cost, int | float) or cost < 0:
            raise Invalid("cost_usd: must be a non-negative number")
        event.cost_usd = float(cost)
        event.data = {"model": _str(raw, "model", max_len=100)}
    elif etype == EventType.PLUGIN_LOADED:
        event.data = {"plugin": _str(raw, "plugin", max_len=MAX_NAME, required=True)}
