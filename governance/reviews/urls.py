"""Pages of the reviews concern."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
