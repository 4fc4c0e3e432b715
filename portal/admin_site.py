"""Django admin for operators: only the admin role gets in (a staff flag alone is not enough)."""

from __future__ import annotations

from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest


class PortalAdminSite(AdminSite):
    site_header = "Skill governance · administration"
    site_title = "Skill governance admin"
    index_title = "Users, teams, projects and stored data"

    def has_permission(self, request: HttpRequest) -> bool:
        from portal.accounts.services import user_is_admin  # this module loads before the app registry

        return bool(request.user.is_active and request.user.is_staff and user_is_admin(request.user))


class PortalAdminConfig(AdminConfig):
    default_site = "portal.admin_site.PortalAdminSite"
