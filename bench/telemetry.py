"""Telemetry ingest and dashboards at scale, on PostgreSQL behind gunicorn.

    .venv/bin/python bench/telemetry.py [--quick] [--db portal_telemetry_bench] [--workers 3]

1. HTTP: gunicorn (several workers) serves the portal on its own database; separate sender
   processes POST batches of 1,000 native events to /api/v1/telemetry/events → events/s end to end
   (validation, pseudonymisation, COPY into staging, INSERT … ON CONFLICT DO NOTHING, pending marks).
2. COPY: the same rows (already pseudonymised) written by a raw psycopg COPY into the same table.
3. ORM: one ``Event.objects.create`` per event (what a naive ingest would do).
4. Scale: 10 million events (--quick: 200,000) loaded server-side over 30 daily partitions, rollups
   computed per day, then the dashboard pages are fetched through gunicorn → p95 in ms.

Last line: one JSON object with events_per_s, copy_rows_per_s, ratio_vs_copy, orm_rows_per_s,
dashboard_p95_ms (and details). Uses its own database (dropped and recreated) and Redis db 6.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PYTHON = str(ROOT / ".venv" / "bin" / "python")
GUNICORN = str(ROOT / ".venv" / "bin" / "gunicorn")
PG = "postgres://postgres@127.0.0.1:5432"
SKILLS = 200  # distinct skill names in the fleet; the first half are in the catalog
KNOWN = 100
VERSIONS = ["2.0.14", "2.1.3", "2.1.7", "2.2.0"]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- events --------------------------------------------------------------------------------------


def make_events(count: int, seed: int) -> list[dict[str, Any]]:
    """A realistic mix: invocations, loads, spend, degraded listings, compactions, re-injections."""
    import random

    rng = random.Random(seed)
    now = datetime.now(UTC)
    events: list[dict[str, Any]] = []
    for i in range(count):
        skill = (
            f"skill-{rng.randrange(SKILLS):03d}" if rng.random() < 0.8 else f"private-{rng.randrange(5000)}"
        )
        base: dict[str, Any] = {
            "event_id": str(uuid.uuid4()),
            "timestamp": (now - timedelta(minutes=rng.randrange(60 * 48))).isoformat(),
            "agent": "claude-code",
            "agent_version": rng.choice(VERSIONS),
            "session": f"session-{seed}-{i // 25}",
            "user": f"user-{rng.randrange(300)}@example.com",
            "team": rng.choice(["payments", "platform"]),
            "project": rng.choice(["payments-api", "infra"]),
            "skill": {"name": skill, "source": rng.choice(["project", "user", "plugin", "managed"])},
        }
        roll = rng.random()
        if roll < 0.4:
            base.update(type="skill_invoked", trigger=rng.choice(["model", "model", "user-slash", "nested"]))
        elif roll < 0.65:
            base.update(type="skill_loaded", loaded_from="project")
        elif roll < 0.85:
            base.update(
                type="api_request",
                input_tokens=rng.randrange(100, 9000),
                output_tokens=rng.randrange(10, 900),
                cost_usd=round(rng.random() / 10, 5),
                model="claude-sonnet-4-5",
            )
        elif roll < 0.92:
            base.update(type="skill_reinjected", tokens_kept=5000, tokens_cut=rng.choice([0, 0, 800]))
        elif roll < 0.96:
            base.pop("skill")
            base.update(type="compaction", pre_tokens=180000, post_tokens=30000)
        else:
            base.pop("skill")
            base.update(
                type="listing_degraded",
                skill_count=60,
                budget=8000,
                full_total=9500,
                truncation_mode="truncated",
                bundled_count=3,
                bundled_chars=700,
                cut_skills=[{"name": f"skill-{rng.randrange(SKILLS):03d}"} for _ in range(3)],
            )
        events.append(base)
    return events


def sender(url: str, token: str, payloads: list[bytes], results: Any) -> None:
    import requests

    session = requests.Session()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    accepted = 0
    for body in payloads:
        for _attempt in range(20):
            response = session.post(url, data=body, headers=headers, timeout=60)
            if response.status_code in (429, 503):
                time.sleep(float(response.headers.get("Retry-After", "1")) / 10)
                continue
            response.raise_for_status()
            accepted += response.json()["counts"]["accepted"]
            break
    results.put(accepted)


# --- environment ---------------------------------------------------------------------------------


def bench_env(db: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=f"{PG}/{db}",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/6",
        DEBUG="0",
        SECRET_KEY="bench-secret-key-" + "x" * 40,
        ALLOWED_HOSTS="127.0.0.1,localhost",
        TELEMETRY_ROLLUP_DELAY_SECONDS="3600",  # no worker runs: rollups are computed explicitly below
        TELEMETRY_MAX_CONCURRENT_INGEST="4",
        LOG_LEVEL="ERROR",
    )
    return env


def recreate_database(db: str, env: dict[str, str]) -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db}"')
    subprocess.run([PYTHON, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([PYTHON, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)


def start_gunicorn(env: dict[str, str], workers: int, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [
            GUNICORN,
            "portal.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--worker-class",
            "sync",
            "--timeout",
            "120",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    import requests

    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code in (200, 503):
                return process
        except requests.RequestException:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError("gunicorn did not start")


def setup_django(env: dict[str, str]) -> None:
    for key in ("DATABASE_URL", "CELERY_BROKER_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS"):
        os.environ[key] = env[key]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    import django

    django.setup()


def seed_org() -> tuple[str, str]:
    """Teams, projects, half the skills in the catalog, an admin; returns (token, session cookie)."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore

    from governance.skills.models import Skill, Source
    from portal.accounts.models import Organisation, Profile, Project, Role, Team
    from portal.accounts.services import token_create

    org = Organisation.objects.create(name="Bench", slug="bench")
    payments = Team.objects.create(organisation=org, name="Payments", slug="payments")
    platform = Team.objects.create(organisation=org, name="Platform", slug="platform")
    Project.objects.create(team=payments, name="payments-api", slug="payments-api")
    Project.objects.create(team=platform, name="infra", slug="infra")
    source = Source.objects.create(kind="project", identity="github.com/bench/skills")
    Skill.objects.bulk_create(
        Skill(source=source, location=f".claude/skills/skill-{i:03d}", name=f"skill-{i:03d}")
        for i in range(KNOWN)
    )
    user = User.objects.create_user(
        username="bench-admin", password="bench-admin-password", is_superuser=True
    )
    Profile.objects.create(user=user, organisation=org, role=Role.ADMIN)
    _, token = token_create(user=user, name="bench", scopes=["telemetry:write"])
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return token, str(session.session_key)


