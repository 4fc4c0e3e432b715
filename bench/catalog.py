"""Catalog page time: resolution + listing simulation + compaction + rendering, per project.

    .venv/bin/python bench/catalog.py                      # SQLite file in bench/.cache
    .venv/bin/python bench/catalog.py --db postgres://postgres@127.0.0.1:5432/portal_catalog_bench
    .venv/bin/python bench/catalog.py --quick              # 2,500 skills only

A deterministic organisation: 500 projects under 25 teams, 60 organisation-wide skills (managed,
bundled, plugin; some names collide with project skills) and project skills up to the target
count (uneven: 5 to 40 per project; some hidden, some conditional, some look-alike names), each
with a 1-12 KB body. The database is rebuilt for each size (2,500 → 5,000 → 10,000 → 20,000
skills) so the figures show how a project's page grows with the catalog.

For each size, every project's listing-budget page (the heaviest project page: resolution for the
governance default, the listing at 200K, compaction survival over every body, the Chart.js data
and the table) is fetched through Django's test client as a logged-in developer, and the catalog
page filtered to the project for a sample. Reported: median and p95 over projects, queries per
page, and the pure engine time (resolve + listing). The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CACHE = BENCH / ".cache"
SIZES = [2_500, 5_000, 10_000, 20_000]
PROJECTS = 500
TEAMS = 25
ORG_WIDE = 60
WORDS = [
    "deploy",
    "review",
    "migrate",
    "release",
    "audit",
    "lint",
    "format",
    "test",
    "build",
    "publish",
    "rollback",
    "incident",
    "triage",
    "payments",
    "ledger",
    "invoice",
    "customer",
    "search",
    "index",
    "cache",
    "queue",
    "schema",
    "api",
    "client",
    "server",
    "docs",
]


def ensure_postgres_database(db_url: str) -> None:
    """Create the bench's own PostgreSQL database when it does not exist yet."""
    import psycopg
    from psycopg import sql

    base, _, name = db_url.rpartition("/")
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def setup_django(db_url: str) -> None:
    if db_url.startswith(("postgres://", "postgresql://")):
        ensure_postgres_database(db_url)
    os.environ["DATABASE_URL"] = db_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()


def reset_database() -> None:
    """Migrate, then empty every table (the bench owns its database)."""
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    call_command("flush", verbosity=0, interactive=False)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _body(rng: random.Random) -> str:
    parts = ["# Procedure\n\nGotchas first: " + _text(rng, 30) + "\n"]
    size = rng.randint(1_000, 12_000)
    n = 1
    while sum(len(p) for p in parts) < size:
        parts.append(f"\n## Step {n}\n\n" + _text(rng, 120) + "\n")
        n += 1
    return "".join(parts)


