"""Validity and lint rules for a parsed SKILL.md: every rule of the open specification (with the
reference checker's messages), Claude Code's extension fields, and the lint rules of DOMAIN §3,
§4 and §10. Each finding code is listed, with its severity and a fix, in ``FINDINGS.md``.

Severity policy: a breach of the open specification is an error (the skill is rejected); a
problem with a Claude Code extension field is a warning (agents ignore a value they cannot read,
so the skill still loads, but not as its author meant); advice is info. ``strict`` is the
reference checker's view: only the specification's fields are allowed, and the few things
skills-ref cannot read (BOM, flow style, ``---`` inside a value) are errors.

Deliberately absent: ``context: fork`` on a skill whose body reads as a standing constraint
(DOMAIN §10.8) is not decidable from the text, so no rule guesses it.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from governance.engine.tokens import COMPACTION_KEEP_TOKENS, body_token_estimate, headings_with_token_offsets
from governance.engine.types import Finding, ParsedSkill, Severity, SourceKind
from governance.engine.yamlsafe import TypedScalar, YamlDocument

# Limits of the open specification (agentskills.io).
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500
# Listing caps (DOMAIN §3).
LISTING_MAX_DESC_CHARS = 1536  # Claude Code skillListingMaxDescChars: description + when_to_use
OLDER_DESC_CAP = 250  # older Claude Code cut every description at 250 characters
MIN_USEFUL_DESCRIPTION = 30
# Body guidelines (DOMAIN §4, §10).
MAX_BODY_LINES = 500
MAX_BODY_TOKENS = COMPACTION_KEEP_TOKENS
SHOWN_HEADINGS = 8  # headings named in a body-over-compaction-limit message
MAX_HEADING_SCAN = 20_000  # heading/fence lines looked at by that lint (real bodies have < 1,000)

SPEC_FIELDS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
EXTENSION_FIELDS = frozenset(
    {
        "when_to_use",
        "argument-hint",
        "arguments",
        "disable-model-invocation",
        "user-invocable",
        "disallowed-tools",
        "model",
        "effort",
        "context",
        "agent",
        "background",
        "hooks",
        "paths",
        "shell",
        "version",
    }
)
# Older spellings still found in real skills, and what replaced them.
LEGACY_FIELDS = {
    "whenToUse": "when_to_use",
    "allowedTools": "allowed-tools",
    "mode": "context",
    "maxTurns": "(no replacement: limit turns in the agent's settings)",
    "timeoutMins": "(no replacement: time out in the agent's settings)",
}
KNOWN_FIELDS = SPEC_FIELDS | EXTENSION_FIELDS | frozenset(LEGACY_FIELDS)

EFFORT_VALUES = ("low", "medium", "high", "xhigh", "max")
SHELL_VALUES = ("bash", "powershell")
HOOK_EVENTS = frozenset(
    {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PermissionRequest",
        "Notification",
        "UserPromptSubmit",
        "Stop",
        "SubagentStart",
        "SubagentStop",
        "PreCompact",
        "SessionStart",
        "SessionEnd",
    }
)
HOOK_TYPES = frozenset({"command", "prompt", "agent", "http"})
RESERVED_WORDS = ("anthropic", "claude")
# Verbs that, leading a skill's name, suggest a workflow a person starts on purpose
# (a disable-model-invocation hint), and nouns that do so anywhere unless the skill only looks
# at them (``pre-ship-review``, ``release-notes``).
MANUAL_VERBS = frozenset(
    {
        "deploy",
        "release",
        "publish",
        "ship",
        "rollback",
        "migrate",
        "delete",
        "destroy",
        "drop",
        "purge",
        "commit",
        "push",
        "merge",
        "send",
        "pay",
        "refund",
    }
)
MANUAL_NOUNS = frozenset({"deploy", "deployment", "release", "publish", "rollback"})
LOOK_ONLY_WORDS = frozenset(
    {"review", "check", "checker", "notes", "audit", "triage", "analysis", "status", "lint"}
)
UNSCOPED_SHELLS = frozenset({"Bash", "Bash(*)", "Bash(:*)", "Bash(* *)", "PowerShell", "PowerShell(*)"})

# Findings that mean the frontmatter could not be read at all (the reference checker raises a
# ParseError for these; everything else is a validation finding).
READ_CODES = frozenset(
    {
        "encoding-not-utf8",
        "encoding-bom",
        "frontmatter-missing",
        "frontmatter-unclosed",
        "frontmatter-not-mapping",
        "frontmatter-too-large",
        "skill-md-too-large",
        "skill-md-missing",
        "skill-folder-missing",
        "yaml-invalid",
        "yaml-alias-bomb",
        "yaml-too-many-nodes",
        "yaml-too-deep",
        "yaml-tag-refused",
        "yaml-flow-style",
        "yaml-anchors",
        "yaml-duplicate-key",
    }
)

_PLAIN_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_TOOL_RULE = re.compile(r"^[A-Za-z*][\w.*:-]*(\(.*\))?$", re.DOTALL)
_LICENSE_FILE = re.compile(r"[\w./-]*LICEN[CS]E[\w.-]*", re.IGNORECASE)
_PROPRIETARY = re.compile(r"proprietary|all rights reserved", re.IGNORECASE)


@dataclass(slots=True)
class CheckedFrontmatter:
    """Frontmatter after the rules: values normalised (text where text is expected)."""

    frontmatter: dict[str, Any]
    name: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


class _Checker:
    """One frontmatter under check: collects findings with their file and line."""

    def __init__(self, doc: YamlDocument, *, file: str, line_offset: int, strict: bool) -> None:
        self.doc = doc
        self.data = doc.data
        self.file = file
        self.offset = line_offset
        self.strict = strict
        self.findings: list[Finding] = []

    def line(self, key: str) -> int | None:
        line = self.doc.key_lines.get(key)
        return line + self.offset if line is not None else None

    def add(self, code: str, severity: Severity, message: str, line: int | None = None) -> None:
        self.findings.append(Finding(code, severity, message, self.file, line))

    def at(self, code: str, severity: Severity, message: str, key: str) -> None:
        self.add(code, severity, message, self.line(key))

    def typed(self, *path: str) -> TypedScalar | None:
        return self.doc.typed.get(path) if self.doc.typed else None

    def text(self, key: str, *, spec: bool) -> str | None:
        """The value of a text field, as written; None when absent or not a scalar (reported)."""
        if key not in self.data:
            return None
        value = self.data[key]
        typed = self.typed(key)
        if typed is not None:
            if typed.tag != "null":
                self.at(
                    "value-not-string",
                    Severity.WARNING,
                    f"'{key}' is written as {typed.text}, which YAML reads as {_yaml_type(typed)}: quote it "
                    f'({key}: "{typed.text}") so every reader sees the same text. Stored as the text '
                    f"'{typed.text}'.",
                    key,
                )
            value = typed.text
            self.data[key] = value
            return value
        if isinstance(value, str):
            return value
        kind = "a list" if isinstance(value, list) else "a mapping"
        self.at(
            "field-type",
            Severity.ERROR if spec else Severity.WARNING,
            f"Field '{key}' must be a string, not {kind}.",
            key,
        )
        return None

    def boolean(self, key: str) -> None:
        if key not in self.data:
            return
        value = self.data[key]
        typed = self.typed(key)
        if isinstance(value, bool):
            if typed is not None and typed.text.lower() not in ("true", "false"):
                self.at(
                    "value-ambiguous-bool",
                    Severity.WARNING,
                    f"'{key}: {typed.text}' is true/false for YAML 1.1 readers (PyYAML) but the text "
                    f"'{typed.text}' for YAML 1.2 readers (the JavaScript agents): write {key}: "
                    f"{'true' if value else 'false'}.",
                    key,
                )
            return
        shown = f"the text '{value}'" if isinstance(value, str) else _describe_value(value, typed)
        quoted = isinstance(value, str) and value.strip().lower() in ("true", "false")
        self.at(
            "field-type",
            Severity.WARNING,
            f"'{key}' must be true or false, not {shown}: agents ignore it"
            + (" (remove the quotes)." if quoted else f"; write {key}: true or {key}: false."),
            key,
        )

    def choice(self, key: str, allowed: Iterable[str], hint: str = "") -> None:
        value = self.text(key, spec=False)
        if value is None:
            return
        allowed = tuple(allowed)
        if value not in allowed:
            self.at(
                "field-value-invalid",
                Severity.WARNING,
                f"'{key}: {value}' is not a value agents know ({', '.join(allowed)}){hint}: it is ignored.",
                key,
            )


def _yaml_type(typed: TypedScalar) -> str:
    return {
        "int": "a number",
        "float": "a number",
        "bool": "a boolean",
        "null": "nothing (null)",
        "timestamp": "a date",
    }.get(typed.tag, typed.tag)


def _describe_value(value: Any, typed: TypedScalar | None) -> str:
    if typed is not None:
        return f"{typed.text} ({_yaml_type(typed)})" if typed.text else "an empty value"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def check_frontmatter(
    doc: YamlDocument | None,
    *,
    fm_text: str,
    folder: str,
    source: SourceKind = SourceKind.PROJECT,
    strict: bool = False,
    line_offset: int = 1,
    file: str = "SKILL.md",
) -> CheckedFrontmatter:
    """Apply every frontmatter rule. ``doc`` is None for an empty frontmatter."""
    if doc is None:
        doc = YamlDocument(data={})
    c = _Checker(doc, file=file, line_offset=line_offset, strict=strict)
    _check_yaml_shape(c, fm_text)
    _check_fields(c)
    name = _check_name(c, folder)
    _check_description(c)
    _check_spec_optionals(c)
    result = CheckedFrontmatter(frontmatter=c.data, name=name)
    result.allowed_tools = _check_tools(c, "allowed-tools", source)
    if "allowedTools" in c.data and not result.allowed_tools:
        result.allowed_tools = _check_tools(c, "allowedTools", source)
    result.disallowed_tools = _check_tools(c, "disallowed-tools", source)
    _check_extensions(c, name)
    result.findings = c.findings
    return result


def _check_yaml_shape(c: _Checker, fm_text: str) -> None:
    for path, first, again in c.doc.duplicates:
        key = ".".join(path)
        c.add(
            "yaml-duplicate-key",
            Severity.ERROR,
            f"Invalid YAML in frontmatter: duplicate key '{key}' (lines {first + c.offset} and {again + c.offset}): "
            "PyYAML keeps the last, strictyaml and the JavaScript agents refuse the file. Keep one.",
            again + c.offset,
        )
    if c.strict and c.doc.flow_style_line is not None:
        line = c.doc.flow_style_line + c.offset
        c.add(
            "yaml-flow-style",
            Severity.ERROR,
            f"Invalid YAML in frontmatter: flow style ([a, b] or {{a: b}}) on line {line} is refused by "
            "the reference checker (strictyaml). Write one item per line ('- a').",
            line,
        )
    if c.strict and c.doc.aliases:
        c.add(
            "yaml-anchors",
            Severity.ERROR,
            "Invalid YAML in frontmatter: anchors (&) and aliases (*) are refused by the reference "
            "checker (strictyaml). Write the values out.",
            None,
        )
    if "---" in fm_text:
        index = fm_text.index("---")
        line = fm_text.count("\n", 0, index) + 1 + c.offset
        c.add(
            "frontmatter-dashes-in-value",
            Severity.ERROR if c.strict else Severity.WARNING,
            f"Frontmatter line {line} contains '---' inside a value: the reference checkers end the "
            "frontmatter there and read the rest as body. Rephrase (e.g. use an em dash).",
            line,
        )


def _check_fields(c: _Checker) -> None:
    for key in c.data:
        if key in SPEC_FIELDS:
            continue
        if c.strict:
            c.at(
                "field-not-in-spec" if key in KNOWN_FIELDS else "field-unknown",
                Severity.ERROR,
                f"Unexpected fields in frontmatter: {key}. Only {sorted(SPEC_FIELDS)} are allowed."
                + (
                    " It is a Claude Code extension the open specification does not define."
                    if key in KNOWN_FIELDS
                    else ""
                ),
                key,
            )
            continue
        if key in LEGACY_FIELDS:
            c.at(
                "field-legacy",
                Severity.INFO,
                f"'{key}' is an older spelling; current agents read {LEGACY_FIELDS[key]}.",
                key,
            )
        elif key not in EXTENSION_FIELDS:
            close = difflib.get_close_matches(key, sorted(KNOWN_FIELDS), n=1, cutoff=0.75)
            hint = f" Did you mean '{close[0]}'?" if close else " Remove it or move it under metadata:."
            c.at(
                "field-unknown",
                Severity.WARNING,
                f"Unknown field '{key}' in frontmatter: no agent reads it and --strict refuses it.{hint}",
                key,
            )


def _check_name(c: _Checker, folder: str) -> str | None:
    if "name" not in c.data:
        c.add("name-missing", Severity.ERROR, "Missing required field in frontmatter: name", 1)
        return None
    raw = c.text("name", spec=True)
    if raw is None or not raw.strip():
        if raw is not None or c.typed("name") is not None:
            c.at("name-empty", Severity.ERROR, "Field 'name' must be a non-empty string", "name")
        return None
    name = raw.strip()
    if _PLAIN_NAME.fullmatch(name) and len(name) <= MAX_NAME_LENGTH:
        # the common case (a-z, 0-9, single inner hyphens): only the folder and reserved words remain
        if folder and folder != name and unicodedata.normalize("NFKC", folder) != name:
            c.at(
                "name-folder-mismatch",
                Severity.ERROR,
                f"Directory name '{folder}' must match skill name '{name}'",
                "name",
            )
        _check_reserved(c, name)
        return name
    name = unicodedata.normalize("NFKC", name)
    if len(name) > MAX_NAME_LENGTH:
        c.at(
            "name-too-long",
            Severity.ERROR,
            f"Skill name '{name}' exceeds {MAX_NAME_LENGTH} character limit ({len(name)} chars)",
            "name",
        )
    if name != name.lower():
        c.at("name-not-lowercase", Severity.ERROR, f"Skill name '{name}' must be lowercase", "name")
    if name.startswith("-") or name.endswith("-"):
        c.at("name-hyphen-edge", Severity.ERROR, "Skill name cannot start or end with a hyphen", "name")
    if "--" in name:
        c.at("name-double-hyphen", Severity.ERROR, "Skill name cannot contain consecutive hyphens", "name")
    bad = sorted({ch for ch in name if not (ch.isalnum() or ch == "-")})
    if bad:
        shown = ", ".join(repr(ch) for ch in bad[:5])
        c.at(
            "name-invalid-chars",
            Severity.ERROR,
            f"Skill name '{name}' contains invalid characters. Only letters, digits, and hyphens are "
            f"allowed. Found: {shown}.",
            "name",
        )
    if folder:
        folder_name = unicodedata.normalize("NFKC", folder)
        if folder_name != name:
            c.at(
                "name-folder-mismatch",
                Severity.ERROR,
                f"Directory name '{folder}' must match skill name '{name}'",
                "name",
            )
    declared = raw.strip()
    if not declared.isascii():
        odd = sorted({ch for ch in declared if not ch.isascii()})
        scripts = _scripts(declared)
        mixed = " It mixes scripts (" + ", ".join(sorted(scripts)) + ")." if len(scripts) > 1 else ""
        nfkc = (
            f" It is not in NFKC form: checkers that normalise read '{name}', agents read it as written."
            if declared != name
            else ""
        )
        shown = ", ".join(f"{ch} U+{ord(ch):04X}" for ch in odd[:5])
        c.at(
            "name-non-ascii",
            Severity.WARNING,
            f"Skill name '{declared}' contains non-ASCII characters ({shown}).{mixed}{nfkc} Agents compare "
            "names as exact strings, so a look-alike (Cyrillic 'е' for Latin 'e') is another skill; "
            "prefer a-z, 0-9 and hyphens.",
            "name",
        )
    _check_reserved(c, name)
    return raw.strip()


def _check_reserved(c: _Checker, name: str) -> None:
    lowered = name.lower()
    for word in RESERVED_WORDS:
        if word in lowered:
            c.at(
                "name-reserved-word",
                Severity.WARNING,
                f"Skill name '{name}' contains the reserved word '{word}': Anthropic's API refuses such "
                "names on upload. Rename the skill.",
                "name",
            )


def _scripts(name: str) -> set[str]:
    scripts = set()
    for ch in name:
        if ch.isalpha():
            try:
                scripts.add(unicodedata.name(ch).split(" ")[0])
            except ValueError:
                continue
    return scripts


def _check_description(c: _Checker) -> None:
    if "description" not in c.data:
        c.add("description-missing", Severity.ERROR, "Missing required field in frontmatter: description", 1)
        return
    description = c.text("description", spec=True)
    if description is None or not description.strip():
        if description is not None or c.typed("description") is not None:
            c.at(
                "description-empty",
                Severity.ERROR,
                "Field 'description' must be a non-empty string",
                "description",
            )
        return
    length = len(description)
    if length > MAX_DESCRIPTION_LENGTH:
        c.at(
            "description-too-long",
            Severity.ERROR,
            f"Description exceeds {MAX_DESCRIPTION_LENGTH} character limit ({length} chars)",
            "description",
        )
    elif length > OLDER_DESC_CAP:
        c.at(
            "description-over-250",
            Severity.INFO,
            f"Description is {length} characters: older Claude Code versions cut it at {OLDER_DESC_CAP} in the "
            "listing. Put the trigger phrases first.",
            "description",
        )
    if len(description.strip()) < MIN_USEFUL_DESCRIPTION:
        c.at(
            "description-short",
            Severity.INFO,
            f"Description is {len(description.strip())} characters: under {MIN_USEFUL_DESCRIPTION}, the model "
            "has too little to decide when to use the skill. Say what it does and list trigger phrases.",
            "description",
        )
    if "<" in description or ">" in description:
        c.at(
            "description-angle-brackets",
            Severity.WARNING,
            "Description contains '<' or '>': Anthropic's skill validator refuses angle brackets in "
            "descriptions (they read as XML tags in the listing). Rephrase without them.",
            "description",
        )
    when = c.data.get("when_to_use", c.data.get("whenToUse"))
    combined = length + (len(when) if isinstance(when, str) else 0)
    if combined > LISTING_MAX_DESC_CHARS:
        what = "description + when_to_use" if isinstance(when, str) else "description"
        c.at(
            "listing-over-cap",
            Severity.WARNING,
            f"The {what} is {combined} characters: Claude Code's listing keeps {LISTING_MAX_DESC_CHARS} "
            f"(skillListingMaxDescChars); the last {combined - LISTING_MAX_DESC_CHARS} never reach the model. "
            "Shorten it, trigger phrases first.",
            "description",
        )


def _check_spec_optionals(c: _Checker) -> None:
    if "compatibility" in c.data:
        compatibility = c.text("compatibility", spec=True)
        if compatibility is not None:
            if not compatibility.strip():
                c.at(
                    "compatibility-empty",
                    Severity.ERROR,
                    "Field 'compatibility' is empty: give 1-500 characters or remove it.",
                    "compatibility",
                )
            elif len(compatibility) > MAX_COMPATIBILITY_LENGTH:
                c.at(
                    "compatibility-too-long",
                    Severity.ERROR,
                    f"Compatibility exceeds {MAX_COMPATIBILITY_LENGTH} character limit ({len(compatibility)} chars)",
                    "compatibility",
                )
    if "license" in c.data:
        license_text = c.text("license", spec=True)
        if license_text and _PROPRIETARY.search(license_text):
            c.at(
                "license-proprietary",
                Severity.INFO,
                f"Licence '{_clip(license_text, 60)}' is proprietary / all rights reserved: copying, "
                "changing or redistributing this skill needs the owner's permission.",
                "license",
            )
    if "metadata" in c.data:
        metadata = c.data["metadata"]
        if metadata is None:
            c.data["metadata"] = {}
        elif not isinstance(metadata, dict):
            c.at(
                "metadata-not-mapping",
                Severity.ERROR,
                "Field 'metadata' must be a mapping of string keys to string values (key: value lines "
                "indented under metadata:).",
                "metadata",
            )
        else:
            for key, value in list(metadata.items()):
                typed = c.typed("metadata", key)
                if typed is not None:
                    if typed.tag != "null":
                        c.add(
                            "value-not-string",
                            Severity.WARNING,
                            f"metadata.{key} is written as {typed.text}, which YAML reads as "
                            f"{_yaml_type(typed)}: quote it so every reader sees the text '{typed.text}'.",
                            typed.line + c.offset,
                        )
                    metadata[key] = typed.text
                elif not isinstance(value, str):
                    c.at(
                        "metadata-value-not-string",
                        Severity.ERROR,
                        f"metadata.{key} must be a string, not {_describe_value(value, None)}: the "
                        "specification allows only string values under metadata.",
                        "metadata",
                    )


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def split_tool_rules(text: str) -> tuple[list[str], bool]:
    """Split an allowed-tools string into rules at spaces or commas outside parentheses.

    Returns ``(rules, used_commas)``. ``Bash(git status:*) Read`` → ``["Bash(git status:*)", "Read"]``.
    """
    if "(" not in text:
        return text.replace(",", " ").split(), "," in text
    rules: list[str] = []
    depth = 0
    current: list[str] = []
    commas = False
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        if depth == 0 and (ch == "," or ch.isspace()):
            commas = commas or ch == ","
            if current:
                rules.append("".join(current))
                current = []
            continue
        current.append(ch)
    if current:
        rules.append("".join(current))
    return rules, commas


def normalise_tools(value: Any) -> tuple[list[str], str]:
    """allowed-tools in any spelling → ``(rules, form)``; form is space, comma, list or invalid."""
    if value is None:
        return [], "space"
    if isinstance(value, str):
        rules, commas = split_tool_rules(value)
        return rules, "comma" if commas else "space"
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()], "list"
    return [], "invalid"


def normalise_paths(value: Any) -> list[str]:
    """``paths`` globs as a list: a YAML list, or a string of comma-separated globs."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return [item.strip() for item in value if isinstance(item, str) and item.strip()]
    return []


