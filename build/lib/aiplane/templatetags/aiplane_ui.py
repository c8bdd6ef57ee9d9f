"""`{% ui_setup %}`: puts what the base layout needs (language, admin flag, ...) into the context.

Page views pass these already; Django's own error pages (404, 403 from middleware) do not, so
the layout asks for them itself.
"""

from __future__ import annotations

from django import template

register = template.Library()


@register.simple_tag(takes_context=True)
def ui_setup(context: template.Context) -> str:
    from aiplane.ui import ui_context

    request = context.get("request")
    if request is None:
        return ""
    for key, value in ui_context(request).items():
        if key not in context:
            context[key] = value
    return ""
