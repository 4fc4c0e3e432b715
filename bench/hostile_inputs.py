"""How fast hostile SKILL.md files fail: each is parsed by ``parse_skill_md`` and timed.

    .venv/bin/python bench/hostile_inputs.py [--quick]

The claim: every hostile input within the size limits is refused or bounded in well under a
second, with its finding code. The last line is one JSON object: milliseconds and codes per case.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from governance.engine.skillfile import parse_skill_md

GOOD = b"---\nname: x\ndescription: A reasonable description for the hostile input bench.\n---\n"


def billion_laughs(levels: int) -> bytes:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]" for n in range(1, levels + 1)]
    return b"---\nname: x\ndescription: bomb\n" + "\n".join(lines).encode() + b"\n---\n"


CASES: dict[str, Callable[[], bytes]] = {
    "billion laughs (9 levels, 10^9 values)": lambda: billion_laughs(9),
    "billion laughs (20 levels)": lambda: billion_laughs(20),
    "recursive alias": lambda: b"---\nname: x\ndescription: y\nhooks: &h\n  Stop: *h\n---\n",
    "python tag": lambda: b"---\nname: !!python/object/apply:os.system ['id']\ndescription: y\n---\n",
    "60 KB flow list (30,000 values)": lambda: b"---\nname: x\nhooks: [" + b"a," * 30_000 + b"a]\n---\n",
    "6,000 keys": lambda: b"---\n" + b"".join(b"k%d: v\n" % i for i in range(6_000)) + b"---\n",
    "libyaml nesting (5,000 [)": lambda: b"---\nname: x\nhooks: " + b"[" * 5_000 + b"]" * 5_000 + b"\n---\n",
    "frontmatter over 64 KiB": lambda: b"---\nname: x\ndescription: '" + b"x" * 70_000 + b"'\n---\n",
    "SKILL.md over 1 MiB": lambda: GOOD + b"x" * 1_100_000,
    "1 MB body of headings": lambda: GOOD + b"# h\n" * 250_000,
    "1 MB body of code fences": lambda: GOOD + b"```\n" * 250_000,
    "1 MB one line": lambda: GOOD + b"x" * 1_000_000,
    "1 MB unclosed frontmatter": lambda: b"---\n" + b"a: b\n" * 200_000,
    "not UTF-8": lambda: GOOD + b"\xff" * 1_000,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the same cases (they are all small)")
    parser.parse_args()
    results: dict[str, dict[str, object]] = {}
    worst = 0.0
    for label, make in CASES.items():
        data = make()
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            skill = parse_skill_md(data, folder="x")
            best = min(best, time.perf_counter() - started)
        worst = max(worst, best)
        codes = sorted({f.code for f in skill.findings if f.severity.value != "info"})
        results[label] = {"bytes": len(data), "ms": round(best * 1000, 2), "codes": codes}
        print(f"{label:42s} {len(data):>9,} B {best * 1000:8.2f} ms  {', '.join(codes)}", flush=True)
    print(json.dumps({"worst_ms": round(worst * 1000, 2), "cases": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