def _check_tools(c: _Checker, key: str, source: SourceKind) -> list[str]:
    if key not in c.data:
        return []
    value = c.data[key]
    if isinstance(value, list):
        for index, _item in enumerate(value):
            typed = c.typed(key, str(index))
            if typed is not None:
                value[index] = typed.text
    rules, form = normalise_tools(value)
    if form == "invalid":
        c.at(
            "field-type",
            Severity.ERROR if key == "allowed-tools" else Severity.WARNING,
            f"'{key}' must be a space-separated string (Bash(git:*) Read) or a list of tool rules, "
            f"not {_describe_value(value, c.typed(key))}.",
            key,
        )
        return []
    if form in ("comma", "list"):
        spelled = "a comma-separated string" if form == "comma" else "a YAML list"
        c.at(
            "allowed-tools-format",
            Severity.INFO,
            f"'{key}' is {spelled}: Claude Code accepts it, the open specification defines one "
            f"space-separated string ({' '.join(rules)[:120]}).",
            key,
        )
    for rule in rules:
        if not _TOOL_RULE.match(rule) or rule.count("(") != rule.count(")"):
            c.at(
                "allowed-tools-syntax",
                Severity.WARNING,
                f"'{key}' entry '{_clip(rule, 60)}' is not a tool rule: write Tool or Tool(specifier), "
                "e.g. Read, Bash(git diff:*), mcp__github__get_issue.",
                key,
            )
        elif key != "disallowed-tools" and rule in UNSCOPED_SHELLS:
            trust = (
                " Claude Code does not gate a repository skill's allowed-tools on workspace trust: "
                "whoever merges this file pre-approves a shell for everyone who opens the repository."
                if source is SourceKind.PROJECT
                else ""
            )
            c.at(
                "allowed-tools-unscoped-bash",
                Severity.WARNING,
                f"'{key}' grants '{rule}' without a command pattern: the whole shell is pre-approved. "
                f"Scope it to the commands the skill runs, e.g. Bash(gh pr view:*), Bash(git diff:*).{trust}",
                key,
            )
    return rules


