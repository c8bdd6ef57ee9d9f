"""The plural forms the page scripts receive: each language's CLDR categories, from the catalogs."""

from __future__ import annotations

import json

from aiplane import i18n


def test_russian_counts_get_their_one_few_and_many_forms() -> None:
    plural = i18n.catalog_plurals("ru")["activityui-page-of"]
    assert plural["variable"] == "count"
    assert plural["forms"] == {
        "one": "Страница {page} из {pages} · {count} запись",
        "few": "Страница {page} из {pages} · {count} записи",
        "many": "Страница {page} из {pages} · {count} записей",
    }


def test_a_form_that_words_the_number_itself_keeps_its_words() -> None:
    forms = i18n.catalog_plurals("fr")["login-too-many"]["forms"]
    assert forms["one"] == "Trop de tentatives de connexion échouées. Réessayez dans une minute."
    assert forms["other"].endswith("dans {minutes} minutes.")


def test_a_language_without_plurals_sends_none_for_that_message() -> None:
    assert "activityui-page-of" not in i18n.catalog_plurals("zh")
    assert "activityui-page-of" in i18n.catalog_plurals("en")


def test_messages_without_a_selector_have_no_plural_forms() -> None:
    assert "activityui-first-byte" not in i18n.catalog_plurals("de")


def test_the_script_carries_the_plural_forms() -> None:
    script = i18n.catalog_script("ru")
    payload = json.loads(script[len("window.AIPLANE_I18N = ") :].rstrip().rstrip(";"))
    assert payload["plurals"]["activityui-page-of"]["forms"]["few"].endswith("{count} записи")
