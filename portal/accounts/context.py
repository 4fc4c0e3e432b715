from __future__ import annotations

from django.http import HttpRequest

from portal.accounts.services import user_role


def role(request: HttpRequest) -> dict[str, object]:
    current = user_role(request.user)
    return {"role": current.value if current else None, "is_admin": current == "admin"}
