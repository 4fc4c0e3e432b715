"""A week of synthetic telemetry for the demo skills (idempotent: deterministic event ids).

Runs after the skills demo: skills in the catalog appear by name; two private skills (unknown to
the catalog) appear as pseudonyms, as they would from real agents. Goes through the real ingest
path (validation, pseudonymisation, bulk insert) and computes the rollups.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

from django.utils import timezone

from governance.engine.telemetry import validate_event
from governance.telemetry.models import Channel
from governance.telemetry.services import events_store, rollup_compute

DEMO_NAMESPACE = uuid.UUID("0d7c1e52-5d43-4b8a-9f0e-3a2b1c4d5e6f")
FALLBACK_SKILLS = ["deploy", "security-review", "incident-rca", "write-changelog", "db-migration"]
PRIVATE_SKILLS = ["deploy-to-acme-prod", "migrate-hsbc-ledger"]
VERSIONS = ["2.0.14", "2.1.3", "2.1.7"]
SESSIONS_PER_DAY = 24


def _skill_names() -> list[tuple[str, str]]:
    from governance.skills.models import Skill

    rows = list(
        Skill.objects.filter(removed_at__isnull=True)
        .select_related("source")
        .order_by("name")
        .values_list("name", "plugin", "source__kind")[:12]
    )
    names = [(f"{plugin}:{name}" if plugin else name, kind) for name, plugin, kind in rows]
    return names or [(name, "project") for name in FALLBACK_SKILLS]


def _events_for_day(
    day: datetime, skills: list[tuple[str, str]], teams: list[str], projects: list[str]
) -> list[dict[str, Any]]:
    rng = random.Random(day.date().toordinal())
    events: list[dict[str, Any]] = []
    counter = 0

    def add(moment: datetime, session: str, version: str, team: str, project: str, **fields: Any) -> None:
        nonlocal counter
        counter += 1
        events.append(
            {
                "event_id": str(uuid.uuid5(DEMO_NAMESPACE, f"{day.date()}:{counter}")),
                "timestamp": moment.isoformat(),
                "agent": "claude-code",
                "agent_version": version,
                "session": session,
                "user": f"demo-user-{rng.randint(1, 9)}",
                "team": team,
                "project": project,
                **fields,
            }
        )

    popular = skills[: max(1, len(skills) // 2)]
    for index in range(SESSIONS_PER_DAY):
        session = f"demo-{day.date()}-{index}"
        version = rng.choices(VERSIONS, weights=[1, 3, 2])[0]
        team = rng.choice(teams) if teams else ""
        project = rng.choice(projects) if projects else ""
        moment = day + timedelta(hours=8, minutes=index * 25 + rng.randint(0, 20))
        if version == "2.0.14" or rng.random() < 0.2:  # the older release degrades its listing
            mode = "name_only" if version == "2.0.14" else "truncated"
            cut = rng.sample(skills, k=min(len(skills), 3))
            add(
                moment,
                session,
                version,
                team,
                project,
                type="listing_degraded",
                skill_count=len(skills) + 20,
                budget=8000,
                full_total=9100,
                truncation_mode=mode,
                bundled_count=4,
                bundled_chars=900,
                cut_skills=[{"name": name, "source": kind} for name, kind in cut],
            )
        used = [*rng.sample(popular, k=min(len(popular), 2)), rng.choice(skills)]
        if rng.random() < 0.35:
            used.append((rng.choice(PRIVATE_SKILLS), "user"))
        for offset, (name, kind) in enumerate(used):
            when = moment + timedelta(minutes=2 + offset * 3)
            skill = {"name": name, "source": kind}
            add(when, session, version, team, project, type="skill_loaded", skill=skill, loaded_from=kind)
            trigger = rng.choices(["model", "user-slash", "nested"], weights=[6, 3, 1])[0]
            add(
                when + timedelta(seconds=5),
                session,
                version,
                team,
                project,
                type="skill_invoked",
                skill=skill,
                trigger=trigger,
            )
            add(
                when + timedelta(seconds=30),
                session,
                version,
                team,
                project,
                type="api_request",
                skill=skill,
                input_tokens=rng.randint(2000, 9000),
                output_tokens=rng.randint(200, 1500),
                cost_usd=round(rng.uniform(0.01, 0.2), 4),
                model="claude-sonnet-4-5",
            )
        if rng.random() < 0.4:
            when = moment + timedelta(minutes=40)
            add(
                when,
                session,
                version,
                team,
                project,
                type="compaction",
                pre_tokens=rng.randint(150_000, 190_000),
                post_tokens=rng.randint(20_000, 40_000),
            )
            for name, kind in used[:2]:
                cut_tail = rng.random() < 0.3
                add(
                    when + timedelta(seconds=1),
                    session,
                    version,
                    team,
                    project,
                    type="skill_reinjected",
                    skill={"name": name, "source": kind},
                    tokens_kept=5000 if cut_tail else rng.randint(800, 4000),
                    tokens_cut=rng.randint(300, 3000) if cut_tail else 0,
                )
            if version == "2.0.14" and rng.random() < 0.6:  # a ghost: evicted, then refused as already loaded
                name, kind = used[0]
                skill = {"name": name, "source": kind}
                add(
                    when + timedelta(seconds=2),
                    session,
                    version,
                    team,
                    project,
                    type="skill_evicted",
                    skill=skill,
                    reason="compaction",
                    resolved=True,
                )
                add(
                    when + timedelta(minutes=5),
                    session,
                    version,
                    team,
                    project,
                    type="skill_invoked",
                    skill=skill,
                    trigger="user-slash",
                    outcome="already_loaded",
                )
    return events


def seed(*, demo: Any, stdout: TextIO) -> None:
    skills = _skill_names()
    teams = list(getattr(demo, "teams", {}).keys())
    projects = list(getattr(demo, "projects", {}).keys())
    today = timezone.now().astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    now = timezone.now()
    stored = 0
    for days_back in range(7, 0, -1):
        day = today - timedelta(days=days_back)
        raw = _events_for_day(day, skills, teams, projects)
        valid = [validate_event(event, now=now, max_age_days=3650) for event in raw]
        inserted, _ = events_store(events=valid, channel=Channel.API)
        stored += len(inserted)
        rollup_compute(day=day.date())
    stdout.write(f"Telemetry: {stored} demo events stored for {len(skills)} skills over 7 days.\n")
