"""The OTLP/HTTP receiver: Claude Code's documented JSON, the real OpenTelemetry SDK exporter
(protobuf) against a live server, gzip, malformed payloads, partial success, auth and capacity."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from governance.engine.otlp import decode_logs, decode_metrics
from governance.telemetry.models import Event
from tests.telemetry.factories import (
    attr,
    auth,
    claude_log,
    claude_logs_payload,
    claude_metrics_payload,
)

LOGS = "/otlp/v1/logs"
METRICS = "/otlp/v1/metrics"


@pytest.fixture
def token(developer_user: User, make_token: Callable[..., str]) -> str:
    return make_token(developer_user, "telemetry:write")


def post(
    token: str, url: str, payload: Any, *, gz: bool = False, content_type: str = "application/json"
) -> Any:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    extra = {"Content-Encoding": "gzip"} if gz else {}
    if gz:
        body = gzip.compress(body)
    return Client().post(url, data=body, content_type=content_type, headers=auth(token, **extra))


def claude_code_session() -> dict[str, Any]:
    """The five Claude Code events the portal reads, shaped as Claude Code documents its export."""
    return claude_logs_payload(
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
                "skill_activated",
                {
                    "skill.name": "code-review",
                    "skill.source": "projectSettings",
                    "invocation_trigger": "claude",
                },
            ),
            claude_log("plugin_loaded", {"plugin.name": "acme-tools", "marketplace.name": "acme"}),
            claude_log("hook_registered", {"skill.name": "code-review", "hook_event": "PreToolUse"}),
            claude_log("compaction", {"pre_tokens": 183412, "post_tokens": 24011, "trigger": "auto"}),
            claude_log(
                "api_request",
                {
                    "model": "claude-sonnet-4-5-20250929",
                    "cost_usd": 0.0123,
                    "duration_ms": 4210,
                    "input_tokens": 10240,
                    "output_tokens": 512,
                    "cache_read_tokens": 90000,
                    "cache_creation_tokens": 0,
                    "skill.name": "code-review",
                },
            ),
            claude_log("user_prompt", {"prompt_length": 42}),  # not a skill event: accepted, ignored
        ]
    )


@pytest.mark.django_db
def test_claude_code_json_logs_are_stored(token: str) -> None:
    payload = claude_code_session()
    response = post(token, LOGS, payload)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json() == {}
    events = {e.type: e for e in Event.objects.all()}
    assert set(events) == {"skill_invoked", "plugin_loaded", "hooks_registered", "compaction", "api_request"}
    invoked = sorted(Event.objects.filter(type="skill_invoked"), key=lambda e: e.trigger)
    assert [(e.skill_key, e.trigger, e.skill_source) for e in invoked] == [
        ("anon-" + invoked[0].skill_key[5:], "model", "project"),
        ("custom_skill", "user-slash", "user"),
    ]
    assert events["compaction"].data == {"pre_tokens": 183412, "post_tokens": 24011}
    request = events["api_request"]
    assert request.tokens == 10240 + 512 + 90000 and request.cost_usd == pytest.approx(0.0123)
    assert request.skill_key == invoked[0].skill_key  # same pseudonym for the same private name
    assert request.agent == "claude-code" and request.agent_version == "2.1.3"
    assert request.channel == "otlp"
    assert all(len(e.session) == 20 for e in events.values())  # pseudonymised session ids
    # Re-sending the same payload stores nothing twice.
    count = Event.objects.count()
    assert post(token, LOGS, payload, gz=True).status_code == 200
    assert Event.objects.count() == count


@pytest.mark.django_db
def test_event_name_from_event_name_field_attribute_or_body(token: str) -> None:
    by_field = claude_log("skill_activated", {"skill.name": "a-skill", "invocation_trigger": "nested"})
    by_field["eventName"] = "claude_code.skill_activated"
    by_field["body"] = {"stringValue": "something else"}
    by_field["attributes"] = [a for a in by_field["attributes"] if a["key"] != "event.name"]
    by_attribute = claude_log("skill_activated", {"skill.name": "b-skill"})
    by_attribute["body"] = {"stringValue": "a skill was activated"}
    by_body = claude_log("skill_activated", {"skill.name": "c-skill"})
    by_body["attributes"] = [a for a in by_body["attributes"] if a["key"] != "event.name"]
    response = post(token, LOGS, claude_logs_payload([by_field, by_attribute, by_body]))
    assert response.status_code == 200
    assert Event.objects.filter(type="skill_invoked").count() == 3


@pytest.mark.django_db
def test_metrics_by_skill_name_delta_stored_cumulative_rejected_partially(token: str) -> None:
    payload = claude_metrics_payload(
        [
            ("claude_code.cost.usage", {"model": "claude-sonnet-4-5", "skill.name": "code-review"}, 0.25),
            (
                "claude_code.token.usage",
                {"type": "input", "model": "claude-sonnet-4-5", "skill.name": "code-review"},
                4096,
            ),
            ("claude_code.session.count", {}, 1),
        ]
    )
    response = post(token, METRICS, payload)
    assert response.status_code == 200 and response.json() == {}
    metrics = Event.objects.filter(type="usage_metric")
    assert sorted((m.tokens, m.cost_usd) for m in metrics) == [(0, 0.25), (4096, 0.0)]
    cumulative = claude_metrics_payload([("claude_code.cost.usage", {"skill.name": "x"}, 1.0)], temporality=2)
    response = post(token, METRICS, cumulative)
    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert partial["rejectedDataPoints"] == "1"
    assert "delta temporality" in partial["errorMessage"]
    assert Event.objects.filter(type="usage_metric").count() == 2


@pytest.mark.django_db
def test_invalid_records_are_dropped_with_partial_success(token: str) -> None:
    no_name = claude_log("skill_activated", {"invocation_trigger": "model"})
    bad_time = claude_log("skill_activated", {"skill.name": "x"})
    bad_time["timeUnixNano"] = "not-a-number"
    good = claude_log("skill_activated", {"skill.name": "y"})
    response = post(token, LOGS, claude_logs_payload([no_name, bad_time, good]))
    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert partial["rejectedLogRecords"] == "2"
    assert "skill.name: missing" in partial["errorMessage"]
    assert Event.objects.count() == 1


@pytest.mark.django_db
def test_malformed_payloads_get_400_in_the_request_encoding(token: str) -> None:
    response = post(token, LOGS, b"{not json")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert response.json()["code"] == 3 and "not valid JSON" in response.json()["message"]
    response = post(token, LOGS, {"resourceLogs": "nope"})
    assert response.status_code == 400
    response = post(token, LOGS, b"\xff\xff\xff garbage", content_type="application/x-protobuf")
    assert response.status_code == 400 and response["Content-Type"] == "application/x-protobuf"
    response = Client().post(
        LOGS,
        data=b"not gzip",
        content_type="application/json",
        headers=auth(token, **{"Content-Encoding": "gzip"}),
    )
    assert response.status_code == 400 and "gzip" in response.json()["message"]
    response = post(token, LOGS, b"x=1", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert not Event.objects.exists()


@pytest.mark.django_db
def test_auth_and_capacity(token: str, developer_user: User, make_token: Callable[..., str]) -> None:
    payload = claude_code_session()
    assert Client().post(LOGS, data=json.dumps(payload), content_type="application/json").status_code == 401
    wrong = make_token(developer_user, "skills:read")
    assert post(wrong, LOGS, payload).status_code == 401
    with override_settings(TELEMETRY_MAX_CONCURRENT_INGEST=0):
        response = post(token, LOGS, payload)
    assert response.status_code == 429 and response["Retry-After"] == "1"
    assert not Event.objects.exists()


def test_decoder_accepts_quoted_and_unquoted_64_bit_integers_and_snake_case() -> None:
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    record = claude_log("compaction", {})
    record["attributes"] += [
        {"key": "pre_tokens", "value": {"intValue": 200000}},
        {"key": "post_tokens", "value": {"int_value": "30000"}},
    ]
    record["time_unix_nano"] = int(record.pop("timeUnixNano"))
    payload = {
        "resource_logs": [
            {
                "resource": {"attributes": [attr("service.name", "claude-code")]},
                "scope_logs": [{"log_records": [record]}],
            }
        ]
    }
    decoded = decode_logs(payload, now=now, max_age_days=90)
    assert decoded.rejected == 0
    [event] = decoded.events
    assert event.data == {"pre_tokens": 200000, "post_tokens": 30000}
    metric = claude_metrics_payload([("claude_code.token.usage", {"skill.name": "s", "type": "output"}, 7)])
    point = metric["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["sum"]
    point["aggregationTemporality"] = "AGGREGATION_TEMPORALITY_DELTA"
    point["dataPoints"][0]["asInt"] = 7  # unquoted this time
    [usage] = decode_metrics(metric, now=now, max_age_days=90).events
    assert usage.tokens == 7 and usage.skill is not None and usage.skill.name == "s"


@pytest.mark.django_db(transaction=True)
def test_the_opentelemetry_sdk_exporters_deliver_logs_and_metrics(live_server: Any, token: str) -> None:
    """The unmodified OpenTelemetry Python SDK (protobuf over HTTP, gzip) as Claude Code's stand-in."""
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.metrics import Counter, MeterProvider
    from opentelemetry.sdk.metrics.export import AggregationTemporality, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource

    headers = {"Authorization": f"Bearer {token}"}
    resource = Resource.create(
        {"service.name": "claude-code", "service.version": "2.1.9", "team": "payments"}
    )
    log_exporter = OTLPLogExporter(
        endpoint=f"{live_server.url}{LOGS}", headers=headers, compression=Compression.Gzip, timeout=10
    )
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    logger = logger_provider.get_logger("com.anthropic.claude_code.events")
    common = {"session.id": "sdk-session", "user.email": "sdk.user@acme-corp.example"}
    logger.emit(
        timestamp=time.time_ns(),
        body="claude_code.skill_activated",
        event_name="claude_code.skill_activated",
        attributes={
            **common,
            "event.name": "skill_activated",
            "skill.name": "sdk-skill",
            "skill.source": "projectSettings",
            "invocation_trigger": "user-slash",
        },
    )
    logger.emit(
        timestamp=time.time_ns(),
        body="claude_code.api_request",
        attributes={
            **common,
            "event.name": "api_request",
            "skill.name": "sdk-skill",
            "cost_usd": 0.5,
            "input_tokens": 2**40,
            "output_tokens": 3,
        },
    )
    logger_provider.shutdown()

    metric_exporter = OTLPMetricExporter(
        endpoint=f"{live_server.url}{METRICS}",
        headers=headers,
        preferred_temporality={Counter: AggregationTemporality.DELTA},
        timeout=10,
    )
    reader = PeriodicExportingMetricReader(metric_exporter, export_interval_millis=60_000)
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    counter = meter_provider.get_meter("com.anthropic.claude_code").create_counter(
        "claude_code.cost.usage", unit="USD"
    )
    counter.add(1.25, {"skill.name": "sdk-skill", "model": "claude-opus-4", **common})
    meter_provider.shutdown()

    invoked = Event.objects.get(type="skill_invoked")
    assert invoked.trigger == "user-slash" and invoked.agent_version == "2.1.9" and invoked.channel == "otlp"
    request = Event.objects.get(type="api_request")
    assert request.tokens == 2**40 + 3 and request.cost_usd == pytest.approx(0.5)
    usage = Event.objects.get(type="usage_metric")
    assert usage.cost_usd == pytest.approx(1.25)
    assert {invoked.skill_key, request.skill_key, usage.skill_key} == {invoked.skill_key}
    assert invoked.skill_key.startswith("anon-")
