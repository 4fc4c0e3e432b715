"""URLs of the ingest pages (included by governance/skills/urls.py)."""

from django.urls import path

from governance.skills import ingest_views

urlpatterns = [
    path("sources/", ingest_views.sources, name="sources"),
    path("sources/upload/", ingest_views.upload, name="skills-upload"),
    path("sources/<int:source_id>/", ingest_views.source_detail, name="source-detail"),
    path("sources/<int:source_id>/ingest/", ingest_views.source_ingest, name="source-ingest"),
    path("sources/runs/<int:run_id>/", ingest_views.ingest_run, name="ingest-run"),
]
