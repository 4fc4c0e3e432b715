"""POST /api/v1/telemetry/events: per-event validation, idempotency, limits, auth."""

from __future__ import annotations

import gzip
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from governance.telemetry.models import Event, PendingRollup
from tests.telemetry.factories import auth, native

URL = "/api/v1/telemetry/events"

VALID_BY_TYPE: dict[str, dict[str, Any]] = {
    "skill_loaded": {"loaded_from": "project", "tokens": 1200},
    "skill_invoked": {"trigger": "nested", "outcome": "ok"},
    "listing_degraded": {
        "skill": None,
        "skill_count": 40,
        "budget": 8000,
        "full_total": 9089,
        "truncation_mode": "name_only",
        "bundled_count": 3,
        "bundled_chars": 640,
        "cut_skills": [{"name": "deploy", "source": "project"}, "lint"],
    },
    "compaction": {"skill": None, "pre_tokens": 180000, "post_tokens": 30000},
    "skill_reinjected": {"tokens_kept": 5000, "tokens_cut": 1200},
    "skill_evicted": {"reason": "compaction", "resolved": True},
    "skill_unloaded": {"reason": "unskill"},
    "permission_decision": {"decision": "deny"},
    "hooks_registered": {"hook_count": 2},
}

INVALID_BY_TYPE: dict[str, tuple[dict[str, Any], str]] = {
    "skill_loaded": ({"skill": None}, "skill: required"),
    "skill_invoked": ({"trigger": "telepathy"}, "trigger: must be one of user-slash, model, nested"),
    "listing_degraded": ({"full_total": None}, "full_total: required"),
    "compaction": ({"skill": None, "pre_tokens": -1, "post_tokens": 3}, "pre_tokens: must be at least 0"),
    "skill_reinjected": ({"tokens_kept": "many", "tokens_cut": 0}, "tokens_kept: must be an integer"),
    "skill_evicted": ({"resolved": "yes"}, "resolved: must be true or false"),
    "skill_unloaded": ({"reason": "boredom"}, "reason: must be one of"),
    "permission_decision": ({"decision": "maybe"}, "decision: must be one of allow, ask, deny"),
    "hooks_registered": ({"hook_count": 0}, "hook_count: must be at least 1"),
}


@pytest.fixture
def sender(developer_user: User, make_token: Callable[..., str]) -> Callable[..., Any]:
    token = make_token(developer_user, "telemetry:write")

    def send(events: list[dict[str, Any]], **headers: str) -> Any:
        return Client().post(
            URL,
            data=json.dumps({"events": events}),
            content_type="application/json",
            headers=auth(token, **headers),
        )

    return send


def _event(type_: str, fields: dict[str, Any]) -> dict[str, Any]:
    fields = dict(fields)
    skill = fields.pop("skill", "deploy")
    return native(type_, skill=skill, **fields)


@pytest.mark.django_db
@pytest.mark.parametrize("type_", sorted(VALID_BY_TYPE))
def test_every_type_is_accepted_with_its_fields(type_: str, sender: Callable[..., Any]) -> None:
    event = _event(type_, VALID_BY_TYPE[type_])
    response = sender([event])
    assert response.status_code == 200, response.content
    assert response.json()["accepted"] == [event["event_id"]]
    stored = Event.objects.get(event_id=event["event_id"])
    assert stored.type == type_
    assert stored.agent == "claude-code" and stored.agent_version == "2.1.3"


@pytest.mark.django_db
@pytest.mark.parametrize("type_", sorted(INVALID_BY_TYPE))
def test_each_type_validates_its_own_fields(type_: str, sender: Callable[..., Any]) -> None:
    fields, message = INVALID_BY_TYPE[type_]
    event = _event(type_, {**VALID_BY_TYPE[type_], **fields})
    response = sender([event])
    assert response.status_code == 422
    [rejected] = response.json()["rejected"]
    assert rejected["event_id"] == event["event_id"]
    assert message in rejected["error"]
    assert not Event.objects.exists()


@pytest.mark.django_db
def test_invalid_events_are_refused_one_by_one_and_valid_ones_kept(sender: Callable[..., Any]) -> None:
    good = [native("skill_invoked", trigger="model"), native("skill_loaded")]
    bad_time = native("skill_loaded", timestamp="yesterday")
    bad_type = native("skill_exploded")
    no_id = native("skill_loaded")
    no_id.pop("event_id")
    response = sender([good[0], bad_time, good[1], bad_type, no_id])
    assert response.status_code == 200
    body = response.json()
    assert body["accepted"] == [good[0]["event_id"], good[1]["event_id"]]
    assert [(r["index"], r["event_id"]) for r in body["rejected"]] == [
        (1, bad_time["event_id"]),
        (3, bad_type["event_id"]),
        (4, ""),
    ]
    assert "timestamp" in body["rejected"][0]["error"]
    assert "type: must be one of" in body["rejected"][1]["error"]
    assert body["rejected"][2]["error"] == "event_id: required, a UUID"
    assert set(Event.objects.values_list("event_id", flat=True)) == {uuid.UUID(e["event_id"]) for e in good}


