"""Django admin: user management for admins (role and teams inline on the user)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.forms import BaseModelForm
from django.http import HttpRequest

from portal.accounts.models import ApiToken, Membership, Organisation, Profile, Project, Team
from portal.accounts.services import user_sync_admin_flags


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


class ProfileInline(admin.StackedInline):
    model = Profile
    can_delete = False
    max_num = 1
    verbose_name = verbose_name_plural = "Organisation role"


class UserMembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    verbose_name_plural = "Teams"


admin.site.unregister(User)


@admin.register(User)
class PortalUserAdmin(UserAdmin):
    """The role (admin, team lead, developer) decides the staff and superuser flags: see
    ``user_sync_admin_flags``; they are shown read-only so the two cannot disagree."""

    inlines = [ProfileInline, UserMembershipInline]
    list_display = ["username", "email", "role", "is_active", "last_login"]
    list_filter = ["is_active", "profile__role"]
    readonly_fields = ["is_staff", "is_superuser", "last_login", "date_joined"]
    fieldsets = (
        (None, {"fields": ("username", "password")}),
        ("Personal info", {"fields": ("first_name", "last_name", "email")}),
        ("Status", {"fields": ("is_active", "is_staff", "is_superuser", "last_login", "date_joined")}),
    )

    @admin.display(description="Role", ordering="profile__role")
    def role(self, obj: User) -> str:
        profile = Profile.objects.filter(user=obj).first()
        return profile.get_role_display() if profile else ("Admin" if obj.is_superuser else "—")

    def save_related(
        self, request: HttpRequest, form: BaseModelForm[Any], formsets: Any, change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)
        user_sync_admin_flags(user=form.instance)


@admin.register(Organisation)
class OrganisationAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "organisation"]
    inlines = [MembershipInline]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "repository_url", "path", "read_only"]
    list_filter = ["team"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "prefix", "scopes", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["prefix", "token_hash", "created_at", "last_used_at"]
    list_filter = ["revoked_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a token is created by its owner (Tokens page or create_token), shown once
