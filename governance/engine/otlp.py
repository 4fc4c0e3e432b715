"""OTLP/HTTP logs and metrics (JSON or protobuf) → telemetry events. Plain Python, no Django.

Understands Claude Code's export (DOMAIN §8): log records named ``claude_code.<event>`` in the body,
the ``event.name`` attribute or the record's ``eventName``; ``skill_activated``, ``plugin_loaded``,
``hook_registered``, ``compaction`` and ``api_request`` become events, other records are accepted and
ignored; the ``claude_code.token.usage`` and ``claude_code.cost.usage`` metrics become usage events
per ``skill.name``. Tolerates the JSON quirks the specification allows: 64-bit integers quoted or
not, camelCase or snake_case field names, enums as numbers or names, a key arriving with several
value types.

Protobuf payloads are parsed with ``opentelemetry-proto`` and then read by the same code as JSON.
"""

from __future__ import annotations

import gzip
import json
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from governance.engine import jsonsafe
from governance.engine.telemetry import (
    TRIGGERS,
    EventIn,
    EventType,
    Invalid,
    SkillRef,
    check_window,
    parse_skill_ref,
    parse_time,
)

# Deterministic ids for records that carry none: re-sending the same payload stores nothing twice.
OTLP_NAMESPACE = uuid.UUID("6f1c2a4e-8b1d-4e0a-9d51-4c7f3b2e9a10")
MAX_DECOMPRESSED = 64 * 1024 * 1024
TOKEN_METRIC = "claude_code.token.usage"  # noqa: S105 (a metric name, not a secret)
COST_METRIC = "claude_code.cost.usage"
TEMPORALITY_DELTA = 1
TEMPORALITY_CUMULATIVE = 2
TRIGGER_ALIASES = {
    "user": "user-slash",
    "slash": "user-slash",
    "user_slash": "user-slash",
    "slash_command": "user-slash",
    "user-invoked": "user-slash",
    "claude": "model",
    "tool": "model",
    "skill_tool": "model",
    "auto": "model",
    "model-invoked": "model",
    "subagent": "nested",
    "nested_skill": "nested",
}


class OtlpMalformed(ValueError):
    """The payload cannot be read at all (answered with 400, which clients do not retry)."""


@dataclass
class Decoded:
    events: list[EventIn] = field(default_factory=list)
    rejected: int = 0
    ignored: int = 0
    errors: list[str] = field(default_factory=list)

    def reject(self, message: str) -> None:
        self.rejected += 1
        if len(self.errors) < 20 and message not in self.errors:
            self.errors.append(message)


# --- transport ---------------------------------------------------------------------------------


def decompress(body: bytes, encoding: str) -> bytes:
    encoding = (encoding or "").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise OtlpMalformed(f"unsupported Content-Encoding {encoding!r} (use gzip or none)")
    try:
        if encoding == "gzip":
            decompressor = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        else:
            decompressor = zlib.decompressobj()
        data = decompressor.decompress(body, MAX_DECOMPRESSED)
        if decompressor.unconsumed_tail:
            raise OtlpMalformed(f"decompressed payload exceeds {MAX_DECOMPRESSED} bytes")
        return data
    except (zlib.error, gzip.BadGzipFile, EOFError) as exc:
        raise OtlpMalformed(f"body is not valid {encoding}: {exc}") from None


def load_payload(body: bytes, *, content_type: str, signal: str) -> dict[str, Any]:
    """Bytes → the OTLP JSON object (protobuf is converted to the same shape)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "application/json":
        try:
            payload = jsonsafe.loads(body or b"{}")
        except ValueError as exc:
            raise OtlpMalformed(f"body is not valid JSON: {exc}") from None
        if not isinstance(payload, dict):
            raise OtlpMalformed("body must be a JSON object")
        return payload
    if kind == "application/x-protobuf":
        return _protobuf_to_dict(body, signal=signal)
    raise OtlpMalformed(f"unsupported Content-Type {kind!r}: use application/json or application/x-protobuf")


def _protobuf_to_dict(body: bytes, *, signal: str) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    message = ExportLogsServiceRequest() if signal == "logs" else ExportMetricsServiceRequest()
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise OtlpMalformed(f"body is not a valid OTLP {signal} protobuf message: {exc}") from None
    return MessageToDict(message)


def encode_response(*, content_type: str, signal: str, rejected: int, message: str) -> bytes:
    """The Export*ServiceResponse in the request's encoding (partialSuccess only when rejecting)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    count_field = "rejectedLogRecords" if signal == "logs" else "rejectedDataPoints"
    if kind == "application/x-protobuf":
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceResponse,
        )

        response: Any = ExportLogsServiceResponse() if signal == "logs" else ExportMetricsServiceResponse()
        if rejected:
            response.partial_success.error_message = message
            if signal == "logs":
                response.partial_success.rejected_log_records = rejected
            else:
                response.partial_success.rejected_data_points = rejected
        return bytes(response.SerializeToString())
    body: dict[str, Any] = {}
    if rejected:
        body["partialSuccess"] = {count_field: str(rejected), "errorMessage": message}
    return json.dumps(body).encode()


# --- values ------------------------------------------------------------------------------------


def _get(obj: dict[str, Any], camel: str) -> Any:
    if camel in obj:
        return obj[camel]
    snake = "".join("_" + c.lower() if c.isupper() else c for c in camel)
    return obj.get(snake)


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (JSON form) → a Python value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "string_value"):
        if key in value:
            return value[key]
    for key in ("intValue", "int_value"):
        if key in value:
            raw = value[key]
            try:
                return int(raw)
            except (TypeError, ValueError):
                return raw
    for key in ("doubleValue", "double_value"):
        if key in value:
            try:
                return float(value[key])
            except (TypeError, ValueError):
                return value[key]
    for key in ("boolValue", "bool_value"):
        if key in value:
            return bool(value[key])
    array = _get(value, "arrayValue")
    if isinstance(array, dict):
        return [any_value(v) for v in array.get("values", [])]
    kvlist = _get(value, "kvlistValue")
    if isinstance(kvlist, dict):
        return attributes(kvlist.get("values", []))
    if "bytesValue" in value or "bytes_value" in value:
        return ""
    return None


def attributes(items: Any) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if not isinstance(items, list):
        return result
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            result[item["key"]] = any_value(item.get("value"))
    return result


def as_int(value: Any) -> int:
    if isinstance(value, bool) or value is None or value == "":
        return 0
    if isinstance(value, int):
        return value
    try:
        return int(float(value))
    except (TypeError, ValueError):
        raise Invalid(f"expected an integer, got {str(value)[:30]!r}") from None


def as_float(value: Any) -> float:
    if isinstance(value, bool) or value is None or value == "":
        return 0.0
    try:
        return float(value)
    except (TypeError, ValueError):
        raise Invalid(f"expected a number, got {str(value)[:30]!r}") from None