def _check_extensions(c: _Checker, name: str | None) -> None:
    data = c.data
    for key in ("when_to_use", "whenToUse", "model", "agent", "version"):
        c.text(key, spec=False)
    for key in ("disable-model-invocation", "user-invocable", "background"):
        c.boolean(key)
    if "effort" in data:
        c.choice("effort", EFFORT_VALUES)
    if "context" in data:
        c.choice("context", ("fork",), "; leave context out for inline")
    if "mode" in data:
        c.choice("mode", ("activate", "delegate"), "; activate = inline, delegate = context: fork")
    if "shell" in data:
        c.choice("shell", SHELL_VALUES)
    if "argument-hint" in data:
        value = data["argument-hint"]
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            text = "[" + ", ".join(value) + "]"
            data["argument-hint"] = text
            c.at(
                "argument-hint-list",
                Severity.INFO,
                f"'argument-hint: {text}' is read by YAML as a list; Claude Code shows it as intended, "
                f'other readers see a list. Quote it (argument-hint: "{text}"). Stored as the text {text}.',
                "argument-hint",
            )
        else:
            c.text("argument-hint", spec=False)
    if "arguments" in data:
        value = data["arguments"]
        if not isinstance(value, str) and not (
            isinstance(value, list) and all(isinstance(item, str) for item in value)
        ):
            c.at(
                "field-type",
                Severity.WARNING,
                "'arguments' must be a space-separated string or a list of argument names.",
                "arguments",
            )
    for key, kind in (("maxTurns", int), ("timeoutMins", (int, float))):
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, kind) or value <= 0:
                c.at("field-type", Severity.WARNING, f"'{key}' must be a positive number.", key)
    if "paths" in data:
        _check_paths(c, data["paths"])
    if "hooks" in data:
        _check_hooks(c, data["hooks"])
    if data.get("disable-model-invocation") is True and data.get("user-invocable") is False:
        c.at(
            "skill-unreachable",
            Severity.WARNING,
            "disable-model-invocation: true and user-invocable: false together: neither the model nor "
            "a person can start this skill. Remove one of them.",
            "user-invocable",
        )
    if name and "disable-model-invocation" not in data:
        word = _manual_word(name)
        if word:
            c.at(
                "hint-disable-model-invocation",
                Severity.INFO,
                f"'{name}' reads like a workflow a person starts on purpose ('{word}'). If so, set "
                "disable-model-invocation: true: the model cannot start it by itself and it costs nothing "
                "in the listing. A hint, not a rule.",
                "name",
            )


