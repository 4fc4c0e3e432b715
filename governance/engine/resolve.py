"""Trust-priority resolution: which copy of a same-named skill an agent really uses, and why.

Plain Python, no Django. Input: candidates (one per skill copy, from any source); output: a
status per candidate (``active | shadowed | hidden | conditional | rejected``), the winner and
the shadowed copies of every same-name group with the reason, and security findings:

- a lower-trust copy that shadows (or tries to shadow) a higher-trust one (DOMAIN §6);
- names that look alike across scripts (Unicode confusables), an impersonation risk no agent
  checks today.

Each agent profile encodes its own precedence (DOMAIN §6). The portal's governance default is
``trust-first``: the most trusted copy always wins, whatever the agent would do.
"""

from __future__ import annotations

import enum
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from governance.engine.types import Finding, ParsedSkill, Severity, SourceKind


class Status(enum.StrEnum):
    ACTIVE = "active"
    SHADOWED = "shadowed"
    HIDDEN = "hidden"  # disable-model-invocation: user-invocable only, zero listing cost
    CONDITIONAL = "conditional"  # paths: globs, out of the listing until a touched file matches
    REJECTED = "rejected"  # invalid, or denied by policy: never loaded


# Who vouches for each source (DOMAIN §1.2). Higher = more trusted. Mirrors
# governance.skills.models.TRUST_RANK so the engine stays free of Django.
TRUST_RANK: dict[SourceKind, int] = {
    SourceKind.BUNDLED: 60,
    SourceKind.BUILTIN: 55,
    SourceKind.MANAGED: 50,
    SourceKind.USER: 30,
    SourceKind.PROJECT: 20,
    SourceKind.PLUGIN: 15,
    SourceKind.MCP: 10,
}
TRUST_LABEL: dict[SourceKind, str] = {
    SourceKind.BUNDLED: "product",
    SourceKind.BUILTIN: "product",
    SourceKind.MANAGED: "organisation",
    SourceKind.USER: "the person",
    SourceKind.PROJECT: "colleagues (git review)",
    SourceKind.PLUGIN: "marketplace publisher",
    SourceKind.MCP: "a stranger",
}
# Product and organisation copies are both vouched for by people who own the fleet: the
# organisation overriding a bundled skill on purpose is governance, not an attack.
_TRUSTED_FLOOR = TRUST_RANK[SourceKind.MANAGED]


@dataclass(frozen=True, slots=True)
class AgentProfile:
    key: str
    label: str
    # Precedence per source kind, higher wins; None means "no resolution: every copy appears".
    precedence: dict[SourceKind, int] | None
    rule: str  # one sentence shown in the UI
    nested_duplicates_kept: bool = False  # Claude Code keeps nested monorepo copies as path:name
    skill_beats_command: bool = True
    assumption: str = ""  # where the behaviour is inferred rather than documented


AGENTS: dict[str, AgentProfile] = {
    "trust-first": AgentProfile(
        key="trust-first",
        label="Governance default (trust-first)",
        precedence=dict(TRUST_RANK),
        rule=(
            "The most trusted copy wins: bundled > builtin > managed > user > project > plugin > mcp. "
            "This is the portal's governance default, not what any agent does today."
        ),
        nested_duplicates_kept=True,
    ),
    "claude-code": AgentProfile(
        key="claude-code",
        label="Claude Code",
        precedence={
            SourceKind.MANAGED: 5,
            SourceKind.USER: 4,
            SourceKind.PROJECT: 3,
            SourceKind.PLUGIN: 2,
            SourceKind.MCP: 2,
            SourceKind.BUILTIN: 1,
            SourceKind.BUNDLED: 1,
        },
        rule=(
            "managed > user > project; any of them overrides a bundled skill; plugin skills never "
            "collide (plugin:name); nested monorepo copies are kept as path:name; a skill beats a "
            "same-named legacy command."
        ),
        nested_duplicates_kept=True,
        assumption="MCP skills are ranked with plugins, below project and above bundled.",
    ),
    "sid-code": AgentProfile(
        key="sid-code",
        label="sid-code (nearest wins)",
        precedence={
            SourceKind.MANAGED: 6,
            SourceKind.PROJECT: 5,
            SourceKind.USER: 4,
            SourceKind.PLUGIN: 3,
            SourceKind.MCP: 2,
            SourceKind.BUILTIN: 1,
            SourceKind.BUNDLED: 1,
        },
        rule="Nearest wins with managed on top: managed > project > user > builtin.",
        assumption="Plugin and MCP skills rank between user and builtin.",
    ),
    "codex": AgentProfile(
        key="codex",
        label="Codex",
        precedence=None,
        rule="No resolution: every same-named copy appears in the listing.",
    ),
    "opencode": AgentProfile(
        key="opencode",
        label="OpenCode",
        precedence={
            SourceKind.PROJECT: 5,
            SourceKind.MANAGED: 4,
            SourceKind.USER: 4,
            SourceKind.PLUGIN: 3,
            SourceKind.MCP: 2,
            SourceKind.BUILTIN: 1,
            SourceKind.BUNDLED: 1,
        },
        rule=(
            "Global directories are scanned first, then the project's (from the working directory "
            "up); a later same-named skill replaces the earlier one with only a 'duplicate skill "
            "name' log line, so the project copy wins."
        ),
        assumption=(
            "Inferred from OpenCode's documented discovery order (global, then project) and its "
            "duplicate warning; OpenCode has no managed tier, so managed skills count as global."
        ),
    ),
}
DEFAULT_AGENT = "trust-first"


