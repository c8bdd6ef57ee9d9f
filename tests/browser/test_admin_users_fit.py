"""The Users table fits the page at 1280 and 390 px with 40-character names and 50-character
email addresses: no horizontal scroll, neither of the page nor of the table."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.factories import make_group, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NAME = "maximiliane.schwarzenberger-oppenheimer1"  # 40 characters
EMAIL = "maximiliane.schwarzenberger-oppenheimer@example.eu"  # 50 characters

OVERFLOW = """() => {
  const page = document.documentElement;
  const wrap = document.getElementById("users-wrap");
  return {page: page.scrollWidth - page.clientWidth, table: wrap.scrollWidth - wrap.clientWidth};
}"""


@pytest.mark.parametrize(("language", "width"), [("en", 1280), ("en", 390), ("de", 1280)])
def test_the_users_table_fits_with_long_names_and_email_addresses(
    page: Any, carol: Any, sign_in: Any, screenshot: Any, language: str, width: int
) -> None:
    from accounts.models import UserProfile

    assert (len(NAME), len(EMAIL)) == (40, 50)
    UserProfile.objects.update_or_create(user=carol, defaults={"language": language})
    group = make_group("research-and-development", priority="high")
    for index in range(3):
        person = make_user(f"{NAME[:-1]}{index}", email=EMAIL.replace("r@", f"{index}@"))
        group.members.add(person)
    sign_in(page, "carol")
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("/admin/users/")
    expect(page.locator("#users-body tr")).to_have_count(4)
    expect(page.locator("#users-body")).to_contain_text(f"{NAME[:-1]}0")
    page.wait_for_load_state("networkidle")
    screenshot(page, f"admin-users-long-{language}-{width}", widths=((width, 900),))
    assert page.evaluate(OVERFLOW) == {"page": 0, "table": 0}
    # Nothing is lost to make it fit: a name cut short is whole in its title.
    for index in range(3):
        whole = f"{NAME[:-1]}{index}"
        title = page.locator(f'#users-body tr[data-user="{whole}"] .row-title')
        assert whole in (title.inner_text(), title.get_attribute("title") or "")