def _manual_word(name: str) -> str | None:
    words = [w for w in name.lower().replace("_", "-").replace(":", "-").split("-") if w]
    if not words or LOOK_ONLY_WORDS.intersection(words):
        return None
    if words[0] in MANUAL_VERBS:
        return words[0]
    return next((w for w in words if w in MANUAL_NOUNS), None)


def _check_paths(c: _Checker, value: Any) -> None:
    if not isinstance(value, str) and not (
        isinstance(value, list) and all(isinstance(item, str) for item in value)
    ):
        c.at(
            "paths-invalid",
            Severity.WARNING,
            "'paths' must be a glob string (comma-separated) or a list of globs, e.g. paths: ['src/**/*.py'].",
            "paths",
        )
        return
    globs = normalise_paths(value)
    if not globs:
        c.at(
            "paths-invalid",
            Severity.WARNING,
            "'paths' is empty: the skill would never activate. Remove it or list globs.",
            "paths",
        )
    for glob in globs:
        if glob.startswith(("/", "~")) or ".." in glob.split("/") or re.match(r"^[A-Za-z]:[\\/]", glob):
            c.at(
                "paths-invalid",
                Severity.WARNING,
                f"'paths' glob '{glob}' is absolute or leaves the project: globs are relative to the "
                "project root.",
                "paths",
            )