def agent_profile(key: str) -> AgentProfile:
    try:
        return AGENTS[key]
    except KeyError:
        raise ValueError(f"unknown agent {key!r}; known agents: {', '.join(AGENTS)}") from None


# --------------------------------------------------------------------------------------------
# Look-alike names
# --------------------------------------------------------------------------------------------

# Curated from Unicode's confusables.txt: the characters that pass for Latin letters, digits and
# hyphens in skill names. NFKC already folds fullwidth and most compatibility forms.
_CONFUSABLES: dict[str, str] = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "з": "3", "і": "i", "ї": "i", "ј": "j", "к": "k",
    "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g", "ь": "b", "п": "n", "г": "r",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "ω": "w", "γ": "y", "μ": "u",
    # Latin look-alikes and digits
    "ı": "i", "ȷ": "j", "ℓ": "l", "ſ": "s", "ɑ": "a", "ɩ": "i", "ʋ": "u", "ꮃ": "w",
    "0": "o", "1": "l", "|": "l",
    # Dashes, hyphens and minus signs
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-", "⁃": "-",
    "﹘": "-", "﹣": "-", "－": "-", "˗": "-", "‧": "-", "_": "-",
}  # fmt: skip
_MULTI = (("rn", "m"), ("vv", "w"))
_INVISIBLE = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"}


@lru_cache(maxsize=65_536)
def skeleton(name: str) -> str:
    """A name's look-alike skeleton: equal skeletons read the same to a person.

    NFKC (folds fullwidth and compatibility letters), case-fold, drop invisible characters and
    combining marks, then map confusable characters and sequences to one Latin representative.
    """
    text = unicodedata.normalize("NFKC", name).casefold()
    text = unicodedata.normalize("NFD", text)
    text = "".join(
        _CONFUSABLES.get(ch, ch) for ch in text if ch not in _INVISIBLE and not unicodedata.combining(ch)
    )
    for seq, repl in _MULTI:
        text = text.replace(seq, repl)
    return text


def is_plain_ascii_name(name: str) -> bool:
    return name.isascii()


# --------------------------------------------------------------------------------------------
# Candidates and results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """One copy of a skill, from one source, as resolution sees it."""

    key: str  # stable identity chosen by the caller (a database id, a path...)
    name: str
    source: SourceKind
    location: str = ""  # folder inside its source, POSIX
    plugin: str = ""
    description: str = ""
    when_to_use: str = ""
    paths: tuple[str, ...] = ()
    disable_model_invocation: bool = False
    valid: bool = True
    rejected_reason: str = ""  # set when policy denied the skill
    is_command: bool = False  # a legacy .claude/commands/<name>.md
    source_label: str = ""  # human label of the source (repository, marketplace...)

    @property
    def nested_prefix(self) -> str:
        """The monorepo sub-folder holding a nested project ``.claude/skills`` ("" at the root)."""
        if self.source is not SourceKind.PROJECT:
            return ""
        for marker in ("/.claude/skills/", "/.agents/skills/", "/.claude/commands/"):
            loc = "/" + self.location.strip("/") + "/"
            if marker in loc:
                return loc.split(marker, 1)[0].strip("/")
        return ""

    @property
    def qualified_name(self) -> str:
        return f"{self.plugin}:{self.name}" if self.plugin else self.name

    @property
    def trust(self) -> int:
        return TRUST_RANK.get(self.source, 0)

    @property
    def ref(self) -> str:
        """``name@source`` as the CLI contract spells a copy."""
        return f"{self.qualified_name}@{self.source.value}"

    @classmethod
    def from_parsed(cls, parsed: ParsedSkill, *, key: str | None = None) -> Candidate:
        fm = parsed.frontmatter
        return cls(
            key=key or parsed.path,
            name=parsed.name,
            source=parsed.source,
            location=parsed.path,
            plugin=parsed.plugin or "",
            description=parsed.description,
            when_to_use=parsed.when_to_use,
            paths=paths_of(fm.get("paths")),
            disable_model_invocation=fm.get("disable-model-invocation") is True,
            valid=parsed.valid,
            is_command="/commands/" in f"/{parsed.path}/",
            source_label=parsed.source_identity,
        )