def as_str(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _nanos_to_datetime(raw: Any) -> datetime | None:
    try:
        nanos = int(raw or 0)
    except (TypeError, ValueError):
        raise Invalid(f"timeUnixNano: {str(raw)[:30]!r} is not an integer") from None
    if nanos <= 0:
        return None
    return datetime.fromtimestamp(nanos / 1e9, tz=UTC)


def _record_id(*parts: Any) -> uuid.UUID:
    return uuid.uuid5(OTLP_NAMESPACE, json.dumps(parts, sort_keys=True, default=str))


@dataclass
class _Context:
    agent: str
    agent_version: str
    session: str
    user: str
    team: str
    project: str


def _context(resource_attrs: dict[str, Any], attrs: dict[str, Any]) -> _Context:
    merged = {**resource_attrs, **attrs}
    service = as_str(merged.get("service.name")) or "otlp"
    agent = "claude-code" if service in ("claude-code", "claude_code") else service
    user = (
        as_str(merged.get("user.id"))
        or as_str(merged.get("user.account_uuid"))
        or as_str(merged.get("user.email"))
    )
    return _Context(
        agent=agent[:32],
        agent_version=(as_str(merged.get("service.version")) or as_str(merged.get("app.version")))[:64],
        session=as_str(merged.get("session.id"))[:200],
        user=user[:320],
        team=as_str(merged.get("team") or merged.get("team.id") or merged.get("portal.team"))[:100],
        project=as_str(merged.get("project") or merged.get("portal.project"))[:100],
    )


def _skill(attrs: dict[str, Any], *, required: bool) -> SkillRef | None:
    name = as_str(attrs.get("skill.name")).strip()
    if not name:
        if required:
            raise Invalid("skill.name: missing")
        return None
    raw = {
        "name": name,
        "source": as_str(attrs.get("skill.source")),
        "plugin": as_str(attrs.get("plugin.name") or attrs.get("skill.plugin")),
        "marketplace": as_str(attrs.get("plugin.marketplace") or attrs.get("marketplace.name")),
    }
    return parse_skill_ref(raw, field_name="skill")


# --- logs --------------------------------------------------------------------------------------


def event_name(record: dict[str, Any], attrs: dict[str, Any]) -> str:
    """``eventName``, then the ``event.name`` attribute, then a ``claude_code.<event>`` body."""
    name = as_str(_get(record, "eventName")) or as_str(attrs.get("event.name"))
    if not name:
        body = any_value(record.get("body"))
        name = body if isinstance(body, str) and body.startswith("claude_code.") else ""
    return name.removeprefix("claude_code.")


def _records(
    payload: dict[str, Any], resources_key: str, scopes_key: str, items_key: str
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Walk resource → scope → item (log record or metric), checking each level's shape."""
    resources = _get(payload, resources_key)
    if resources is None:
        resources = []
    if not isinstance(resources, list):
        raise OtlpMalformed(f"{resources_key} must be a list")
    for resource in resources:
        if not isinstance(resource, dict):
            raise OtlpMalformed(f"each {resources_key} entry must be an object")
        resource_attrs = attributes((_get(resource, "resource") or {}).get("attributes"))
        for scope in _get(resource, scopes_key) or []:
            if not isinstance(scope, dict):
                raise OtlpMalformed(f"each {scopes_key} entry must be an object")
            for item in _get(scope, items_key) or []:
                if not isinstance(item, dict):
                    raise OtlpMalformed(f"each {items_key} entry must be an object")
                yield resource_attrs, item


def decode_logs(payload: dict[str, Any], *, now: datetime, max_age_days: int) -> Decoded:
    decoded = Decoded()
    for resource_attrs, record in _records(payload, "resourceLogs", "scopeLogs", "logRecords"):
        try:
            event = _log_event(record, resource_attrs, now=now, max_age_days=max_age_days)
        except Invalid as exc:
            decoded.reject(str(exc))
            continue
        if event is None:
            decoded.ignored += 1
        else:
            decoded.events.append(event)
    return decoded


def _log_time(record: dict[str, Any], attrs: dict[str, Any], now: datetime) -> datetime:
    when = _nanos_to_datetime(_get(record, "timeUnixNano")) or _nanos_to_datetime(
        _get(record, "observedTimeUnixNano")
    )
    if when is None and attrs.get("event.timestamp"):
        when = parse_time(as_str(attrs["event.timestamp"]), field_name="event.timestamp")
    return when or now


def _log_event(
    record: dict[str, Any], resource_attrs: dict[str, Any], *, now: datetime, max_age_days: int
) -> EventIn | None:
    attrs = attributes(record.get("attributes"))
    name = event_name(record, attrs)
    mapped = _LOG_EVENTS.get(name)
    if mapped is None:
        return None
    occurred_at = _log_time(record, attrs, now)
    check_window(occurred_at, now=now, max_age_days=max_age_days)
    ctx = _context(resource_attrs, attrs)
    event = EventIn(
        event_id=_record_id("log", resource_attrs, record),
        occurred_at=occurred_at,
        type=mapped,
        agent=ctx.agent,
        agent_version=ctx.agent_version,
        session=ctx.session,
        user=ctx.user,
        team=ctx.team,
        project=ctx.project,
    )
    try:
        _fill_log_event(event, name, attrs)
    except Invalid as exc:
        raise Invalid(f"{name}: {exc}") from None
    return event


_LOG_EVENTS = {
    "skill_activated": EventType.SKILL_INVOKED.value,
    "plugin_loaded": EventType.PLUGIN_LOADED.value,
    "hook_registered": EventType.HOOKS_REGISTERED.value,
    "compaction": EventType.COMPACTION.value,
    "api_request": EventType.API_REQUEST.value,
}


def _trigger(raw: str) -> str:
    value = raw.strip().lower()
    if value in TRIGGERS:
        return value
    return TRIGGER_ALIASES.get(value, "model")


def _fill_log_event(event: EventIn, name: str, attrs: dict[str, Any]) -> None:
    if name == "skill_activated":
        event.skill = _skill(attrs, required=True)
        event.trigger = _trigger(as_str(attrs.get("invocation_trigger") or attrs.get("trigger")))
        event.outcome = "ok"
    elif name == "plugin_loaded":
        plugin = as_str(attrs.get("plugin.name") or attrs.get("plugin_name") or attrs.get("name"))
        if not plugin:
            raise Invalid("plugin.name: missing")
        event.data = {"plugin": plugin[:200]}
    elif name == "hook_registered":
        event.skill = _skill(attrs, required=False)
        event.data = {"hook_count": max(1, as_int(attrs.get("hook_count") or 1))}
    elif name == "compaction":
        event.data = {
            "pre_tokens": as_int(attrs.get("pre_tokens")),
            "post_tokens": as_int(attrs.get("post_tokens")),
        }
    elif name == "api_request":
        event.skill = _skill(attrs, required=False)
        event.tokens = sum(
            as_int(attrs.get(key))
            for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
        )
        event.cost_usd = as_float(attrs.get("cost_usd"))
        event.data = {"model": as_str(attrs.get("model"))[:100]}


# --- metrics -----------------------------------------------------------------------------------


def _temporality(raw: Any) -> int:
    if isinstance(raw, str):
        if raw.isdigit():
            return int(raw)
        return {"AGGREGATION_TEMPORALITY_DELTA": 1, "AGGREGATION_TEMPORALITY_CUMULATIVE": 2}.get(raw, 0)
    return int(raw or 0)


def decode_metrics(payload: dict[str, Any], *, now: datetime, max_age_days: int) -> Decoded:
    decoded = Decoded()
    for resource_attrs, metric in _records(payload, "resourceMetrics", "scopeMetrics", "metrics"):
        _decode_metric(metric, resource_attrs, decoded, now=now, max_age_days=max_age_days)
    return decoded


def _points(metric: dict[str, Any]) -> tuple[list[Any], int]:
    for kind in ("sum", "gauge", "histogram", "exponentialHistogram", "summary"):
        data = _get(metric, kind)
        if isinstance(data, dict):
            points = _get(data, "dataPoints") or []
            if kind != "sum":
                return points, -1
            return points, _temporality(_get(data, "aggregationTemporality"))
    return [], 0


def _decode_metric(
    metric: dict[str, Any],
    resource_attrs: dict[str, Any],
    decoded: Decoded,
    *,
    now: datetime,
    max_age_days: int,
) -> None:
    name = as_str(metric.get("name"))
    points, temporality = _points(metric)
    if name not in (TOKEN_METRIC, COST_METRIC):
        decoded.ignored += len(points)
        return
    for point in points:
        if not isinstance(point, dict):
            raise OtlpMalformed("each dataPoints entry must be an object")
        if temporality != TEMPORALITY_DELTA:
            decoded.reject(
                f"{name}: only delta temporality is accepted (set "
                "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=delta)"
            )
            continue
        try:
            decoded.events.append(
                _metric_event(name, point, resource_attrs, now=now, max_age_days=max_age_days)
            )
        except Invalid as exc:
            decoded.reject(f"{name}: {exc}")


def _metric_event(
    name: str, point: dict[str, Any], resource_attrs: dict[str, Any], *, now: datetime, max_age_days: int
) -> EventIn:
    attrs = attributes(point.get("attributes"))
    occurred_at = _nanos_to_datetime(_get(point, "timeUnixNano")) or now
    check_window(occurred_at, now=now, max_age_days=max_age_days)
    raw_value = _get(point, "asDouble")
    if raw_value is None:
        raw_value = _get(point, "asInt")
    value = as_float(raw_value)
    if value < 0:
        raise Invalid("a usage counter cannot be negative")
    ctx = _context(resource_attrs, attrs)
    event = EventIn(
        event_id=_record_id("metric", name, resource_attrs, point),
        occurred_at=occurred_at,
        type=EventType.USAGE_METRIC.value,
        agent=ctx.agent,
        agent_version=ctx.agent_version,
        session=ctx.session,
        user=ctx.user,
        team=ctx.team,
        project=ctx.project,
        skill=_skill(attrs, required=False),
        data={"metric": name, "model": as_str(attrs.get("model"))[:100]},
    )
    if name == TOKEN_METRIC:
        event.tokens = int(value)
        event.data["token_type"] = as_str(attrs.get("type"))[:32]
    else:
        event.cost_usd = value
    return event


def encode_status(*, content_type: str, code: int, message: str) -> bytes:
    """A ``google.rpc.Status`` (the body of OTLP error answers) in the request's encoding.

    Encoded by hand (two fields) so no extra protobuf package is needed.
    """
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind != "application/x-protobuf":
        return json.dumps({"code": code, "message": message}).encode()
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)
