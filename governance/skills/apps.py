from django.apps import AppConfig


class SkillsConfig(AppConfig):
    name = "governance.skills"
    label = "skills"
