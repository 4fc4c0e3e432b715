"""URLs of the catalog pages (included by governance/skills/urls.py)."""

from django.urls import path, re_path

from governance.skills import catalog_views

urlpatterns = [
    path("catalog/", catalog_views.catalog, name="catalog"),
    path("catalog/skills/<int:skill_id>/", catalog_views.skill_detail, name="catalog-skill"),
    path("catalog/listing/", catalog_views.listing_budget, name="catalog-listing"),
    path("catalog/conditional/", catalog_views.conditional, name="catalog-conditional"),
    path("catalog/fleet/", catalog_views.fleet, name="catalog-fleet"),
    path("catalog/collections/", catalog_views.collections, name="catalog-collections"),
    path("catalog/collections/add/", catalog_views.collection_add, name="catalog-collection-add"),
    path("catalog/collections/<slug:slug>/", catalog_views.collection_detail, name="catalog-collection"),
    path(
        "catalog/collections/<slug:slug>/edit/", catalog_views.collection_edit, name="catalog-collection-edit"
    ),
    path(
        "catalog/collections/<slug:slug>/export/<str:fmt>/",
        catalog_views.collection_export,
        name="catalog-collection-export",
    ),
    path(
        "catalog/projects/<slug:slug>/export/<str:fmt>/",
        catalog_views.project_export,
        name="catalog-project-export",
    ),
]

# The registry authenticates itself with bearer tokens (LoginRequiredMiddleware lets /registry/
# through). No pattern ends with "/", so no slash-appending redirect can ever answer.
from governance.skills import catalog_registry  # noqa: E402

_KIND = r"(?P<kind>projects|collections)"
urlpatterns += [
    re_path(
        rf"^registry/{_KIND}/(?P<slug>[-\w]+)/index\.json$",
        catalog_registry.root_index,
        name="registry-index",
    ),
    re_path(
        rf"^registry/{_KIND}/(?P<slug>[-\w]+)/(?P<skill_id>[^/]+)/index\.json$",
        catalog_registry.skill_index,
        name="registry-skill-index",
    ),
    re_path(
        rf"^registry/{_KIND}/(?P<slug>[-\w]+)/(?P<skill_id>[^/]+)/(?P<path>.+)$",
        catalog_registry.skill_file,
        name="registry-file",
    ),
]