def _check_hooks(c: _Checker, hooks: Any) -> None:
    def shape(message: str) -> None:
        c.at(
            "hooks-shape", Severity.WARNING, f"hooks: {message} Agents skip hooks they cannot read.", "hooks"
        )

    if not isinstance(hooks, dict):
        shape("must be a mapping of event name to a list of {matcher, hooks: [...]} entries.")
        return
    for event, groups in hooks.items():
        if event not in HOOK_EVENTS:
            close = difflib.get_close_matches(event, sorted(HOOK_EVENTS), n=1, cutoff=0.6)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            c.at(
                "hooks-unknown-event",
                Severity.WARNING,
                f"hooks: '{event}' is not a hook event agents know; it never fires.{hint}",
                "hooks",
            )
        if not isinstance(groups, list):
            shape(f"'{event}' must be a list of {{matcher, hooks}} entries.")
            continue
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                shape(f"each '{event}' entry needs a 'hooks' list (and an optional 'matcher' string).")
                continue
            if "matcher" in group and not isinstance(group["matcher"], str):
                shape(f"'{event}' matcher must be a string (a tool name or pattern).")
            for hook in group["hooks"]:
                if not isinstance(hook, dict):
                    shape(f"each hook under '{event}' must be a mapping with type and command.")
                    continue
                kind = hook.get("type")
                if kind not in HOOK_TYPES:
                    shape(
                        f"hook type '{kind}' under '{event}' is not one of {', '.join(sorted(HOOK_TYPES))}."
                    )
                elif kind == "command" and not isinstance(hook.get("command"), str):
                    shape(f"a command hook under '{event}' needs a 'command' string.")
                timeout = hook.get("timeout")
                if timeout is not None and (
                    isinstance(timeout, bool) or not isinstance(timeout, int | float)
                ):
                    shape(f"hook timeout under '{event}' must be a number of seconds.")


