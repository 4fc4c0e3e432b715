"""Run the checker over every SKILL.md under the given checkouts and tabulate findings per code.

    git clone https://github.com/anthropics/skills /tmp/realworld/anthropics+skills   # etc.
    .venv/bin/python bench/realworld.py /tmp/realworld/anthropics+skills /tmp/realworld/obra+superpowers ...

Prints a Markdown table (code, severity, findings, skills) and, with ``--show CODE``, every
message of that code, so findings that look wrong can be read one by one; the last line is a JSON
summary. Without paths it reads the checkouts under bench/.cache/realworld/ (and says so when
there are none). The checkouts are read in place and never copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from governance.engine.skillfile import SKILL_MD_NAMES, load_skill_folder
from governance.engine.types import ParsedSkill, SourceKind

SKIP = {".git", "node_modules"}
DEFAULT_CHECKOUTS = Path(__file__).resolve().parent / ".cache" / "realworld"


def skill_folders(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*")):
        if path.name in SKILL_MD_NAMES and path.is_file() and not SKIP & set(path.relative_to(root).parts):
            found.append(path.parent)
    return sorted(set(found))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("roots", nargs="*", type=Path)
    parser.add_argument("--quick", action="store_true", help="same run (the corpus is small)")
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--show", action="append", default=[], help="print every message of this code")
    args = parser.parse_args()
    if not args.roots and DEFAULT_CHECKOUTS.is_dir():
        args.roots = sorted(p for p in DEFAULT_CHECKOUTS.iterdir() if p.is_dir())
    if not args.roots:
        print(
            json.dumps(
                {"skipped": f"no checkouts: pass paths or clone repositories into {DEFAULT_CHECKOUTS}"}
            )
        )
        return 0
    skills: list[tuple[str, ParsedSkill]] = []
    for root in args.roots:
        for folder in skill_folders(root):
            skill = load_skill_folder(folder, root=root, source=SourceKind.PROJECT, strict=args.strict)
            skills.append((f"{root.name}/{skill.path}", skill))
    findings: Counter[tuple[str, str]] = Counter()
    per_skill: dict[tuple[str, str], set[str]] = defaultdict(set)
    for label, skill in skills:
        for finding in skill.findings:
            key = (finding.code, finding.severity.value)
            findings[key] += 1
            per_skill[key].add(label)
            if finding.code in args.show:
                print(f"{label}: {finding.file}:{finding.line}: {finding.message}")
    valid = sum(1 for _, s in skills if s.valid)
    print(
        f"\n{len(skills)} skills in {len(args.roots)} repositories; {valid} valid, {len(skills) - valid} invalid\n"
    )
    print("| code | severity | findings | skills |")
    print("|---|---|---:|---:|")
    order = {"error": 0, "warning": 1, "info": 2}
    for (code, severity), count in sorted(
        findings.items(), key=lambda kv: (order[kv[0][1]], -kv[1], kv[0][0])
    ):
        print(f"| `{code}` | {severity} | {count} | {len(per_skill[(code, severity)])} |")
    summary = {
        "repositories": [root.name for root in args.roots],
        "skills": len(skills),
        "valid": valid,
        "strict": args.strict,
        "findings": {f"{code}/{severity}": count for (code, severity), count in sorted(findings.items())},
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
