"""Models of the reviews concern."""

from django.db import models  # noqa: F401
