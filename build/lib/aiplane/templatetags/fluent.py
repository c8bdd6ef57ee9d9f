"""`{% t "msg-id" name=value %}`: a Fluent message in the page's language, HTML-escaped.

`{% t "msg-id" name=value as var %}` stores the text instead of printing it. The language is the
context's `lang` (set by every page view), else it is worked out from the request.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import conditional_escape

from aiplane.i18n import DEFAULT_LANGUAGE, language_for, translate

register = template.Library()


def _language(context: template.Context) -> str:
    lang = context.get("lang")
    if lang:
        return str(lang)
    request = context.get("request")
    return language_for(request) if request is not None else DEFAULT_LANGUAGE


class TranslateNode(template.Node):
    def __init__(
        self,
        msg_id: template.base.FilterExpression,
        kwargs: dict[str, template.base.FilterExpression],
        target: str | None,
    ) -> None:
        self.msg_id = msg_id
        self.kwargs = kwargs
        self.target = target

    def render(self, context: template.Context) -> str:
        args: dict[str, Any] = {key: value.resolve(context) for key, value in self.kwargs.items()}
        text = translate(_language(context), str(self.msg_id.resolve(context)), **args)
        if self.target:
            context[self.target] = text
            return ""
        return str(conditional_escape(text)) if context.autoescape else text


@register.tag(name="t")
def do_translate(parser: template.base.Parser, token: template.base.Token) -> TranslateNode:
    bits = token.split_contents()
    if len(bits) < 2:
        raise template.TemplateSyntaxError("{% t %} needs a message id")
    target = None
    if len(bits) >= 4 and bits[-2] == "as":
        target = bits[-1]
        bits = bits[:-2]
    kwargs: dict[str, template.base.FilterExpression] = {}
    for bit in bits[2:]:
        name, sep, value = bit.partition("=")
        if not sep or not name:
            raise template.TemplateSyntaxError(f"{{% t %}} arguments are name=value, got {bit!r}")
        kwargs[name] = parser.compile_filter(value)
    return TranslateNode(parser.compile_filter(bits[1]), kwargs, target)
