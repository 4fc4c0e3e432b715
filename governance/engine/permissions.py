"""Permission decisions for skills (DOMAIN §5): a Markdown file must not grant itself power.

Plain Python, no Django. The decision looks at the skill's *actual* frontmatter keys and checks
each one against an allowlist of reviewed, safe properties. A key nobody has reviewed yet
(``preExecCommand`` next year) therefore makes the decision ``ask``; forgetting to update the
list makes the system stricter, never looser.

Order (first match wins; deny always wins because it is looked at first):

1. a deny rule matches → ``deny``
2. an ask rule matches → ``ask`` (Claude Code's deny → ask → allow)
3. an allow rule matches → ``allow``
4. the source is ``mcp`` and the skill has any non-safe property → ``ask``
5. only safe properties → ``allow``
6. otherwise → ``ask``

Before the rules, two locks can take something away without consulting them: the channel lock
("plugins only" for skills) refuses a skill from a non-plugin channel, and the hooks lock removes
hooks declared by an untrusted source while the skill itself still loads.
"""

from __future__ import annotations

import enum
import fnmatch
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from governance.engine.sources import canonical_identity, pattern_spec
from governance.engine.types import Finding, Severity, SourceKind


class Effect(enum.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


# Reviewed properties that only describe or narrow a skill. Everything else needs approval.
SAFE_PROPERTIES: frozenset[str] = frozenset(
    {
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "when_to_use",
        "whenToUse",
        "argument-hint",
        "arguments",
        "disable-model-invocation",
        "user-invocable",
        "disallowed-tools",  # narrows what the skill may do
        "paths",  # keeps the skill out of the listing until a file matches
        "version",
        "type",
    }
)

# Known properties that widen what a skill may do (DOMAIN §5). Listed to explain decisions;
# the decision itself never relies on this list (a key missing from both lists is "unreviewed").
SENSITIVE_PROPERTIES: dict[str, str] = {
    "hooks": "registers hooks that run commands on agent events",
    "allowed-tools": "pre-approves tools without a prompt",
    "allowedTools": "pre-approves tools without a prompt (older spelling)",
    "shell": "runs inline shell blocks",
    "agent": "runs as a sub-agent",
    "maxTurns": "extends how long the skill runs unattended",
    "timeoutMins": "extends how long the skill runs unattended",
    "effort": "raises the reasoning effort (cost)",
    "background": "runs in the background",
    "model": "switches the model (cost, capability)",
    "context": "runs in a forked context",
    "mode": "runs delegated (forked)",
}

# Sources whose hooks the organisation trusts by construction.
TRUSTED_HOOK_SOURCES: frozenset[SourceKind] = frozenset(
    {SourceKind.MANAGED, SourceKind.BUNDLED, SourceKind.BUILTIN}
)
# Channels that stay open when "plugins only" is locked (Claude Code keeps managed and bundled).
PLUGIN_CHANNEL: frozenset[SourceKind] = frozenset(
    {SourceKind.PLUGIN, SourceKind.MANAGED, SourceKind.BUNDLED, SourceKind.BUILTIN}
)
LOCK_SURFACES = ("skills", "agents", "hooks", "mcp")

HIGH_RISK_UNSCOPED = frozenset({"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "PowerShell"})


# --------------------------------------------------------------------------------------------
# allowed-tools in Claude Code's rule syntax


@dataclass(frozen=True, slots=True)
class ToolRule:
    """One ``allowed-tools`` entry: ``Tool`` or ``Tool(specifier)`` or ``mcp__server__tool``."""

    raw: str
    tool: str
    specifier: str | None  # normalised: legacy ``git:*`` becomes ``git *``
    mcp_server: str | None = None

    @property
    def unscoped(self) -> bool:
        return self.specifier is None or self.specifier.strip() in {"*", "**", ""}

    @property
    def normalised(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"


_RULE_RE = re.compile(r"^(?P<tool>[A-Za-z_][A-Za-z0-9_\-]*)(?:\((?P<spec>.*)\))?$", re.DOTALL)


def _split_rules(text: str) -> list[str]:
    """Split on whitespace and commas outside parentheses (``Bash(git commit:*) Read``)."""
    items: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (char.isspace() or char == ","):
            if current:
                items.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        items.append("".join(current))
    return items


def parse_tool_rule(raw: str) -> ToolRule | None:
    text = raw.strip()
    match = _RULE_RE.match(text)
    if match is None:
        return None
    tool = match.group("tool")
    spec = match.group("spec")
    if spec is not None:
        spec = spec.strip()
        # Claude Code's legacy prefix syntax: ``Bash(git:*)`` is ``Bash(git *)``.
        if spec.endswith(":*"):
            spec = spec[:-2].rstrip() + " *"
    server = None
    if tool.startswith("mcp__"):
        parts = tool.split("__")
        server = parts[1] if len(parts) > 1 and parts[1] else None
    return ToolRule(raw=text, tool=tool, specifier=spec, mcp_server=server)


def parse_allowed_tools(value: Any) -> tuple[list[ToolRule], list[str]]:
    """Parse a string (space- or comma-separated) or a YAML list; returns (rules, unparsable)."""
    if value is None:
        return [], []
    chunks: list[str] = []
    if isinstance(value, str):
        chunks = _split_rules(value)
    elif isinstance(value, list | tuple):
        for item in value:
            chunks.extend(_split_rules(str(item)) if not isinstance(item, str) else _split_rules(item))
    else:
        return [], [str(value)]
    rules: list[ToolRule] = []
    bad: list[str] = []
    for chunk in chunks:
        rule = parse_tool_rule(chunk)
        if rule is None:
            bad.append(chunk)
        else:
            rules.append(rule)
    return rules, bad


# --------------------------------------------------------------------------------------------
# What is decided about


@dataclass(frozen=True, slots=True)
class SkillSubject:
    """What a decision needs to know about one skill."""

    name: str
    source: SourceKind
    frontmatter: Mapping[str, Any]
    source_identity: str = ""  # repository URL, marketplace repository, MCP server URL...
    plugin: str = ""
    marketplace: str = ""
    team: str = ""  # team slug owning the project
    project: str = ""  # project slug
    files: tuple[str, ...] = ()  # package paths relative to the skill folder

    @property
    def qualified_name(self) -> str:
        return f"{self.plugin}:{self.name}" if self.plugin else self.name

    @classmethod
    def from_parsed(
        cls, parsed: Any, *, team: str = "", project: str = "", marketplace: str = ""
    ) -> SkillSubject:
        """Build from a ``governance.engine.types.ParsedSkill``."""
        return cls(
            name=parsed.name,
            source=SourceKind(parsed.source),
            frontmatter=dict(parsed.frontmatter),
            source_identity=parsed.source_identity or "",
            plugin=parsed.plugin or "",
            marketplace=marketplace,
            team=team,
            project=project,
            files=tuple(f.path for f in parsed.files),
        )


@dataclass(frozen=True, slots=True)
class SkillRule:
    """A rule about skills. Every non-empty criterion must match; at least one is required."""

    effect: Effect
    name: str = ""  # exact or glob, matched against the name and the ``plugin:name`` form
    source_kind: str = ""
    source: str = ""  # repository / URL identity, any spelling (or a glob on the canonical form)
    marketplace: str = ""
    plugin: str = ""
    team: str = ""
    project: str = ""
    note: str = ""

    CRITERIA = ("name", "source_kind", "source", "marketplace", "plugin", "team", "project")

    @property
    def label(self) -> str:
        parts = [f"{c}={getattr(self, c)}" for c in self.CRITERIA if getattr(self, c)]
        return f"{self.effect.value} " + " ".join(parts)

    def matches(self, subject: SkillSubject) -> bool:
        # Only the criteria the rule uses are checked (an empty one always passes).
        return (
            (not self.name or self.passes("name", subject))
            and (not self.source_kind or self.passes("source_kind", subject))
            and (not self.source or self.passes("source", subject))
            and (not self.marketplace or self.passes("marketplace", subject))
            and (not self.plugin or self.passes("plugin", subject))
            and (not self.team or self.passes("team", subject))
            and (not self.project or self.passes("project", subject))
        )

    def passes(self, criterion: str, subject: SkillSubject) -> bool:
        """Does ``subject`` satisfy this rule's ``criterion`` (an empty criterion always does)?
        It reads only the subject's fields named in ``CRITERION_READS``."""
        if criterion == "name":
            return not self.name or (
                fnmatch.fnmatchcase(subject.name, self.name)
                or fnmatch.fnmatchcase(subject.qualified_name, self.name)
            )
        if criterion == "source_kind":
            return not self.source_kind or self.source_kind == subject.source.value
        if criterion == "source":
            return not self.source or identity_matches(self.source, subject.source_identity)
        if criterion == "marketplace":
            return not self.marketplace or (
                self.marketplace == subject.marketplace
                or identity_matches(self.marketplace, subject.marketplace)
            )
        if criterion == "plugin":
            return not self.plugin or fnmatch.fnmatchcase(subject.plugin, self.plugin)
        if criterion == "team":
            return not self.team or self.team == subject.team
        if criterion == "project":
            return not self.project or self.project == subject.project
        raise ValueError(f"unknown criterion {criterion!r}")

    @property
    def only_by_name(self) -> bool:
        return bool(self.name) and not any(getattr(self, c) for c in self.CRITERIA if c != "name")


# The subject fields each criterion reads (``SkillRule.passes``): a criterion's outcome is the same
# for every subject with the same values there, which is what ``RuleMatcher`` memoises.
CRITERION_READS: dict[str, tuple[str, ...]] = {
    "name": ("name", "plugin"),  # the name and the plugin:name form
    "source_kind": ("source",),
    "source": ("source_identity",),
    "marketplace": ("marketplace",),
    "plugin": ("plugin",),
    "team": ("team",),
    "project": ("project",),
}


class RuleMatcher:
    """The rules of one policy, matched against many subjects.

    Rule matching is most of a decision's cost (globs and canonical identities, rules × skills).
    A criterion's outcome depends only on the subject fields it reads, so the matcher keeps, per
    criterion and per distinct value of those fields, the set of rules (a bit mask) that pass:
    a catalog of 20,000 skills has a few thousand names, a few hundred sources, tens of teams and
    projects, and each of those is matched once against the rules instead of once per skill. The
    memo lives as long as the matcher (one catalog-wide pass), never in the process.
    """

    def __init__(self, rules: Sequence[SkillRule]) -> None:
        self.rules = tuple(rules)
        self.labels = tuple(rule.label for rule in self.rules)
        everything = (1 << len(self.rules)) - 1
        self._everything = everything
        self._criteria: list[_Criterion] = []
        for criterion in SkillRule.CRITERIA:
            groups: dict[str, int] = {}  # the criterion's value in a rule -> the rules with it
            for i, rule in enumerate(self.rules):
                if value := getattr(rule, criterion):
                    groups[value] = groups.get(value, 0) | 1 << i
            if not groups:
                continue
            exact: dict[str, int] = {}
            any_glob: Callable[[str], object] | None = None
            if criterion == "name":
                # A name without glob characters matches by equality only; the globs are first
                # tried all at once (one alternation of fnmatch's own translations), and one by
                # one only when some matches: most names match none.
                exact = {v: m for v, m in groups.items() if not any(ch in v for ch in "*?[")}
                globs = [v for v in groups if v not in exact]
                if globs:
                    any_glob = re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs)).match
            checks = [(self.rules[(m & -m).bit_length() - 1], m) for v, m in groups.items() if v not in exact]
            self._criteria.append(
                _Criterion(
                    criterion,
                    operator.attrgetter(*CRITERION_READS[criterion]),
                    everything & ~sum(groups.values()),
                    exact,
                    any_glob,
                    checks,
                )
            )

    def matching(self, subject: SkillSubject) -> list[tuple[SkillRule, str]]:
        """The rules ``subject`` matches, in policy order, each with its label."""
        mask = self._everything
        for c in self._criteria:
            value = c.key(subject)
            bits = c.memo.get(value)
            if bits is None:
                bits = c.free
                if c.exact:
                    bits |= c.exact.get(subject.name, 0) | c.exact.get(subject.qualified_name, 0)
                if c.any_glob is None or c.any_glob(subject.name) or c.any_glob(subject.qualified_name):
                    for rule, rules_mask in c.checks:  # one check per distinct value among the rules
                        if rule.passes(c.name, subject):
                            bits |= rules_mask
                c.memo[value] = bits
            mask &= bits
            if not mask:
                return []
        return [(self.rules[i], self.labels[i]) for i in range(len(self.rules)) if mask >> i & 1]


@dataclass(slots=True)
class _Criterion:
    """One criterion as a ``RuleMatcher`` checks it: ``key`` reads the subject fields it depends
    on; ``free`` is the mask of rules without it (they always pass); ``exact`` maps plain names to
    the rules naming them; ``any_glob`` says whether any name glob matches at all; ``checks``
    holds one rule per other distinct value with the mask of the rules sharing it; ``memo`` maps
    each subject key seen to the mask of rules that pass."""

    name: str
    key: Callable[[SkillSubject], Any]
    free: int
    exact: dict[str, int]
    any_glob: Callable[[str], object] | None
    checks: list[tuple[SkillRule, int]]
    memo: dict[Any, int] = field(default_factory=dict)


def identity_matches(pattern: str, identity: str) -> bool:
    """Does a rule's source ``pattern`` (any spelling, or a glob) match ``identity``?"""
    if not pattern or not identity:
        return False
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatch(canonical_identity(identity).lower(), pattern.lower().strip())
    return canonical_identity(pattern_spec(pattern)) == canonical_identity(identity)


@dataclass(frozen=True, slots=True)
class PermissionSettings:
    """The parts of a policy that the decision reads."""

    rules: tuple[SkillRule, ...] = ()
    model_is_sensitive: bool = True
    fork_is_sensitive: bool = True
    trusted_hook_plugins: tuple[str, ...] = ()  # "plugin" or "plugin@marketplace" or globs
    plugin_only: frozenset[str] = frozenset()  # surfaces locked to plugins: skills, hooks, ...
    managed_hooks_only: bool = False  # Claude Code's allowManagedHooksOnly


@dataclass(frozen=True, slots=True)
class Reason:
    code: str
    message: str
    rule: str = ""
    keys: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "rule": self.rule, "keys": list(self.keys)}


@dataclass(slots=True)
class Decision:
    decision: Effect
    reasons: list[Reason]
    safe_keys: list[str] = field(default_factory=list)
    sensitive_keys: list[str] = field(default_factory=list)
    unreviewed_keys: list[str] = field(default_factory=list)
    hooks_blocked: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision.value,
            "reasons": [r.as_dict() for r in self.reasons],
            "sensitive_keys": self.sensitive_keys,
            "unreviewed_keys": self.unreviewed_keys,
            "hooks_blocked": self.hooks_blocked,
        }