def paths_of(value: object) -> tuple[str, ...]:
    """The ``paths:`` frontmatter as globs: a list, or a comma/space-separated string."""
    if isinstance(value, str):
        return tuple(p for p in value.replace(",", " ").split() if p)
    if isinstance(value, list):
        return tuple(str(p).strip() for p in value if isinstance(p, str | int | float) and str(p).strip())
    return ()


@dataclass(slots=True)
class Resolved:
    candidate: Candidate
    status: Status
    listed_name: str  # the name the agent lists (plugin:name, apps/web:name...)
    shadowed_by: str | None = None  # name@source of the winner
    reason: str = ""


@dataclass(slots=True)
class ShadowGroup:
    """Every copy of one listed name: the winner first, then the shadowed copies with why."""

    name: str
    winner: Resolved | None
    shadowed: list[Resolved]
    security: bool  # a lower-trust copy shadows, or tries to shadow, a higher-trust one
    explanation: str


@dataclass(slots=True)
class LookAlikeGroup:
    skeleton: str
    names: list[str]
    keys: list[str]


@dataclass(slots=True)
class Resolution:
    agent: AgentProfile
    skills: list[Resolved]
    groups: list[ShadowGroup]
    look_alikes: list[LookAlikeGroup]
    findings: dict[str, list[Finding]] = field(default_factory=dict)  # per candidate key

    def by_key(self) -> dict[str, Resolved]:
        return {r.candidate.key: r for r in self.skills}

    @property
    def security_findings(self) -> list[tuple[str, Finding]]:
        return [
            (key, f)
            for key, items in self.findings.items()
            for f in items
            if f.code in {"shadows-higher-trust", "shadow-attempt", "look-alike-name"}
        ]


def _listed_name(c: Candidate, agent: AgentProfile) -> str:
    prefix = c.nested_prefix if agent.nested_duplicates_kept else ""
    return f"{prefix}:{c.qualified_name}" if prefix else c.qualified_name


def _rank(c: Candidate, agent: AgentProfile) -> tuple[int, int, int]:
    """Sort key, highest first: skill before command, then precedence, then trust."""
    assert agent.precedence is not None
    not_command = 1 if (agent.skill_beats_command and not c.is_command) else 0
    return (not_command, agent.precedence.get(c.source, 0), c.trust)


def _why(winner: Candidate, loser: Candidate, agent: AgentProfile) -> str:
    if agent.skill_beats_command and loser.is_command and not winner.is_command:
        return "a skill beats a same-named legacy command"
    if winner.source == loser.source:
        return (
            f"two {winner.source.value} copies of one name: {agent.label} keeps the first found "
            f"({winner.location or winner.key}); which one is found first depends on the file system"
        )
    return f"{agent.label}: {winner.source.value} takes precedence over {loser.source.value}"


def _base_status(c: Candidate) -> Status:
    if not c.valid or c.rejected_reason:
        return Status.REJECTED
    if c.disable_model_invocation:
        return Status.HIDDEN
    if c.paths:
        return Status.CONDITIONAL
    return Status.ACTIVE


