"""Ingest throughput: this engine's check vs the reference checker vs a floor, and a full ingest
into PostgreSQL, over one deterministic synthetic corpus.

    .venv/bin/python bench/ingest.py            # 10,000 skills
    .venv/bin/python bench/ingest.py --quick    # 2,000 skills, under a minute

Phases, each in its own process so its peak RSS is its own:

- ``check``: ``skillfile.load_skill_folder`` on every skill folder (every package file read and
  hashed, SKILL.md parsed, every rule applied), the engine's whole per-skill work;
- ``skills_ref``: ``skills_ref.validate`` on the same folders, in a separate virtual environment
  (bench/.cache/skills-ref-venv) with skills-ref 0.1.1 from the package index;
- ``floor``: read every file of every folder, split the frontmatter at the first ``---`` line and
  load it with PyYAML's C loader: what no checker can go below;
- ``ingest``: ``governance.skills.services.source_ingest`` (scan + one transaction of bulk inserts)
  into a PostgreSQL database of its own (``--pg-url``, created and migrated if needed).

The corpus (bench/.corpus/, never committed) is generated from a seed: ~10% of the skills break a
rule of the specification, in ten different ways. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CORPUS_ROOT = BENCH / ".corpus"
CACHE = BENCH / ".cache"
REFERENCE = "skills-ref==0.1.1"
DEFAULT_PG = "postgres://postgres@127.0.0.1:5432/portal_engine_bench"
CORPUS_VERSION = 1

VERBS = ["review", "format", "write", "audit", "test", "plan", "summarise", "triage", "explain", "refactor"]
NOUNS = [
    "pull-request",
    "changelog",
    "migration",
    "api",
    "schema",
    "incident",
    "invoice",
    "release",
    "docs",
    "query",
]
WORDS = [
    "use",
    "when",
    "the",
    "user",
    "asks",
    "to",
    "check",
    "the",
    "build",
    "pipeline",
    "and",
    "report",
    "failures",
    "with",
    "the",
    "exact",
    "command",
    "that",
    "failed",
    "then",
    "suggest",
    "the",
    "smallest",
    "fix",
    "keep",
    "the",
    "output",
    "short",
    "and",
    "list",
    "files",
    "touched",
    "first",
    "always",
    "run",
    "the",
    "tests",
    "before",
    "saying",
    "done",
    "never",
    "push",
    "to",
    "main",
    "without",
    "review",
]
INVALID_KINDS = [
    "folder-mismatch",
    "uppercase",
    "no-description",
    "long-description",
    "bad-yaml",
    "unclosed",
    "underscore",
    "long-compatibility",
    "no-frontmatter",
    "double-hyphen",
]


# --- corpus -------------------------------------------------------------------------------------


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _body(rng: random.Random, name: str) -> str:
    sections = rng.choice([2, 3, 4, 6, 8]) if rng.random() > 0.05 else 40  # 5% past 5,000 tokens
    parts = [f"# {name}\n\n{_sentence(rng, 20)}\n"]
    for index in range(sections):
        parts.append(f"\n## Step {index + 1}\n\n")
        parts.extend(f"- {_sentence(rng, rng.randint(8, 24))}\n" for _ in range(rng.randint(3, 10)))
        if rng.random() < 0.3:
            parts.append("\n```bash\ngit status --short\n```\n")
    return "".join(parts)


def _frontmatter(rng: random.Random, name: str) -> list[str]:
    lines = [f"name: {name}", f"description: {_sentence(rng, rng.randint(10, 45))}"]
    roll = rng.random()
    if roll < 0.3:
        lines.append("allowed-tools: Bash(git status:*) Bash(git diff:*) Read Grep")
    elif roll < 0.4:
        lines += ["allowed-tools:", "  - Read", "  - Bash(gh pr view:*)"]
    if rng.random() < 0.3:
        lines += ["metadata:", "  author: platform-team", '  version: "1.2"']
    if rng.random() < 0.2:
        lines.append("license: Apache-2.0")
    if rng.random() < 0.1:
        lines.append("compatibility: Requires git and Python 3.11+")
    return lines


def _skill_md(rng: random.Random, name: str, invalid: str | None) -> tuple[str, str]:
    """(folder name, SKILL.md text) for one skill."""
    folder = name
    lines = _frontmatter(rng, name)
    if invalid == "folder-mismatch":
        folder = name + "-old"
    elif invalid == "uppercase":
        folder = name.title()
        lines[0] = f"name: {folder}"
    elif invalid == "no-description":
        del lines[1]
    elif invalid == "long-description":
        lines[1] = "description: " + "x" * 1100
    elif invalid == "bad-yaml":
        lines.append("argument: [unclosed")
    elif invalid == "underscore":
        folder = name.replace("-", "_")
        lines[0] = f"name: {folder}"
    elif invalid == "long-compatibility":
        lines.append("compatibility: " + "y" * 600)
    elif invalid == "double-hyphen":
        folder = name.replace("-", "--", 1)
        lines[0] = f"name: {folder}"
    body = _body(rng, name)
    if invalid == "no-frontmatter":
        return folder, body
    if invalid == "unclosed":
        return folder, "---\n" + "\n".join(lines) + "\n\n" + body
    return folder, "---\n" + "\n".join(lines) + "\n---\n\n" + body


def corpus_build(count: int, seed: int) -> Path:
    """Write the corpus once per (count, seed, version); later runs reuse it."""
    root = CORPUS_ROOT / f"v{CORPUS_VERSION}-{count}-{seed}"
    done = root / ".complete"
    if done.exists():
        return root
    # Its own repository: bench/.corpus is git-ignored here, and the scanner rightly skips
    # ignored folders of the repository it walks up to.
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "--quiet", str(root)], check=True)
    rng = random.Random(seed)
    skills = root / "skills"
    skills.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        name = f"{rng.choice(VERBS)}-{rng.choice(NOUNS)}-{index:05d}"
        invalid = INVALID_KINDS[index // 10 % len(INVALID_KINDS)] if index % 10 == 7 else None
        folder, text = _skill_md(rng, name, invalid)
        path = skills / folder
        path.mkdir(exist_ok=True)
        (path / "SKILL.md").write_text(text)
        if rng.random() < 0.3:
            (path / "scripts").mkdir(exist_ok=True)
            (path / "scripts" / "check.sh").write_text("#!/bin/sh\nset -eu\ngit status --short\n")
        if rng.random() < 0.2:
            (path / "references").mkdir(exist_ok=True)
            (path / "references" / "guide.md").write_text(_body(rng, "guide") * 2)
    done.write_text(json.dumps({"count": count, "seed": seed}))
    return root


def skill_folders(corpus: Path) -> list[Path]:
    return sorted(p for p in (corpus / "skills").iterdir() if p.is_dir())


# --- phases (each runs in its own process) ---------------------------------------------------------


def _rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _cpu_s() -> float:
    return time.process_time()  # user + system CPU of this process, clock_gettime precision


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def phase_check(corpus: Path) -> dict[str, Any]:
    sys.path.insert(0, str(REPO))
    from governance.engine.skillfile import load_skill_folder
    from governance.engine.types import SourceKind

    folders = skill_folders(corpus)
    root = corpus / "skills"
    marks = {len(folders) // 10: "10%", len(folders) // 2: "50%"}
    rss: dict[str, float] = {"start": round(_rss_mb(), 1)}
    invalid = 0
    codes: dict[str, int] = {}
    cpu = _cpu_s()
    started = time.perf_counter()
    for index, folder in enumerate(folders):
        skill = load_skill_folder(folder, root=root, source=SourceKind.PROJECT)
        if not skill.valid:
            invalid += 1
        for finding in skill.findings:
            codes[finding.code] = codes.get(finding.code, 0) + 1
        if index in marks:
            rss[marks[index]] = round(_rss_mb(), 1)
    seconds = time.perf_counter() - started
    cpu = _cpu_s() - cpu
    rss["100%"] = round(_rss_mb(), 1)
    return {
        "skills": len(folders),
        "seconds": seconds,
        "cpu_s": cpu,
        "invalid": invalid,
        "codes": dict(sorted(codes.items())),
        "rss_mb": rss,
        "peak_rss_mb": round(_peak_mb(), 1),
    }


def phase_floor(corpus: Path) -> dict[str, Any]:
    import yaml

    loader = yaml.CSafeLoader
    folders = skill_folders(corpus)
    parsed = 0
    cpu = _cpu_s()
    started = time.perf_counter()
    for folder in folders:
        stack = [str(folder)]
        skill_md = b""
        while stack:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        with open(entry.path, "rb") as handle:
                            content = handle.read()
                        if entry.name == "SKILL.md":
                            skill_md = content
        text = skill_md.decode("utf-8")
        if text.startswith("---\n"):
            end = text.find("\n---\n", 4)
            if end > 0:
                try:
                    yaml.load(text[4:end], Loader=loader)  # noqa: S506 - CSafeLoader is the safe loader
                    parsed += 1
                except yaml.YAMLError:
                    pass
    seconds = time.perf_counter() - started
    cpu = _cpu_s() - cpu
    return {
        "skills": len(folders),
        "seconds": seconds,
        "cpu_s": cpu,
        "parsed": parsed,
        "peak_rss_mb": round(_peak_mb(), 1),
    }


SKILLS_REF_PHASE = """
import json, sys, time, resource
from pathlib import Path
from skills_ref import validate
folders = sorted(p for p in (Path(sys.argv[1]) / "skills").iterdir() if p.is_dir())
invalid = 0
cpu = time.process_time
cpu0 = cpu()
started = time.perf_counter()
for folder in folders:
    if validate(folder):
        invalid += 1