def check_body(
    body: str, *, frontmatter: dict[str, Any], body_line: int = 1, file: str = "SKILL.md"
) -> tuple[int, list[Finding]]:
    """Body lint: returns ``(estimated tokens, findings)``."""
    findings: list[Finding] = []
    if not body or body.isspace():
        findings.append(
            Finding(
                "body-empty",
                Severity.WARNING,
                "SKILL.md has no body: once chosen, the model gets nothing to follow. Write the steps.",
                file,
                body_line,
            )
        )
        return 0, findings
    tokens = body_token_estimate(body)
    if tokens > MAX_BODY_TOKENS:
        past = headings_with_token_offsets(
            body, from_tokens=MAX_BODY_TOKENS, limit=SHOWN_HEADINGS + 1, max_scan=MAX_HEADING_SCAN
        )
        if past:
            shown = ", ".join(
                f"'{'#' * h.level} {h.title}' (line {body_line + h.line - 1})" for h in past[:SHOWN_HEADINGS]
            )
            more = " and more" if len(past) > SHOWN_HEADINGS else ""
            lost = f" These headings fall past that point and are lost after compaction: {shown}{more}."
        else:
            lost = " No heading falls past that point, but the tail of the last section does."
        findings.append(
            Finding(
                "body-over-compaction-limit",
                Severity.WARNING,
                f"Body is about {tokens:,} tokens: Claude Code re-attaches only the first "
                f"{MAX_BODY_TOKENS:,} tokens of an invoked skill after compaction.{lost} Put gotchas "
                "first and move detail into references/ files.",
                file,
                body_line,
            )
        )
    lines = body.count("\n") + (0 if body.endswith("\n") else 1)
    if lines > MAX_BODY_LINES:
        findings.append(
            Finding(
                "body-too-many-lines",
                Severity.WARNING,
                f"Body has {lines:,} lines (guideline: under {MAX_BODY_LINES}): move detail into "
                "references/ files the model reads on demand.",
                file,
                body_line,
            )
        )
    return tokens, findings


