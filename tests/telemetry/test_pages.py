"""Health pages: what each role sees (cost for admins only), filters, the skill panel and badge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.template import Context, Template
from django.test import Client, RequestFactory

from governance.engine.telemetry import validate_event
from governance.skills.models import Skill, Source
from governance.telemetry.services import events_store, rollups_sweep
from tests.telemetry.factories import native


@pytest.fixture
def catalog_skill(org: Any) -> Skill:
    source = Source.objects.create(kind="project", identity="github.com/acme/payments-api")
    return Skill.objects.create(source=source, location=".claude/skills/release-notes", name="release-notes")


@pytest.fixture
def telemetry(org: Any, catalog_skill: Skill) -> None:
    now = datetime.now(UTC)
    when = now - timedelta(hours=2)
    events = [
        native("skill_invoked", skill="release-notes", trigger="model", when=when, session="a"),
        native(
            "api_request",
            skill="release-notes",
            when=when,
            session="a",
            input_tokens=900,
            output_tokens=100,
            cost_usd=1.75,
        ),
        native(
            "skill_invoked",
            skill="deploy-to-acme-prod",
            source="user",
            trigger="user-slash",
            when=when,
            session="b",
            agent_version="2.0.14",
        ),
        native(
            "listing_degraded",
            skill=None,
            when=when,
            session="b",
            agent_version="2.0.14",
            skill_count=30,
            budget=8000,
            full_total=9089,
            truncation_mode="name_only",
            bundled_count=2,
            bundled_chars=300,
            cut_skills=[{"name": "release-notes"}],
        ),
    ]
    events_store(events=[validate_event(e, now=now, max_age_days=90) for e in events], channel="api")
    rollups_sweep()


@pytest.mark.django_db
def test_developers_see_health_without_cost(developer_client: Client, telemetry: None) -> None:
    response = developer_client.get("/health/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-skill="release-notes"' in html
    assert "private-" in html and "deploy-to-acme-prod" not in html
    assert 'data-testid="org-cost"' not in html and "most-costly" not in html and "$1.75" not in html
    assert '"cost"' not in html  # not even in the chart data


@pytest.mark.django_db
def test_admins_see_organisation_cost(admin_client: Client, telemetry: None) -> None:
    html = admin_client.get("/health/").content.decode()
    assert 'data-testid="org-cost"' in html and "$1.75" in html
    assert 'data-testid="most-costly"' in html


@pytest.mark.django_db
def test_filters_group_and_agent_view(lead_client: Client, telemetry: None, org: Any) -> None:
    grouped = lead_client.get("/health/", {"group": "team", "days": "7", "team": org.payments.pk})
    assert grouped.status_code == 200 and "Payments" in grouped.content.decode()
    other_team = lead_client.get("/health/", {"team": org.platform.pk}).content.decode()
    assert 'data-skill="release-notes"' not in other_team
    agents = lead_client.get("/health/agents/").content.decode()
    assert "2.0.14" in agents and "2.1.3" in agents
    assert lead_client.get("/telemetry/").status_code == 200


@pytest.mark.django_db
def test_skill_page_and_unknown_skill(developer_client: Client, telemetry: None) -> None:
    response = developer_client.get("/health/skills/release-notes/")
    assert response.status_code == 200
    assert 'data-testid="skill-health-panel"' in response.content.decode()
    assert developer_client.get("/health/skills/never-seen/").status_code == 404


@pytest.mark.django_db
def test_badge_and_panel_helpers_for_the_catalog_page(
    catalog_skill: Skill, telemetry: None, admin_user: Any, developer_user: Any
) -> None:
    template = Template(
        "{% load telemetry_tags %}{% skill_health_badge skill %}|{% skill_health_panel skill %}"
    )
    request = RequestFactory().get("/")
    request.user = developer_user
    html = template.render(Context({"skill": catalog_skill, "request": request}))
    badge, panel = html.split("|", 1)
    assert "degraded" in badge  # its listing entry was reduced to its name in one of two sessions
    assert 'data-testid="skill-health-panel"' in panel and "invocations" in panel and "cost ·" not in panel
    request.user = admin_user
    admin_html = template.render(Context({"skill": catalog_skill, "request": request}))
    assert "$1.75" in admin_html
    never = Skill.objects.create(source=catalog_skill.source, location="x", name="never-used")
    assert "unused" in template.render(Context({"skill": never, "request": request}))


@pytest.mark.django_db
def test_home_cards_show_degraded_skills_and_cost_to_admins_only(
    admin_client: Client, developer_client: Client, telemetry: None
) -> None:
    developer_home = developer_client.get("/").content.decode()
    assert "Skill health" in developer_home and "Agent cost, 7 days" not in developer_home
    admin_home = admin_client.get("/").content.decode()
    assert "Agent cost, 7 days" in admin_home and "$1.75" in admin_home


@pytest.mark.django_db
def test_catalog_page_reads_health_of_the_skills_it_shows(developer_client: Client, telemetry: None) -> None:
    response = developer_client.get("/catalog/")
    assert response.status_code == 200
    shown = {entry.row.skill_id for entry in response.context["entries"]}
    assert set(response.context["health"]) <= shown  # not the whole fleet's
