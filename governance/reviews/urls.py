"""Pages of the reviews concern."""

from django.urls import path

from governance.reviews import views

urlpatterns = [
    path("reviews/", views.queue, name="reviews"),
    path("reviews/bulk-approve/", views.bulk_approve, name="review-bulk-approve"),
    path("reviews/<int:proposal_id>/", views.detail, name="review-detail"),
    path("reviews/<int:proposal_id>/approve/", views.approve, name="review-approve"),
    path("reviews/<int:proposal_id>/dismiss/", views.dismiss, name="review-dismiss"),
    path("reviews/<int:proposal_id>/comment/", views.comment, name="review-comment"),
    path("reviews/<int:proposal_id>/rollback/", views.rollback, name="review-rollback"),
    path("reviews/deliveries/<int:delivery_id>/retry/", views.delivery_retry, name="review-delivery-retry"),
    path("reviews/deliveries/<int:delivery_id>/patch", views.delivery_patch, name="review-delivery-patch"),
]
