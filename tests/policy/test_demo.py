from __future__ import annotations

import io

import pytest

from governance.policy.demo import seed
from governance.policy.models import PolicyVersion
from portal.accounts.demo import seed_accounts


@pytest.mark.django_db
def test_demo_policy_is_published_once() -> None:
    demo = seed_accounts()
    seed(demo=demo, stdout=io.StringIO())
    seed(demo=demo, stdout=io.StringIO())
    assert PolicyVersion.objects.filter(status="published").count() == 1
    assert PolicyVersion.objects.count() == 1
