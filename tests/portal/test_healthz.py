"""/healthz says what is broken: 200 when the database and broker answer, 503 otherwise.

Outages are simulated in a fresh interpreter pointed at a closed port (settings are read at import).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from tests.portal.test_settings import run_python


@pytest.mark.django_db
def test_healthz_is_public_and_names_each_component() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == "ok"
    if settings.CELERY_TASK_ALWAYS_EAGER:
        assert body["broker"] == "eager"
        assert body["worker"] == "eager"
    else:
        assert body["broker"] == "ok"


@pytest.mark.django_db
def test_healthz_needs_no_session_and_sets_no_cookie() -> None:
    response = Client().get("/healthz?deep=1")
    assert response.status_code in {200, 503}
    assert "sessionid" not in response.cookies
    assert response["Content-Type"] == "application/json"


HEALTHZ = """
import json, django
django.setup()
from django.test import Client
response = Client().get("/healthz")
print(json.dumps({"http": response.status_code, **response.json()}))
"""


def test_healthz_503_when_the_broker_is_down(tmp_path: Path) -> None:
    result = run_python(
        HEALTHZ, CELERY_BROKER_URL="redis://127.0.0.1:9/0", SQLITE_PATH=str(tmp_path / "db.sqlite3")
    )
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout.strip().splitlines()[-1])
    assert body["http"] == 503
    assert body["status"] == "degraded"
    assert body["database"] == "ok"
    assert body["broker"].startswith("down: ")


def test_healthz_503_when_the_database_is_down() -> None:
    result = run_python(HEALTHZ, DATABASE_URL="postgres://postgres@127.0.0.1:9/portal")
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout.strip().splitlines()[-1])
    assert body["http"] == 503
    assert body["database"] == "down: OperationalError"
    assert body["broker"] == "eager"
    assert body["worker"] == "unknown: database down"
