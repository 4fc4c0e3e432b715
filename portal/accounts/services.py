"""Writes and role checks for accounts. Keyword-only, typed, no HTTP."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from portal.accounts.models import ApiToken, Membership, Organisation, Profile, Role, Scope, Team, hash_token

VALID_SCOPES = frozenset(s.value for s in Scope)


class InvalidScopes(ValueError):
    pass


def user_role(user: AbstractBaseUser | AnonymousUser) -> Role | None:
    """The organisation role of a user; superusers are admins; None for anonymous visitors."""
    if not user.is_authenticated:
        return None
    if getattr(user, "is_superuser", False):
        return Role.ADMIN
    profile = getattr(user, "profile", None)
    if profile is None:
        return Role.DEVELOPER
    return Role(profile.role)


def user_is_admin(user: AbstractBaseUser | AnonymousUser) -> bool:
    return user_role(user) is Role.ADMIN


def user_led_team_ids(user: AbstractBaseUser | AnonymousUser) -> set[int]:
    """Teams whose changes this user may approve: a lead's own teams; an admin's every team."""
    role = user_role(user)
    if role is Role.ADMIN:
        return set(Team.objects.values_list("id", flat=True))
    if role is Role.LEAD:
        return set(Team.objects.filter(memberships__user_id=int(user.pk or 0)).values_list("id", flat=True))
    return set()


def user_sync_admin_flags(*, user: User) -> None:
    """The role is the truth: the admin role, and only it, carries Django's staff and superuser flags
    (so only admins reach /admin/). A user with no profile keeps the flags it was created with."""
    profile = Profile.objects.filter(user=user).first()
    if profile is None:
        return
    is_admin = profile.role == Role.ADMIN
    if user.is_staff != is_admin or user.is_superuser != is_admin:
        user.is_staff = user.is_superuser = is_admin
        user.save(update_fields=["is_staff", "is_superuser"])


@transaction.atomic
def user_set_role(*, user: User, organisation: Organisation, role: Role) -> Profile:
    profile, _ = Profile.objects.update_or_create(
        user=user, defaults={"organisation": organisation, "role": role}
    )
    user_sync_admin_flags(user=user)
    return profile


@transaction.atomic
def user_create(
    *,
    username: str,
    password: str,
    organisation: Organisation,
    role: Role,
    teams: Iterable[Team] = (),
    email: str = "",
) -> User:
    """A person of the organisation with a role and team memberships."""
    user = User.objects.create_user(username=username, password=password, email=email)
    user_set_role(user=user, organisation=organisation, role=role)
    Membership.objects.bulk_create([Membership(user=user, team=team) for team in teams])
    return user


def parse_scopes(raw: str | Iterable[str]) -> list[str]:
    items = [s.strip() for s in raw.split(",")] if isinstance(raw, str) else [s.strip() for s in raw]
    items = [s for s in items if s]
    if not items:
        raise InvalidScopes(
            "at least one scope is required; valid scopes: " + ", ".join(sorted(VALID_SCOPES))
        )
    unknown = sorted(set(items) - VALID_SCOPES)
    if unknown:
        raise InvalidScopes(
            f"unknown scope(s): {', '.join(unknown)}; valid scopes: {', '.join(sorted(VALID_SCOPES))}"
        )
    return sorted(set(items))


@transaction.atomic
def token_create(*, user: User, name: str, scopes: str | Iterable[str]) -> tuple[ApiToken, str]:
    """Create a token; returns the row and the raw token, which is never stored and shown once."""
    scope_list = parse_scopes(scopes)
    raw = ApiToken.generate_raw()
    token = ApiToken.objects.create(
        user=user,
        name=name.strip()[:100] or "token",
        prefix=raw[:12],
        token_hash=hash_token(raw),
        scopes=scope_list,
    )
    return token, raw


def token_revoke(*, token: ApiToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


def token_authenticate(*, raw: str, scope: str | None) -> ApiToken | None:
    """The active token for ``raw`` if it carries ``scope`` (``None``: any scope); records its last use."""
    if not raw.startswith("sgp_") or len(raw) > 200:
        return None
    token = ApiToken.objects.select_related("user").filter(token_hash=hash_token(raw)).first()
    if token is None or not token.is_active or not token.user.is_active:
        return None
    if scope is not None and not token.has_scope(scope):
        return None
    now = timezone.now()
    # Writing on every request would serialise hot ingest paths on one row; a minute is precise enough.
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token