def _meaningful(value: Any) -> bool:
    """Claude Code ignores keys without a meaningful value (null, empty string/list/map)."""
    if value is None:
        return False
    return not (isinstance(value, str | list | tuple | dict) and len(value) == 0)


def classify_keys(
    frontmatter: Mapping[str, Any], *, model_is_sensitive: bool = True, fork_is_sensitive: bool = True
) -> tuple[list[str], list[str], list[str]]:
    """Split the skill's actual keys into (safe, sensitive, unreviewed)."""
    safe: list[str] = []
    sensitive: list[str] = []
    unreviewed: list[str] = []
    for key in frontmatter:
        value = frontmatter[key]
        if not _meaningful(value):
            continue
        if key in SAFE_PROPERTIES:
            safe.append(key)
        elif key == "model":
            (sensitive if model_is_sensitive else safe).append(key)
        elif key in {"context", "mode"}:
            text = str(value).strip().lower()
            if text in {"inline", "activate"}:
                safe.append(key)
            elif text in {"fork", "delegate"}:
                (sensitive if fork_is_sensitive else safe).append(key)
            else:
                unreviewed.append(key)  # a value nobody reviewed is not assumed inline
        elif key in SENSITIVE_PROPERTIES:
            sensitive.append(key)
        else:
            unreviewed.append(key)
    return safe, sensitive, unreviewed


