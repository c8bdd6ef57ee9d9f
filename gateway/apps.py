"""The data plane app."""

from django.apps import AppConfig


class GatewayConfig(AppConfig):
    name = "gateway"
    verbose_name = "gateway"

    def ready(self) -> None:
        # Inside ready(), Django's idiom: the receivers import models, loadable only now.
        from gateway.admin import receivers

        receivers.connect()
