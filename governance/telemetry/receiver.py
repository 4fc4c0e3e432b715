"""The OpenTelemetry receiver: ``POST /otlp/v1/logs`` and ``/otlp/v1/metrics`` (OTLP/HTTP).

Thin HTTP glue: authentication (bearer token with ``telemetry:write``), size limits and status codes
as the OTLP specification asks; decoding lives in ``governance.engine.otlp`` and storage in
``services.events_store`` (the same path as the native API).
"""

from __future__ import annotations

from django.conf import settings
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from governance.engine import otlp
from governance.telemetry.models import Channel
from governance.telemetry.services import OverCapacity, events_store, ingest_slot
from portal.accounts.models import Scope
from portal.accounts.services import token_authenticate

# google.rpc.Code values used in Status bodies.
INVALID_ARGUMENT = 3
RESOURCE_EXHAUSTED = 8
UNAVAILABLE = 14
UNAUTHENTICATED = 16


def _answer(
    request: HttpRequest, status: int, body: bytes, *, retry_after: int | None = None
) -> HttpResponse:
    content_type = request.content_type or "application/json"
    if content_type not in ("application/json", "application/x-protobuf"):
        content_type = "application/json"
    response = HttpResponse(body, status=status, content_type=content_type)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def _status(request: HttpRequest, status: int, code: int, message: str, **kwargs: int) -> HttpResponse:
    body = otlp.encode_status(content_type=request.content_type or "", code=code, message=message)
    return _answer(request, status, body, **kwargs)


def _receive(request: HttpRequest, signal: str) -> HttpResponse:
    header = request.headers.get("Authorization", "")
    scheme, _, raw = header.partition(" ")
    if scheme.lower() != "bearer" or token_authenticate(raw=raw.strip(), scope=Scope.TELEMETRY_WRITE) is None:
        response = _status(
            request, 401, UNAUTHENTICATED, "a bearer token with scope telemetry:write is required"
        )
        response["WWW-Authenticate"] = "Bearer"
        return response
    limit = settings.TELEMETRY_MAX_BATCH_BYTES
    declared = request.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        return _status(request, 413, INVALID_ARGUMENT, f"payload larger than {limit} bytes")
    content_type = request.content_type or ""
    if content_type not in ("application/json", "application/x-protobuf"):
        return _status(request, 415, INVALID_ARGUMENT, "use application/json or application/x-protobuf")
    now = timezone.now()
    try:
        raw_body = otlp.decompress(request.body, request.headers.get("Content-Encoding", ""))
        payload = otlp.load_payload(raw_body, content_type=content_type, signal=signal)
        decode = otlp.decode_logs if signal == "logs" else otlp.decode_metrics
        decoded = decode(payload, now=now, max_age_days=settings.TELEMETRY_RETENTION_DAYS)
    except otlp.OtlpMalformed as exc:
        return _status(request, 400, INVALID_ARGUMENT, str(exc))
    try:
        with ingest_slot():
            events_store(events=decoded.events, channel=Channel.OTLP)
    except OverCapacity:
        return _status(request, 429, RESOURCE_EXHAUSTED, "ingest over capacity", retry_after=1)
    except OperationalError:
        return _status(request, 503, UNAVAILABLE, "database unavailable", retry_after=5)
    message = "; ".join(decoded.errors)
    body = otlp.encode_response(
        content_type=content_type, signal=signal, rejected=decoded.rejected, message=message
    )
    return _answer(request, 200, body)


@csrf_exempt
@require_POST
def otlp_logs(request: HttpRequest) -> HttpResponse:
    return _receive(request, "logs")


@csrf_exempt
@require_POST
def otlp_metrics(request: HttpRequest) -> HttpResponse:
    return _receive(request, "metrics")
