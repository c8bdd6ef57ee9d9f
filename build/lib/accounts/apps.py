"""Identity: users, gateway groups, API tokens and the priority rules."""

from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import schema, signals  # noqa: F401 - schema registers an OpenAPI extension

        signals.connect()
