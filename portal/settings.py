"""One env-driven settings file.

Defaults give the embedded development setup: SQLite, Celery in eager mode, DEBUG on.
Production switches are environment variables, documented in the README:
DATABASE_URL, CELERY_BROKER_URL, SECRET_KEY, DEBUG, ALLOWED_HOSTS, CSRF_TRUSTED_ORIGINS,
PSEUDONYM_KEY, SELF_EVOLUTION_ENABLED, TELEMETRY_RETENTION_DAYS, SKILL_STORAGE_DIR, SQLITE_PATH,
DATA_UPLOAD_MAX_MEMORY_SIZE, FILE_UPLOAD_MAX_MEMORY_SIZE, LOG_LEVEL. A new variable must also be added
to docker-compose.yml and the README (tests/portal/test_deployment.py checks both).
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

_DEV_SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105 (public on purpose; refused with DEBUG off)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no, on/off), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY", _DEV_SECRET_KEY)
if not DEBUG and SECRET_KEY == _DEV_SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY must be set when DEBUG is off (the development default is public)."
    )
if not DEBUG and len(SECRET_KEY) < 32:
    raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters when DEBUG is off.")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "portal.admin_site.PortalAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "ninja",
    "portal",
    "portal.accounts",
    "governance.audit",
    "governance.skills",
    "governance.policy",
    "governance.telemetry",
    "governance.reviews",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "portal.middleware.RequestSizeLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "portal.middleware.LoginRequiredMiddleware",
]

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "portal.accounts.context.role",
            ],
        },
    },
]

_database_url = os.environ.get("DATABASE_URL", "")
if _database_url:
    if not _database_url.startswith(("postgres://", "postgresql://", "sqlite://")):
        raise ImproperlyConfigured(
            f"DATABASE_URL must start with postgres://, postgresql:// or sqlite://, got {_database_url.split(':', 1)[0]!r}"
        )
    DATABASES = {"default": dj_database_url.parse(_database_url, conn_max_age=60)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            "OPTIONS": {"timeout": 20},
        }
    }
IS_POSTGRES = DATABASES["default"]["ENGINE"].endswith("postgresql")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 16 * 1024 * 1024, minimum=1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = env_int("FILE_UPLOAD_MAX_MEMORY_SIZE", 16 * 1024 * 1024, minimum=1024)

# Celery: eager (in-process) unless a broker is configured.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
if CELERY_BROKER_URL and not CELERY_BROKER_URL.startswith(("redis://", "rediss://", "amqp://", "memory://")):
    raise ImproperlyConfigured("CELERY_BROKER_URL must be a redis://, rediss://, amqp:// or memory:// URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_TIMEOUT = 3
CELERY_BROKER_TRANSPORT_OPTIONS = {"max_retries": 1, "socket_connect_timeout": 3}
# Periodic tasks; beat runs as ONE instance (docker-compose.yml), workers scale out.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    "portal-heartbeat": {"task": "portal.heartbeat", "schedule": 60.0},
}
# Pending ingest runs whose task message was lost are sent again (the database is the truth).
CELERY_BEAT_SCHEDULE["skills-ingest-sweep"] = {"task": "skills.ingest_runs_sweep", "schedule": 60.0}

# Domain settings.
# Skill ingest: git fetch timeout, and whether file:// / local git URLs are accepted (tests, mirrors).
SKILL_GIT_TIMEOUT_S = env_int("SKILL_GIT_TIMEOUT_S", 120, minimum=1)
SKILL_GIT_ALLOW_LOCAL = env_bool("SKILL_GIT_ALLOW_LOCAL", False)
# Marketplace plugins served from other git repositories: recorded always, fetched only when on.
SKILL_FETCH_REMOTE_PLUGINS = env_bool("SKILL_FETCH_REMOTE_PLUGINS", False)
SKILL_UPLOAD_MAX_BYTES = env_int("SKILL_UPLOAD_MAX_BYTES", 20 * 1024 * 1024, minimum=1024)
SKILL_STORAGE_DIR = Path(os.environ.get("SKILL_STORAGE_DIR", str(BASE_DIR / "var" / "skills")))
# Public URL of the portal (e.g. https://skills.example.com), used in files agents download;
# empty = derived from the request.
PORTAL_BASE_URL = os.environ.get("PORTAL_BASE_URL", "").rstrip("/")
PSEUDONYM_KEY = os.environ.get("PSEUDONYM_KEY", SECRET_KEY)
SELF_EVOLUTION_ENABLED = env_bool("SELF_EVOLUTION_ENABLED", True)
# Reviews: delivery of approved changes with the git CLI (each command bounded), the portal's
# commit identity, and the sweeper that re-sends deliveries still pending in the database.
REVIEWS_GIT_TIMEOUT = env_int("REVIEWS_GIT_TIMEOUT", 60, minimum=1)
REVIEWS_GIT_AUTHOR_NAME = os.environ.get("REVIEWS_GIT_AUTHOR_NAME", "Skill governance portal")
REVIEWS_GIT_AUTHOR_EMAIL = os.environ.get("REVIEWS_GIT_AUTHOR_EMAIL", "skill-portal@localhost")
REVIEWS_DELIVERY_STUCK_SECONDS = env_int("REVIEWS_DELIVERY_STUCK_SECONDS", 900, minimum=60)
CELERY_BEAT_SCHEDULE["reviews-deliveries-sweep"] = {"task": "reviews.sweep_deliveries", "schedule": 60.0}
TELEMETRY_RETENTION_DAYS = env_int("TELEMETRY_RETENTION_DAYS", 90, minimum=1)
TELEMETRY_MAX_BATCH_EVENTS = 1000
TELEMETRY_MAX_BATCH_BYTES = env_int("TELEMETRY_MAX_BATCH_BYTES", 4 * 1024 * 1024, minimum=1024)
TELEMETRY_MAX_CONCURRENT_INGEST = env_int("TELEMETRY_MAX_CONCURRENT_INGEST", 8, minimum=0)
TELEMETRY_ROLLUP_DELAY_SECONDS = env_int("TELEMETRY_ROLLUP_DELAY_SECONDS", 30, minimum=0)
CELERY_BEAT_SCHEDULE.update(
    {
        "telemetry-rollup-sweep": {"task": "telemetry.rollups_sweep", "schedule": 60.0},
        "telemetry-retention": {"task": "telemetry.retention", "schedule": 6 * 3600.0},
        "telemetry-partitions": {"task": "telemetry.partitions_prepare", "schedule": 3600.0},
    }
)

LOG_LEVEL = os.environ.get("LOG_LEVEL", "WARNING").upper()
if LOG_LEVEL not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
    raise ImproperlyConfigured(
        f"LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL, got {LOG_LEVEL!r}"
    )

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
}
