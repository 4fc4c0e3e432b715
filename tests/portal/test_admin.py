"""User management through Django admin: admins only; role and teams edited on the user."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from portal.accounts.models import Membership, Profile, Role


@pytest.mark.django_db
def test_admin_reaches_user_management(admin_client: Client, developer_user: User) -> None:
    assert admin_client.get("/admin/").status_code == 200
    listing = admin_client.get("/admin/auth/user/")
    assert listing.status_code == 200
    assert "dana-dev" in listing.content.decode()
    page = admin_client.get(f"/admin/auth/user/{developer_user.pk}/change/")
    assert page.status_code == 200
    assert "Organisation role" in page.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("actor", ["lead_client", "developer_client"])
def test_non_admins_cannot_reach_admin(actor: str, request: pytest.FixtureRequest) -> None:
    client: Client = request.getfixturevalue(actor)
    for url in ["/admin/", "/admin/auth/user/", "/admin/accounts/apitoken/"]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/")


@pytest.mark.django_db
def test_staff_flag_without_admin_role_is_not_enough(developer_user: User) -> None:
    User.objects.filter(pk=developer_user.pk).update(is_staff=True)
    client = Client()
    client.force_login(User.objects.get(pk=developer_user.pk))
    assert client.get("/admin/").status_code == 302


@pytest.mark.django_db
def test_admin_promotes_a_developer_and_adds_a_team(
    admin_client: Client, developer_user: User, org: Any
) -> None:
    profile = Profile.objects.get(user=developer_user)
    membership = Membership.objects.get(user=developer_user)
    form = {
        "username": "dana-dev",
        "first_name": "Dana",
        "last_name": "",
        "email": "dana@example.com",
        "is_active": "on",
        "profile-TOTAL_FORMS": "1",
        "profile-INITIAL_FORMS": "1",
        "profile-MIN_NUM_FORMS": "0",
        "profile-MAX_NUM_FORMS": "1",
        "profile-0-id": str(profile.pk),
        "profile-0-user": str(developer_user.pk),
        "profile-0-organisation": str(org.organisation.pk),
        "profile-0-role": "lead",
        "memberships-TOTAL_FORMS": "2",
        "memberships-INITIAL_FORMS": "1",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
        "memberships-0-id": str(membership.pk),
        "memberships-0-user": str(developer_user.pk),
        "memberships-0-team": str(org.payments.pk),
        "memberships-1-id": "",
        "memberships-1-user": str(developer_user.pk),
        "memberships-1-team": str(org.platform.pk),
    }
    response = admin_client.post(f"/admin/auth/user/{developer_user.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    developer_user.refresh_from_db()
    assert developer_user.email == "dana@example.com"
    assert Profile.objects.get(user=developer_user).role == Role.LEAD
    assert set(Membership.objects.filter(user=developer_user).values_list("team__slug", flat=True)) == {
        "payments",
        "platform",
    }
    assert not developer_user.is_staff

    form["profile-0-role"] = "admin"
    form["memberships-INITIAL_FORMS"] = "1"
    form["memberships-TOTAL_FORMS"] = "1"
    assert admin_client.post(f"/admin/auth/user/{developer_user.pk}/change/", form).status_code == 302
    developer_user.refresh_from_db()
    assert (developer_user.is_staff, developer_user.is_superuser) == (True, True)


@pytest.mark.django_db
def test_tokens_cannot_be_added_in_admin(admin_client: Client) -> None:
    assert admin_client.get("/admin/accounts/apitoken/add/").status_code == 403
