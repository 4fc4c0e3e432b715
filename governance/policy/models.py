"""Models of the policy concern."""

from django.db import models  # noqa: F401
