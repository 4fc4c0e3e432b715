"""Run every benchmark in bench/ with --quick and print the last JSON line of each.

A benchmark is a script ``bench/<claim>.py`` (not starting with ``_``) that accepts ``--quick`` and
prints its result as one JSON object on its last line of output. Dropping a new script here is
enough for ``make bench`` to run it. Exits non-zero if any benchmark fails or prints no JSON.

    .venv/bin/python bench/run_all.py [--full] [--timeout SECONDS] [name ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
SKIP = {"run_all.py", "__init__.py"}


def discover(names: list[str], directory: Path = BENCH_DIR) -> list[Path]:
    scripts = sorted(p for p in directory.glob("*.py") if p.name not in SKIP and not p.name.startswith("_"))
    if names:
        wanted = {n.removesuffix(".py") for n in names}
        unknown = wanted - {p.stem for p in scripts}
        if unknown:
            raise SystemExit(f"no benchmark named {', '.join(sorted(unknown))} in {directory}")
        scripts = [p for p in scripts if p.stem in wanted]
    return scripts


def last_json_line(output: str) -> dict[str, object] | None:
    for line in reversed(output.strip().splitlines()):
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None
    return None


def run(script: Path, *, quick: bool, timeout: float) -> tuple[bool, dict[str, object]]:
    command = [sys.executable, str(script)] + (["--quick"] if quick else [])
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, {"bench": script.stem, "error": f"timed out after {timeout:.0f}s"}
    seconds = round(time.monotonic() - started, 2)
    result = last_json_line(done.stdout)
    if done.returncode != 0 or result is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        reason = f"exit {done.returncode}" if done.returncode != 0 else "no JSON object on the last line"
        return False, {"bench": script.stem, "error": reason, "output_tail": tail, "seconds": seconds}
    return True, {"bench": script.stem, "seconds": seconds, "result": result}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help="only these benchmarks (file names without .py)")
    parser.add_argument("--full", action="store_true", help="run without --quick")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per benchmark")
    args = parser.parse_args(argv)
    scripts = discover(args.names)
    if not scripts:
        print(json.dumps({"error": f"no benchmarks found in {BENCH_DIR}"}))
        return 1
    failures = 0
    for script in scripts:
        ok, line = run(script, quick=not args.full, timeout=args.timeout)
        failures += not ok
        print(json.dumps(line), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
