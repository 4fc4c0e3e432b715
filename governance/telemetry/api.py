"""API router of the telemetry concern (mounted at /api/v1/telemetry by portal/api.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import OperationalError
from django.http import HttpRequest, JsonResponse
from ninja import Router

from governance.engine import jsonsafe
from governance.engine.otlp import OtlpMalformed, decompress
from governance.engine.telemetry import Invalid
from governance.telemetry.services import OverCapacity, events_ingest, ingest_slot
from portal.auth import token_only

router = Router(tags=["telemetry"])


def _error(status: int, message: str, *, retry_after: int | None = None) -> JsonResponse:
    response = JsonResponse({"detail": message}, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


@router.post("/events", auth=token_only("telemetry:write"), response={200: dict, 422: dict})
def post_events(request: HttpRequest) -> JsonResponse:
    """Send a batch of events: `{"events": [...]}`, at most 1,000 events and
    `TELEMETRY_MAX_BATCH_BYTES` bytes (gzip accepted with `Content-Encoding: gzip`).

    Each event: `event_id` (UUID), `timestamp` (ISO 8601 with zone), `type`, `agent`,
    `agent_version`, `session`, `team`, `project`, `skill` (`name`, `source`, `plugin`,
    `marketplace`) and the fields of its type (see the README). Invalid events are refused one
    by one (`rejected`: index, event_id, error) while the valid ones are stored; `accepted` lists
    the ids stored by this request and `duplicates` those already stored (re-sending is safe).
    Answers 422 when every event was refused, 413 when the body is too large, 429 with
    `Retry-After` when the portal is over capacity.
    """
    limit = settings.TELEMETRY_MAX_BATCH_BYTES
    declared = request.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > limit:
        return _error(413, f"batch larger than {limit} bytes: split it")
    body = request.body
    if len(body) > limit:
        return _error(413, f"batch larger than {limit} bytes: split it")
    try:
        body = decompress(body, request.headers.get("Content-Encoding", ""))
        payload = jsonsafe.loads(body)
    except OtlpMalformed as exc:
        return _error(400, str(exc))
    except (ValueError, UnicodeDecodeError) as exc:
        return _error(400, f"body is not valid JSON: {exc}")
    try:
        with ingest_slot():
            result = events_ingest(payload=payload)
    except Invalid as exc:
        return _error(400, str(exc))
    except OverCapacity:
        return _error(429, "ingest over capacity, retry later", retry_after=1)
    except OperationalError:
        return _error(503, "database unavailable, retry later", retry_after=5)
    status = 422 if result.rejected and not (result.accepted or result.duplicates) else 200
    return JsonResponse(
        {
            "accepted": result.accepted,
            "duplicates": result.duplicates,
            "rejected": result.rejected,
            "counts": {
                "accepted": len(result.accepted),
                "duplicates": len(result.duplicates),
                "rejected": len(result.rejected),
            },
        },
        status=status,
    )
