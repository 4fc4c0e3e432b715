from django.contrib import admin
from django.http import HttpRequest

from governance.audit.models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """Read-only: the ledger is append-only, even for operators."""

    list_display = ["at", "actor_label", "action", "target_type", "target_label"]
    list_filter = ["action", "target_type"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
