from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "governance.reviews"
    label = "reviews"