seconds = time.perf_counter() - started
print(json.dumps({"skills": len(folders), "seconds": seconds, "cpu_s": cpu() - cpu0, "invalid": invalid,
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def skills_ref_python() -> Path:
    """skills-ref 0.1.1 in a virtual environment of its own under bench/.cache/."""
    venv = CACHE / "skills-ref-venv"
    python = venv / "bin" / "python"
    if not (venv / ".installed").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(venv)], check=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", REFERENCE],
            check=True,
            capture_output=True,
        )
        (venv / ".installed").touch()
    return python


def phase_skills_ref(corpus: Path) -> dict[str, Any]:
    python = skills_ref_python()
    result = subprocess.run(
        [str(python), "-c", SKILLS_REF_PHASE, str(corpus)],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ.get("PATH", "")},
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _pg_prepare(url: str) -> None:
    import psycopg

    base, _, name = url.rpartition("/")
    with psycopg.connect(f"{base}/postgres", autocommit=True) as connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{name}"')


def phase_ingest(corpus: Path, pg_url: str) -> dict[str, Any]:
    _pg_prepare(pg_url)
    os.environ["DATABASE_URL"] = pg_url
    os.environ.pop("CELERY_BROKER_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from governance.skills.models import (
        Blob,
        IngestRun,
        IngestStatus,
        Skill,
        SkillVersion,
        Source,
        VersionFile,
    )
    from governance.skills.services import source_ingest, source_register

    location = str((corpus / "skills").resolve())
    Source.objects.all().delete()  # the bench database holds only this corpus: start empty
    Blob.objects.all().delete()
    source = source_register(kind="project", location=location, display_name="bench corpus")
    run = IngestRun.objects.create(source=source, source_kind=source.kind, location=source.location)
    rss_before = _rss_mb()
    cpu = _cpu_s()
    started = time.perf_counter()
    run = source_ingest(run=run)
    seconds = time.perf_counter() - started
    cpu = _cpu_s() - cpu
    if run.status != IngestStatus.SUCCEEDED:
        raise SystemExit(f"ingest failed: {run.status} {run.error}")
    return {
        "seconds": seconds,
        "cpu_s": cpu,
        "counts": run.counts,
        "stored": {
            "skills": Skill.objects.filter(source=source).count(),
            "versions": SkillVersion.objects.filter(skill__source=source).count(),
            "files": VersionFile.objects.filter(version__skill__source=source).count(),
            "blobs": Blob.objects.count(),
        },
        "rss_mb_before": round(rss_before, 1),
        "peak_rss_mb": round(_peak_mb(), 1),
    }


def run_phase(phase: str, corpus: Path, pg_url: str) -> dict[str, Any]:
    """Run one phase in a fresh interpreter and return its JSON."""
    result = subprocess.run(
        [sys.executable, __file__, "--phase", phase, "--corpus", str(corpus), "--pg-url", pg_url],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    if result.returncode != 0:
        raise SystemExit(f"phase {phase} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="2,000 skills")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--pg-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_PG))
    parser.add_argument("--no-pg", action="store_true", help="skip the PostgreSQL ingest")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the check and the floor (best counts)")
    parser.add_argument("--phase", choices=["check", "floor", "skills_ref", "ingest"], help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.phase:
        phases = {
            "check": lambda: phase_check(args.corpus),
            "floor": lambda: phase_floor(args.corpus),
            "skills_ref": lambda: phase_skills_ref(args.corpus),
            "ingest": lambda: phase_ingest(args.corpus, args.pg_url),
        }
        print(json.dumps(phases[args.phase]()))
        return 0

    count = 2_000 if args.quick else args.skills
    started = time.perf_counter()
    corpus = corpus_build(count, args.seed)
    print(f"corpus: {count:,} skills in {corpus} ({time.perf_counter() - started:.1f}s)", flush=True)
    # The machine is shared: each fast phase runs --repeat times and the best run counts. Wall
    # time includes waiting for a core; CPU time (user + system) is the work itself, so both are
    # reported.
    checks = [run_phase("check", corpus, args.pg_url) for _ in range(args.repeat)]
    check = min(checks, key=lambda r: r["seconds"])
    check_cpu = min(r["cpu_s"] for r in checks)
    floors = [run_phase("floor", corpus, args.pg_url) for _ in range(args.repeat)]
    floor = min(floors, key=lambda r: r["seconds"])
    floor_cpu = min(r["cpu_s"] for r in floors)
    ref = run_phase("skills_ref", corpus, args.pg_url)
    ingest, ingest_error = None, None
    if not args.no_pg:
        try:
            ingest = run_phase("ingest", corpus, args.pg_url)
        except SystemExit as failed:  # no PostgreSQL here: say so in the result, keep the rest
            ingest_error = str(failed).strip().splitlines()[-1][:300]
            print(f"ingest pg:  not measured: {ingest_error}", flush=True)
    n = check["skills"]
    rows = [
        (
            "check",
            n / check["seconds"],
            n / check_cpu,
            f"{check['invalid']} invalid, RSS {check['rss_mb']} MB",
        ),
        ("floor", n / floor["seconds"], n / floor_cpu, ""),
        ("skills-ref", n / ref["seconds"], n / ref["cpu_s"], f"{ref['invalid']} invalid"),
    ]
    for label, wall, cpu, note in rows:
        print(f"{label:<11} {wall:8.0f} skills/s wall  {cpu:8.0f} skills/cpu-s  {note}", flush=True)
    if ingest:
        print(
            f"ingest pg:  {ingest['seconds']:.2f}s wall, {ingest['cpu_s']:.2f}s cpu  {ingest['stored']}  peak RSS {ingest['peak_rss_mb']} MB",
            flush=True,
        )
    skills_per_s, floor_per_s, ref_per_s = (r[1] for r in rows)
    skills_cpu, floor_cpu_rate, ref_cpu = (r[2] for r in rows)
    summary = {
        "skills": count,
        "invalid": check["invalid"],
        "skills_ref_invalid": ref["invalid"],
        "skills_per_s": round(skills_per_s, 1),
        "skills_ref_per_s": round(ref_per_s, 1),
        "ratio_vs_skills_ref": round(skills_per_s / ref_per_s, 2),
        "floor_per_s": round(floor_per_s, 1),
        "ratio_vs_floor": round(floor_per_s / skills_per_s, 2),
        "skills_per_cpu_s": round(skills_cpu, 1),
        "skills_ref_per_cpu_s": round(ref_cpu, 1),
        "ratio_vs_skills_ref_cpu": round(skills_cpu / ref_cpu, 2),
        "floor_per_cpu_s": round(floor_cpu_rate, 1),
        "ratio_vs_floor_cpu": round(floor_cpu_rate / skills_cpu, 2),
        "ingest_pg_s": round(ingest["seconds"], 2) if ingest else None,
        "ingest_pg_error": ingest_error,
        "ingest_pg_cpu_s": round(ingest["cpu_s"], 2) if ingest else None,
        "ingest_pg_skills_per_s": round(count / ingest["seconds"], 1) if ingest else None,
        "check_runs_s": [round(r["seconds"], 3) for r in checks],
        "check_rss_mb": check["rss_mb"],
        "check_peak_rss_mb": check["peak_rss_mb"],
        "floor_peak_rss_mb": floor["peak_rss_mb"],
        "ingest_peak_rss_mb": ingest["peak_rss_mb"] if ingest else None,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
