"""Pages of the skills concern."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
