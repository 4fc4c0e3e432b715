"""How fast are permission decisions, an impact preview's comparison, and the compiled file?

    .venv/bin/python bench/policy_decisions.py [--skills 20000] [--rules 60]

Generates skills with varied frontmatter (safe, sensitive, unknown keys, hooks, tools) across
every source kind and a policy with name, glob, source, team and project rules plus source rules,
then times: decide() for every skill, rule by rule and with one RuleMatcher (what catalog-wide
reads use), an impact comparison (two decisions per skill, both ways), risk summaries, and
compiling managed-settings.json. Pure engine: no database.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from governance.engine.managed_settings import compile_managed_settings
from governance.engine.permissions import RuleMatcher, SkillSubject, decide, decide_many, evaluate
from governance.engine.policydoc import parse_document
from governance.engine.types import SourceKind

EXTRA: list[dict[str, Any]] = [
    {},
    {"allowed-tools": "Bash(git:*) Read"},
    {"allowed-tools": "Bash"},
    {"hooks": {"PostToolUse": [{"command": "x"}]}},
    {"model": "opus", "context": "fork"},
    {"preExecCommand": "curl x | sh"},
    {"metadata": {"owner": "t"}, "paths": ["src/**"]},
]


def subjects(count: int, rng: random.Random) -> list[SkillSubject]:
    kinds = list(SourceKind)
    out = []
    for i in range(count):
        kind = rng.choice(kinds)
        out.append(
            SkillSubject(
                name=f"skill-{i % 997}-{rng.choice(['deploy', 'lint', 'review', 'docs'])}",
                source=kind,
                frontmatter={"name": "x", "description": "d", **rng.choice(EXTRA)},
                source_identity=f"https://github.com/org{i % 50}/repo{i % 300}",
                plugin="tools" if kind is SourceKind.PLUGIN else "",
                team=f"team{i % 12}",
                project=f"project{i % 80}",
                files=("SKILL.md", "scripts/run.sh") if i % 3 == 0 else ("SKILL.md",),
            )
        )
    return out


def policy(rules: int) -> dict[str, object]:
    skill_rules = []
    for i in range(rules):
        shape = i % 5
        effect = ["deny", "ask", "allow"][i % 3]
        if shape == 0:
            skill_rules.append({"effect": effect, "name": f"skill-{i}-deploy"})
        elif shape == 1:
            skill_rules.append({"effect": effect, "name": f"skill-{i}*"})
        elif shape == 2:
            skill_rules.append({"effect": effect, "source": f"git@github.com:org{i}/repo{i}.git"})
        elif shape == 3:
            skill_rules.append({"effect": effect, "team": f"team{i % 12}", "source_kind": "mcp"})
        else:
            skill_rules.append({"effect": effect, "project": f"project{i}", "name": "*-review"})
    return {
        "skill_rules": skill_rules,
        "source_rules": [
            {"effect": "deny", "kind": "repository", "pattern": f"https://github.com/bad{i}/x"}
            for i in range(20)
        ]
        + [{"effect": "allow", "kind": "host", "pattern": r"github\.com"}],
        "channel_lock": ["hooks"],
    }


def timed(label: str, count: int, fn: Callable[[], object]) -> float:
    """Print one table row (wall and CPU: on a shared machine the wall time includes waiting for
    a core); return the elapsed wall milliseconds."""
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    rate = f"{count / cpu:,.0f}/s" if count and cpu else ""
    print(f"| {label} | {count:,} | {elapsed * 1000:,.0f} ms | {cpu * 1000:,.0f} ms | {rate} |")
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=20000)
    parser.add_argument("--rules", type=int, default=60)
    parser.add_argument("--quick", action="store_true", help="2,000 skills (make bench)")
    args = parser.parse_args()
    if args.quick:
        args.skills = min(args.skills, 2000)
    rng = random.Random(7)
    items = subjects(args.skills, rng)
    before, errors = parse_document(policy(args.rules))
    after, errors2 = parse_document({**policy(args.rules), "channel_lock": ["skills", "hooks"]})
    assert not errors and not errors2
    s_before, s_after = before.permission_settings(), after.permission_settings()
    print(f"{args.skills:,} skills, {args.rules} skill rules, 21 source rules\n")
    print("| step | items | wall | CPU | CPU rate |\n|---|---|---:|---:|---:|")
    decide_ms = timed("decide, rule by rule", len(items), lambda: [decide(s, s_before) for s in items])
    many_ms = timed("decide_many (one RuleMatcher)", len(items), lambda: decide_many(items, s_before))
    timed(
        "impact comparison (2 decisions each), rule by rule",
        len(items),
        lambda: [(decide(s, s_before), decide(s, s_after)) for s in items],
    )

    def impact() -> object:
        m_before, m_after = RuleMatcher(s_before.rules), RuleMatcher(s_after.rules)
        return [(decide(s, s_before, matcher=m_before), decide(s, s_after, matcher=m_after)) for s in items]

    impact_ms = timed("impact comparison (2 decisions each), one RuleMatcher per policy", len(items), impact)
    timed("decide + risk summary", len(items), lambda: [evaluate(s, s_before) for s in items])
    compile_ms = timed(
        "compile managed-settings.json",
        1,
        lambda: compile_managed_settings(before, otlp_endpoint="https://p/otlp"),
    )
    # The last line is the machine-readable result (bench/run_all.py prints it).
    print(
        json.dumps(
            {
                "skills": args.skills,
                "rules": args.rules,
                "decide_per_s": round(args.skills / (decide_ms / 1000)),
                "decide_many_per_s": round(args.skills / (many_ms / 1000)),
                "impact_ms": round(impact_ms),
                "compile_ms": round(compile_ms, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
