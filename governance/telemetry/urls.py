"""Pages of the telemetry concern."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