def nested_skill_finding(inner_path: str, file: str | None = None) -> Finding:
    """A skill folder contains another skill at ``inner_path`` (relative to the outer skill)."""
    return Finding(
        "skill-nested",
        Severity.WARNING,
        f"Folder '{inner_path}' inside this skill has its own SKILL.md: agents list it as a separate "
        "skill while its files also belong to this package. Move it out or rename its SKILL.md.",
        file,
    )


def check_package(skill: ParsedSkill) -> list[Finding]:
    """Rules that need the package files (after :func:`load_skill_folder` read them)."""
    findings: list[Finding] = []
    license_text = skill.frontmatter.get("license")
    if isinstance(license_text, str) and skill.files:
        paths = {f.path for f in skill.files}
        lowered = {p.lower() for p in paths}
        for candidate in _LICENSE_FILE.findall(license_text):
            candidate = candidate.strip("./") if candidate.startswith("./") else candidate.rstrip(".")
            if "." not in candidate and not candidate.isupper():
                continue  # "MIT License" names a licence, not a file
            if candidate not in paths and candidate.lower() not in lowered:
                findings.append(
                    Finding(
                        "license-file-missing",
                        Severity.WARNING,
                        f"The licence points to '{candidate}', which is not in the skill folder: add "
                        "the file or fix the reference.",
                        skill.skill_md_name,
                        _key_line(skill.frontmatter_text, "license"),
                    )
                )
    return findings


def _key_line(frontmatter_text: str, key: str) -> int | None:
    """Line of SKILL.md where a top-level key is written (the frontmatter starts on line 2)."""
    for number, line in enumerate(frontmatter_text.splitlines(), start=2):
        if line.startswith((f"{key}:", f'"{key}":', f"'{key}':")):
            return number
    return None
