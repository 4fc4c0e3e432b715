"""One env-driven settings file: each bad value stops the process with a message naming the variable.

Each case runs in a fresh interpreter, because settings are read once at import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.portal.test_deployment import settings_env_vars

ROOT = Path(__file__).resolve().parents[2]
# Variables the settings read: cleared so the developer's or CI's environment cannot leak in.
SETTINGS_ENV = settings_env_vars()
LONG_KEY = "k" * 50

PRINT_SETTINGS = """
import json, django
from django.conf import settings
django.setup()
print(json.dumps({
    "DEBUG": settings.DEBUG, "ENGINE": settings.DATABASES["default"]["ENGINE"],
    "NAME": settings.DATABASES["default"]["NAME"], "EAGER": settings.CELERY_TASK_ALWAYS_EAGER,
    "ALLOWED_HOSTS": settings.ALLOWED_HOSTS, "SELF_EVOLUTION_ENABLED": settings.SELF_EVOLUTION_ENABLED,
    "TELEMETRY_RETENTION_DAYS": settings.TELEMETRY_RETENTION_DAYS,
    "SESSION_COOKIE_SECURE": settings.SESSION_COOKIE_SECURE,
}))
"""


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV}
    clean["DJANGO_SETTINGS_MODULE"] = "portal.settings"
    clean.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
    )


def load_settings(**env: str) -> dict[str, object]:
    result = run_python(PRINT_SETTINGS, **env)
    assert result.returncode == 0, result.stderr
    loaded: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def test_embedded_default_is_sqlite_eager_debug() -> None:
    loaded = load_settings()
    assert loaded["DEBUG"] is True
    assert loaded["ENGINE"] == "django.db.backends.sqlite3"
    assert loaded["EAGER"] is True


def test_production_values_are_read() -> None:
    loaded = load_settings(
        DEBUG="off",
        SECRET_KEY=LONG_KEY,
        ALLOWED_HOSTS="portal.example.com, www.example.com",
        DATABASE_URL="postgres://u:p@db.example.com:5432/portal",
        CELERY_BROKER_URL="redis://cache.example.com:6379/0",
        SELF_EVOLUTION_ENABLED="no",
        TELEMETRY_RETENTION_DAYS="30",
    )
    assert loaded == {
        "DEBUG": False,
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "portal",
        "EAGER": False,
        "ALLOWED_HOSTS": ["portal.example.com", "www.example.com"],
        "SELF_EVOLUTION_ENABLED": False,
        "TELEMETRY_RETENTION_DAYS": 30,
        "SESSION_COOKIE_SECURE": True,
    }


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DEBUG": "0"}, "SECRET_KEY must be set when DEBUG is off"),
        ({"DEBUG": "false", "SECRET_KEY": "short"}, "SECRET_KEY must be at least 32 characters"),
        ({"DEBUG": "maybe"}, "DEBUG must be a boolean (1/0, true/false, yes/no, on/off), got 'maybe'"),
        ({"SELF_EVOLUTION_ENABLED": "2"}, "SELF_EVOLUTION_ENABLED must be a boolean"),
        (
            {"DATABASE_URL": "mysql://u@h/db"},
            "DATABASE_URL must start with postgres://, postgresql:// or sqlite://",
        ),
        ({"DATABASE_URL": "localhost:5432"}, "DATABASE_URL must start with postgres://"),
        ({"CELERY_BROKER_URL": "http://broker"}, "CELERY_BROKER_URL must be a redis://, rediss://, amqp://"),
        ({"TELEMETRY_RETENTION_DAYS": "ninety"}, "TELEMETRY_RETENTION_DAYS must be an integer, got 'ninety'"),
        ({"TELEMETRY_RETENTION_DAYS": "0"}, "TELEMETRY_RETENTION_DAYS must be at least 1, got 0"),
        ({"DATA_UPLOAD_MAX_MEMORY_SIZE": "12"}, "DATA_UPLOAD_MAX_MEMORY_SIZE must be at least 1024"),
        ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL, got 'LOUD'"),
    ],
)
def test_bad_values_refuse_to_start_with_a_clear_message(env: dict[str, str], message: str) -> None:
    result = run_python("import django; django.setup()", **env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


def test_manage_py_refuses_dev_secret_key_with_debug_off() -> None:
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**clean, "DEBUG": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr
