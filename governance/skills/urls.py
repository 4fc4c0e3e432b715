"""Pages of the skills concern."""

from django.urls import URLPattern, URLResolver, include, path

urlpatterns: list[URLPattern | URLResolver] = [
    path("", include("governance.skills.catalog_urls")),
    path("", include("governance.skills.ingest_urls")),
]
