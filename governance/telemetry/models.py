"""Models of the telemetry concern."""

from django.db import models  # noqa: F401