def hooks_trusted(subject: SkillSubject, settings: PermissionSettings) -> bool:
    """Hooks only from managed/bundled sources, or from plugins the admin allowlisted."""
    if subject.source in TRUSTED_HOOK_SOURCES:
        return True
    if settings.managed_hooks_only:  # Claude Code then drops user, project and plugin hooks
        return False
    if "hooks" in settings.plugin_only and subject.source is not SourceKind.PLUGIN:
        return False
    if subject.source is SourceKind.PLUGIN:
        ids = {subject.plugin, f"{subject.plugin}@{subject.marketplace}" if subject.marketplace else ""}
        return any(
            fnmatch.fnmatchcase(i, pattern) for pattern in settings.trusted_hook_plugins for i in ids if i
        )
    return False


def decide(
    subject: SkillSubject, settings: PermissionSettings, *, matcher: RuleMatcher | None = None
) -> Decision:
    """The permission decision for one skill, with every reason that led to it.

    ``matcher`` (a ``RuleMatcher`` of ``settings.rules``) makes deciding many skills cheap; see
    ``decide_many``. Without it the rules are matched one by one: the same outcome."""
    safe, sensitive, unreviewed = classify_keys(
        subject.frontmatter,
        model_is_sensitive=settings.model_is_sensitive,
        fork_is_sensitive=settings.fork_is_sensitive,
    )
    reasons: list[Reason] = []
    hooks_blocked = False
    if "hooks" in sensitive and not hooks_trusted(subject, settings):
        # Capability removed, usability kept: the hooks are not registered, the skill loads.
        hooks_blocked = True
        sensitive.remove("hooks")
        reasons.append(
            Reason(
                "hooks-blocked",
                f"hooks declared by a {subject.source.value} skill are not registered: hooks are "
                "accepted only from managed or bundled skills and allowlisted plugins",
                keys=("hooks",),
            )
        )

    def done(effect: Effect) -> Decision:
        return Decision(effect, reasons, safe, sensitive, unreviewed, hooks_blocked)

    if "skills" in settings.plugin_only and subject.source not in PLUGIN_CHANNEL:
        reasons.append(
            Reason(
                "channel-locked",
                f"skills are locked to plugins (strictPluginOnlyCustomization): a {subject.source.value} "
                "skill is not loaded",
            )
        )
        return done(Effect.DENY)

    if matcher is not None:
        matched = matcher.matching(subject)
    else:
        matched = [(r, r.label) for r in settings.rules if r.matches(subject)]
    if matched:  # most skills match no rule
        for effect, code in (
            (Effect.DENY, "deny-rule"),
            (Effect.ASK, "ask-rule"),
            (Effect.ALLOW, "allow-rule"),
        ):
            matching = [(r, label) for r, label in matched if r.effect is effect]
            if matching:
                for rule, label in matching:
                    message = f"{effect.value} rule matches ({label})"
                    if rule.note:
                        message += f": {rule.note}"
                    reasons.append(Reason(code, message, rule=label, keys=tuple(sensitive + unreviewed)))
                return done(effect)

    non_safe = sensitive + unreviewed
    if subject.source is SourceKind.MCP and non_safe:
        reasons.append(
            Reason(
                "mcp-non-safe",
                "served by an MCP server (content can change with no diff) with non-safe properties",
                keys=tuple(non_safe),
            )
        )
        return done(Effect.ASK)
    if not non_safe:
        reasons.append(Reason("only-safe", "only reviewed, safe properties", keys=tuple(safe)))
        return done(Effect.ALLOW)
    if sensitive:
        described = ", ".join(f"{k} ({SENSITIVE_PROPERTIES.get(k, 'sensitive')})" for k in sensitive)
        reasons.append(Reason("sensitive", f"needs approval: {described}", keys=tuple(sensitive)))
    if unreviewed:
        reasons.append(
            Reason(
                "unreviewed-key",
                "properties nobody has reviewed yet need approval: " + ", ".join(unreviewed),
                keys=tuple(unreviewed),
            )
        )
    return done(Effect.ASK)


