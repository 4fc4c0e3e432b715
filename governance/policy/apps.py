from django.apps import AppConfig


class PolicyConfig(AppConfig):
    name = "governance.policy"
    label = "policy"
