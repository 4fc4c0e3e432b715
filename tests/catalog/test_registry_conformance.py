"""The registry passes the agentskills conformance suites through the unmodified HTTP client.

``agentskills-http``'s ``HTTPStaticFileSkillProvider`` talks to a live portal over real HTTP with
a ``skills:read`` bearer token; ``agentskills-testing``'s ``ProviderConformanceSuite`` and
``ContentLimitConformanceSuite`` run against it, with resource listing, discovery and the
complete file manifest all switched on.
"""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements-conformance.txt"


def _ensure_installed() -> None:
    if importlib.util.find_spec("agentskills_http") and importlib.util.find_spec("agentskills_testing"):
        return
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--ignore-requires-python",
            "-r",
            str(REQUIREMENTS),
        ],
        check=True,
    )


_ensure_installed()

from agentskills_http import HTTPStaticFileSkillProvider  # noqa: E402
from agentskills_testing import (  # noqa: E402
    ASSET_BYTES,
    ASSET_NAME,
    REFERENCE_BYTES,
    REFERENCE_NAME,
    SCRIPT_BYTES,
    SCRIPT_NAME,
    SKILL_ID,
    ContentLimitConformanceSuite,
    ProviderConformanceSuite,
)

from tests.catalog.conftest import make_source, store_skill  # noqa: E402

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # Django's live server shares SQLite's in-memory connection across its request threads and
    # then complains, in a background thread, when a thread closes it after the response is
    # sent (the concurrency test makes 20 parallel requests). PostgreSQL runs do not see it.
    pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning"),
]


def _conformance_registry(
    org: Any, make_token: Any, developer_user: Any, live_server: Any
) -> tuple[str, str]:
    source = make_source("project", "github.com/acme/conformance", org.payments_api)
    store_skill(
        source,
        SKILL_ID,
        description="A skill that exercises every part of the provider contract.",
        body="# Conformance\n\nRead references/notes.md, run scripts/run.sh.\n",
        files={
            f"references/{REFERENCE_NAME}": REFERENCE_BYTES,
            f"scripts/{SCRIPT_NAME}": SCRIPT_BYTES,
            f"assets/{ASSET_NAME}": ASSET_BYTES,
        },
    )
    token = make_token(developer_user, "skills:read")
    return f"{live_server.url}/registry/projects/{org.payments_api.slug}", token


def _provider(base_url: str, token: str, **kwargs: Any) -> HTTPStaticFileSkillProvider:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # plain HTTP to the local test server
        return HTTPStaticFileSkillProvider(
            base_url,
            headers={"Authorization": f"Bearer {token}"},
            resource_manifest=True,
            skill_manifest=True,
            file_manifest=True,
            allow_private_network=True,
            max_retries=0,
            **kwargs,
        )


class TestRegistryConformance(ProviderConformanceSuite):
    @pytest.fixture
    def provider(
        self, org: Any, make_token: Any, developer_user: Any, live_server: Any
    ) -> HTTPStaticFileSkillProvider:
        base_url, token = _conformance_registry(org, make_token, developer_user, live_server)
        return _provider(base_url, token)


class TestRegistryContentLimits(ContentLimitConformanceSuite):
    @pytest.fixture
    def limited_provider(
        self, org: Any, make_token: Any, developer_user: Any, live_server: Any
    ) -> HTTPStaticFileSkillProvider:
        base_url, token = _conformance_registry(org, make_token, developer_user, live_server)
        return _provider(base_url, token, max_response_bytes=8)


def test_lossless_file_access_and_revalidation(
    org: Any, make_token: Any, developer_user: Any, live_server: Any
) -> None:
    base_url, token = _conformance_registry(org, make_token, developer_user, live_server)
    asyncio.run(_read_everything(base_url, token))


async def _read_everything(base_url: str, token: str) -> None:
    provider = _provider(base_url, token, revalidate=True)
    try:
        assert await provider.list_files(SKILL_ID) == sorted(
            ["SKILL.md", f"assets/{ASSET_NAME}", f"references/{REFERENCE_NAME}", f"scripts/{SCRIPT_NAME}"]
        )
        assert await provider.read_file(SKILL_ID, f"scripts/{SCRIPT_NAME}") == SCRIPT_BYTES
        first = await provider.get_body(SKILL_ID)
        # revalidate=True sends If-None-Match with the cached ETag: the portal answers 304
        assert await provider.get_body(SKILL_ID) == first
    finally:
        await provider.aclose()
