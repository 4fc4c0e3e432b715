"""docker-compose.yml is the multi-machine deployment: check its shape, not just that it parses."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
# Only meaningful on the embedded default; a deployment sets DATABASE_URL instead.
EMBEDDED_ONLY = {"SQLITE_PATH"}


def settings_env_vars() -> set[str]:
    """Every environment variable portal/settings.py reads, found in its source."""
    source = (ROOT / "portal" / "settings.py").read_text()
    pattern = r'(?:os\.environ\.get|os\.getenv|env_bool|env_int|env_list|env_str)\(\s*"([A-Z][A-Z0-9_]*)"'
    return set(re.findall(pattern, source))


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return loaded


def test_the_settings_scan_finds_the_known_variables() -> None:
    assert {
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "SECRET_KEY",
        "DEBUG",
        "ALLOWED_HOSTS",
    } <= settings_env_vars()


def test_services_are_web_worker_beat_postgres_redis(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"web", "worker", "beat", "postgres", "redis"}


def test_web_migrates_then_serves_with_gunicorn(compose: dict[str, Any]) -> None:
    command = compose["services"]["web"]["command"]
    command = " ".join(command) if isinstance(command, list) else command
    assert "manage.py migrate --noinput" in command
    assert "gunicorn portal.wsgi:application" in command
    assert command.index("migrate") < command.index("gunicorn")
    assert "&&" in command.split("migrate", 1)[1].split("gunicorn")[0], (
        "gunicorn must not start if migrate fails"
    )


def test_worker_and_beat_run_celery(compose: dict[str, Any]) -> None:
    assert compose["services"]["worker"]["command"].startswith("celery -A portal worker")
    assert compose["services"]["beat"]["command"].startswith("celery -A portal beat")
    assert (
        "deploy" not in compose["services"]["beat"]
        or compose["services"]["beat"]["deploy"].get("replicas", 1) == 1
    )


@pytest.mark.parametrize("service", ["web", "worker", "beat", "postgres", "redis"])
def test_every_service_has_a_healthcheck_and_restarts(compose: dict[str, Any], service: str) -> None:
    spec = compose["services"][service]
    assert spec["healthcheck"]["test"], f"{service} has no healthcheck"
    assert spec.get("restart") == "unless-stopped"


@pytest.mark.parametrize("service", ["web", "worker", "beat"])
def test_app_services_wait_for_healthy_postgres_and_redis(compose: dict[str, Any], service: str) -> None:
    depends = compose["services"][service]["depends_on"]
    assert depends["postgres"]["condition"] == "service_healthy"
    assert depends["redis"]["condition"] == "service_healthy"


def test_data_lives_in_named_volumes(compose: dict[str, Any]) -> None:
    assert {"pgdata", "redisdata", "skills"} <= set(compose["volumes"])
    assert "pgdata:/var/lib/postgresql/data" in compose["services"]["postgres"]["volumes"]
    assert "redisdata:/data" in compose["services"]["redis"]["volumes"]
    for service in ["web", "worker"]:
        assert "skills:/var/lib/portal/skills" in compose["services"][service]["volumes"]


@pytest.mark.parametrize("service", ["web", "worker", "beat"])
def test_every_setting_is_provided_to_the_app_services(compose: dict[str, Any], service: str) -> None:
    env = compose["services"][service]["environment"]
    missing = sorted(settings_env_vars() - EMBEDDED_ONLY - set(env))
    assert not missing, f"{service} does not set {missing}: add them to x-portal-env in docker-compose.yml"
    assert env["DEBUG"] == "0"
    assert env["DATABASE_URL"].startswith("postgres://")
    assert env["CELERY_BROKER_URL"].startswith("redis://redis:")
    assert env["SKILL_STORAGE_DIR"] == "/var/lib/portal/skills"


def test_secrets_are_required_not_defaulted(compose: dict[str, Any]) -> None:
    env = compose["services"]["web"]["environment"]
    for name in ["SECRET_KEY", "PSEUDONYM_KEY"]:
        assert env[name].startswith("${" + name + ":?"), f"{name} must fail when unset"


def test_every_setting_is_documented_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = sorted(name for name in settings_env_vars() if f"`{name}`" not in readme)
    assert not missing, f"README.md does not explain {missing}"


def test_dockerfile_ignores_local_state() -> None:
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "node_modules", "db.sqlite3", ".git"} <= set(ignored)
