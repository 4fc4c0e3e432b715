"""Headless Chromium through Playwright against a live server; failures keep a screenshot."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.conftest import PASSWORD

# Playwright's sync API runs an event loop in this thread; Django's ORM would refuse to run in it.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


# Package scope: one Chromium for all of tests/browser, closed when they end. Playwright's sync API
# keeps an event loop running in this thread while it is open, which would break any later test
# that calls asyncio.run() (the registry conformance kit does).
@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium package (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield instance
        instance.close()


@pytest.fixture
def page(browser: Any, live_server: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(10_000)
    yield pg
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()


@pytest.fixture
def login(page: Any) -> Callable[[User], Any]:
    """Log in through the real login form; returns the page."""

    def do_login(user: User) -> Any:
        page.goto("/accounts/login/")
        page.fill("#id_username", user.username)
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_selector("[data-testid=role]")
        return page

    return do_login
