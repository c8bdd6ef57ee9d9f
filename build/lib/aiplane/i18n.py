"""Fluent catalogs of the browser UI: one bundle per language, loaded once, for templates and JS.

The layout is `locale/<lang>/<surface>.ftl`. Templates read messages through the `{% t %}` tag
(`aiplane.templatetags.fluent`), page scripts through the dictionary served at `/i18n/<lang>.js`,
which `catalog_messages()` builds from the same bundles, so the two can never drift.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from babel import Locale
from django.conf import settings
from fluent.runtime import FluentBundle, FluentResource
from fluent.runtime.types import fluent_number
from fluent.syntax import FluentParser, ast, visitor

LANGUAGES: tuple[str, ...] = ("en", "de", "fr", "es", "ru", "zh")
DEFAULT_LANGUAGE = "en"
LANG_COOKIE = "lang"

# Each language named in itself, for the language selector (never translated).
AUTONYMS: dict[str, str] = {
    "en": "English",
    "de": "Deutsch",
    "fr": "Français",
    "es": "Español",
    "ru": "Русский",
    "zh": "中文",
}


def locale_dir() -> Path:
    return Path(settings.BASE_DIR) / "locale"


@dataclass(frozen=True)
class Catalog:
    """The messages of one language: its bundle, plus the variables each message takes."""

    lang: str
    bundle: FluentBundle
    variables: dict[str, tuple[str, ...]]
    surfaces: dict[str, tuple[str, ...]]  # surface file stem -> message ids defined there
    selectors: dict[str, tuple[str, ...]] = field(default_factory=dict)  # variables selected on


class _VariableCollector(visitor.Visitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []
        self.selectors: list[str] = []

    def visit_VariableReference(self, node: ast.VariableReference) -> None:
        if node.id.name not in self.names:
            self.names.append(node.id.name)
        self.generic_visit(node)

    def visit_SelectExpression(self, node: ast.SelectExpression) -> None:
        # `{ $count -> ...}` and `{ NUMBER($count) -> ...}` both select on $count.
        selector: Any = node.selector
        if isinstance(selector, ast.FunctionReference) and selector.arguments.positional:
            selector = selector.arguments.positional[0]
        if isinstance(selector, ast.VariableReference) and selector.id.name not in self.selectors:
            self.selectors.append(selector.id.name)
        self.generic_visit(node)


def _load(lang: str) -> Catalog:
    bundle = FluentBundle([lang], use_isolating=False)
    variables: dict[str, tuple[str, ...]] = {}
    selectors: dict[str, tuple[str, ...]] = {}
    surfaces: dict[str, tuple[str, ...]] = {}
    parser = FluentParser(with_spans=False)
    for path in sorted((locale_dir() / lang).glob("*.ftl")):
        text = path.read_text(encoding="utf-8")
        bundle.add_resource(FluentResource(text))
        ids: list[str] = []
        for entry in parser.parse(text).body:
            if isinstance(entry, ast.Message):
                collector = _VariableCollector()
                collector.visit(entry)
                variables[entry.id.name] = tuple(collector.names)
                if collector.selectors:
                    selectors[entry.id.name] = tuple(collector.selectors)
                ids.append(entry.id.name)
        surfaces[path.stem] = tuple(ids)
    return Catalog(
        lang=lang, bundle=bundle, variables=variables, surfaces=surfaces, selectors=selectors
    )


@cache
def catalog(lang: str) -> Catalog:
    """The loaded catalog of one of LANGUAGES (an unknown language gets English)."""
    return _load(lang if lang in LANGUAGES else DEFAULT_LANGUAGE)


def reload() -> None:
    """Forget the loaded catalogs (tests that write .ftl files; never needed in production)."""
    catalog.cache_clear()
    catalog_messages.cache_clear()
    catalog_plurals.cache_clear()
    catalog_script.cache_clear()


def _format(cat: Catalog, msg_id: str, args: dict[str, Any]) -> str | None:
    if not cat.bundle.has_message(msg_id):
        return None
    message = cat.bundle.get_message(msg_id)
    if message.value is None:
        return None
    text, _errors = cat.bundle.format_pattern(message.value, args)
    return str(text)


def translate(lang: str, msg_id: str, **args: Any) -> str:
    """The message in `lang`, else in English, else the id itself (a visible, greppable gap)."""
    for candidate in (lang, DEFAULT_LANGUAGE):
        text = _format(catalog(candidate), msg_id, args)
        if text is not None:
            return text
    return msg_id


@cache
def catalog_messages(lang: str) -> dict[str, str]:
    """Every message of `lang` (English filling any gap) with variables left as `{name}` for JS."""
    merged: dict[str, str] = {}
    for candidate in (DEFAULT_LANGUAGE, lang):
        cat = catalog(candidate)
        for msg_id, names in cat.variables.items():
            # A string placeholder picks a select expression's default variant, which is what a
            # client without Fluent's plural rules should show anyway.
            text = _format(cat, msg_id, {name: "{" + name + "}" for name in names})
            if text is not None:
                merged[msg_id] = text
    return merged


# Numbers tried for each plural category: big distinctive ones first, so the number can be found
# again in the text and turned back into its placeholder; then small ones (French "one" is 0-1).
_PLURAL_SAMPLES = (*range(900_000_000, 900_000_200), *range(200))


def _plural_forms(cat: Catalog, msg_id: str) -> dict[str, Any] | None:
    """The message in each plural category of its one plural variable, as `{name}` text."""
    selected = cat.selectors.get(msg_id, ())
    if len(selected) != 1:
        return None
    (name,) = selected
    rule = Locale.parse(cat.lang).plural_form
    args: dict[str, Any] = {other: "{" + other + "}" for other in cat.variables[msg_id]}
    forms: dict[str, str] = {}
    for category in sorted(rule.tags | {"other"}):
        sample = next((n for n in _PLURAL_SAMPLES if rule(n) == category), None)
        if sample is None:
            continue  # reached by fractions only (Russian "other"): counts are whole numbers
        text = _format(cat, msg_id, {**args, name: fluent_number(sample, useGrouping=False)})
        if text is None:
            return None
        shown = str(sample)
        if text.count(shown) > 1:
            continue  # ambiguous: the default text stands in for this category
        forms[category] = text.replace(shown, "{" + name + "}")
    return {"variable": name, "forms": forms}


@cache
def catalog_plurals(lang: str) -> dict[str, dict[str, Any]]:
    """For each message that selects on a number: its variable and its text per plural category
    (CLDR's, as the browser's Intl.PluralRules names them); English fills any gap."""
    merged: dict[str, dict[str, Any]] = {}
    for candidate in (DEFAULT_LANGUAGE, lang):
        cat = catalog(candidate)
        for msg_id in cat.variables:
            forms = _plural_forms(cat, msg_id)
            if forms is None:
                merged.pop(msg_id, None)  # this language words it without plurals
            else:
                merged[msg_id] = forms
    return merged


@cache
def catalog_script(lang: str) -> str:
    """The JavaScript served at /i18n/<lang>.js."""
    payload = {"lang": lang, "messages": catalog_messages(lang), "plurals": catalog_plurals(lang)}
    body = json.dumps(payload, ensure_ascii=False, sort_keys=True)
    # "</" cannot end a <script> this way even if a message ever contains it.
    return "window.AIPLANE_I18N = " + body.replace("</", "<\\/") + ";\n"


@cache
def catalog_version() -> str:
    """A short digest of every catalog file: the cache-busting query of /i18n/<lang>.js."""
    digest = hashlib.sha256()
    for path in sorted(locale_dir().glob("*/*.ftl")):
        digest.update(path.relative_to(locale_dir()).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def parse_accept_language(header: str) -> list[str]:
    """Language tags of an Accept-Language header, best first (q=0 entries dropped)."""
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(header.split(",")):
        pieces = part.strip().split(";")
        tag = pieces[0].strip().lower()
        if not tag:
            continue
        quality = 1.0
        for param in pieces[1:]:
            key, _, value = param.strip().partition("=")
            if key.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if quality > 0:
            ranked.append((-quality, index, tag))
    return [tag for _q, _i, tag in sorted(ranked)]


def best_match(header: str) -> str | None:
    """The first of LANGUAGES that an Accept-Language header asks for ("de-CH" matches "de")."""
    for tag in parse_accept_language(header):
        primary = tag.split("-")[0]
        if primary in LANGUAGES:
            return primary
    return None


def _profile_language(request: Any) -> str | None:
    user = getattr(request, "user", None)
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    # A missing one-to-one row raises an AttributeError subclass, so getattr's default covers it.
    profile = getattr(user, "profile", None)
    language = getattr(profile, "language", None) if profile is not None else None
    return language if language in LANGUAGES else None


def language_for(request: Any) -> str:
    """The UI language: the person's saved choice, else the `lang` cookie, else the browser's."""
    chosen = _profile_language(request)
    if chosen:
        return chosen
    cookie = request.COOKIES.get(LANG_COOKIE, "")
    if cookie in LANGUAGES:
        return cookie
    matched = best_match(request.META.get("HTTP_ACCEPT_LANGUAGE", ""))
    return matched or DEFAULT_LANGUAGE
