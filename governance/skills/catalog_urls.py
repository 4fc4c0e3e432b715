"""URLs of the catalog pages (included by governance/skills/urls.py)."""

from django.urls import path

from governance.skills import catalog_views

urlpatterns = [
    path("catalog/", catalog_views.catalog, name="catalog"),
    path("catalog/skills/<int:skill_id>/", catalog_views.skill_detail, name="catalog-skill"),
    path("catalog/listing/", catalog_views.listing_budget, name="catalog-listing"),
    path("catalog/conditional/", catalog_views.conditional, name="catalog-conditional"),
    path("catalog/fleet/", catalog_views.fleet, name="catalog-fleet"),
]