# --------------------------------------------------------------------------------------------
# Risk summary


class RiskLevel(enum.StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


REMOTE_SOURCES = frozenset({SourceKind.MCP, SourceKind.PLUGIN})
SCRIPT_SUFFIXES = (".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".ts", ".rb", ".pl", ".ps1", ".bat", ".cmd")


@dataclass(slots=True)
class RiskSummary:
    level: RiskLevel
    privileges: list[str]  # sensitive and unreviewed keys
    tools: list[str]  # allowed-tools, normalised
    scripts: list[str]
    hooks: bool
    hooks_blocked: bool
    remote_source: bool
    findings: list[Finding]

    def as_dict(self) -> dict[str, Any]:
        return {
            "level": self.level.value,
            "privileges": self.privileges,
            "tools": self.tools,
            "scripts": self.scripts,
            "hooks": self.hooks,
            "hooks_blocked": self.hooks_blocked,
            "remote_source": self.remote_source,
            "findings": [f.as_dict() for f in self.findings],
        }


def tool_findings(subject: SkillSubject) -> tuple[list[ToolRule], list[Finding]]:
    """Findings about ``allowed-tools``: unscoped shell/write access, workspace-trust bypass."""
    value = subject.frontmatter.get("allowed-tools", subject.frontmatter.get("allowedTools"))
    rules, bad = parse_allowed_tools(value)
    findings: list[Finding] = []
    for chunk in bad:
        findings.append(
            Finding(
                "allowed-tools-unparsable",
                Severity.WARNING,
                f"allowed-tools entry {chunk!r} is not in Claude Code's rule syntax (Tool or Tool(specifier))",
                file="SKILL.md",
            )
        )
    for rule in rules:
        if rule.tool in HIGH_RISK_UNSCOPED and rule.unscoped:
            findings.append(
                Finding(
                    "allowed-tools-unscoped",
                    Severity.WARNING,
                    f"high risk: {rule.raw!r} pre-approves {rule.tool} without a scope; "
                    f"name the commands or paths, e.g. {rule.tool}(gh:*)"
                    if rule.tool in {"Bash", "PowerShell"}
                    else f"high risk: {rule.raw!r} pre-approves {rule.tool} on every path; scope it, "
                    f"e.g. {rule.tool}(docs/**)",
                    file="SKILL.md",
                )
            )
    if subject.source is SourceKind.PROJECT and any(r.tool in {"Bash", "PowerShell"} for r in rules):
        findings.append(
            Finding(
                "allowed-tools-workspace-trust",
                Severity.WARNING,
                "a repository skill pre-approves shell commands: Claude Code does not gate a skill's "
                "allowed-tools on workspace trust, so cloning the repository is enough to grant them",
                file="SKILL.md",
            )
        )
    return rules, findings


def risk_summary(subject: SkillSubject, decision: Decision) -> RiskSummary:
    rules, findings = tool_findings(subject)
    scripts = sorted(
        p for p in subject.files if p.startswith("scripts/") or p.lower().endswith(SCRIPT_SUFFIXES)
    )
    hooks = _meaningful(subject.frontmatter.get("hooks"))
    remote = subject.source in REMOTE_SOURCES
    privileges = [*decision.sensitive_keys, *decision.unreviewed_keys]
    high = (
        any(f.code in {"allowed-tools-unscoped", "allowed-tools-workspace-trust"} for f in findings)
        or (hooks and not decision.hooks_blocked)
        or (subject.source is SourceKind.MCP and bool(privileges))
    )
    medium = bool(privileges) or bool(scripts) or remote or bool(rules) or hooks
    level = RiskLevel.HIGH if high else RiskLevel.MEDIUM if medium else RiskLevel.LOW
    return RiskSummary(
        level=level,
        privileges=privileges,
        tools=[r.normalised for r in rules],
        scripts=scripts,
        hooks=hooks,
        hooks_blocked=decision.hooks_blocked,
        remote_source=remote,
        findings=findings,
    )


def evaluate(
    subject: SkillSubject, settings: PermissionSettings, *, matcher: RuleMatcher | None = None
) -> tuple[Decision, RiskSummary]:
    decision = decide(subject, settings, matcher=matcher)
    return decision, risk_summary(subject, decision)


def decide_many(
    subjects: Iterable[SkillSubject], settings: PermissionSettings
) -> list[tuple[SkillSubject, Decision]]:
    """Decide every subject under one policy, matching each distinct criterion value once."""
    matcher = RuleMatcher(settings.rules)
    return [(s, decide(s, settings, matcher=matcher)) for s in subjects]


__all__: Sequence[str] = (
    "SAFE_PROPERTIES",
    "SENSITIVE_PROPERTIES",
    "Decision",
    "Effect",
    "PermissionSettings",
    "Reason",
    "RiskSummary",
    "RuleMatcher",
    "SkillRule",
    "SkillSubject",
    "ToolRule",
    "classify_keys",
    "decide",
    "decide_many",
    "evaluate",
    "parse_allowed_tools",
    "risk_summary",
)
