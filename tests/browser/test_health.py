"""Health pages in a real browser: charts drawn from local Chart.js, roles, drill-down to a skill."""

from __future__ import annotations

import io
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import User

from governance.skills.models import Skill, Source
from governance.telemetry import demo

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture
def week_of_telemetry(org: Any) -> None:
    source = Source.objects.create(kind="project", identity="github.com/acme/payments-api")
    for name in ("deploy", "security-review", "incident-rca"):
        Skill.objects.create(source=source, location=f".claude/skills/{name}", name=name)
    fake_demo = SimpleNamespace(
        teams={"payments": org.payments, "platform": org.platform},
        projects={"payments-api": org.payments_api},
    )
    demo.seed(demo=fake_demo, stdout=io.StringIO())


def _shot(page: Any, name: str) -> None:
    if os.environ.get("SCREENSHOTS"):
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_developer_reads_fleet_health_without_cost(
    login: Any, developer_user: User, week_of_telemetry: None
) -> None:
    page = login(developer_user)
    page.click("[data-nav=health]")
    page.wait_for_selector("#chart-invocations[data-drawn=true]")
    assert page.locator("#chart-degradation[data-drawn=true]").count() == 1
    assert page.locator("#chart-cost").count() == 0
    assert page.locator("[data-testid=org-cost]").count() == 0
    assert page.locator("[data-testid=most-degraded] tbody tr").count() > 0
    assert page.locator("[data-testid=skill-table] tbody tr").count() >= 5
    assert "deploy-to-acme-prod" not in page.content()
    _shot(page, "health-developer")
    page.select_option("select[name=group]", "agent_version")
    page.click("[data-testid=health-filters] button[type=submit]")
    page.wait_for_url("**group=agent_version**")
    assert (
        page.locator("[data-testid=skill-table] th", has_text="Agent_version").count()
        + page.locator("[data-testid=skill-table] th", has_text="Agent version").count()
        >= 1
    )


def test_admin_sees_cost_and_drills_into_a_skill(
    login: Any, admin_user: User, week_of_telemetry: None
) -> None:
    page = login(admin_user)
    page.goto("/health/")
    page.wait_for_selector("#chart-cost[data-drawn=true]")
    assert page.locator("[data-testid=org-cost]").inner_text().startswith("$")
    assert page.locator("[data-testid=most-costly] tbody tr").count() > 0
    _shot(page, "health-admin")
    page.locator("[data-testid=most-degraded] tbody tr a").first.click()
    page.wait_for_selector("[data-testid=skill-health-panel] canvas[data-drawn=true]")
    assert page.locator("[data-testid=skill-by-version] tbody tr").count() >= 1
    _shot(page, "health-skill")


def test_degradation_by_agent_version_and_ingest_page(
    login: Any, lead_user: User, week_of_telemetry: None
) -> None:
    page = login(lead_user)
    page.goto("/health/agents/")
    page.wait_for_selector("#chart-versions[data-drawn=true]")
    rows = page.locator("[data-testid=version-table] tbody tr")
    assert rows.count() == 3
    assert "2.0.14" in page.locator("[data-testid=version-table]").inner_text()
    _shot(page, "health-agents")
    page.click("[data-nav=telemetry]")
    page.wait_for_selector("#chart-events[data-drawn=true]")
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" in page.locator("[data-testid=otel-setup]").inner_text()
    _shot(page, "telemetry")
