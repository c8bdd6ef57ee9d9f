"""The project's own app: it owns the operator settings catalog's table."""

from django.apps import AppConfig


class AiplaneConfig(AppConfig):
    name = "aiplane"
    verbose_name = "aiplane"
