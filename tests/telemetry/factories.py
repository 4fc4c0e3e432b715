"""Event builders shared by the telemetry tests (native format and Claude Code's OTLP JSON)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any


def iso(when: datetime | None = None) -> str:
    return (when or datetime.now(UTC) - timedelta(minutes=5)).isoformat().replace("+00:00", "Z")


def native(type_: str, skill: str | None = "deploy", **fields: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "event_id": str(uuid.uuid4()),
        "timestamp": iso(fields.pop("when", None)),
        "type": type_,
        "agent": "claude-code",
        "agent_version": fields.pop("agent_version", "2.1.3"),
        "session": fields.pop("session", "sess-1"),
        "team": fields.pop("team", "payments"),
        "project": fields.pop("project", "payments-api"),
    }
    if skill is not None:
        event["skill"] = {"name": skill, "source": fields.pop("source", "project")}
    event.update(fields)
    return event


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}  # 64-bit ints arrive quoted
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def nanos(when: datetime | None = None) -> str:
    moment = when or datetime.now(UTC) - timedelta(minutes=5)
    return str(int(moment.timestamp() * 1e9))


def claude_log(event: str, attrs: dict[str, Any], *, when: datetime | None = None) -> dict[str, Any]:
    """One log record shaped like Claude Code's export (body claude_code.<event>, event.name)."""
    standard = {
        "session.id": "0a1b2c3d-session",
        "user.account_uuid": "acc-7f3e",
        "user.email": "dana.private@acme-corp.example",
        "organization.id": "org-1",
        "terminal.type": "vscode",
        "event.name": event,
        "event.timestamp": iso(when),
    }
    return {
        "timeUnixNano": nanos(when),
        "observedTimeUnixNano": nanos(when),
        "severityNumber": 9,
        "body": {"stringValue": f"claude_code.{event}"},
        "attributes": [attr(k, v) for k, v in {**standard, **attrs}.items()],
    }


def claude_logs_payload(records: list[dict[str, Any]], *, version: str = "2.1.3") -> dict[str, Any]:
    return {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": [
                        attr("service.name", "claude-code"),
                        attr("service.version", version),
                        attr("team", "payments"),
                    ]
                },
                "scopeLogs": [
                    {
                        "scope": {"name": "com.anthropic.claude_code.events", "version": version},
                        "logRecords": records,
                    }
                ],
            }
        ]
    }


def claude_metrics_payload(
    points: list[tuple[str, dict[str, Any], float]], *, temporality: int = 1
) -> dict[str, Any]:
    """(metric name, attributes, value) triples as Claude Code's counters (delta sums)."""
    metrics = []
    for name, attrs, value in points:
        point: dict[str, Any] = {
            "attributes": [attr(k, v) for k, v in {"session.id": "0a1b2c3d-session", **attrs}.items()],
            "startTimeUnixNano": nanos(datetime.now(UTC) - timedelta(minutes=6)),
            "timeUnixNano": nanos(),
        }
        if name.endswith("cost.usage"):
            point["asDouble"] = value
        else:
            point["asInt"] = str(int(value))
        metrics.append(
            {
                "name": name,
                "unit": "USD" if name.endswith("cost.usage") else "tokens",
                "sum": {"dataPoints": [point], "aggregationTemporality": temporality, "isMonotonic": True},
            }
        )
    return {
        "resourceMetrics": [
            {
                "resource": {
                    "attributes": [attr("service.name", "claude-code"), attr("service.version", "2.1.3")]
                },
                "scopeMetrics": [{"scope": {"name": "com.anthropic.claude_code"}, "metrics": metrics}],
            }
        ]
    }


def auth(token: str, **more: str) -> dict[str, str]:
    """Request headers: the bearer token, plus any others (``Content-Encoding`` …)."""
    return {"Authorization": f"Bearer {token}", **more}
