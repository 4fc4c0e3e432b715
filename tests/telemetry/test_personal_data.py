"""Private skill names, session and user ids and e-mail addresses never reach the database."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from governance.skills.models import Skill, Source
from governance.telemetry.models import Event, SkillDaily
from governance.telemetry.services import rollups_sweep
from tests.telemetry.factories import auth, claude_log, claude_logs_payload, claude_metrics_payload, native

PRIVATE = ["deploy-to-acme-prod", "migrate-hsbc-ledger", "acme-secret-plugin"]
EMAIL = "dana.private@acme-corp.example"
RAW_IDS = ["0a1b2c3d-session", "acc-7f3e", "native-session-42", "native-user-7"]


def dump_database() -> str:
    """Every row of every table (partitions included), every column, as text."""
    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(include_views=False):
            cursor.execute(f'SELECT * FROM "{table}"')  # noqa: S608 (names from the catalog)
            for row in cursor.fetchall():
                for value in row:
                    if isinstance(value, bytes | memoryview):
                        value = bytes(value).decode("utf-8", "replace")
                    elif isinstance(value, dict | list):
                        value = json.dumps(value)
                    chunks.append(str(value))
    return "\n".join(chunks)


@pytest.mark.django_db
def test_private_names_and_identities_are_not_stored_by_either_endpoint(
    developer_user: User, make_token: Callable[..., str]
) -> None:
    source = Source.objects.create(kind="project", identity="github.com/acme/payments-api")
    known = Skill.objects.create(source=source, location=".claude/skills/code-review", name="code-review")
    token = make_token(developer_user, "telemetry:write")

    native_events: list[dict[str, Any]] = [
        native(
            "skill_invoked",
            skill="deploy-to-acme-prod",
            trigger="user-slash",
            session="native-session-42",
            user=EMAIL,
        ),
        native(
            "skill_loaded",
            skill="migrate-hsbc-ledger",
            source="user",
            loaded_from="/home/dana/.claude/skills/migrate-hsbc-ledger",
            user="native-user-7",
        ),
        native(
            "permission_decision",
            skill="deploy-to-acme-prod",
            decision="deny",
            rule="Skill(deploy-to-acme-prod)",
        ),
        native("skill_invoked", skill="code-review", trigger="model"),
        native(
            "listing_degraded",
            skill=None,
            skill_count=30,
            budget=8000,
            full_total=9089,
            truncation_mode="truncated",
            bundled_count=2,
            bundled_chars=400,
            cut_skills=[{"name": "migrate-hsbc-ledger"}, {"name": "code-review"}],
        ),
        native("plugin_loaded", skill=None, plugin="acme-secret-plugin"),
    ]
    response = Client().post(
        "/api/v1/telemetry/events",
        data=json.dumps({"events": native_events}),
        content_type="application/json",
        headers=auth(token),
    )
    assert response.status_code == 200 and response.json()["counts"]["accepted"] == len(native_events)

    logs = claude_logs_payload(
        [
            claude_log(
                "skill_activated",
                {
                    "skill.name": "custom_skill",
                    "skill.source": "userSettings",
                    "invocation_trigger": "user-slash",
                },
            ),
            claude_log(
                "api_request",
                {
                    "skill.name": "deploy-to-acme-prod",
                    "cost_usd": 0.2,
                    "input_tokens": 10,
                    "output_tokens": 5,
                    "model": "claude-sonnet-4-5",
                },
            ),
            claude_log("plugin_loaded", {"plugin.name": "acme-secret-plugin"}),
            claude_log("hook_registered", {"skill.name": "migrate-hsbc-ledger"}),
        ]
    )
    assert (
        Client()
        .post("/otlp/v1/logs", data=json.dumps(logs), content_type="application/json", headers=auth(token))
        .status_code
        == 200
    )
    metrics = claude_metrics_payload(
        [
            (
                "claude_code.cost.usage",
                {"skill.name": "migrate-hsbc-ledger", "user.email": EMAIL, "user.id": "acc-7f3e"},
                0.3,
            )
        ]
    )
    assert (
        Client()
        .post(
            "/otlp/v1/metrics", data=json.dumps(metrics), content_type="application/json", headers=auth(token)
        )
        .status_code
        == 200
    )
    rollups_sweep()

    # Everything arrived and was rolled up ...
    assert Event.objects.filter(channel="api").exclude(type="listing_cut").count() == len(native_events)
    assert Event.objects.filter(channel="otlp").count() == 5
    assert SkillDaily.objects.exists()
    # ... the known name is linked to the catalog, the anonymous bucket kept as a count ...
    assert set(Event.objects.filter(skill_key="code-review").values_list("skill_id", flat=True)) == {known.pk}
    assert Event.objects.filter(skill_key="custom_skill", type="skill_invoked").count() == 1
    # ... and no private string is anywhere in the database.
    dump = dump_database()
    assert "code-review" in dump  # the dump does see stored names
    for secret in [*PRIVATE, EMAIL, *RAW_IDS, "/home/dana"]:
        assert secret not in dump, f"{secret!r} was stored"
    assert "acme-corp" not in dump


def test_pseudonyms_are_keyed_and_stable() -> None:
    from governance.engine.telemetry import pseudonym

    assert pseudonym("k1", "skill", "deploy-to-acme-prod") == pseudonym("k1", "skill", "deploy-to-acme-prod")
    assert pseudonym("k1", "skill", "deploy-to-acme-prod") != pseudonym("k2", "skill", "deploy-to-acme-prod")
    assert pseudonym("k1", "skill", "x") != pseudonym("k1", "session", "x")
