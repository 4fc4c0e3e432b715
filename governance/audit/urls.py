"""Pages of the audit concern."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