# --- measurements --------------------------------------------------------------------------------


def measure_http(port: int, token: str, events: int, senders: int) -> tuple[float, int]:
    batches = [json.dumps({"events": make_events(1000, seed)}).encode() for seed in range(events // 1000)]
    chunks = [batches[i::senders] for i in range(senders)]
    url = f"http://127.0.0.1:{port}/api/v1/telemetry/events"
    # Warm-up: one batch per worker so imports and connections are not timed.
    warm = [json.dumps({"events": make_events(200, 10_000 + i)}).encode() for i in range(senders)]
    results: Any = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=sender, args=(url, token, [w], results)) for w in warm]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    for _ in warm:
        results.get()
    results = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=sender, args=(url, token, chunk, results)) for chunk in chunks]
    start = time.perf_counter()
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    elapsed = time.perf_counter() - start
    accepted = sum(results.get() for _ in procs)
    return accepted / elapsed, accepted


def measure_copy(events: int) -> tuple[float, float]:
    """The same rows as the HTTP path stores (validated and pseudonymised beforehand, not timed)."""
    from django.db import connection
    from django.utils import timezone
    from psycopg.types.json import Jsonb

    from governance.engine.telemetry import validate_event
    from governance.telemetry.partitions import partitions_ensure
    from governance.telemetry.services import COLUMNS, Resolver, _rows

    now = timezone.now()
    raw = make_events(events, seed=777_777)
    valid = [validate_event(e, now=now, max_age_days=90) for e in raw]
    rows = _rows(valid, channel="api", resolver=Resolver.for_events(valid))
    partitions_ensure({row[1].date() for row in rows})
    connection.ensure_connection()
    pg = connection.connection
    start = time.perf_counter()
    with (
        pg.cursor() as cursor,
        cursor.copy(f"COPY telemetry_event ({', '.join(COLUMNS)}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row((*row[:-1], Jsonb(row[-1])))
    pg.commit()
    elapsed = time.perf_counter() - start
    return len(rows) / elapsed, len(valid) / elapsed


def measure_orm(events: int) -> float:
    from django.utils import timezone

    from governance.engine.telemetry import validate_event
    from governance.telemetry.models import Event
    from governance.telemetry.services import COLUMNS, Resolver, _rows

    now = timezone.now()
    raw = make_events(events, seed=888_888)
    valid = [validate_event(e, now=now, max_age_days=90) for e in raw]
    rows = _rows(valid, channel="api", resolver=Resolver.for_events(valid))
    start = time.perf_counter()
    for row in rows:
        Event.objects.create(**dict(zip(COLUMNS, row, strict=True)))
    return len(rows) / (time.perf_counter() - start)


LOAD_SQL = """
INSERT INTO telemetry_event (event_id, occurred_at, received_at, type, channel, agent, agent_version,
    session, actor, team_id, project_id, skill_id, skill_key, skill_source, trigger, outcome,
    tokens, tokens_kept, tokens_cut, cost_usd, data)
SELECT gen_random_uuid(),
       %(day)s::timestamptz + (g %% 86400) * interval '1 second',
       now(),
       (ARRAY['skill_invoked','skill_invoked','skill_loaded','api_request','listing_cut','skill_reinjected',
              'compaction','listing_degraded','skill_evicted','skill_invoked'])[1 + g %% 10],
       'api', 'claude-code',
       (ARRAY['2.0.14','2.1.3','2.1.7','2.2.0'])[1 + (g / 7) %% 4],
       'sess' || (g / 40), 'actor' || (g %% 500),
       (%(team)s::int[])[1 + (g / 3) %% 2], (%(project)s::int[])[1 + (g / 3) %% 2],
       CASE WHEN (g * 7919) %% 200 < 100 THEN (%(skill_ids)s::int[])[1 + (g * 7919) %% 200] END,
       CASE WHEN g %% 10 IN (6, 7) THEN '' ELSE 'skill-' || lpad(((g * 7919) %% 200)::text, 3, '0') END,
       'project',
       (ARRAY['model','user-slash','nested','model'])[1 + g %% 4],
       CASE WHEN g %% 10 = 4 THEN 'truncated' WHEN g %% 97 = 0 THEN 'already_loaded' ELSE 'ok' END,
       CASE WHEN g %% 10 = 3 THEN 2000 + g %% 5000 ELSE 0 END,
       0,
       CASE WHEN g %% 10 = 5 AND g %% 3 = 0 THEN 700 ELSE 0 END,
       CASE WHEN g %% 10 = 3 THEN (g %% 100) / 1000.0 ELSE 0 END,
       CASE WHEN g %% 10 = 6 THEN '{"pre_tokens": 180000, "post_tokens": 30000}'::jsonb ELSE '{}'::jsonb END
FROM generate_series(1::bigint, %(count)s::bigint) AS g
"""


def load_scale(total: int, days: int) -> float:
    from django.db import connection

    from governance.skills.models import Skill
    from governance.telemetry.partitions import partitions_ensure
    from portal.accounts.models import Project, Team

    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    day_list = [today - timedelta(days=d) for d in range(days, 0, -1)]
    partitions_ensure(d.date() for d in day_list)
    skill_ids = list(Skill.objects.order_by("name").values_list("id", flat=True))
    teams = list(Team.objects.order_by("slug").values_list("id", flat=True))
    projects = list(Project.objects.order_by("slug").values_list("id", flat=True))
    per_day = total // days
    start = time.perf_counter()
    if not total:
        return 0.0
    for day in day_list:
        with connection.cursor() as cursor:
            cursor.execute(
                LOAD_SQL,
                {"day": day, "count": per_day, "team": teams, "project": projects, "skill_ids": skill_ids},
            )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE telemetry_event")
    return time.perf_counter() - start


def compute_rollups() -> float:
    from django.db import connection

    from governance.telemetry.models import Event
    from governance.telemetry.services import rollup_compute

    start = time.perf_counter()
    for day in Event.objects.dates("occurred_at", "day"):
        rollup_compute(day=day)
    with connection.cursor() as cursor:  # what autovacuum does soon after bulk writes
        cursor.execute(
            "ANALYZE telemetry_skillday; ANALYZE telemetry_skilldaily; ANALYZE telemetry_fleetdaily"
        )
    return time.perf_counter() - start


def measure_dashboards(port: int, session_key: str, rounds: int) -> dict[str, Any]:
    import requests

    from governance.telemetry.models import SkillDaily

    key = (
        SkillDaily.objects.filter(skill_key="skill-007").values_list("skill_key", flat=True).first()
        or "skill-007"
    )
    pages = {
        "health": "/health/",
        "health_90d": "/health/?days=90",
        "health_by_version": "/health/?group=agent_version",
        "health_team": "/health/?team=1",
        "health_agents": "/health/agents/",
        "health_skill": f"/health/skills/{key}/",
        "telemetry": "/telemetry/",
    }
    session = requests.Session()
    cookies = {"sessionid": session_key}
    timings: dict[str, list[float]] = {name: [] for name in pages}
    for path in pages.values():  # warm-up
        response = session.get(f"http://127.0.0.1:{port}{path}", cookies=cookies, timeout=60)
        if response.status_code != 200 or "Skill governance" not in response.text:
            raise RuntimeError(f"{path} answered {response.status_code}")
    for _ in range(rounds):
        for name, path in pages.items():
            start = time.perf_counter()
            response = session.get(f"http://127.0.0.1:{port}{path}", cookies=cookies, timeout=60)
            timings[name].append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200
    every = [t for values in timings.values() for t in values]
    return {
        "p95_ms": round(statistics.quantiles(every, n=20)[18], 1),
        "pages": {
            name: {
                "p50_ms": round(statistics.median(v), 1),
                "p95_ms": round(statistics.quantiles(v, n=20)[18], 1),
            }
            for name, v in timings.items()
        },
    }


def dashboards_only(env: dict[str, str], workers: int, rounds: int) -> None:
    setup_django(env)
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore

    from governance.telemetry.models import Event, SkillDaily

    user = User.objects.get(username="bench-admin")
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    port = free_port()
    server = start_gunicorn(env, workers, port)
    try:
        dashboards = measure_dashboards(port, str(session.session_key), rounds)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    stored = Event.objects.count()
    log(f"dashboards over {stored:,} events: p95 {dashboards['p95_ms']} ms")
    print(
        json.dumps(
            {
                "dashboard_p95_ms": dashboards["p95_ms"],
                "events_stored": stored,
                "rollup_rows": SkillDaily.objects.count(),
                "pages": dashboards["pages"],
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, under two minutes")
    parser.add_argument("--db", default="portal_telemetry_bench")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers")
    parser.add_argument("--senders", type=int, default=4, help="sender processes")
    parser.add_argument("--skip-scale", action="store_true", help="ingest rates only (no 10M load)")
    parser.add_argument(
        "--dashboards-only", action="store_true", help="re-measure the pages on the database a full run left"
    )
    args = parser.parse_args()
    http_events = 20_000 if args.quick else 100_000
    copy_events = 20_000 if args.quick else 100_000
    orm_events = 1_000 if args.quick else 5_000
    scale_events = 200_000 if args.quick else 10_000_000
    rounds = 10 if args.quick else 40

    env = bench_env(args.db)
    if args.dashboards_only:
        dashboards_only(env, args.workers, rounds)
        return
    log(f"database {args.db}: recreate and migrate")
    recreate_database(args.db, env)
    setup_django(env)
    token, session_key = seed_org()
    port = free_port()
    server = start_gunicorn(env, args.workers, port)
    try:
        log(
            f"HTTP: {http_events} events in batches of 1,000 from {args.senders} processes to {args.workers} workers"
        )
        events_per_s, accepted = measure_http(port, token, http_events, args.senders)
        log(f"  {events_per_s:,.0f} events/s ({accepted} accepted)")
        copy_rows_per_s, copy_events_per_s = measure_copy(copy_events)
        log(f"COPY: {copy_rows_per_s:,.0f} rows/s ({copy_events_per_s:,.0f} events/s)")
        orm_rows_per_s = measure_orm(orm_events)
        log(f"ORM: {orm_rows_per_s:,.0f} rows/s")
        if args.skip_scale:
            scale_events = 0
        log(f"scale: loading {scale_events:,} events over 30 daily partitions")
        load_s = load_scale(scale_events, 30)
        log(f"  loaded in {load_s:.0f} s; computing rollups")
        rollup_s = compute_rollups()
        from governance.telemetry.models import Event, SkillDaily

        stored = Event.objects.count()
        rollup_rows = SkillDaily.objects.count()
        log(f"  rollups in {rollup_s:.0f} s ({rollup_rows} skill-day rows for {stored:,} events)")
        dashboards = (
            measure_dashboards(port, session_key, rounds) if scale_events else {"p95_ms": None, "pages": {}}
        )
        log(f"dashboards: p95 {dashboards['p95_ms']} ms")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    result = {
        "events_per_s": round(events_per_s),
        "copy_rows_per_s": round(copy_rows_per_s),
        # Same unit on both sides: events (a degraded listing is one event and several rows).
        "ratio_vs_copy": round(events_per_s / copy_events_per_s, 3),
        "copy_events_per_s": round(copy_events_per_s),
        "orm_rows_per_s": round(orm_rows_per_s),
        "dashboard_p95_ms": dashboards["p95_ms"],
        "events_stored": stored,
        "rollup_rows": rollup_rows,
        "load_s": round(load_s, 1),
        "rollup_s": round(rollup_s, 1),
        "gunicorn_workers": args.workers,
        "senders": args.senders,
        "pages": dashboards["pages"],
        "quick": args.quick,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