def build(total: int, seed: int = 7) -> dict[str, Any]:
    """Bulk-create the organisation and ``total`` skills; returns the projects and a user."""
    from django.contrib.auth.models import User
    from django.utils import timezone

    from governance.skills.models import Skill, SkillVersion, Source
    from portal.accounts.models import Organisation, Profile, Project, Role, Team

    rng = random.Random(seed)
    reset_database()
    org, _ = Organisation.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    teams = [
        Team.objects.get_or_create(
            organisation=org, slug=f"team-{t:02d}", defaults={"name": f"Team {t:02d}"}
        )[0]
        for t in range(TEAMS)
    ]
    existing = set(Project.objects.values_list("slug", flat=True))
    Project.objects.bulk_create(
        [
            Project(team=teams[p % TEAMS], name=f"project-{p:03d}", slug=f"project-{p:03d}")
            for p in range(PROJECTS)
            if f"project-{p:03d}" not in existing
        ]
    )
    projects = list(Project.objects.filter(slug__startswith="project-").order_by("slug"))
    user = User.objects.filter(username="bench-dev").first()
    if user is None:
        user = User.objects.create_user(username="bench-dev", password="bench-password-2026")
        Profile.objects.create(user=user, organisation=org, role=Role.DEVELOPER)

    now = timezone.now()
    sources = [
        Source(kind="managed", identity="managed:/etc/claude-code"),
        Source(kind="bundled", identity="claude-code"),
    ]
    sources += [
        Source(kind="plugin", identity=f"github.com/acme/plugins#{n}", plugin=f"plug{n}") for n in range(3)
    ]
    sources += [Source(kind="project", identity=f"github.com/acme/{p.slug}", project=p) for p in projects]
    Source.objects.bulk_create(sources)
    stored = {s.identity: s for s in Source.objects.all()}
    managed, bundled = stored["managed:/etc/claude-code"], stored["claude-code"]
    plugins = [stored[f"github.com/acme/plugins#{n}"] for n in range(3)]

    specs: list[tuple[Source, str, str, dict[str, Any]]] = []
    org_names = [f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{n}" for n in range(ORG_WIDE)]
    for n, name in enumerate(org_names):
        source = managed if n < 20 else bundled if n < 35 else plugins[n % 3]
        specs.append((source, name, source.plugin, {}))
    project_total = total - ORG_WIDE
    weights = [rng.randint(5, 40) for _ in projects]
    scale = project_total / sum(weights)
    counts = [max(1, round(w * scale)) for w in weights]
    counts[-1] += project_total - sum(counts)
    for project, count in zip(projects, counts, strict=True):
        source = stored[f"github.com/acme/{project.slug}"]
        for k in range(count):
            roll = rng.random()
            extra: dict[str, Any] = {}
            if roll < 0.05:
                name = rng.choice(org_names[:20])  # shadows (or tries to) a managed skill
            elif roll < 0.07:
                name = org_names[0].replace("e", "е", 1)  # Cyrillic look-alike
            else:
                name = f"{project.slug}-{rng.choice(WORDS)}-{k}"
            if 0.07 <= roll < 0.12:
                extra["disable-model-invocation"] = True
            elif 0.12 <= roll < 0.2:
                extra["paths"] = [f"src/{rng.choice(WORDS)}/**/*.py"]
            specs.append((source, name, "", extra))

    skills = [
        Skill(
            source=src,
            location=f".claude/skills/{name}-{i}",
            name=name,
            plugin=plugin,
            created_at=now,
            updated_at=now,
        )
        for i, (src, name, plugin, _extra) in enumerate(specs)
    ]
    Skill.objects.bulk_create(skills, batch_size=2_000)
    skill_rows = list(Skill.objects.order_by("id"))
    versions = []
    for skill, (_src, name, _plugin, extra) in zip(skill_rows, specs, strict=True):
        description = (
            _text(rng, rng.randint(8, 45)).capitalize() + ". Use when asked to " + _text(rng, 4) + "."
        )
        fm = {"name": name, "description": description, **extra}
        versions.append(
            SkillVersion(
                skill=skill,
                number=1,
                package_sha256=f"{skill.pk:064x}",
                skill_md_sha256=f"{skill.pk:064x}",
                frontmatter=fm,
                frontmatter_text="",
                body=_body(rng),
                description=description,
                valid=True,
                findings=[],
                created_at=now,
            )
        )
    SkillVersion.objects.bulk_create(versions, batch_size=1_000)
    by_skill = dict(SkillVersion.objects.values_list("skill_id", "id"))
    for skill in skill_rows:
        skill.current_version_id = by_skill[skill.pk]
    Skill.objects.bulk_update(skill_rows, ["current_version"], batch_size=2_000)
    from django.db import connection

    if connection.vendor == "postgresql":
        # What autovacuum does shortly after a bulk load; without statistics the planner takes
        # 20,000 skills for 17 rows and nests loops over every source.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return {"projects": projects, "user": user}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def measure(total: int, sample_catalog: int) -> dict[str, Any]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from governance.skills import catalog_selectors as sel

    started = time.perf_counter()
    data = build(total)
    build_s = time.perf_counter() - started
    client = Client()
    client.force_login(data["user"])
    client.get("/catalog/listing/?project=project-000")  # warm up templates and caches

    page_ms: list[float] = []
    queries: list[int] = []
    engine_ms: list[float] = []
    scope_sizes: list[int] = []
    for project in data["projects"]:
        with CaptureQueriesContext(connection) as ctx:
            t0 = time.perf_counter()
            response = client.get(f"/catalog/listing/?project={project.slug}&window=200000")
            page_ms.append((time.perf_counter() - t0) * 1000)
        assert response.status_code == 200, response.status_code
        queries.append(len(ctx.captured_queries))
        rows = sel.scope_rows(project)
        scope_sizes.append(len(rows))
        t0 = time.perf_counter()
        cat = sel.project_catalog(project, "trust-first", rows=rows)
        sel.project_listing(cat, window_tokens=200_000, profile="classic")
        engine_ms.append((time.perf_counter() - t0) * 1000)

    catalog_ms: list[float] = []
    for project in data["projects"][:: max(1, len(data["projects"]) // sample_catalog)]:
        t0 = time.perf_counter()
        response = client.get(f"/catalog/?project={project.slug}")
        catalog_ms.append((time.perf_counter() - t0) * 1000)
        assert response.status_code == 200

    from governance.skills.catalog_selectors import clear_cache

    org_wide: dict[str, tuple[float, float]] = {}
    for label, url in (("catalog", "/catalog/"), ("fleet", "/catalog/fleet/"), ("dashboard", "/")):
        clear_cache()
        t0 = time.perf_counter()
        assert client.get(url).status_code == 200
        cold = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        assert client.get(url).status_code == 200
        org_wide[label] = (round(cold), round((time.perf_counter() - t0) * 1000, 1))

    return {
        "org_wide": org_wide,
        "skills": total,
        "projects": len(data["projects"]),
        "build_s": round(build_s, 1),
        "scope_median": statistics.median(scope_sizes),
        "project_page_median_ms": round(statistics.median(page_ms), 1),
        "project_page_p95_ms": round(percentile(page_ms, 0.95), 1),
        "project_page_max_ms": round(max(page_ms), 1),
        "queries_per_page": max(queries),
        "engine_median_ms": round(statistics.median(engine_ms), 2),
        "engine_p95_ms": round(percentile(engine_ms, 0.95), 2),
        "catalog_page_median_ms": round(statistics.median(catalog_ms), 1),
        "catalog_page_p95_ms": round(percentile(catalog_ms, 0.95), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", default="", help="database URL (default: a SQLite file in bench/.cache)")
    parser.add_argument("--quick", action="store_true", help="2,500 skills only")
    parser.add_argument("--sample", type=int, default=50, help="projects sampled for the catalog page")
    parser.add_argument(
        "--sizes", default="", help="comma-separated skill counts (default 2500,5000,10000,20000)"
    )
    args = parser.parse_args()
    CACHE.mkdir(exist_ok=True)
    db_url = args.db or f"sqlite:///{CACHE / 'catalog-bench.sqlite3'}"
    setup_django(db_url)
    sizes = SIZES[:1] if args.quick else SIZES
    if args.sizes:
        sizes = [int(n) for n in args.sizes.split(",") if n.strip()]
    results = []
    print(f"database: {db_url.split('@')[-1]}")
    print(
        "| skills | median skills per project scope | project page median | p95 | max | queries | engine median | p95 | catalog page median | p95 | build |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for total in sizes:
        r = measure(total, args.sample)
        results.append(r)
        print(
            f"| {r['skills']:,} | {r['scope_median']:.0f} | {r['project_page_median_ms']} ms | {r['project_page_p95_ms']} ms "
            f"| {r['project_page_max_ms']} ms | {r['queries_per_page']} | {r['engine_median_ms']} ms | {r['engine_p95_ms']} ms "
            f"| {r['catalog_page_median_ms']} ms | {r['catalog_page_p95_ms']} ms | {r['build_s']} s |",
            flush=True,
        )
    print()
    print("| skills | catalog (all projects) cold / warm | fleet cold / warm | dashboard cold / warm |")
    print("|---|---|---|---|")
    for r in results:
        o = r["org_wide"]
        print(
            f"| {r['skills']:,} | {o['catalog'][0]} / {o['catalog'][1]} ms | {o['fleet'][0]} / {o['fleet'][1]} ms "
            f"| {o['dashboard'][0]} / {o['dashboard'][1]} ms |"
        )
    headline = next((r for r in results if r["skills"] == 10_000), results[-1])
    print(
        json.dumps(
            {
                "project_page_p95_ms": headline["project_page_p95_ms"],
                "project_page_median_ms": headline["project_page_median_ms"],
                "skills": headline["skills"],
                "projects": headline["projects"],
                "database": "postgresql" if db_url.startswith("postgres") else "sqlite",
                "growth": {str(r["skills"]): r["project_page_p95_ms"] for r in results},
            }
        )
    )


if __name__ == "__main__":
    main()
