from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "governance.audit"
    label = "audit"
