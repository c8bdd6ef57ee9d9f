"""Path converters of /api/v0: a segment that cannot name an object never reaches the database.

Registered on import; accounts/urls.py and gateway/admin/urls.py import this module. A segment the
converter refuses is a 404 in the envelope, like a name that names nothing, so a NUL byte or a
ten-thousand-character name cannot make PostgreSQL refuse the lookup (a 500).
"""

from __future__ import annotations

from django.urls import register_converter

# Group, backend and pool names: what accounts.models.group_name_validator and
# gateway.serializers.NameField accept (groups stop at 64 characters; longer names are 404s).
NAME_PATTERN = "[A-Za-z0-9][A-Za-z0-9_.-]{0,99}"


class NameConverter:
    regex = NAME_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(NameConverter, "name")
