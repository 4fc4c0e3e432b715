"""Role helpers: who is an admin, who leads which teams, and how the role drives Django's flags."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User

from portal.accounts.models import Profile, Role, Team
from portal.accounts.services import (
    InvalidScopes,
    parse_scopes,
    user_is_admin,
    user_led_team_ids,
    user_role,
    user_set_role,
)


def test_anonymous_has_no_role() -> None:
    assert user_role(AnonymousUser()) is None
    assert not user_is_admin(AnonymousUser())
    assert user_led_team_ids(AnonymousUser()) == set()


@pytest.mark.django_db
def test_roles_of_the_named_actors(admin_user: User, lead_user: User, developer_user: User) -> None:
    assert user_role(admin_user) is Role.ADMIN
    assert user_role(lead_user) is Role.LEAD
    assert user_role(developer_user) is Role.DEVELOPER
    assert [user_is_admin(u) for u in (admin_user, lead_user, developer_user)] == [True, False, False]


@pytest.mark.django_db
def test_only_admins_carry_staff_and_superuser(
    admin_user: User, lead_user: User, developer_user: User
) -> None:
    assert (admin_user.is_staff, admin_user.is_superuser) == (True, True)
    for user in (lead_user, developer_user):
        assert (user.is_staff, user.is_superuser) == (False, False)


@pytest.mark.django_db
def test_superuser_without_profile_is_admin_and_user_without_profile_is_developer() -> None:
    root = User.objects.create_superuser("root", password="x-long-password-1")
    plain = User.objects.create_user("plain", password="x-long-password-1")
    assert user_role(root) is Role.ADMIN
    assert user_role(plain) is Role.DEVELOPER


@pytest.mark.django_db
def test_led_teams(
    org: Any, admin_user: User, lead_user: User, developer_user: User, outsider_user: User
) -> None:
    assert user_led_team_ids(admin_user) == set(Team.objects.values_list("id", flat=True))
    assert user_led_team_ids(lead_user) == {org.payments.id}
    assert user_led_team_ids(outsider_user) == {org.platform.id}
    assert user_led_team_ids(developer_user) == set()


@pytest.mark.django_db
def test_changing_the_role_moves_the_admin_flags(org: Any, developer_user: User) -> None:
    user_set_role(user=developer_user, organisation=org.organisation, role=Role.ADMIN)
    developer_user.refresh_from_db()
    assert (developer_user.is_staff, developer_user.is_superuser) == (True, True)
    assert user_role(developer_user) is Role.ADMIN

    user_set_role(user=developer_user, organisation=org.organisation, role=Role.LEAD)
    developer_user.refresh_from_db()
    assert (developer_user.is_staff, developer_user.is_superuser) == (False, False)
    assert Profile.objects.get(user=developer_user).role == Role.LEAD


def test_parse_scopes_sorts_and_deduplicates() -> None:
    assert parse_scopes("telemetry:write, skills:read,skills:read") == ["skills:read", "telemetry:write"]
    assert parse_scopes(["policy:read"]) == ["policy:read"]
    with pytest.raises(InvalidScopes, match="unknown scope"):
        parse_scopes("skills:read,skills:admin")
    with pytest.raises(InvalidScopes, match="at least one scope"):
        parse_scopes("")
