"""Schemathesis fuzzes every /api/v1 operation against the API's own OpenAPI document, in-process
(WSGI), with a token carrying every scope: no 5xx, and documented responses match their schema.

New endpoints are picked up automatically. Keep them fast under a few dozen random inputs; an
endpoint that must not be fuzzed (none so far) is excluded by operation id below, with a reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from portal.accounts.models import Scope
from portal.accounts.services import token_create
from portal.api import api
from portal.wsgi import application

MAX_EXAMPLES = 10


@pytest.fixture(autouse=True)
def keep_the_test_transaction() -> Iterator[None]:
    """Calls go through the real WSGI handler, whose request_started/finished signals would close the
    database connection inside the test's transaction (Django's test Client disconnects it too)."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        yield
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)


@pytest.fixture
def all_scopes_token(admin_user: User) -> str:
    _, raw = token_create(user=admin_user, name="fuzz", scopes=[s.value for s in Scope])
    return raw


# The document is built at collection from the API object itself (serving it over HTTP needs a
# login or a token, which need a database); calls then go through the real WSGI application.
# The lazy ``schemathesis.pytest.from_fixture`` loader fails on pytest 9 (it writes ``Function._nodeid``).
schema = schemathesis.openapi.from_dict(api.get_openapi_schema())
schema.app = application

pytestmark = pytest.mark.django_db


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
def test_api_conforms_to_its_schema(case: Any, all_scopes_token: str) -> None:
    case.call_and_validate(
        headers={"Authorization": f"Bearer {all_scopes_token}"},
        checks=[not_a_server_error, response_schema_conformance, content_type_conformance],
    )
