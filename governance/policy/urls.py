"""Pages of the policy concern."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
