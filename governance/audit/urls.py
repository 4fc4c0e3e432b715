"""Pages of the audit concern."""

from django.urls import path

from governance.audit import views

urlpatterns = [
    path("audit/", views.ledger, name="audit"),
    path("audit/export.jsonl", views.export, name="audit-export"),
]
