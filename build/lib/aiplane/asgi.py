"""The ASGI entry point: /v1 to the raw gateway app, websockets to channels, the rest to Django.

Run it with uvicorn (`uvicorn aiplane.asgi:application`, the fast default) or daphne
(`daphne aiplane.asgi:application`); both are supported.
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aiplane.settings")

from django.core.asgi import get_asgi_application

django_application = get_asgi_application()

from aiplane.wiring import build_application  # noqa: E402

application = build_application(django_application)