@pytest.mark.django_db
def test_resending_a_batch_stores_nothing_twice(sender: Callable[..., Any]) -> None:
    batch = [native("skill_invoked", trigger="model") for _ in range(5)]
    batch.append(_event("listing_degraded", VALID_BY_TYPE["listing_degraded"]))
    first = sender(batch).json()
    stored = Event.objects.count()
    assert len(first["accepted"]) == 6 and stored == 8  # the degraded listing adds one row per cut skill
    second = sender(batch).json()
    assert second["accepted"] == [] and sorted(second["duplicates"]) == sorted(e["event_id"] for e in batch)
    assert Event.objects.count() == stored
    # The same id twice in one batch is stored once.
    twin = native("skill_loaded")
    third = sender([twin, twin]).json()
    assert third["accepted"] == [twin["event_id"]] and third["duplicates"] == [twin["event_id"]]
    assert Event.objects.filter(event_id=twin["event_id"]).count() == 1


@pytest.mark.django_db
def test_ingest_marks_the_touched_days_pending(sender: Callable[..., Any]) -> None:
    sender([native("skill_loaded"), native("skill_loaded")])
    sender([native("skill_loaded")])
    [pending] = PendingRollup.objects.all()
    assert pending.seq == 2  # two batches, one row for the day


@pytest.mark.django_db
def test_batch_limits(sender: Callable[..., Any]) -> None:
    too_many = [native("skill_loaded") for _ in range(1001)]
    response = sender(too_many)
    assert response.status_code == 400
    assert response.json()["detail"] == "events: at most 1000 per batch (got 1001)"
    with override_settings(TELEMETRY_MAX_BATCH_BYTES=2048):
        response = sender([native("skill_loaded") for _ in range(20)])
    assert response.status_code == 413
    assert not Event.objects.exists()


@pytest.mark.django_db
def test_malformed_bodies_get_a_precise_400(developer_user: User, make_token: Callable[..., str]) -> None:
    token = make_token(developer_user, "telemetry:write")
    client = Client()
    not_json = client.post(URL, data=b"{nope", content_type="application/json", headers=auth(token))
    assert not_json.status_code == 400 and "not valid JSON" in not_json.json()["detail"]
    no_list = client.post(
        URL, data=json.dumps({"event": []}), content_type="application/json", headers=auth(token)
    )
    assert no_list.status_code == 400 and '{"events": [...]}' in no_list.json()["detail"]


@pytest.mark.django_db
def test_gzip_bodies_are_accepted(developer_user: User, make_token: Callable[..., str]) -> None:
    token = make_token(developer_user, "telemetry:write")
    event = native("skill_invoked", trigger="user-slash")
    body = gzip.compress(json.dumps({"events": [event]}).encode())
    response = Client().post(
        URL, data=body, content_type="application/json", headers=auth(token, **{"Content-Encoding": "gzip"})
    )
    assert response.status_code == 200 and response.json()["accepted"] == [event["event_id"]]


@pytest.mark.django_db
def test_a_token_without_the_scope_or_a_session_is_refused(
    developer_user: User, developer_client: Client, make_token: Callable[..., str]
) -> None:
    token = make_token(developer_user, "skills:read")
    data = json.dumps({"events": [native("skill_loaded")]})
    assert (
        Client().post(URL, data=data, content_type="application/json", headers=auth(token)).status_code == 401
    )
    assert Client().post(URL, data=data, content_type="application/json").status_code == 401
    assert developer_client.post(URL, data=data, content_type="application/json").status_code == 401
    assert not Event.objects.exists()


@pytest.mark.django_db
def test_over_capacity_answers_429_with_retry_after(sender: Callable[..., Any]) -> None:
    with override_settings(TELEMETRY_MAX_CONCURRENT_INGEST=0):
        response = sender([native("skill_loaded")])
    assert response.status_code == 429
    assert response["Retry-After"] == "1"
    assert not Event.objects.exists()


@pytest.mark.django_db
def test_events_outside_the_retention_window_are_refused(sender: Callable[..., Any]) -> None:
    old = native("skill_loaded", timestamp="2001-01-01T00:00:00Z")
    future = native("skill_loaded", timestamp="2999-01-01T00:00:00Z")
    naive = native("skill_loaded", timestamp="2026-11-30T10:00:00")
    body = sender([old, future, naive]).json()
    errors = [r["error"] for r in body["rejected"]]
    assert "older than the retention period" in errors[0]
    assert "in the future" in errors[1]
    assert "has no time zone" in errors[2]