def resolve(candidates: Iterable[Candidate], agent: str | AgentProfile = DEFAULT_AGENT) -> Resolution:
    """Resolve every candidate for ``agent``; deterministic whatever the input order."""
    profile = agent if isinstance(agent, AgentProfile) else agent_profile(agent)
    items = sorted(candidates, key=lambda c: (c.qualified_name, c.source.value, c.location, c.key))
    findings: dict[str, list[Finding]] = defaultdict(list)
    resolved: list[Resolved] = []
    groups: list[ShadowGroup] = []

    by_name: dict[str, list[Candidate]] = defaultdict(list)
    for c in items:
        by_name[_listed_name(c, profile)].append(c)

    for listed, copies in by_name.items():
        live: list[Candidate] = []
        dead: list[Candidate] = []
        for c in copies:
            (dead if _base_status(c) is Status.REJECTED else live).append(c)
        for c in dead:
            why = c.rejected_reason or "invalid SKILL.md: the agent refuses to load it"
            resolved.append(Resolved(c, Status.REJECTED, listed, None, why))
        if len(live) <= 1 or profile.precedence is None:
            for c in live:
                reason = ""
                if len(live) > 1:
                    reason = f"{profile.label} lists all {len(live)} copies of {listed!r}"
                    findings[c.key].append(
                        Finding(
                            "duplicate-listed",
                            Severity.WARNING,
                            f"{listed!r} appears {len(live)} times in {profile.label}'s listing; "
                            "the model picks one by description alone",
                        )
                    )
                resolved.append(Resolved(c, _base_status(c), listed, None, reason))
            if len(live) > 1:
                groups.append(
                    ShadowGroup(listed, None, [r for r in resolved if r.listed_name == listed], False,
                                f"{profile.label} does not resolve names: every copy appears")
                )  # fmt: skip
            continue

        ordered = sorted(live, key=lambda c: _rank(c, profile), reverse=True)
        winner, losers = ordered[0], ordered[1:]
        win = Resolved(winner, _base_status(winner), listed, None, "winner")
        resolved.append(win)
        shadowed: list[Resolved] = []
        security = False
        for loser in losers:
            why = _why(winner, loser, profile)
            shadowed.append(Resolved(loser, Status.SHADOWED, listed, winner.ref, why))
            if winner.trust < loser.trust and winner.trust < _TRUSTED_FLOOR:
                security = True
                findings[winner.key].append(
                    Finding(
                        "shadows-higher-trust",
                        Severity.ERROR,
                        f"{winner.ref} ({TRUST_LABEL[winner.source]}) shadows {loser.ref} "
                        f"({TRUST_LABEL[loser.source]}) in {profile.label}: a hostile copy here "
                        "replaces the trusted one without touching code",
                        file=winner.location or None,
                    )
                )
            elif loser.trust < winner.trust and loser.trust < _TRUSTED_FLOOR:
                security = True
                findings[loser.key].append(
                    Finding(
                        "shadow-attempt",
                        Severity.WARNING,
                        f"{loser.ref} ({TRUST_LABEL[loser.source]}) has the same name as "
                        f"{winner.ref} ({TRUST_LABEL[winner.source]}); {profile.label} keeps the "
                        "trusted copy, an agent with other rules may not",
                        file=loser.location or None,
                    )
                )
        resolved.extend(shadowed)
        groups.append(ShadowGroup(listed, win, shadowed, security, f"{profile.label}: {profile.rule}"))

    look_alikes = _look_alikes(items)
    for group in look_alikes:
        for key in group.keys:
            others = ", ".join(repr(n) for n in group.names)
            findings[key].append(
                Finding(
                    "look-alike-name",
                    Severity.ERROR,
                    f"names {others} look identical to a person but are different strings to every "
                    "agent (Unicode confusables): impersonation risk",
                )
            )

    resolved.sort(key=lambda r: (r.listed_name, r.status is not Status.ACTIVE, r.candidate.key))
    groups.sort(key=lambda g: (not g.security, g.name))
    return Resolution(profile, resolved, groups, look_alikes, dict(findings))


def _look_alikes(items: Sequence[Candidate]) -> list[LookAlikeGroup]:
    by_skeleton: dict[str, list[Candidate]] = defaultdict(list)
    for c in items:
        by_skeleton[skeleton(c.name)].append(c)
    out: list[LookAlikeGroup] = []
    for skel, copies in by_skeleton.items():
        if len(copies) > 1:
            names = sorted({c.name for c in copies})
            if len(names) > 1:
                out.append(LookAlikeGroup(skel, names, [c.key for c in copies]))
    out.sort(key=lambda g: g.skeleton)
    return out


# --------------------------------------------------------------------------------------------
# Conditional activation
# --------------------------------------------------------------------------------------------


def conditional_matches(globs: Sequence[str], touched: Sequence[str]) -> list[str]:
    """The touched paths that activate a conditional skill (gitignore-style globs, as Claude Code)."""
    from pathspec import GitIgnoreSpec

    if not globs:
        return []
    spec = GitIgnoreSpec.from_lines(globs)
    return [p for p in touched if spec.match_file(p.strip().lstrip("./"))]


def activate(resolution: Resolution, touched: Sequence[str]) -> dict[str, list[str]]:
    """Conditional skills that the touched files activate: key → matching paths (one-way)."""
    active: dict[str, list[str]] = {}
    for r in resolution.skills:
        if r.status is Status.CONDITIONAL:
            hits = conditional_matches(r.candidate.paths, touched)
            if hits:
                active[r.candidate.key] = hits
    return active


# --------------------------------------------------------------------------------------------
# The CLI's view: status and shadowed_by for parsed skills
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CheckStatus:
    status: str
    shadowed_by: str | None
    reason: str
    findings: tuple[Finding, ...]


def check_statuses(parsed: Sequence[ParsedSkill], agent: str = DEFAULT_AGENT) -> dict[int, CheckStatus]:
    """``skills check``: status and shadowed_by for each parsed skill, by index in ``parsed``."""
    candidates = [Candidate.from_parsed(p, key=str(i)) for i, p in enumerate(parsed)]
    result = resolve(candidates, agent)
    by_key = result.by_key()
    out: dict[int, CheckStatus] = {}
    for i in range(len(parsed)):
        r = by_key[str(i)]
        out[i] = CheckStatus(r.status.value, r.shadowed_by, r.reason, tuple(result.findings.get(str(i), ())))
    return out
